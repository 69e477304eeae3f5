/* test_ns_ctl_state.c: the controller's group state: its etcd value round
 * trips, malformed values are refused with a reason, and the election rule
 * (live sync-state-set members only unless unclean; epoch, then max
 * offset, then priority; the epochs raised and the winner's heartbeat
 * timeout kept on promotion; states written before that timeout was kept
 * still read), and when a master's lease has surely lapsed for a leader. */
#include "ns_ctl_state.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_round_trip)
{
    ns_ctl_state_t st, back;
    struct evbuffer *out = evbuffer_new();
    char why[256];

    ns_ctl_state_init(&st);
    st.master_id = 1;
    strcpy(st.master_addr, "127.0.0.1:10911");
    st.master_epoch = 3;
    st.sync_set[0] = 1;
    st.sync_set[1] = 2;
    st.n_sync = 2;
    st.sync_set_epoch = 5;
    st.master_timeout_ms = 6000;
    ck_assert_int_eq(ns_ctl_state_encode(&st, out), RMQ_OK);
    size_t n = evbuffer_get_length(out);
    const char *text = (const char *)evbuffer_pullup(out, -1);
    ck_assert_int_eq(ns_ctl_state_decode(text, n, &back, why, sizeof why), RMQ_OK);
    ck_assert_int_eq(back.master_id, 1);
    ck_assert_str_eq(back.master_addr, "127.0.0.1:10911");
    ck_assert_int_eq(back.master_epoch, 3);
    ck_assert_uint_eq(back.n_sync, 2);
    ck_assert_int_eq(back.sync_set[1], 2);
    ck_assert_int_eq(back.sync_set_epoch, 5);
    ck_assert_int_eq(back.master_timeout_ms, 6000);
    evbuffer_free(out);
}
END_TEST

/* A state written before the master's heartbeat timeout was kept reads
 * with it unknown (0). */
START_TEST(test_reads_state_without_timeout)
{
    static const char old[] = "{\"masterBrokerId\":1,\"masterAddress\":\"a\",\"masterEpoch\":2,"
                              "\"syncStateSet\":[1],\"syncStateSetEpoch\":3}";
    ns_ctl_state_t st;
    char why[256];

    ck_assert_int_eq(ns_ctl_state_decode(old, strlen(old), &st, why, sizeof why), RMQ_OK);
    ck_assert_int_eq(st.master_epoch, 2);
    ck_assert_int_eq(st.master_timeout_ms, 0);
}
END_TEST

START_TEST(test_refuses_malformed)
{
    static const char *const bad[] = {
        "",
        "[]",
        "{\"masterBrokerId\":1,\"masterEpoch\":1,\"syncStateSet\":[1],\"syncStateSetEpoch\":1}",
        "{\"masterBrokerId\":-2,\"masterAddress\":\"\",\"masterEpoch\":1,\"syncStateSet\":[],\"syncStateSetEpoch\":1}",
        "{\"masterBrokerId\":1,\"masterAddress\":\"a\",\"masterEpoch\":-1,\"syncStateSet\":[],\"syncStateSetEpoch\":1}",
        "{\"masterBrokerId\":1,\"masterAddress\":\"a\",\"masterEpoch\":1,\"syncStateSet\":[1,1],\"syncStateSetEpoch\":1}",
        "{\"masterBrokerId\":1,\"masterAddress\":\"a\",\"masterEpoch\":1,\"syncStateSet\":{},\"syncStateSetEpoch\":1}",
        "{\"masterBrokerId\":1,\"masterAddress\":7,\"masterEpoch\":1,\"syncStateSet\":[],\"syncStateSetEpoch\":1}",
        "{\"masterBrokerId\":1,\"masterAddress\":\"a\",\"masterEpoch\":1,\"syncStateSet\":"
        "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],\"syncStateSetEpoch\":1}",
        "{\"masterBrokerId\":1,\"masterAddress\":\"a\",\"masterEpoch\":1,\"syncStateSet\":[],\"syncStateSetEpoch\":1,"
        "\"masterHeartbeatTimeoutMs\":-1}",
        "{\"masterBrokerId\":1,\"masterAddress\":\"a\",\"masterEpoch\":1,\"syncStateSet\":[],\"syncStateSetEpoch\":1,"
        "\"masterHeartbeatTimeoutMs\":3600001}",
        "{\"masterBrokerId\":1,\"masterAddress\":\"a\",\"masterEpoch\":1,\"syncStateSet\":[],\"syncStateSetEpoch\":1,"
        "\"masterHeartbeatTimeoutMs\":[6000]}",
    };
    ns_ctl_state_t st;
    char why[256];

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        ck_assert_msg(ns_ctl_state_decode(bad[i], strlen(bad[i]), &st, why, sizeof why) == RMQ_EPROTO,
                      "accepted: %s", bad[i]);
        ck_assert(strncmp(why, "group state: ", 13) == 0);
        ck_assert_int_eq(st.master_id, -1);
    }
}
END_TEST

START_TEST(test_elect)
{
    ns_ctl_state_t st, next;
    ns_ctl_member_t m[] = {
        { .broker_id = 0, .addr = "m0", .alive = 0, .epoch = 3, .max_offset = 900 },  /* the dead master */
        { .broker_id = 1, .addr = "m1", .alive = 1, .epoch = 3, .max_offset = 800, .priority = 5 },
        { .broker_id = 2, .addr = "m2", .alive = 1, .epoch = 3, .max_offset = 800, .priority = 1,
          .timeout_ms = 7000 },
        { .broker_id = 3, .addr = "m3", .alive = 1, .epoch = 4, .max_offset = 100 },  /* not in sync */
    };

    ns_ctl_state_init(&st);
    st.master_id = 0;
    st.master_epoch = 3;
    st.sync_set[0] = 0;
    st.sync_set[1] = 1;
    st.sync_set[2] = 2;
    st.n_sync = 3;
    st.sync_set_epoch = 7;
    /* same epoch and offset: the lower priority value wins */
    ck_assert_int_eq(ns_ctl_elect(&st, m, 4, 0), 2);
    /* a higher offset beats priority */
    m[1].max_offset = 850;
    ck_assert_int_eq(ns_ctl_elect(&st, m, 4, 0), 1);
    /* unclean: the out-of-sync member with the higher epoch may win */
    ck_assert_int_eq(ns_ctl_elect(&st, m, 4, 1), 3);
    /* nobody alive in the set: no master */
    m[1].alive = m[2].alive = 0;
    ck_assert_int_eq(ns_ctl_elect(&st, m, 4, 0), -1);

    ns_ctl_state_promote(&st, &m[2], &next);
    ck_assert_int_eq(next.master_id, 2);
    ck_assert_str_eq(next.master_addr, "m2");
    ck_assert_int_eq(next.master_epoch, 4);
    ck_assert_uint_eq(next.n_sync, 1);
    ck_assert_int_eq(next.sync_set[0], 2);
    ck_assert_int_eq(next.sync_set_epoch, 8);
    ck_assert_int_eq(next.master_timeout_ms, 7000);
}
END_TEST

/* A master may be replaced only after its lease surely lapsed: its last
 * heartbeat here + its timeout, and never before this leadership began +
 * that timeout (an earlier leader may have renewed it meanwhile). */
START_TEST(test_master_lapse)
{
    /* heard under this leadership: from its last heartbeat */
    ck_assert_int_eq(ns_ctl_master_lapse_ms(12000, 10000, 6000), 18000);
    /* heard only before this leader took over (a partition from it while an
     * earlier leader confirmed it): from the leadership's start */
    ck_assert_int_eq(ns_ctl_master_lapse_ms(3000, 10000, 6000), 16000);
    /* never heard: from the leadership's start */
    ck_assert_int_eq(ns_ctl_master_lapse_ms(NS_CTL_NEVER, 10000, 10000), 20000);
}
END_TEST

static Suite *ctl_state_suite(void)
{
    Suite *s = suite_create("ns_ctl_state");
    TCase *tc = tcase_create("state");
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_refuses_malformed);
    tcase_add_test(tc, test_elect);
    tcase_add_test(tc, test_master_lapse);
    tcase_add_test(tc, test_reads_state_without_timeout);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ctl_state_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
