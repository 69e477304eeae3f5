/* rmq_config.h: one table drives parsing, validation, defaults and printing
 * of a daemon's configuration. Files are Java .properties files with
 * RocketMQ's key names. Each table entry names a key, its type, where it
 * lives in the caller's config struct, its default and its bounds. */
#ifndef RMQ_CONFIG_H
#define RMQ_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rmq_err.h"

typedef enum rmq_cfg_type {
    RMQ_CFG_INT,    /* int64_t field; min/max bounds */
    RMQ_CFG_BOOL,   /* int field; true/false */
    RMQ_CFG_STR,    /* char * field (heap, owned by the struct); max = max length, 0 = any */
    RMQ_CFG_ENUM,   /* int field; index into choices (NULL-terminated) */
} rmq_cfg_type_t;

typedef struct rmq_cfg_entry {
    const char *key;              /* RocketMQ property name */
    rmq_cfg_type_t type;
    size_t offset;                /* offsetof(config struct, field) */
    const char *def;              /* default as text, parsed like a file value */
    int64_t min, max;             /* bounds for INT; max length for STR */
    const char *const *choices;   /* ENUM names, NULL-terminated */
    const char *help;             /* one line: what it does */
} rmq_cfg_entry_t;

typedef struct rmq_cfg_table {
    const rmq_cfg_entry_t *entries;
    size_t count;
    const char *const *aliases;   /* pairs {old, new, ...}, NULL-terminated, may be NULL */
} rmq_cfg_table_t;

/* Sets every field to its default. Fails only on a bad default (a bug).
 * STR fields must be NULL or owned by obj (zero a fresh struct first). */
rmq_err_t rmq_config_defaults(const rmq_cfg_table_t *t, void *obj);

/* Sets one key from text. On error writes "key=value: rule" into err. */
rmq_err_t rmq_config_set(const rmq_cfg_table_t *t, void *obj, const char *key,
                         const char *value, char *err, size_t errlen);

/* Loads a .properties file over obj (defaults first is the caller's job).
 * Unknown keys are logged as warnings and skipped; a bad value returns
 * RMQ_EINVAL with "FILE:LINE: key=value: rule" in err. */
rmq_err_t rmq_config_load(const rmq_cfg_table_t *t, void *obj, const char *path,
                          char *err, size_t errlen);

/* Parses properties text (same rules as a file); name is used in messages. */
rmq_err_t rmq_config_load_text(const rmq_cfg_table_t *t, void *obj, const char *text,
                               size_t len, const char *name, char *err, size_t errlen);

/* Prints every key=value in table order, .properties syntax. */
void rmq_config_print(const rmq_cfg_table_t *t, const void *obj, FILE *out);

/* Logs the effective configuration once at INFO: a heading naming source
 * (the file, or NULL for defaults only), then one "  key=value" line per
 * key in table order. */
void rmq_config_log(const rmq_cfg_table_t *t, const void *obj, const char *source);

/* Formats one key's current value into buf; returns RMQ_ENOTFOUND if unknown,
 * RMQ_ETOOBIG if buf was too small (the text is truncated). */
rmq_err_t rmq_config_get(const rmq_cfg_table_t *t, const void *obj, const char *key,
                         char *buf, size_t buflen);

/* Frees the STR fields. */
void rmq_config_deinit(const rmq_cfg_table_t *t, void *obj);

/* Low-level .properties parser: calls fn for each key/value after handling
 * comments (#, !), separators (=, :, whitespace), line continuations and
 * \t \n \r \f \uXXXX escapes (to UTF-8); unescaped trailing blanks of a
 * value are dropped; line is where the logical line starts. A malformed
 * \uXXXX escape calls fn with value NULL (key is then the raw line) so the
 * caller can report the line. Stops and returns fn's error if non-zero, or
 * RMQ_ENOMEM. */
typedef int (*rmq_properties_fn)(const char *key, const char *value, int line, void *arg);
int rmq_properties_parse(const char *text, size_t len, rmq_properties_fn fn, void *arg);

/* Writes text as a key (is_key: '=', ':', blanks and a leading '#' or '!'
 * escaped too) or a value of a .properties line, so that parsing gives it
 * back: backslashes, control characters, leading and trailing blanks. */
void rmq_properties_print(const char *text, int is_key, FILE *out);

#endif
