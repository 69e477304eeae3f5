/* test_subexpr.c: the one subscription-expression rule shared by broker and
 * client (RocketMQ's FilterAPI): "*" and "" mean everything, tags are split
 * at "||" and trimmed of spaces, tabs and control bytes, empty pieces are
 * skipped, "*" inside a list is a literal tag, an expression naming no tag
 * is refused. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "rmq_subexpr.h"

typedef struct tags {
    char out[256];
    size_t n;
} tags_t;

/* Joins the parsed tags with '/'. */
static rmq_err_t collect(const char *tag, size_t len, void *arg)
{
    tags_t *t = arg;
    size_t used = strlen(t->out);
    snprintf(t->out + used, sizeof(t->out) - used, "%s%.*s", t->n ? "/" : "", (int)len, tag);
    t->n++;
    return RMQ_OK;
}

/* Parses expr; returns the status, all and the joined tags in t. */
static rmq_err_t parse(const char *expr, int *all, tags_t *t)
{
    memset(t, 0, sizeof(*t));
    return rmq_subexpr_parse(expr, all, collect, t);
}

START_TEST(test_everything)
{
    static const char *const all_exprs[] = {"*", "", " * ", "\t*\t", "  ", NULL};
    int all = 0;
    tags_t t;
    for (int i = 0; all_exprs[i]; i++) {
        ck_assert_int_eq(parse(all_exprs[i], &all, &t), RMQ_OK);
        ck_assert_msg(all == 1, "'%s' should mean everything", all_exprs[i]);
        ck_assert_uint_eq(t.n, 0);
    }
    ck_assert_int_eq(parse(NULL, &all, &t), RMQ_OK);
    ck_assert_int_eq(all, 1);
}
END_TEST

START_TEST(test_tags_trimmed)
{
    int all = 1;
    tags_t t;
    ck_assert_int_eq(parse("TagA\t|| TagB", &all, &t), RMQ_OK);
    ck_assert_int_eq(all, 0);
    ck_assert_str_eq(t.out, "TagA/TagB");
    ck_assert_int_eq(parse(" A ||\tB\t||\r\nC", &all, &t), RMQ_OK);
    ck_assert_str_eq(t.out, "A/B/C");
    ck_assert_int_eq(parse("single", &all, &t), RMQ_OK);
    ck_assert_str_eq(t.out, "single");
    ck_assert_int_eq(parse("A|B", &all, &t), RMQ_OK);   /* one '|' is part of the tag */
    ck_assert_str_eq(t.out, "A|B");
}
END_TEST

START_TEST(test_star_in_list_is_literal)
{
    int all = 1;
    tags_t t;
    ck_assert_int_eq(parse("TagA || *", &all, &t), RMQ_OK);
    ck_assert_int_eq(all, 0);
    ck_assert_str_eq(t.out, "TagA/*");
}
END_TEST

START_TEST(test_empty_pieces)
{
    int all = 1;
    tags_t t;
    ck_assert_int_eq(parse("A || || B ||", &all, &t), RMQ_OK);
    ck_assert_str_eq(t.out, "A/B");
    ck_assert_int_eq(parse("||", &all, &t), RMQ_EINVAL);
    ck_assert_int_eq(parse(" || \t|| ", &all, &t), RMQ_EINVAL);
}
END_TEST

static rmq_err_t refuse(const char *tag, size_t len, void *arg)
{
    return RMQ_ENOMEM;
}

START_TEST(test_callback_error_stops)
{
    int all = 0;
    ck_assert_int_eq(rmq_subexpr_parse("A || B", &all, refuse, NULL), RMQ_ENOMEM);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("subexpr");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_everything);
    tcase_add_test(tc, test_tags_trimmed);
    tcase_add_test(tc, test_star_in_list_is_literal);
    tcase_add_test(tc, test_empty_pieces);
    tcase_add_test(tc, test_callback_error_stops);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
