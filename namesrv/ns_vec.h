/* ns_vec.h: a sorted vector of fixed-size elements, the one container the
 * name server's tables are built from. Lookups are binary searches with a
 * caller-supplied comparison; insertion and removal move the tail. Tables
 * here hold at most thousands of entries, so this beats a hash map on code
 * size, iteration order (always sorted, so listings are stable) and memory. */
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

#endif
