/* ns_vec.c: the sorted vector behind every name-server table. */
#include "ns_vec.h"

#include <stdlib.h>
#include <string.h>

void ns_vec_init(ns_vec_t *v, size_t size)
{
    v->items = NULL;
    v->len = 0;
    v->cap = 0;
    v->size = size;
}

void ns_vec_deinit(ns_vec_t *v)
{
    free(v->items);
    v->items = NULL;
    v->len = 0;
    v->cap = 0;
}

void *ns_vec_at(const ns_vec_t *v, size_t i)
{
    return v->items + i * v->size;
}

size_t ns_vec_search(const ns_vec_t *v, ns_vec_cmp_fn cmp, const void *key, int *found)
{
    size_t lo = 0, hi = v->len;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp(ns_vec_at(v, mid), key);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

void *ns_vec_find(const ns_vec_t *v, ns_vec_cmp_fn cmp, const void *key)
{
    int found;
    size_t i = ns_vec_search(v, cmp, key, &found);

    return found ? ns_vec_at(v, i) : NULL;
}

void *ns_vec_insert_at(ns_vec_t *v, size_t i)
{
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        char *items = realloc(v->items, cap * v->size);
        if (!items)
            return NULL;
        v->items = items;
        v->cap = cap;
    }
    memmove(v->items + (i + 1) * v->size, v->items + i * v->size, (v->len - i) * v->size);
    v->len++;
    memset(ns_vec_at(v, i), 0, v->size);
    return ns_vec_at(v, i);
}

void ns_vec_remove_at(ns_vec_t *v, size_t i)
{
    memmove(v->items + i * v->size, v->items + (i + 1) * v->size, (v->len - i - 1) * v->size);
    v->len--;
}

void ns_vec_filter(ns_vec_t *v, ns_vec_keep_fn keep, void *arg)
{
    size_t kept = 0;
    for (size_t i = 0; i < v->len; i++) {
        char *item = v->items + i * v->size;
        if (!keep(item, arg))
            continue;
        if (kept != i)
            memcpy(v->items + kept * v->size, item, v->size);
        kept++;
    }
    v->len = kept;
}

rmq_err_t ns_vec_merge(ns_vec_t *v, const void *items, size_t n, ns_vec_cmp_fn cmp)
{
    if (n == 0)
        return RMQ_OK;
    if (v->len + n > v->cap) {
        size_t cap = v->cap ? v->cap : 4;
        while (cap < v->len + n)
            cap *= 2;
        char *grown = realloc(v->items, cap * v->size);
        if (!grown)
            return RMQ_ENOMEM;
        v->items = grown;
        v->cap = cap;
    }
    const char *add = items;
    size_t i = v->len, j = n, out = v->len + n;
    while (j > 0) {
        const char *b = add + (j - 1) * v->size;
        /* the elements' first member is their key: compare with it */
        if (i > 0 && cmp(ns_vec_at(v, i - 1), *(const void *const *)b) > 0) {
            memcpy(ns_vec_at(v, --out), ns_vec_at(v, i - 1), v->size);
            i--;
        } else {
            memcpy(ns_vec_at(v, --out), b, v->size);
            j--;
        }
    }
    v->len += n;
    return RMQ_OK;
}
