/* test_config.c: the .properties parser (comments, separators, escapes,
 * continuations, line numbers) and the config table on top of it (types,
 * bounds, error text, unknown keys, aliases, defaults, print round trip). */
#include "rmq_config.h"
#include "rmq_log.h"

#include <check.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a sample table ---- */

typedef struct test_cfg {
    int64_t listen_port;
    int64_t mapped_size;
    int64_t offset;
    int auto_create;
    char *broker_name;
    char *store_path;
    int role;
} test_cfg_t;

static const char *const role_names[] = { "ASYNC_MASTER", "SYNC_MASTER", "SLAVE", NULL };

static const rmq_cfg_entry_t test_entries[] = {
    { "listenPort", RMQ_CFG_INT, offsetof(test_cfg_t, listen_port), "10911", 0, 65535,
      NULL, "port" },
    { "mappedFileSizeCommitLog", RMQ_CFG_INT, offsetof(test_cfg_t, mapped_size),
      "1073741824", 4096, INT64_C(1) << 40, NULL, "segment size" },
    { "offset", RMQ_CFG_INT, offsetof(test_cfg_t, offset), "-3", -10, 10, NULL, "signed" },
    { "autoCreateTopicEnable", RMQ_CFG_BOOL, offsetof(test_cfg_t, auto_create), "true", 0, 0,
      NULL, "auto topics" },
    { "brokerName", RMQ_CFG_STR, offsetof(test_cfg_t, broker_name), "broker-a", 0, 16, NULL,
      "name" },
    { "storePathRootDir", RMQ_CFG_STR, offsetof(test_cfg_t, store_path), NULL, 0, 0, NULL,
      "store" },
    { "brokerRole", RMQ_CFG_ENUM, offsetof(test_cfg_t, role), "ASYNC_MASTER", 0, 0,
      role_names, "role" },
};

static const char *const cfg_aliases[] = {
    "mapedFileSizeCommitLog", "mappedFileSizeCommitLog",
    "port", "listenPort",
    NULL,
};

static const rmq_cfg_table_t test_table = {
    test_entries, sizeof(test_entries) / sizeof(test_entries[0]), cfg_aliases,
};

static test_cfg_t g_cfg;
static char g_err[1024];

static void cfg_setup(void)
{
    memset(&g_cfg, 0, sizeof(g_cfg));
    g_err[0] = '\0';
    ck_assert_int_eq(rmq_config_defaults(&test_table, &g_cfg), RMQ_OK);
}

static void cfg_teardown(void)
{
    rmq_config_deinit(&test_table, &g_cfg);
}

static rmq_err_t set(const char *key, const char *value)
{
    return rmq_config_set(&test_table, &g_cfg, key, value, g_err, sizeof(g_err));
}

static rmq_err_t load(const char *text)
{
    return rmq_config_load_text(&test_table, &g_cfg, text, strlen(text), "broker.properties",
                                g_err, sizeof(g_err));
}

/* Asserts that setting key=value fails with exactly the message want. */
static void assert_set_fails(const char *key, const char *value, const char *want)
{
    ck_assert_int_eq(set(key, value), RMQ_EINVAL);
    ck_assert_str_eq(g_err, want);
}

/* Returns rmq_config_print's output as a heap string. */
static char *print_to_string(const test_cfg_t *cfg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    rmq_config_print(&test_table, cfg, f);
    fclose(f);
    return buf;
}

/* ---- a temp dir per case that needs files ---- */

static char g_dir[64];

static void dir_setup(void)
{
    cfg_setup();
    snprintf(g_dir, sizeof(g_dir), "/tmp/rmq-test-config-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_dir));
}

static void dir_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
    ck_assert_int_eq(system(cmd), 0);
    cfg_teardown();
}

/* Writes text to name inside the temp dir; returns the full path (static). */
static const char *write_file(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs(text, f) >= 0, 1);
    fclose(f);
    return path;
}

/* Reads a whole small file into a static buffer. */
static const char *read_small_file(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* ---- raw parser: collect "key|value|line" records ---- */

static char g_parsed[4096];

static int collect(const char *key, const char *value, int line, void *arg)
{
    size_t n = strlen(g_parsed);
    snprintf(g_parsed + n, sizeof(g_parsed) - n, "%s|%s|%d\n", key,
             value ? value : "(malformed)", line);
    return 0;
}

static const char *parse(const char *text)
{
    g_parsed[0] = '\0';
    ck_assert_int_eq(rmq_properties_parse(text, strlen(text), collect, NULL), 0);
    return g_parsed;
}

static int stop_at_second(const char *key, const char *value, int line, void *arg)
{
    int *seen = arg;
    return ++*seen == 2 ? RMQ_EINVAL : 0;
}

START_TEST(test_parse_separators)
{
    ck_assert_str_eq(parse("a=1\nb:2\nc 3\nd = 4\ne\t:\t5\nf\ng=h=i\nj==k\nl   \n"),
                     "a|1|1\nb|2|2\nc|3|3\nd|4|4\ne|5|5\nf||6\ng|h=i|7\nj|=k|8\nl||9\n");
}
END_TEST

START_TEST(test_parse_comments_and_blank_lines)
{
    ck_assert_str_eq(parse("# comment\n! bang\n   # indented\n\n   \t\nk=v # not a comment\n"),
                     "k|v # not a comment|6\n");
}
END_TEST

START_TEST(test_parse_line_endings)
{
    ck_assert_str_eq(parse("a=1\r\nb=2\rc=3\n\r\nd=4"), "a|1|1\nb|2|2\nc|3|3\nd|4|5\n");
}
END_TEST

START_TEST(test_parse_whitespace_trimmed)
{
    ck_assert_str_eq(parse("   key   =   value with spaces  \t \n"),
                     "key|value with spaces|1\n");
    ck_assert_str_eq(parse("key=kept\\ \n"), "key|kept |1\n");
    ck_assert_str_eq(parse("key=\\  lead\n"), "key|  lead|1\n");
}
END_TEST

START_TEST(test_parse_escapes)
{
    ck_assert_str_eq(parse("k=a\\tb\\nc\\rd\\fe\\\\f\\qg\n"), "k|a\tb\nc\rd\fe\\fqg|1\n");
    ck_assert_str_eq(parse("key\\=with\\:seps\\ and\\ space = v\n"),
                     "key=with:seps and space|v|1\n");
    ck_assert_str_eq(parse("k=\\u0041\\u00e9\\u20AC\\uD83D\\uDE00\n"),
                     "k|A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80|1\n");
}
END_TEST

START_TEST(test_parse_malformed_unicode)
{
    ck_assert_str_eq(parse("k=\\u12G4\nk2=\\u12\nk3=\\uDE00\nk4=\\uD83Dx\nok=1\n"),
                     "k|(malformed)|1\nk2|(malformed)|2\nk3|(malformed)|3\nk4|(malformed)|4\n"
                     "ok|1|5\n");
    ck_assert_str_eq(parse("bad\\uZZZZkey=1\n"), "bad\\uZZZZkey=1|(malformed)|1\n");
}
END_TEST

START_TEST(test_parse_continuation)
{
    ck_assert_str_eq(parse("k = a\\\n    b\\\n\t c\nnext=1\n"), "k|abc|1\nnext|1|4\n");
    ck_assert_str_eq(parse("k=ends\\\\\nnext=2\n"), "k|ends\\|1\nnext|2|2\n");
    ck_assert_str_eq(parse("k=odd\\\\\\\n  more\n"), "k|odd\\more|1\n");
    ck_assert_str_eq(parse("k=eof\\"), "k|eof|1\n");
    ck_assert_str_eq(parse("# comment \\\nk=v\n"), "k|v|2\n");
    ck_assert_str_eq(parse("k=a\\\n# not a comment\n"), "k|a# not a comment|1\n");
    ck_assert_str_eq(parse("k=a\\\r\n  b\r\n"), "k|ab|1\n");
}
END_TEST

START_TEST(test_parse_empty_and_stop)
{
    ck_assert_str_eq(parse(""), "");
    int seen = 0;
    const char *text = "a=1\nb=2\nc=3\n";
    ck_assert_int_eq(rmq_properties_parse(text, strlen(text), stop_at_second, &seen),
                     RMQ_EINVAL);
    ck_assert_int_eq(seen, 2);
}
END_TEST

/* ---- table ---- */

START_TEST(test_defaults)
{
    ck_assert_int_eq(g_cfg.listen_port, 10911);
    ck_assert_int_eq(g_cfg.mapped_size, 1073741824);
    ck_assert_int_eq(g_cfg.offset, -3);
    ck_assert_int_eq(g_cfg.auto_create, 1);
    ck_assert_str_eq(g_cfg.broker_name, "broker-a");
    ck_assert_ptr_null(g_cfg.store_path);
    ck_assert_int_eq(g_cfg.role, 0);
    ck_assert_int_eq(rmq_config_defaults(&test_table, &g_cfg), RMQ_OK);
    ck_assert_str_eq(g_cfg.broker_name, "broker-a");
}
END_TEST

START_TEST(test_bad_default_fails)
{
    static const rmq_cfg_entry_t bad[] = {
        { "listenPort", RMQ_CFG_INT, offsetof(test_cfg_t, listen_port), "99999", 0, 65535,
          NULL, "port" },
    };
    static const rmq_cfg_entry_t missing[] = {
        { "offset", RMQ_CFG_INT, offsetof(test_cfg_t, offset), NULL, 0, 10, NULL, "x" },
    };
    rmq_cfg_table_t t1 = { bad, 1, NULL }, t2 = { missing, 1, NULL };
    test_cfg_t cfg = { 0 };
    rmq_log_set_stderr(0);
    ck_assert_int_eq(rmq_config_defaults(&t1, &cfg), RMQ_EINVAL);
    ck_assert_int_eq(rmq_config_defaults(&t2, &cfg), RMQ_EINVAL);
}
END_TEST

START_TEST(test_int_values_and_bounds)
{
    ck_assert_int_eq(set("listenPort", "0"), RMQ_OK);
    ck_assert_int_eq(g_cfg.listen_port, 0);
    ck_assert_int_eq(set("listenPort", "65535"), RMQ_OK);
    ck_assert_int_eq(g_cfg.listen_port, 65535);
    ck_assert_int_eq(set("listenPort", "+80"), RMQ_OK);
    ck_assert_int_eq(g_cfg.listen_port, 80);
    ck_assert_int_eq(set("offset", "-10"), RMQ_OK);
    ck_assert_int_eq(g_cfg.offset, -10);
    ck_assert_int_eq(set("mappedFileSizeCommitLog", "1099511627776"), RMQ_OK);
    ck_assert_int_eq(g_cfg.mapped_size, INT64_C(1) << 40);

    const char *rule = "must be an integer between 0 and 65535";
    const char *bad[] = { "70000", "-1", "", "abc", "12abc", "1.5", "0x10", " 5", "5 ", "1k",
                          "-", "99999999999999999999999" };
    char want[256];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(want, sizeof(want), "listenPort=%s: %s", bad[i], rule);
        assert_set_fails("listenPort", bad[i], want);
    }
    assert_set_fails("offset", "-11", "offset=-11: must be an integer between -10 and 10");
    ck_assert_int_eq(g_cfg.listen_port, 80);
}
END_TEST

START_TEST(test_bool_values)
{
    ck_assert_int_eq(set("autoCreateTopicEnable", "FALSE"), RMQ_OK);
    ck_assert_int_eq(g_cfg.auto_create, 0);
    ck_assert_int_eq(set("autoCreateTopicEnable", "True"), RMQ_OK);
    ck_assert_int_eq(g_cfg.auto_create, 1);
    ck_assert_int_eq(set("autoCreateTopicEnable", "false"), RMQ_OK);
    assert_set_fails("autoCreateTopicEnable", "yes",
                     "autoCreateTopicEnable=yes: must be true or false");
    assert_set_fails("autoCreateTopicEnable", "1",
                     "autoCreateTopicEnable=1: must be true or false");
    ck_assert_int_eq(g_cfg.auto_create, 0);
}
END_TEST

START_TEST(test_str_values)
{
    ck_assert_int_eq(set("brokerName", "exactly-16-bytes"), RMQ_OK);
    ck_assert_str_eq(g_cfg.broker_name, "exactly-16-bytes");
    assert_set_fails("brokerName", "seventeen-bytes!!",
                     "brokerName=seventeen-bytes!!: must be at most 16 bytes long");
    ck_assert_str_eq(g_cfg.broker_name, "exactly-16-bytes");
    ck_assert_int_eq(set("brokerName", ""), RMQ_OK);
    ck_assert_str_eq(g_cfg.broker_name, "");

    char longpath[5000];
    memset(longpath, 'x', sizeof(longpath) - 1);
    longpath[sizeof(longpath) - 1] = '\0';
    ck_assert_int_eq(set("storePathRootDir", longpath), RMQ_OK);
    ck_assert_str_eq(g_cfg.store_path, longpath);
    ck_assert_int_eq(set("storePathRootDir", "/data/store"), RMQ_OK);
    ck_assert_str_eq(g_cfg.store_path, "/data/store");
}
END_TEST

START_TEST(test_enum_values)
{
    ck_assert_int_eq(set("brokerRole", "SLAVE"), RMQ_OK);
    ck_assert_int_eq(g_cfg.role, 2);
    ck_assert_int_eq(set("brokerRole", "sync_master"), RMQ_OK);
    ck_assert_int_eq(g_cfg.role, 1);
    assert_set_fails("brokerRole", "MASTER",
                     "brokerRole=MASTER: must be one of ASYNC_MASTER, SYNC_MASTER, SLAVE");
    ck_assert_int_eq(g_cfg.role, 1);
}
END_TEST

START_TEST(test_unknown_key_set)
{
    ck_assert_int_eq(set("noSuchKey", "1"), RMQ_ENOTFOUND);
    ck_assert_str_eq(g_err, "noSuchKey=1: unknown key");
}
END_TEST

START_TEST(test_get)
{
    char buf[64];
    ck_assert_int_eq(rmq_config_get(&test_table, &g_cfg, "listenPort", buf, sizeof(buf)), RMQ_OK);
    ck_assert_str_eq(buf, "10911");
    ck_assert_int_eq(rmq_config_get(&test_table, &g_cfg, "offset", buf, sizeof(buf)), RMQ_OK);
    ck_assert_str_eq(buf, "-3");
    ck_assert_int_eq(rmq_config_get(&test_table, &g_cfg, "autoCreateTopicEnable", buf,
                                    sizeof(buf)), RMQ_OK);
    ck_assert_str_eq(buf, "true");
    ck_assert_int_eq(rmq_config_get(&test_table, &g_cfg, "brokerRole", buf, sizeof(buf)), RMQ_OK);
    ck_assert_str_eq(buf, "ASYNC_MASTER");
    ck_assert_int_eq(rmq_config_get(&test_table, &g_cfg, "storePathRootDir", buf, sizeof(buf)),
                     RMQ_OK);
    ck_assert_str_eq(buf, "");
    ck_assert_int_eq(rmq_config_get(&test_table, &g_cfg, "mapedFileSizeCommitLog", buf,
                                    sizeof(buf)), RMQ_OK);
    ck_assert_str_eq(buf, "1073741824");
    ck_assert_int_eq(rmq_config_get(&test_table, &g_cfg, "nope", buf, sizeof(buf)),
                     RMQ_ENOTFOUND);
    ck_assert_int_eq(rmq_config_get(&test_table, &g_cfg, "brokerName", buf, 4), RMQ_ETOOBIG);
    ck_assert_str_eq(buf, "bro");
}
END_TEST

START_TEST(test_aliases)
{
    ck_assert_int_eq(load("mapedFileSizeCommitLog=8192\nport=81\n"), RMQ_OK);
    ck_assert_int_eq(g_cfg.mapped_size, 8192);
    ck_assert_int_eq(g_cfg.listen_port, 81);
    ck_assert_int_eq(load("mapedFileSizeCommitLog=1\n"), RMQ_EINVAL);
    ck_assert_str_eq(g_err, "broker.properties:1: mapedFileSizeCommitLog=1: must be an integer "
                            "between 4096 and 1099511627776");
}
END_TEST

START_TEST(test_load_text_error_names_line)
{
    const char *text = "# broker\nbrokerName=b\n\nbrokerRole=SLAVE\nlistenPort = 70000\n"
                       "offset=1\n";
    ck_assert_int_eq(load(text), RMQ_EINVAL);
    ck_assert_str_eq(g_err,
                     "broker.properties:5: listenPort=70000: must be an integer between 0 and 65535");
    ck_assert_str_eq(g_cfg.broker_name, "b");
    ck_assert_int_eq(g_cfg.role, 2);
    ck_assert_int_eq(g_cfg.offset, -3);

    ck_assert_int_eq(load("brokerName=a\\\n  b\\\n  c\nbrokerRole=x\n"), RMQ_EINVAL);
    ck_assert_str_eq(g_err, "broker.properties:4: brokerRole=x: must be one of ASYNC_MASTER, "
                            "SYNC_MASTER, SLAVE");
    ck_assert_str_eq(g_cfg.broker_name, "abc");

    ck_assert_int_eq(load("a=1\nbrokerName=\\u00zz\n"), RMQ_EINVAL);
    ck_assert_str_eq(g_err, "broker.properties:2: brokerName: malformed \\uXXXX escape");
}
END_TEST

START_TEST(test_load_file)
{
    const char *path = write_file("broker.properties",
                                  "listenPort=10921\r\nbrokerName=broker-b\r\n"
                                  "storePathRootDir=/data/rmq\\\\store\r\n"
                                  "autoCreateTopicEnable=false\r\n");
    ck_assert_int_eq(rmq_config_load(&test_table, &g_cfg, path, g_err, sizeof(g_err)), RMQ_OK);
    ck_assert_int_eq(g_cfg.listen_port, 10921);
    ck_assert_str_eq(g_cfg.broker_name, "broker-b");
    ck_assert_str_eq(g_cfg.store_path, "/data/rmq\\store");
    ck_assert_int_eq(g_cfg.auto_create, 0);

    path = write_file("bad.properties", "\n\nbrokerName=this-name-is-too-long\n");
    char want[256];
    snprintf(want, sizeof(want), "%s:3: brokerName=this-name-is-too-long: must be at most 16 "
                                 "bytes long", path);
    ck_assert_int_eq(rmq_config_load(&test_table, &g_cfg, path, g_err, sizeof(g_err)),
                     RMQ_EINVAL);
    ck_assert_str_eq(g_err, want);

    path = write_file("empty.properties", "");
    ck_assert_int_eq(rmq_config_load(&test_table, &g_cfg, path, g_err, sizeof(g_err)), RMQ_OK);
}
END_TEST

START_TEST(test_load_missing_file)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/missing.properties", g_dir);
    ck_assert_int_eq(rmq_config_load(&test_table, &g_cfg, path, g_err, sizeof(g_err)),
                     RMQ_ENOTFOUND);
    char want[256];
    snprintf(want, sizeof(want), "%s: cannot open: No such file or directory", path);
    ck_assert_str_eq(g_err, want);
}
END_TEST

START_TEST(test_unknown_key_warns_and_continues)
{
    char logpath[128];
    snprintf(logpath, sizeof(logpath), "%s/test.log", g_dir);
    ck_assert_int_eq(rmq_log_open("test", logpath, RMQ_LOG_WARN), 0);
    rmq_log_set_stderr(0);
    ck_assert_int_eq(load("listenPort=1\nfooBar=baz\nbrokerName=x\n"), RMQ_OK);
    rmq_log_close();
    ck_assert_int_eq(g_cfg.listen_port, 1);
    ck_assert_str_eq(g_cfg.broker_name, "x");
    const char *log = read_small_file(logpath);
    ck_assert_ptr_nonnull(strstr(log, "WARN"));
    ck_assert_ptr_nonnull(strstr(log, "broker.properties:2: unknown key fooBar, ignored"));
}
END_TEST

START_TEST(test_print_defaults)
{
    char *out = print_to_string(&g_cfg);
    ck_assert_str_eq(out, "listenPort=10911\n"
                          "mappedFileSizeCommitLog=1073741824\n"
                          "offset=-3\n"
                          "autoCreateTopicEnable=true\n"
                          "brokerName=broker-a\n"
                          "storePathRootDir=\n"
                          "brokerRole=ASYNC_MASTER\n");
    free(out);
}
END_TEST

START_TEST(test_print_round_trip)
{
    ck_assert_int_eq(set("listenPort", "1"), RMQ_OK);
    ck_assert_int_eq(set("offset", "-10"), RMQ_OK);
    ck_assert_int_eq(set("autoCreateTopicEnable", "false"), RMQ_OK);
    ck_assert_int_eq(set("brokerName", " a\\b\tc "), RMQ_OK);
    ck_assert_int_eq(set("storePathRootDir", "  #x=y:z!\n\r\f\x01 \xC3\xA9  "), RMQ_OK);
    ck_assert_int_eq(set("brokerRole", "SLAVE"), RMQ_OK);
    char *first = print_to_string(&g_cfg);

    test_cfg_t copy = { 0 };
    ck_assert_int_eq(rmq_config_defaults(&test_table, &copy), RMQ_OK);
    ck_assert_int_eq(rmq_config_load_text(&test_table, &copy, first, strlen(first), "printed",
                                          g_err, sizeof(g_err)), RMQ_OK);
    ck_assert_int_eq(copy.listen_port, 1);
    ck_assert_int_eq(copy.offset, -10);
    ck_assert_int_eq(copy.auto_create, 0);
    ck_assert_str_eq(copy.broker_name, " a\\b\tc ");
    ck_assert_str_eq(copy.store_path, "  #x=y:z!\n\r\f\x01 \xC3\xA9  ");
    ck_assert_int_eq(copy.role, 2);
    char *second = print_to_string(&copy);
    ck_assert_str_eq(first, second);
    free(first);
    free(second);
    rmq_config_deinit(&test_table, &copy);
}
END_TEST

START_TEST(test_deinit)
{
    ck_assert_int_eq(set("storePathRootDir", "/x"), RMQ_OK);
    rmq_config_deinit(&test_table, &g_cfg);
    ck_assert_ptr_null(g_cfg.broker_name);
    ck_assert_ptr_null(g_cfg.store_path);
    rmq_config_deinit(&test_table, &g_cfg);
}
END_TEST

static Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *parser = tcase_create("parser");
    tcase_add_test(parser, test_parse_separators);
    tcase_add_test(parser, test_parse_comments_and_blank_lines);
    tcase_add_test(parser, test_parse_line_endings);
    tcase_add_test(parser, test_parse_whitespace_trimmed);
    tcase_add_test(parser, test_parse_escapes);
    tcase_add_test(parser, test_parse_malformed_unicode);
    tcase_add_test(parser, test_parse_continuation);
    tcase_add_test(parser, test_parse_empty_and_stop);
    suite_add_tcase(s, parser);

    TCase *table = tcase_create("table");
    tcase_add_checked_fixture(table, cfg_setup, cfg_teardown);
    tcase_add_test(table, test_defaults);
    tcase_add_test(table, test_bad_default_fails);
    tcase_add_test(table, test_int_values_and_bounds);
    tcase_add_test(table, test_bool_values);
    tcase_add_test(table, test_str_values);
    tcase_add_test(table, test_enum_values);
    tcase_add_test(table, test_unknown_key_set);
    tcase_add_test(table, test_get);
    tcase_add_test(table, test_aliases);
    tcase_add_test(table, test_load_text_error_names_line);
    tcase_add_test(table, test_print_defaults);
    tcase_add_test(table, test_print_round_trip);
    tcase_add_test(table, test_deinit);
    suite_add_tcase(s, table);

    TCase *files = tcase_create("files");
    tcase_add_checked_fixture(files, dir_setup, dir_teardown);
    tcase_add_test(files, test_load_file);
    tcase_add_test(files, test_load_missing_file);
    tcase_add_test(files, test_unknown_key_warns_and_continues);
    suite_add_tcase(s, files);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(config_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
