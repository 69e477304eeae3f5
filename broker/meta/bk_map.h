/* bk_map.h: a string-keyed hash map (separate chaining, power-of-two
 * buckets, FNV-1a) that the broker's tables are built from: topics, groups,
 * consumer offsets, consumer groups, held pulls. Keys are copied; values are
 * borrowed pointers the caller owns. Not thread-safe: loop thread only. */
#ifndef BK_MAP_H
#define BK_MAP_H

#include <stddef.h>

#include "rmq_err.h"

typedef struct bk_map bk_map_t;

/* An empty map. Owner: caller (bk_map_free). NULL when out of memory. */
bk_map_t *bk_map_new(void);
/* Frees the map and its key copies; calls free_val on each value if given. */
void bk_map_free(bk_map_t *m, void (*free_val)(void *val));

/* The value for key[0..len), or NULL. */
void *bk_map_get(const bk_map_t *m, const char *key, size_t len);
/* Sets key to val (replacing any previous value, which is not freed). */
rmq_err_t bk_map_put(bk_map_t *m, const char *key, size_t len, void *val);
/* Removes key and returns its value (NULL if absent). */
void *bk_map_del(bk_map_t *m, const char *key, size_t len);
size_t bk_map_count(const bk_map_t *m);

/* Iteration: *cursor starts at 0; returns 1 and sets key/val while entries
 * remain. The map must not change during iteration except through
 * bk_map_del_current. */
int bk_map_next(const bk_map_t *m, size_t *cursor, const char **key, void **val);
/* Removes the entry bk_map_next just returned and returns its value. */
void *bk_map_del_current(bk_map_t *m, size_t *cursor);

#endif
