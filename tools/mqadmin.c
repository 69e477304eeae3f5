/* mqadmin.c: the operator CLI. `mqadmin COMMAND -n "host:port[;host:port]"
 * [--client-config FILE] [options]`. One table names every command with its
 * options; it drives option parsing, required-option checks and the help
 * text. TLS and request signing come from --client-config (the servers'
 * tls* keys plus accessKey/secretKey) or else from the RMQ_* environment.
 * Queries ask the name servers in order and use the first that answers;
 * changes go to every target. Results print as tables whose column widths
 * follow their content. Exit status: 0 done, 1 bad usage, nobody answered,
 * or a request was refused (the reason on stderr), 2 bad TLS or signing
 * settings. The commands live in mqadmin_*.c. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mqadmin.h"
#include "rmq_log.h"
#include "rmq_security.h"

#define ADM_MAX_OPTS 8
#define ADM_OPT_CLIENT_CONFIG 'C'  /* --client-config: no short form */

/* One option of a command: letter (ADM_OPT_FULL for --full), the name of
 * its argument (NULL for a flag), help, and whether it must be given. */
typedef struct adm_opt_spec {
    char letter;
    const char *arg;
    const char *help;
    int required;
} adm_opt_spec_t;

typedef struct adm_cmd {
    const char *name;
    int (*run)(adm_ctx_t *ctx);
    const char *help;
    adm_opt_spec_t opts[ADM_MAX_OPTS];
} adm_cmd_t;

#define TOPIC_REQ { 't', "TOPIC", "the topic", 1 }

static const adm_cmd_t adm_cmds[] = {
    { "clusterList", adm_cmd_cluster_list,
      "list clusters and brokers with role, version and in/out TPS", { { 0 } } },
    { "brokerStatus", adm_cmd_broker_status, "print a broker's runtime info (or every broker of a cluster)",
      { { 'b', "BROKERADDR", "the broker, host:port", 0 }, { 'c', "CLUSTER", "every broker of this cluster", 0 } } },
    { "topicRoute", adm_cmd_topic_route, "show the brokers and queues of a topic", { TOPIC_REQ } },
    { "topicList", adm_cmd_topic_list, "list every topic the name server knows", { { 0 } } },
    { "topicStatus", adm_cmd_topic_status, "per queue min and max offset and last update of a topic",
      { TOPIC_REQ } },
    { "updateTopic", adm_cmd_update_topic, "create or update a topic on a cluster's masters or one broker",
      { TOPIC_REQ,
        { 'c', "CLUSTER", "every master of this cluster", 0 },
        { 'b', "BROKERADDR", "one broker, host:port", 0 },
        { 'r', "READ", "read queues (default 8)", 0 },
        { 'w', "WRITE", "write queues (default 8)", 0 },
        { 'p', "PERM", "permission bits: 4 read, 2 write, 1 inherit (default 6)", 0 },
        { 'a', "ATTRIBUTES", "RocketMQ 5's topic attributes to change: +key=value,-key (e.g. +message.type=FIFO)",
          0 } } },
    { "updateTopicList", adm_cmd_update_topic_list,
      "create or update many topics in one request on a cluster's masters or one broker",
      { { 'f', "FILE", "RocketMQ's format: a JSON array of TopicConfig objects, "
                       "[{\"topicName\":\"T\",\"readQueueNums\":8,\"writeQueueNums\":8,\"perm\":6,"
                       "\"order\":false}, ...]; only topicName is required (queues default to 8, perm to 6); "
                       "up to about 10,000 topics per file (the JSON reader's value limit)", 1 },
        { 'c', "CLUSTER", "every master of this cluster", 0 },
        { 'b', "BROKERADDR", "one broker, host:port", 0 } } },
    { "deleteTopic", adm_cmd_delete_topic,
      "delete a topic from a cluster's masters (-c) and every name server's route",
      { TOPIC_REQ, { 'c', "CLUSTER", "also delete it on every master of this cluster", 0 } } },
    { "consumerProgress", adm_cmd_consumer_progress, "per queue broker offset, consumer offset and diff of a group",
      { { 'g', "GROUP", "the consumer group", 1 }, { 't', "TOPIC", "only this topic", 0 } } },
    { "queryMsgById", adm_cmd_query_msg_by_id, "print a message by its id",
      { { 'i', "MSGID", "the message id (32 hex digits), or with -t the producer's unique id", 1 },
        { 't', "TOPIC", "look the id up as a unique id (UNIQ_KEY) in this topic first", 0 },
        { ADM_OPT_FULL, NULL, "print the whole body (default: the first 4 KiB)", 0 } } },
    { "queryMsgByKey", adm_cmd_query_msg_by_key, "print the messages of a topic carrying a key (KEYS or UNIQ_KEY)",
      { TOPIC_REQ,
        { 'k', "KEY", "the key", 1 },
        { 'b', "BEGIN_MS", "stored at or after this wall-clock ms (default 0)", 0 },
        { 'e', "END_MS", "stored at or before this wall-clock ms (default: no limit)", 0 },
        { 'm', "MAX", "at most this many messages per broker (default 64; the broker caps it)", 0 } } },
    { "sendMessage", adm_cmd_send_message, "send one message to a writable queue of the topic",
      { TOPIC_REQ,
        { 'p', "BODY", "the message body", 1 },
        { 'c', "TAGS", "the message tags", 0 },
        { 'k', "KEYS", "the message keys", 0 },
        { 'b', "BROKERNAME", "only this broker name", 0 },
        { 'q', "QUEUEID", "only this queue id", 0 } } },
    { "consumeMessage", adm_cmd_consume_message, "pull and print messages of a topic (offsets are not committed)",
      { TOPIC_REQ,
        { 'b', "BROKERNAME", "only this broker name", 0 },
        { 'i', "QUEUEID", "only this queue id", 0 },
        { 'o', "OFFSET", "start offset (default: each queue's min offset)", 0 },
        { 'c', "COUNT", "print at most this many messages (default 32)", 0 },
        { 'g', "GROUP", "consumer group to pull as (default " "TOOLS_CONSUMER)", 0 } } },
    { "queryDlq", adm_cmd_query_dlq, "list a consumer group's dead letters (%DLQ%GROUP)",
      { { 'g', "GROUP", "the consumer group", 1 },
        { 'i', "MSGID", "only this message (id, original id or UNIQ_KEY)", 0 } } },
    { "resendDlq", adm_cmd_resend_dlq, "send a group's dead letters back to their original topics",
      { { 'g', "GROUP", "the consumer group", 1 },
        { 'i', "MSGID", "only this message (id, original id or UNIQ_KEY)", 0 } } },
    { "getNamesrvConfig", adm_cmd_get_namesrv_config, "print each name server's configuration", { { 0 } } },
    { "getSyncStateSet", adm_cmd_get_sync_state_set,
      "controller mode: each group's master, epoch, in-sync set and every replica's role and lag",
      { { 'a', "CONTROLLERS", "the controllers, host:port;host:port (default: the -n name servers)", 0 },
        { 'c', "CLUSTER", "only the groups of this cluster", 0 },
        { 'b', "BROKERNAME", "only this group", 0 } } },
};

#define ADM_NCMDS (sizeof adm_cmds / sizeof adm_cmds[0])

/* The TLS / signing help every usage text ends with. */
static void security_usage(FILE *out)
{
    fprintf(out, "  --client-config FILE\n"
                 "  %-14s TLS and request signing: a properties file with the servers' keys\n"
                 "  %-14s tlsMode (disabled, or permissive/enforcing: TLS), tlsCaPath, tlsCertPath,\n"
                 "  %-14s tlsKeyPath, and the ACL account's accessKey and secretKey. Without it:\n"
                 "  %-14s RMQ_TLS=1, RMQ_TLS_CA, RMQ_TLS_CERT, RMQ_TLS_KEY, RMQ_ACCESS_KEY,\n"
                 "  %-14s RMQ_SECRET_KEY from the environment (deploy/SECURITY.md)\n",
            "", "", "", "", "");
}

static void usage(FILE *out)
{
    fprintf(out, "usage: mqadmin COMMAND -n \"host:port[;host:port]\" [--client-config FILE] [options]\n"
                 "       mqadmin COMMAND -h\n\ncommands:\n");
    for (size_t i = 0; i < ADM_NCMDS; i++)
        fprintf(out, "  %-18s %s\n", adm_cmds[i].name, adm_cmds[i].help);
    fprintf(out, "\noptions of every command:\n");
    security_usage(out);
}

/* "-t TOPIC" or "--full" for an option, in buf. */
static const char *opt_synopsis(const adm_opt_spec_t *o, char *buf, size_t len)
{
    if (o->letter == ADM_OPT_FULL)
        snprintf(buf, len, "--full");
    else
        snprintf(buf, len, "-%c%s%s", o->letter, o->arg ? " " : "", o->arg ? o->arg : "");
    return buf;
}

static void cmd_usage(const adm_cmd_t *cmd, FILE *out)
{
    char syn[64];

    fprintf(out, "usage: mqadmin %s -n \"host:port[;host:port]\" [--client-config FILE]", cmd->name);
    for (const adm_opt_spec_t *o = cmd->opts; o->letter; o++)
        fprintf(out, o->required ? " %s" : " [%s]", opt_synopsis(o, syn, sizeof syn));
    fprintf(out, "\n  %s\n  %-14s name servers, separated by ';' (or NAMESRV_ADDR)\n", cmd->help, "-n ADDRS");
    for (const adm_opt_spec_t *o = cmd->opts; o->letter; o++)
        fprintf(out, "  %-14s %s\n", opt_synopsis(o, syn, sizeof syn), o->help);
    security_usage(out);
    fprintf(out, "  %-14s this help\n", "-h");
}

static const adm_cmd_t *find_cmd(const char *name)
{
    for (size_t i = 0; i < ADM_NCMDS; i++)
        if (strcmp(adm_cmds[i].name, name) == 0)
            return &adm_cmds[i];
    return NULL;
}

static const adm_opt_spec_t *find_opt(const adm_cmd_t *cmd, int letter)
{
    for (const adm_opt_spec_t *o = cmd->opts; o->letter; o++)
        if (o->letter == letter)
            return o;
    return NULL;
}

/* Splits "a:1;b:2" into ctx->addrs (trimmed, empty parts skipped). */
static int parse_namesrv(adm_ctx_t *ctx, const char *list)
{
    char *copy = strdup(list), *save = NULL;

    if (!copy)
        return -1;
    for (char *p = strtok_r(copy, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
        p += strspn(p, " \t");
        p[strcspn(p, " \t")] = '\0';
        if (!*p)
            continue;
        if (ctx->naddrs == ADM_MAX_NAMESRV) {
            fprintf(stderr, "mqadmin: -n: more than %d name servers\n", ADM_MAX_NAMESRV);
            free(copy);
            return -1;
        }
        ctx->addrs[ctx->naddrs] = strdup(p);
        if (!ctx->addrs[ctx->naddrs]) {
            free(copy);
            return -1;
        }
        ctx->naddrs++;
    }
    free(copy);
    return ctx->naddrs ? 0 : -1;
}

/* The getopt string for cmd: "n:h" plus each short option. */
static void build_optstring(const adm_cmd_t *cmd, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "n:h");

    for (const adm_opt_spec_t *o = cmd->opts; o->letter && k + 3 < len; o++) {
        if (o->letter == ADM_OPT_FULL)
            continue;
        buf[k++] = o->letter;
        if (o->arg)
            buf[k++] = ':';
    }
    buf[k] = '\0';
}

/* Checks that every required option was given and is not empty. */
static int check_required(const adm_cmd_t *cmd, const adm_ctx_t *ctx)
{
    for (const adm_opt_spec_t *o = cmd->opts; o->letter; o++) {
        const char *v = adm_opt(ctx, o->letter);
        if (o->required && (!v || !v[0])) {
            fprintf(stderr, "mqadmin: %s: -%c %s is required\n", cmd->name, o->letter, o->arg);
            return -1;
        }
    }
    return 0;
}

/* Parses the options after the command into ctx; returns -1 after printing
 * usage on error, 1 for -h, 0 otherwise. */
static int parse_cmd_args(const adm_cmd_t *cmd, int argc, char **argv, adm_ctx_t *ctx)
{
    static const struct option longopts[] = {
        { "full", no_argument, NULL, ADM_OPT_FULL },
        { "client-config", required_argument, NULL, ADM_OPT_CLIENT_CONFIG },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *namesrv = NULL;
    char optstring[64];
    int c;

    build_optstring(cmd, optstring, sizeof optstring);
    optind = 1;
    while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        if (c == 'h') {
            cmd_usage(cmd, stdout);
            return 1;
        }
        if (c == 'n') {
            namesrv = optarg;
        } else if (c == ADM_OPT_CLIENT_CONFIG) {
            ctx->client_config = optarg;
        } else if (c != '?' && find_opt(cmd, c)) {
            ctx->opt[c & 127] = find_opt(cmd, c)->arg ? optarg : "1";
        } else {
            if (c == ADM_OPT_FULL)
                fprintf(stderr, "mqadmin: %s: --full is not an option of this command\n", cmd->name);
            cmd_usage(cmd, stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "mqadmin: %s: unexpected argument '%s'\n", cmd->name, argv[optind]);
        cmd_usage(cmd, stderr);
        return -1;
    }
    if (!namesrv)
        namesrv = getenv("NAMESRV_ADDR");
    if (!namesrv || parse_namesrv(ctx, namesrv) != 0) {
        fprintf(stderr, "mqadmin: %s: -n needs at least one host:port (or set NAMESRV_ADDR)\n", cmd->name);
        cmd_usage(cmd, stderr);
        return -1;
    }
    if (check_required(cmd, ctx) != 0) {
        cmd_usage(cmd, stderr);
        return -1;
    }
    return 0;
}

int adm_opt_int(const adm_ctx_t *ctx, char c, int64_t def, int64_t min, int64_t max, int64_t *out)
{
    const char *v = adm_opt(ctx, c);
    char *end = NULL;
    long long n;

    if (!v) {
        *out = def;
        return 0;
    }
    errno = 0;
    n = strtoll(v, &end, 10);
    if (errno || end == v || *end || n < min || n > max) {
        fprintf(stderr, "mqadmin: %s: -%c '%s': want an integer from %" PRId64 " to %" PRId64 "\n", ctx->cmd, c,
                v, min, max);
        return -1;
    }
    *out = n;
    return 0;
}

/* Points opts at the TLS context and signer built into sec from
 * --client-config, or else at the environment's. -1 after printing why. */
static int client_security(const adm_ctx_t *ctx, rmq_security_t *sec, rmq_client_opts_t *opts)
{
    rmq_client_sec_config_t cfg = { 0 };
    char why[512];
    rmq_err_t rc;

    if (!ctx->client_config) {
        rc = rmq_security_from_env(opts, why, sizeof why);
        if (rc != RMQ_OK)
            fprintf(stderr, "mqadmin: %s\n", why);
        return rc == RMQ_OK ? 0 : -1;
    }
    rc = rmq_client_sec_config_load(&cfg, ctx->client_config, why, sizeof why);
    if (rc != RMQ_OK)
        fprintf(stderr, "mqadmin: --client-config: %s\n", why);
    else if ((rc = rmq_security_init_client(sec, &cfg, &rmq_client_sec_file_names, why, sizeof why)) != RMQ_OK)
        fprintf(stderr, "mqadmin: --client-config %s: %s\n", ctx->client_config, why);
    rmq_client_sec_config_deinit(&cfg);
    if (rc != RMQ_OK)
        return -1;
    rmq_security_client_opts(sec, opts);
    return 0;
}

int main(int argc, char **argv)
{
    adm_ctx_t ctx = { 0 };
    rmq_client_opts_t opts = { 0 };
    rmq_security_t sec = { 0 };
    int rc;

    rmq_log_open("mqadmin", NULL, RMQ_LOG_ERROR);
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 1 : 0;
    }
    const adm_cmd_t *cmd = find_cmd(argv[1]);
    if (!cmd) {
        fprintf(stderr, "mqadmin: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return 1;
    }
    ctx.cmd = cmd->name;
    rc = parse_cmd_args(cmd, argc - 1, argv + 1, &ctx);
    if (rc == 0) {
        opts.connect_timeout_ms = 3000;
        opts.name = "mqadmin";
        if (client_security(&ctx, &sec, &opts) != 0) {
            rc = 2;
        } else if (!(ctx.sync = rmq_sync_new(&opts))) {
            fprintf(stderr, "mqadmin: out of memory\n");
            rc = 1;
        } else {
            rc = cmd->run(&ctx);
            rmq_sync_free(ctx.sync);
        }
    } else {
        rc = rc > 0 ? 0 : 1;
    }
    rmq_security_deinit(&sec);
    for (size_t i = 0; i < ctx.naddrs; i++)
        free(ctx.addrs[i]);
    return rc;
}
