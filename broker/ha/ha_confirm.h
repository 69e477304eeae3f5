/* ha_confirm.h: the text of ROOT/confirmOffset, a controller-mode slave's
 * last confirm offset from its master: one decimal offset and a newline.
 * Pure functions, any thread. */
#ifndef HA_CONFIRM_H
#define HA_CONFIRM_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_err.h"
#include "rmq_fmt.h"

#define HA_CONFIRM_TEXT_MAX (RMQ_FMT_I64_LEN + 1)   /* digits, '\n', NUL */

/* confirm (>= 0) as the file holds it into out[HA_CONFIRM_TEXT_MAX],
 * NUL-terminated; returns the text's length (the NUL not counted). */
size_t ha_confirm_format(char *out, int64_t confirm);

/* The file's len bytes (any bytes, no NUL needed) into *confirm: RMQ_OK,
 * or RMQ_ECORRUPT with why naming what is wrong unless they are exactly
 * what ha_confirm_format writes (digits without a sign, blank or leading
 * zero, within int64, one '\n'). */
rmq_err_t ha_confirm_parse(const char *data, size_t len, int64_t *confirm, char *why, size_t whylen);

#endif
