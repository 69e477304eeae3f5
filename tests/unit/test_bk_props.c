/* test_bk_props.c: the broker's rewrite of a properties string when it
 * re-stores a message: copy with dropped names, malformed pieces left out,
 * appended pairs, integer values. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "bk_props.h"

START_TEST(test_props_copy_drops_and_skips)
{
    static const char props[] = "TAGS\x01t\x02junk\x02\x01" "e\x02REAL_TOPIC\x01old\x02KEYS\x01k";
    static const char *const drop[] = { RMQ_PROP_REAL_TOPIC, "TAG", NULL };
    bk_props_buf_t pb = {0};

    ck_assert_int_eq(bk_props_copy(&pb, props, sizeof(props) - 1, drop), RMQ_OK);
    ck_assert_str_eq(pb.data, "TAGS\x01t\x02KEYS\x01k");
    ck_assert_uint_eq(pb.len, strlen(pb.data));
    ck_assert_int_eq(bk_props_put(&pb, RMQ_PROP_REAL_TOPIC, "new"), RMQ_OK);
    ck_assert_int_eq(bk_props_put_int(&pb, RMQ_PROP_REAL_QID, -3), RMQ_OK);
    ck_assert_str_eq(pb.data, "TAGS\x01t\x02KEYS\x01k\x02REAL_TOPIC\x01new\x02REAL_QID\x01-3");
    ck_assert_int_eq(bk_props_copy(&pb, NULL, 0, NULL), RMQ_OK);   /* reuse: empties */
    ck_assert_str_eq(pb.data, "");
    ck_assert_uint_eq(pb.len, 0);
    ck_assert_int_eq(bk_props_copy(&pb, props, sizeof(props) - 1, NULL), RMQ_OK);
    ck_assert_str_eq(pb.data, "TAGS\x01t\x02REAL_TOPIC\x01old\x02KEYS\x01k");
    bk_props_buf_free(&pb);
    ck_assert_ptr_null(pb.data);
}
END_TEST

START_TEST(test_props_int)
{
    static const char props[] = "A\x01" "42\x02" "B\x01x1\x02" "C\x01";
    int ok = -1;

    ck_assert_int_eq(bk_props_int(props, sizeof(props) - 1, "A", 7, &ok), 42);
    ck_assert_int_eq(ok, 1);
    ck_assert_int_eq(bk_props_int(props, sizeof(props) - 1, "B", 7, &ok), 7);
    ck_assert_int_eq(ok, 0);
    ck_assert_int_eq(bk_props_int(props, sizeof(props) - 1, "C", 7, &ok), 7);
    ck_assert_int_eq(ok, 0);
    ck_assert_int_eq(bk_props_int(props, sizeof(props) - 1, "D", 7, &ok), 7);
    ck_assert_int_eq(ok, 1);
    ck_assert_int_eq(bk_props_int(NULL, 0, "A", 9, NULL), 9);
}
END_TEST

static Suite *bk_props_suite(void)
{
    Suite *s = suite_create("bk_props");
    TCase *tc = tcase_create("props");

    tcase_add_test(tc, test_props_copy_drops_and_skips);
    tcase_add_test(tc, test_props_int);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(bk_props_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
