/* bk_props.h: rewriting a message's properties string (format and buffer
 * in rmq_message.h) when the broker re-stores a message under another
 * topic: the delay scheduler (REAL_TOPIC, REAL_QID) and the retry/dead-letter
 * path (RETRY_TOPIC, ORIGIN_MESSAGE_ID). The buffer is reused across calls,
 * so the steady state does not allocate. Loop thread (the buffer belongs to
 * its caller). */
#ifndef BK_PROPS_H
#define BK_PROPS_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_err.h"
#include "rmq_message.h"

typedef rmq_props_buf_t bk_props_buf_t;

/* Empties pb, then copies every well-formed pair of props[0..len) whose
 * name is not in drop (a NULL-terminated list; may be NULL). */
rmq_err_t bk_props_copy(bk_props_buf_t *pb, const char *props, size_t len, const char *const *drop);
/* Appends name=value (no check for an existing name: drop it first);
 * rmq_props_buf_put under the broker's name. */
rmq_err_t bk_props_put(bk_props_buf_t *pb, const char *name, const char *value);
rmq_err_t bk_props_put_int(bk_props_buf_t *pb, const char *name, int64_t value);
void bk_props_buf_free(bk_props_buf_t *pb);

/* The integer value of name in props, or def when absent or not a decimal
 * integer (*ok = 0 then if ok is given and the name is present). */
int64_t bk_props_int(const char *props, size_t len, const char *name, int64_t def, int *ok);

#endif
