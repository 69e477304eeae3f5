/* mqadmin_table.c: aligned text tables and the cell formats they share
 * (times, permissions, escaped text). Column widths follow the content. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mqadmin.h"

static void oom(void)
{
    fprintf(stderr, "mqadmin: out of memory\n");
    exit(1);
}

void adm_table_init(adm_table_t *t, size_t ncols)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
}

void adm_table_row(adm_table_t *t, ...)
{
    va_list ap;

    if (t->nrows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->cells = realloc(t->cells, t->cap * t->ncols * sizeof *t->cells);
        if (!t->cells)
            oom();
    }
    va_start(ap, t);
    for (size_t c = 0; c < t->ncols; c++) {
        const char *s = va_arg(ap, const char *);
        char *copy = strdup(s ? s : "");
        if (!copy)
            oom();
        t->cells[t->nrows * t->ncols + c] = copy;
    }
    va_end(ap);
    t->nrows++;
}

void adm_table_print(const adm_table_t *t, FILE *out)
{
    size_t *width = calloc(t->ncols ? t->ncols : 1, sizeof *width);

    if (!width)
        oom();
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            size_t len = strlen(t->cells[r * t->ncols + c]);
            if (len > width[c])
                width[c] = len;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const char *cell = t->cells[r * t->ncols + c];
            if (c + 1 == t->ncols)
                fprintf(out, "%s\n", cell);
            else
                fprintf(out, "%-*s  ", (int)width[c], cell);
        }
    }
    free(width);
}

void adm_table_free(adm_table_t *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
}

void adm_time_format(int64_t ms, char *buf, size_t len)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    char day[32];

    if (ms <= 0 || !localtime_r(&secs, &tm)) {
        snprintf(buf, len, "-");
        return;
    }
    strftime(day, sizeof day, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf, len, "%s.%03d", day, (int)(ms % 1000));
}

void adm_perm_string(int32_t perm, char out[4])
{
    out[0] = perm & RMQ__PERM__PERM_READ ? 'R' : '-';
    out[1] = perm & RMQ__PERM__PERM_WRITE ? 'W' : '-';
    out[2] = perm & RMQ__PERM__PERM_INHERIT ? 'X' : '-';
    out[3] = '\0';
}

size_t adm_utf8_seq(const uint8_t *data, size_t len, size_t i)
{
    uint8_t c = data[i];
    size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;

    if (n == 0 || i + n > len)
        return 0;
    for (size_t k = 1; k < n; k++)
        if ((data[i + k] & 0xC0) != 0x80)
            return 0;
    return n;
}

char *adm_cell_escape(const uint8_t *data, size_t len, size_t max)
{
    size_t shown = len < max ? len : max;
    char *out = malloc(shown * 4 + 64), *p = out;

    if (!out)
        oom();
    for (size_t i = 0; i < shown; i++) {
        uint8_t c = data[i];
        size_t seq = c >= 0x80 ? adm_utf8_seq(data, shown, i) : 0;
        if (seq) {
            memcpy(p, data + i, seq);
            p += seq;
            i += seq - 1;
        } else if (c == '\n') {
            p += sprintf(p, "\\n");
        } else if (c == '\t') {
            p += sprintf(p, "\\t");
        } else if (c == '\\') {
            p += sprintf(p, "\\\\");
        } else if (c < 0x20 || c >= 0x7f) {
            p += sprintf(p, "\\x%02x", c);
        } else {
            *p++ = (char)c;
        }
    }
    if (shown < len)
        p += sprintf(p, "...(%zu bytes)", len);
    *p = '\0';
    return out;
}
