/* ns_vec.h: a sorted vector of fixed-size elements, the one container the
 * name server's tables are built from. Lookups are binary searches with a
 * caller-supplied comparison; insertion and removal move the tail. Tables
 * here hold up to hundreds of thousands of entries (topics): lookups stay
 * O(log n), and bulk insertion merges (ns_vec_merge) so a registration of
 * many new topics does not move the tail once per topic. Beats a hash map
 * on code size, iteration order (always sorted, so listings are stable)
 * and memory. */
#ifndef NS_VEC_H
#define NS_VEC_H

#include <stddef.h>

#include "rmq_err.h"

typedef struct ns_vec {
    char *items;       /* len elements of size bytes each, sorted */
    size_t len;
    size_t cap;
    size_t size;
} ns_vec_t;

/* Compares one element with a search key: <0, 0, >0 like strcmp. */
typedef int (*ns_vec_cmp_fn)(const void *item, const void *key);

/* An empty vector of elements of size bytes (embedded; no allocation yet). */
void ns_vec_init(ns_vec_t *v, size_t size);
/* Frees the element storage (not what elements point to). */
void ns_vec_deinit(ns_vec_t *v);

/* Element i (i < len). */
void *ns_vec_at(const ns_vec_t *v, size_t i);

/* Binary search: returns the index of the element matching key and sets
 * *found = 1, or the index where it would be inserted and *found = 0. */
size_t ns_vec_search(const ns_vec_t *v, ns_vec_cmp_fn cmp, const void *key, int *found);

/* The element matching key, or NULL. */
void *ns_vec_find(const ns_vec_t *v, ns_vec_cmp_fn cmp, const void *key);

/* Opens a zeroed slot at index i (i <= len) and returns it; NULL when out of
 * memory. The caller fills it in key order. */
void *ns_vec_insert_at(ns_vec_t *v, size_t i);

/* Removes element i, moving the tail down. */
void ns_vec_remove_at(ns_vec_t *v, size_t i);

/* Keeps, in order and in one pass, the elements keep(item, arg) returns
 * non-zero for; keep releases what an element it drops points to. So
 * dropping many costs O(len), not a move of the tail per element. */
typedef int (*ns_vec_keep_fn)(void *item, void *arg);
void ns_vec_filter(ns_vec_t *v, ns_vec_keep_fn keep, void *arg);

/* Inserts n elements (copied from items: sorted, distinct, none already in
 * v) in one pass from the back, so adding many costs O(len + n) rather than
 * a move of the tail per element. Elements' first member must be a pointer
 * key that cmp takes as its key argument. RMQ_ENOMEM leaves v unchanged. */
rmq_err_t ns_vec_merge(ns_vec_t *v, const void *items, size_t n, ns_vec_cmp_fn cmp);

#endif
