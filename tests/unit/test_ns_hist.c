/* test_ns_hist.c: the console's hour of samples: slots open per tick and
 * the oldest drops after NS_HIST_SLOTS, values of one slot sum, nothing is
 * kept before the first tick, and each kind's table stays at its size
 * whatever the number of names: a newcomer takes the place of the series
 * with the lowest mean only when it is above it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_hist.h"

/* series (kind, name) rendered as JSON into buf. */
static const char *rendered(const ns_hist_t *h, ns_hist_kind_t kind, const char *name, int one, char *buf,
                            size_t len)
{
    struct evbuffer *out = evbuffer_new();
    ns_hist_render(h, kind, name, one, out);
    size_t n = evbuffer_get_length(out);
    snprintf(buf, len, "%.*s", (int)n, (const char *)evbuffer_pullup(out, -1));
    evbuffer_free(out);
    return buf;
}

START_TEST(test_slots_and_sums)
{
    ns_hist_t *h = ns_hist_new();
    char buf[256];
    ck_assert_ptr_nonnull(h);
    ns_hist_add(h, NS_HIST_BROKER, "b", 1, 2);                 /* before the first tick: dropped */
    ck_assert_int_eq(ns_hist_count(h, NS_HIST_BROKER), 0);
    ns_hist_tick(h, 1000);
    ns_hist_add(h, NS_HIST_TOPIC, "T", 5, 0);
    ns_hist_add(h, NS_HIST_TOPIC, "T", 2.5, 0);                /* a second broker's share */
    ns_hist_add(h, NS_HIST_BROKER, "b", 1, 2);
    ns_hist_tick(h, 2000);                                     /* a slot without samples is skipped */
    ns_hist_tick(h, 3000);
    ns_hist_add(h, NS_HIST_BROKER, "b", 3, 4);
    ck_assert_str_eq(rendered(h, NS_HIST_TOPIC, "T", 1, buf, sizeof buf), "[[1000,7.50]]");
    ck_assert_str_eq(rendered(h, NS_HIST_BROKER, "b", 0, buf, sizeof buf), "[[1000,1.00,2.00],[3000,3.00,4.00]]");
    ck_assert_str_eq(rendered(h, NS_HIST_GROUP, "b", 1, buf, sizeof buf), "[]");
    ck_assert_int_eq(ns_hist_kept(h, NS_HIST_TOPIC, "T"), 1);
    ck_assert_int_eq(ns_hist_kept(h, NS_HIST_GROUP, "T"), 0);
    ns_hist_free(h);
}
END_TEST

START_TEST(test_ring_drops_oldest)
{
    ns_hist_t *h = ns_hist_new();
    for (int i = 0; i < NS_HIST_SLOTS + 5; i++) {
        ns_hist_tick(h, (int64_t)i * 10);
        ns_hist_add(h, NS_HIST_GROUP, "g", i, 0);
    }
    struct evbuffer *out = evbuffer_new();
    ns_hist_render(h, NS_HIST_GROUP, "g", 1, out);
    const char *text = (const char *)evbuffer_pullup(out, -1);
    size_t points = 0;
    for (const char *p = text; (p = strstr(p, "],")) != NULL; p++)
        points++;
    ck_assert_uint_eq(points + 1, NS_HIST_SLOTS);
    ck_assert_msg(strncmp(text, "[[50,5.00],[60,6.00],", 21) == 0, "oldest kept is not slot 5: %.40s", text);
    evbuffer_free(out);
    ns_hist_free(h);
}
END_TEST

START_TEST(test_fixed_tables)
{
    ns_hist_t *h = ns_hist_new();
    char name[32], buf[64];
    ns_hist_tick(h, 0);
    for (int i = 0; i < 1000; i++) {                           /* many more topics than kept */
        snprintf(name, sizeof name, "T%d", i);
        ns_hist_add(h, NS_HIST_TOPIC, name, 1 + i % 7, 0);
    }
    ck_assert_uint_eq(ns_hist_count(h, NS_HIST_TOPIC), NS_HIST_TOPICS);
    ns_hist_add(h, NS_HIST_TOPIC, "quiet", 0.5, 0);           /* below every kept mean: not kept */
    ck_assert_int_eq(ns_hist_kept(h, NS_HIST_TOPIC, "quiet"), 0);
    ns_hist_add(h, NS_HIST_TOPIC, "busy", 1000, 0);            /* above the lowest: takes its place */
    ck_assert_int_eq(ns_hist_kept(h, NS_HIST_TOPIC, "busy"), 1);
    ck_assert_uint_eq(ns_hist_count(h, NS_HIST_TOPIC), NS_HIST_TOPICS);
    ck_assert_str_eq(rendered(h, NS_HIST_TOPIC, "busy", 1, buf, sizeof buf), "[[0,1000.00]]");
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "G%d", i);
        ns_hist_add(h, NS_HIST_GROUP, name, 10 + i, 0);
        snprintf(name, sizeof name, "10.0.0.%d:10911", i);
        ns_hist_add(h, NS_HIST_BROKER, name, 1, 1);
    }
    ck_assert_uint_eq(ns_hist_count(h, NS_HIST_GROUP), NS_HIST_GROUPS);
    ck_assert_uint_eq(ns_hist_count(h, NS_HIST_BROKER), NS_HIST_BROKERS);
    ck_assert_int_eq(ns_hist_kept(h, NS_HIST_GROUP, "G99"), 1);  /* the largest lags stay */
    ns_hist_free(h);
}
END_TEST

static Suite *hist_suite(void)
{
    Suite *s = suite_create("ns_hist");
    TCase *tc = tcase_create("hist");
    tcase_add_test(tc, test_slots_and_sums);
    tcase_add_test(tc, test_ring_drops_oldest);
    tcase_add_test(tc, test_fixed_tables);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(hist_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
