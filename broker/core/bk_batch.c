/* bk_batch.c: a batch send's scratch (see bk_batch.h). */
#include "bk_batch.h"

#include <stdlib.h>
#include <string.h>

#include "rmq_message.h"


int bk_scratch_reserve(void **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    void *p = realloc(*buf, n);
    if (!p)
        return -1;
    *buf = p;
    *cap = n;
    return 0;
}

rmq_err_t bk_batch_reserve(bk_batch_t *b, size_t n, size_t props_total)
{
    b->props_len = 0;
    if (bk_scratch_reserve((void **)&b->msgs, &b->msgs_cap, n * sizeof(st_msg_t)) != 0 ||
        bk_scratch_reserve((void **)&b->props, &b->props_cap, props_total + 1) != 0)
        return RMQ_ENOMEM;
    return RMQ_OK;
}

void bk_batch_props(bk_batch_t *b, st_msg_t *m, const char *own, size_t own_len, const char *extra,
                    size_t extra_len)
{
    char *out = b->props + b->props_len;
    size_t n = own_len;
    memcpy(out, own, own_len);
    if (extra_len) {
        if (n && out[n - 1] != '\x02')
            out[n++] = '\x02';
        memcpy(out + n, extra, extra_len);
        n += extra_len;
    }
    m->properties = out;
    m->properties_len = n;
    b->props_len += n;
}

const char *bk_batch_ids(bk_batch_t *b, const st_store_t *st, int64_t phys, size_t n)
{
    if (bk_scratch_reserve((void **)&b->ids, &b->ids_cap, n * (RMQ_MSG_ID_MAX + 1) + 1) != 0)
        return NULL;
    char *p = b->ids;
    for (size_t i = 0; i < n; i++) {
        st_store_msg_id(st, phys, p);
        p += strlen(p);
        *p++ = i + 1 < n ? ',' : '\0';
        phys += (int64_t)st_msg_record_size(st, &b->msgs[i]);
    }
    return b->ids;
}

void bk_batch_free(bk_batch_t *b)
{
    free(b->msgs);
    free(b->props);
    free(b->ids);
    memset(b, 0, sizeof(*b));
}
