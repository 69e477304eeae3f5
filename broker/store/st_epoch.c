/* st_epoch.c: the epoch file (st_epoch.h): parsing, atomic rewrite, the
 * consistent point between two logs. */
#include "st_epoch.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_file.h"

struct st_epoch {
    char path[PATH_MAX];
    st_epoch_entry_t *e;           /* ST_EPOCH_MAX slots */
    size_t n;
};

/* Reads a decimal integer >= 0 from *p up to end; -1 when there is none or
 * it overflows. */
static int64_t read_num(const char **p, const char *end)
{
    int64_t v = 0;
    const char *s = *p;

    if (s == end || *s < '0' || *s > '9')
        return -1;
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        if (v > (INT64_MAX - (*s - '0')) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    *p = s;
    return v;
}

int st_epoch_follows(const st_epoch_entry_t *prev, int64_t epoch, int64_t start_offset)
{
    return epoch >= 1 && start_offset >= 0 &&
           (!prev || (epoch > prev->epoch && start_offset >= prev->start_offset));
}

rmq_err_t st_epoch_parse(const char *text, size_t len, st_epoch_entry_t *out, size_t cap, size_t *n,
                         char *why, size_t whylen)
{
    const char *p = text, *end = text + len;
    size_t line = 0;

    *n = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        line++;
        int64_t epoch = read_num(&p, eol);
        int64_t start = p < eol && *p == ' ' ? (p++, read_num(&p, eol)) : -1;
        if (epoch < 1 || start < 0 || p != eol) {
            snprintf(why, whylen, "line %zu: want \"<epoch >= 1> <startOffset >= 0>\"", line);
            return RMQ_ECORRUPT;
        }
        if (*n == cap) {
            snprintf(why, whylen, "line %zu: more than %zu epochs", line, cap);
            return RMQ_ECORRUPT;
        }
        if (!st_epoch_follows(*n ? &out[*n - 1] : NULL, epoch, start)) {
            snprintf(why, whylen, "line %zu: epoch %" PRId64 " at %" PRId64 " does not follow epoch %" PRId64
                     " at %" PRId64, line, epoch, start, out[*n - 1].epoch, out[*n - 1].start_offset);
            return RMQ_ECORRUPT;
        }
        out[(*n)++] = (st_epoch_entry_t){ epoch, start };
        p = nl ? nl + 1 : end;
    }
    return RMQ_OK;
}

st_epoch_t *st_epoch_open(const char *path, char *why, size_t whylen)
{
    st_epoch_t *ef = calloc(1, sizeof *ef);
    char *text = NULL, perr[200];
    size_t len = 0;

    if (!ef || !(ef->e = calloc(ST_EPOCH_MAX, sizeof *ef->e))) {
        snprintf(why, whylen, "%s: out of memory", path);
        goto fail;
    }
    if (snprintf(ef->path, sizeof ef->path, "%s", path) >= (int)sizeof ef->path) {
        snprintf(why, whylen, "%s: path too long", path);
        goto fail;
    }
    rmq_err_t rc = rmq_file_read_all(path, &text, &len);
    if (rc == RMQ_ENOTFOUND)
        return ef;
    if (rc != RMQ_OK) {
        snprintf(why, whylen, "%s: cannot read the epoch file: %s", path, rmq_strerror(rc));
        goto fail;
    }
    rc = st_epoch_parse(text, len, ef->e, ST_EPOCH_MAX, &ef->n, perr, sizeof perr);
    free(text);
    if (rc == RMQ_OK)
        return ef;
    snprintf(why, whylen, "%s: %s", path, perr);
fail:
    st_epoch_close(ef);
    return NULL;
}

void st_epoch_close(st_epoch_t *ef)
{
    if (!ef)
        return;
    free(ef->e);
    free(ef);
}

size_t st_epoch_count(const st_epoch_t *ef)
{
    return ef->n;
}

const st_epoch_entry_t *st_epoch_entries(const st_epoch_t *ef)
{
    return ef->e;
}

/* Rewrites the file with the first n entries. */
static rmq_err_t epoch_save(const st_epoch_t *ef, size_t n)
{
    /* two 19-digit numbers, a space and a newline per line */
    char *buf = malloc(n * 41 + 1);
    size_t len = 0;

    if (!buf)
        return RMQ_ENOMEM;
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(buf + len, "%" PRId64 " %" PRId64 "\n", ef->e[i].epoch, ef->e[i].start_offset);
    rmq_err_t rc = rmq_file_write_atomic(ef->path, buf, len);
    free(buf);
    return rc;
}

rmq_err_t st_epoch_append(st_epoch_t *ef, int64_t epoch, int64_t start_offset, char *why, size_t whylen)
{
    const st_epoch_entry_t *last = ef->n ? &ef->e[ef->n - 1] : NULL;

    if (!st_epoch_follows(last, epoch, start_offset)) {
        snprintf(why, whylen, "epoch %" PRId64 " at %" PRId64 " does not follow the last epoch %" PRId64 " at %" PRId64,
                 epoch, start_offset, last ? last->epoch : 0, last ? last->start_offset : 0);
        return RMQ_EINVAL;
    }
    if (ef->n == ST_EPOCH_MAX) {
        snprintf(why, whylen, "%s holds %d epochs already", ef->path, ST_EPOCH_MAX);
        return RMQ_ETOOBIG;
    }
    ef->e[ef->n] = (st_epoch_entry_t){ epoch, start_offset };
    rmq_err_t rc = epoch_save(ef, ef->n + 1);
    if (rc != RMQ_OK) {
        snprintf(why, whylen, "%s: cannot write the epoch file: %s", ef->path, rmq_strerror(rc));
        return rc;
    }
    ef->n++;
    return RMQ_OK;
}

rmq_err_t st_epoch_truncate(st_epoch_t *ef, int64_t offset)
{
    size_t n = ef->n;

    while (n > 0 && ef->e[n - 1].start_offset >= offset)
        n--;
    if (n == ef->n)
        return RMQ_OK;
    rmq_err_t rc = epoch_save(ef, n);
    if (rc == RMQ_OK)
        ef->n = n;
    return rc;
}

int64_t st_epoch_consistent_end(const st_epoch_entry_t *mine, size_t n_mine, int64_t my_end,
                                const st_epoch_entry_t *theirs, size_t n_theirs, int64_t their_end)
{
    for (size_t i = n_mine; i-- > 0;) {
        for (size_t j = n_theirs; j-- > 0;) {
            if (theirs[j].epoch != mine[i].epoch)
                continue;
            if (theirs[j].start_offset != mine[i].start_offset)
                break;
            int64_t a = i + 1 < n_mine ? mine[i + 1].start_offset : my_end;
            int64_t b = j + 1 < n_theirs ? theirs[j + 1].start_offset : their_end;
            return a < b ? a : b;
        }
    }
    return -1;
}
