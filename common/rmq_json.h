/* rmq_json.h: a small strict JSON reader for bytes from peers (RocketMQ
 * remoting headers and bodies). RFC 8259 grammar only: no comments, no
 * trailing commas, no unquoted keys, nothing after the value but
 * whitespace. Limits: nesting depth RMQ_JSON_DEPTH_MAX, RMQ_JSON_NODES_MAX
 * values per document (the input length is the caller's frame bound).
 * Strings must be valid UTF-8 and are decoded to UTF-8 (\u escapes with surrogate pairs); a string
 * containing U+0000 is refused, so every decoded string is a C string.
 * Numbers keep their source text (exact: 64-bit ids never pass through a
 * double). The writer side (string escaping) is rmq_json_str in rmq_http.h.
 * Any thread; a document is owned by its caller. */
#ifndef RMQ_JSON_H
#define RMQ_JSON_H

#include <stddef.h>
#include <stdint.h>

#define RMQ_JSON_DEPTH_MAX 32
#define RMQ_JSON_NODES_MAX 65536

typedef enum rmq_json_type {
    RMQ_JSON_NULL = 0,
    RMQ_JSON_BOOL,
    RMQ_JSON_NUMBER,
    RMQ_JSON_STRING,
    RMQ_JSON_ARRAY,
    RMQ_JSON_OBJECT,
} rmq_json_type_t;

/* One value. str: a string's decoded text, a number's source text, "true"
 * or "false" (NULL for null, arrays and objects). An array's or object's n
 * members are items[0..n); an object's keys are keys[0..n), in source order
 * (a repeated key: rmq_json_get finds the first). */
typedef struct rmq_json {
    rmq_json_type_t type;
    char *str;
    size_t len;                   /* strlen(str) */
    size_t n;
    struct rmq_json **items;
    char **keys;
    size_t cap;                   /* allocated members (the reader's) */
} rmq_json_t;

/* Parses text[0..len). NULL with "offset N: what was wrong" in err on bad
 * input or ENOMEM. Owner: caller (rmq_json_free). */
rmq_json_t *rmq_json_parse(const char *text, size_t len, char *err, size_t errlen);
void rmq_json_free(rmq_json_t *v);

/* The member key of object obj; NULL when absent or obj is no object. */
const rmq_json_t *rmq_json_get(const rmq_json_t *obj, const char *key);

/* A scalar's text: a string's value, a number's source text, "true" or
 * "false"; NULL for null, arrays, objects and NULL. */
const char *rmq_json_scalar(const rmq_json_t *v);

/* A number (or a string holding one) as an integer in [min, max]; 0 on
 * success, -1 when v is absent, no integer or out of range. */
int rmq_json_int(const rmq_json_t *v, int64_t min, int64_t max, int64_t *out);

/* 1 if s[0..n) is valid UTF-8 (no overlong forms, no surrogates). */
int rmq_json_utf8_valid(const char *s, size_t n);

#endif
