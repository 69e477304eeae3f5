/* rmq_tags.c: subscription expressions (the rule: common/rmq_subexpr.h),
 * parsed once into a tag set and matched against each pulled message's TAGS
 * (the broker filters by tag hash; this re-check removes hash collisions). */
#include <stdlib.h>
#include <string.h>

#include "rmq_client_int.h"
#include "rmq_subexpr.h"

/* rmq_subexpr_fn: appends a copy of the tag to the set. */
static rmq_err_t tags_add(const char *tag, size_t len, void *arg)
{
    rmq_tags_t *t = arg;
    char **grown = realloc(t->tags, (t->n + 1) * sizeof *grown);
    if (!grown)
        return RMQ_ENOMEM;
    t->tags = grown;
    t->tags[t->n] = strndup(tag, len);
    if (!t->tags[t->n])
        return RMQ_ENOMEM;
    t->n++;
    return RMQ_OK;
}

rmq_err_t rmq_tags_parse(const char *expr, rmq_tags_t *t)
{
    memset(t, 0, sizeof *t);
    rmq_err_t err = rmq_subexpr_parse(expr, &t->all, tags_add, t);
    if (err != RMQ_OK)
        rmq_tags_free(t);
    return err;
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
