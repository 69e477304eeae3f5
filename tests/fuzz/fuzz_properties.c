/* fuzz_properties.c: libFuzzer target for the .properties parser and the
 * table-driven config loader, over the broker's and the name server's real
 * tables. The first byte picks the table and whether the callback stops
 * early; the rest is the file text. Checks: every key and value the parser
 * hands out is a NUL-terminated string and line numbers never go back; a
 * load that succeeds prints text that loads again to the same print (the
 * printer's escapes round-trip); every key reads back through
 * rmq_config_get; the loader's error text is NUL-terminated. The same text
 * as an ACL file: a policy that loads is written back (rmq_acl_format) to
 * text that loads to the same writing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_config.h"
#include "ns_config.h"
#include "rmq_acl_policy.h"
#include "rmq_config.h"
#include "rmq_log.h"

typedef struct parse_check {
    int last_line;
    int pairs;
    int stop_after;             /* -1: never */
} parse_check_t;

/* Parser callback: checks the strings and line order, stops on request. */
static int check_pair(const char *key, const char *value, int line, void *arg)
{
    parse_check_t *pc = arg;

    if (!key || line < pc->last_line || line < 1)
        abort();
    (void)strlen(key);
    if (value)
        (void)strlen(value);
    pc->last_line = line;
    if (pc->stop_after >= 0 && pc->pairs++ >= pc->stop_after)
        return 7;
    return 0;
}

typedef union any_config {
    bk_config_t bk;
    ns_config_t ns;
} any_config_t;

static int config_init(int is_ns, any_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    return is_ns ? ns_config_defaults(&cfg->ns) : bk_config_init(&cfg->bk);
}

static void config_deinit(int is_ns, any_config_t *cfg)
{
    if (is_ns)
        ns_config_deinit(&cfg->ns);
    else
        bk_config_deinit(&cfg->bk);
}

/* Prints cfg into a heap string (caller frees); *len its length. */
static char *print_config(const rmq_cfg_table_t *t, const any_config_t *cfg, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);

    if (!f)
        abort();
    rmq_config_print(t, cfg, f);
    fclose(f);
    return buf;
}

/* The ACL file round trip: what loads is written back to text that loads
 * and writes back the same. */
static void acl_round_trip(const char *text, size_t len)
{
    char err[1024];
    size_t n1 = 0, n2 = 0;
    rmq_acl_t *acl = rmq_acl_parse(text, len, "fuzz", err, sizeof(err));
    if (!acl)
        return;
    char *once = rmq_acl_format(acl, &n1);
    rmq_acl_t *again = once ? rmq_acl_parse(once, n1, "written", err, sizeof(err)) : NULL;
    if (once && !again) {
        fprintf(stderr, "written ACL does not load back: %s\n%s", err, once);
        abort();
    }
    char *twice = again ? rmq_acl_format(again, &n2) : NULL;
    if (twice && (n1 != n2 || memcmp(once, twice, n1) != 0)) {
        fprintf(stderr, "ACL write-back does not round-trip:\n%s---\n%s", once, twice);
        abort();
    }
    free(once);
    free(twice);
    rmq_acl_free(again);
    rmq_acl_free(acl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    const char *text = (const char *)data + 1;
    size_t len = size ? size - 1 : 0;
    int is_ns, rc;
    parse_check_t pc = { 0, 0, -1 };
    const rmq_cfg_table_t *t;
    any_config_t cfg, again;
    char err[1024];

    if (!quiet) {
        rmq_log_set_level(RMQ_LOG_OFF);
        quiet = 1;
    }
    if (size == 0)
        return 0;
    is_ns = data[0] & 1;
    if (data[0] & 2)
        pc.stop_after = data[0] >> 2;
    rc = rmq_properties_parse(text, len, check_pair, &pc);
    if (rc != 0 && rc != 7 && rc != RMQ_ENOMEM)
        abort();
    if (rc == 7 && pc.stop_after < 0)
        abort();

    acl_round_trip(text, len);
    t = is_ns ? ns_config_table() : bk_config_table();
    if (config_init(is_ns, &cfg) != RMQ_OK)
        abort();
    err[0] = '\0';
    rc = rmq_config_load_text(t, &cfg, text, len, "fuzz", err, sizeof(err));
    if (rc != RMQ_OK) {
        if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0')
            abort();
    } else {
        size_t plen, plen2;
        char *printed = print_config(t, &cfg, &plen);
        char *printed2;

        for (size_t i = 0; i < t->count; i++) {
            char val[64];
            rmq_err_t g = rmq_config_get(t, &cfg, t->entries[i].key, val, sizeof(val));

            if (g != RMQ_OK && g != RMQ_ETOOBIG)
                abort();
        }
        if (!is_ns)
            (void)bk_config_check(&cfg.bk, err, sizeof(err));
        if (config_init(is_ns, &again) != RMQ_OK)
            abort();
        if (rmq_config_load_text(t, &again, printed, plen, "printed", err, sizeof(err)) != RMQ_OK) {
            fprintf(stderr, "printed config does not load back: %s\n%s", err, printed);
            abort();
        }
        printed2 = print_config(t, &again, &plen2);
        if (plen != plen2 || memcmp(printed, printed2, plen) != 0) {
            fprintf(stderr, "print does not round-trip:\n%s---\n%s", printed, printed2);
            abort();
        }
        free(printed);
        free(printed2);
        config_deinit(is_ns, &again);
    }
    config_deinit(is_ns, &cfg);
    return 0;
}
