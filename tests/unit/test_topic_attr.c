/* test_topic_attr.c: RocketMQ 5's topic attributes (rmq_topic_attr.h):
 * "+key=value,-key" applied on creation and on update with RocketMQ's
 * rules and error texts (AttributeParser, AttributeUtil, TopicAttributes),
 * the kept text in key order, its check of bytes from disk or a peer, and
 * message.type read back. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "rmq_topic_attr.h"

static char out[RMQ_TOPIC_ATTRS_MAX];
static char why[256];

/* Applies mod to current; the status (out and why hold the result). */
static rmq_err_t alter(const char *current, int create, const char *mod)
{
    out[0] = 0;
    why[0] = 0;
    return rmq_topic_attrs_alter(current, create, mod, strlen(mod), out, sizeof(out), why, sizeof(why));
}

/* mod is refused with exactly the message expected. */
static void refused(const char *current, int create, const char *mod, const char *expected)
{
    ck_assert_msg(alter(current, create, mod) == RMQ_EINVAL, "'%s' accepted", mod);
    ck_assert_str_eq(why, expected);
}

/* mod is accepted, with the attributes text expected. */
static void accepted(const char *current, int create, const char *mod, const char *expected)
{
    ck_assert_msg(alter(current, create, mod) == RMQ_OK, "'%s' refused: %s", mod, why);
    ck_assert_str_eq(out, expected);
}

START_TEST(test_create_in_key_order)
{
    accepted("", 1, "+queue.type=BatchCQ,+message.type=FIFO,+reserve.time=86400",
             "message.type=FIFO,queue.type=BatchCQ,reserve.time=86400");
    accepted("", 1, "", "");
    accepted("", 1, "+cleanup.policy=COMPACTION", "cleanup.policy=COMPACTION");
}
END_TEST

START_TEST(test_update_adds_changes_removes)
{
    accepted("message.type=FIFO,queue.type=SimpleCQ", 0, "+message.type=MIXED,+reserve.time=-1",
             "message.type=MIXED,queue.type=SimpleCQ,reserve.time=-1");
    accepted("message.type=FIFO,queue.type=SimpleCQ", 0, "-message.type", "queue.type=SimpleCQ");
    /* no modification keeps what the topic has */
    accepted("message.type=FIFO", 0, "", "message.type=FIFO");
}
END_TEST

START_TEST(test_rocketmq_errors)
{
    refused("", 1, "+message.type=NORMAL,-queue.type", "only add attribute is supported while creating topic. key: "
                                                        "queue.type");
    refused("", 1, "+color=red", "unsupported key: color");
    refused("", 1, "message.type=FIFO", "add/alter attribute format is wrong: message.type");
    refused("", 1, "message.type", "delete attribute format is wrong: message.type");
    refused("", 1, "+=FIFO", "kv string format wrong.");
    refused("", 1, "+message.type=FIFO,+message.type=NORMAL", "alter duplication key. key: message.type");
    refused("", 1, "+message.type=fifo",
            "value is not in set: [UNSPECIFIED, NORMAL, FIFO, DELAY, TRANSACTION, MIXED]");
    refused("", 1, "+queue.type=Simple", "value is not in set: [BatchCQ, SimpleCQ]");
    refused("", 1, "+reserve.time=-2", "value is not in range(-1, 9223372036854775807)");
    refused("", 1, "+reserve.time=1h", "For input string: \"1h\"");
    refused("", 1, "+reserve.time=99999999999999999999", "For input string: \"99999999999999999999\"");
    refused("queue.type=SimpleCQ", 0, "+queue.type=BatchCQ",
            "attempt to update an unchangeable attribute. key: queue.type");
    refused("queue.type=SimpleCQ", 0, "-queue.type", "attempt to update an unchangeable attribute. key: queue.type");
    refused("", 0, "+cleanup.policy=DELETE", "attempt to update an unchangeable attribute. key: cleanup.policy");
    refused("", 0, "-message.type", "attempt to delete a nonexistent key: message.type");
}
END_TEST

START_TEST(test_refusal_keeps_nothing)
{
    ck_assert_int_eq(alter("message.type=FIFO", 0, "+message.type=NORMAL,+queue.type=BatchCQ"), RMQ_EINVAL);
    ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_check_kept_text)
{
    static const char *const good[] = {"", "message.type=FIFO", "cleanup.policy=DELETE,reserve.time=0", NULL};
    static const char *const bad[] = {"queue.type=SimpleCQ,message.type=FIFO", "message.type=FIFO,message.type=FIFO",
                                      "message.type=FIFO,", "color=red", "message.type", "+message.type=FIFO",
                                      "reserve.time=", "message.type=fifo", NULL};
    for (int i = 0; good[i]; i++)
        ck_assert_msg(rmq_topic_attrs_check(good[i], strlen(good[i]), why, sizeof(why)) == RMQ_OK, "%s: %s",
                      good[i], why);
    for (int i = 0; bad[i]; i++)
        ck_assert_msg(rmq_topic_attrs_check(bad[i], strlen(bad[i]), why, sizeof(why)) == RMQ_EINVAL, "%s", bad[i]);
    ck_assert_int_eq(rmq_topic_attrs_check("message.type=FIFO\0x", 19, why, sizeof(why)), RMQ_EINVAL);
}
END_TEST

START_TEST(test_next_and_msg_type)
{
    char key[32], value[32];
    size_t cursor = 0;
    const char *text = "message.type=TRANSACTION,reserve.time=5";
    ck_assert_int_eq(rmq_topic_attrs_next(text, &cursor, key, sizeof(key), value, sizeof(value)), 1);
    ck_assert_str_eq(key, "message.type");
    ck_assert_str_eq(value, "TRANSACTION");
    ck_assert_int_eq(rmq_topic_attrs_next(text, &cursor, key, sizeof(key), value, sizeof(value)), 1);
    ck_assert_str_eq(key, "reserve.time");
    ck_assert_str_eq(value, "5");
    ck_assert_int_eq(rmq_topic_attrs_next(text, &cursor, key, sizeof(key), value, sizeof(value)), 0);
    ck_assert_int_eq(rmq_topic_attrs_msg_type(text), RMQ_TOPIC_MSG_TRANSACTION);
    ck_assert_int_eq(rmq_topic_attrs_msg_type("queue.type=SimpleCQ"), RMQ_TOPIC_MSG_ABSENT);
    ck_assert_int_eq(rmq_topic_attrs_msg_type("message.type=FIFO"), RMQ_TOPIC_MSG_FIFO);
    ck_assert_int_eq(rmq_topic_attrs_msg_type("message.type=MIXED"), RMQ_TOPIC_MSG_MIXED);
    ck_assert_int_eq(rmq_topic_attrs_msg_type("message.type=UNSPECIFIED"), RMQ_TOPIC_MSG_UNSPECIFIED);
}
END_TEST

START_TEST(test_mod_msg_type)
{
    const char *mixed = "+queue.type=SimpleCQ,+message.type=MIXED";
    ck_assert_int_eq(rmq_topic_attrs_mod_msg_type(mixed, strlen(mixed)), RMQ_TOPIC_MSG_MIXED);
    ck_assert_int_eq(rmq_topic_attrs_mod_msg_type(mixed, 20), RMQ_TOPIC_MSG_ABSENT);   /* the first item only */
    ck_assert_int_eq(rmq_topic_attrs_mod_msg_type("+message.type=FIFO", 18), RMQ_TOPIC_MSG_FIFO);
    ck_assert_int_eq(rmq_topic_attrs_mod_msg_type("-message.type", 13), RMQ_TOPIC_MSG_ABSENT);
    ck_assert_int_eq(rmq_topic_attrs_mod_msg_type("", 0), RMQ_TOPIC_MSG_ABSENT);
    ck_assert_int_eq(rmq_topic_attrs_mod_msg_type(NULL, 0), RMQ_TOPIC_MSG_ABSENT);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("topic_attr");
    TCase *tc = tcase_create("attrs");
    tcase_add_test(tc, test_create_in_key_order);
    tcase_add_test(tc, test_update_adds_changes_removes);
    tcase_add_test(tc, test_rocketmq_errors);
    tcase_add_test(tc, test_refusal_keeps_nothing);
    tcase_add_test(tc, test_check_kept_text);
    tcase_add_test(tc, test_next_and_msg_type);
    tcase_add_test(tc, test_mod_msg_type);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
