/* rmq_tags.c: subscription expressions: "*" (everything) or "TagA || TagB",
 * parsed once into a tag set and matched against each pulled message's TAGS
 * (the broker filters by tag hash; this re-check removes hash collisions). */
#include <stdlib.h>
#include <string.h>

#include "rmq_client_int.h"

/* Appends the trimmed tag [b, e) to t; RMQ_EINVAL if it is empty. */
static rmq_err_t tags_add(rmq_tags_t *t, const char *b, const char *e)
{
    while (b < e && (*b == ' ' || *b == '\t'))
        b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    if (b == e)
        return RMQ_EINVAL;
    char **grown = realloc(t->tags, (t->n + 1) * sizeof *grown);
    if (!grown)
        return RMQ_ENOMEM;
    t->tags = grown;
    t->tags[t->n] = strndup(b, (size_t)(e - b));
    if (!t->tags[t->n])
        return RMQ_ENOMEM;
    t->n++;
    return RMQ_OK;
}

rmq_err_t rmq_tags_parse(const char *expr, rmq_tags_t *t)
{
    memset(t, 0, sizeof *t);
    const char *p = expr ? expr : "";
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0' || strcmp(p, "*") == 0) {
        t->all = 1;
        return RMQ_OK;
    }
    for (;;) {
        const char *sep = strstr(p, "||");
        const char *end = sep ? sep : p + strlen(p);
        rmq_err_t err = tags_add(t, p, end);
        if (err != RMQ_OK) {
            rmq_tags_free(t);
            return err;
        }
        if (!sep)
            return RMQ_OK;
        p = sep + 2;
    }
}

int rmq_tags_match(const rmq_tags_t *t, const char *tag, size_t len)
{
    if (t->all)
        return 1;
    for (size_t i = 0; i < t->n; i++)
        if (strlen(t->tags[i]) == len && memcmp(t->tags[i], tag, len) == 0)
            return 1;
    return 0;
}

void rmq_tags_free(rmq_tags_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->tags[i]);
    free(t->tags);
    memset(t, 0, sizeof *t);
}
