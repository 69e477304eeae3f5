/* fuzz_request.c: libFuzzer target for requests as a server sees them.
 * The input is a stream of frames (rmq_frame_decode_bytes, the server's
 * decoder). For each frame: the code and status names resolve; the typed
 * header (every oneof of Rmq__Command) re-packs to bytes that unpack and
 * pack again to the same bytes; the broker's separable checks run on its
 * fields (topic/group naming rule, property lookup, batch body walk, msg id
 * parsing, tag hashing of subscription expressions); and the name server's
 * requests are applied, in order, to a real route table (ns_route, the pure
 * data behind mqnamesrv's handlers, registrations' compressed bodies
 * inflated and decoded as the handler does), whose answers must pack too. Every
 * frame also goes through the rmq codec's access check (signature over
 * header and body digest, replay cache, needs per request code) against a
 * small ACL whose replay cache is tiny, so eviction runs too; a frame with
 * an even opaque is first signed here as one of its accounts (flags pick
 * which), so the fuzzer's headers pass the signature and reach the needs.
 * A frame the ACL lets through then runs the broker core's paths over a
 * real store (created once, in a temp dir, with one half message): a
 * send's checks and the transaction divert of its properties, END_TRANSACTION
 * with the signing account (PUB on the real topic), a heartbeat decoded by
 * the rmq front into the neutral one and recorded (caps, names, producer
 * groups) through a fake session that is closed after each input, a
 * send-back through the core's (read as the signer: the record's topic is
 * checked; the copy goes through the delay scheduler or to the DLQ); and
 * the core's permission check (bk_perm.h) of the operation the frame's
 * code is, on names the frame gives. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "bk_append.h"
#include "bk_clients.h"
#include "bk_produce.h"
#include "bk_topics.h"
#include "bk_sendback.h"
#include "bk_tx.h"
#include "core_fake.h"
#include "bk_perm.h"
#include "fr_routes.h"
#include "fr_schedule.h"
#include "rmq_acl.h"
#include "rmq_loop.h"
#include "rmq_rpc.h"
#include "ns_regbody.h"
#include "ns_route.h"
#include "rmq_frame.h"
#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_subexpr.h"
#include "rmq_file.h"
#include "st_store.h"

#define FUZZ_MAX_FRAME (1u << 20)

/* Packs msg, unpacks and packs again: both packings must match. A message
 * unpacked from the wire may keep an unknown field that protobuf-c accepted
 * but cannot read back once re-packed (field number 0 spelled as an
 * over-long varint tag, 0x80 0x00); strict is 0 for those, 1 for messages
 * the name server builds, which must always decode at the client. */
static void check_repack(const ProtobufCMessage *msg, int strict)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    uint8_t *a = malloc(n ? n : 1), *b;
    ProtobufCMessage *again;
    size_t m;

    if (protobuf_c_message_pack(msg, a) != n)
        abort();
    again = protobuf_c_message_unpack(msg->descriptor, NULL, n, a);
    if (!again && !strict) {
        free(a);
        return;
    }
    if (!again)
        abort();
    m = protobuf_c_message_get_packed_size(again);
    b = malloc(m ? m : 1);
    if (m != n || protobuf_c_message_pack(again, b) != m || memcmp(a, b, n) != 0)
        abort();
    protobuf_c_message_free_unpacked(again, NULL);
    free(a);
    free(b);
}

static void name_check(const char *s)
{
    const char *why = NULL;

    if (s && !rmq_name_is_valid(s, strlen(s), &why) && !why)
        abort();
}

/* rmq_subexpr_fn: hashes a tag as the broker's pull filter does. */
static rmq_err_t tag_hash(const char *tag, size_t len, void *arg)
{
    if (len == 0)
        abort();                     /* the parser never hands over an empty tag */
    (void)st_tag_hash(tag, len);
    return RMQ_OK;
}

/* The one subscription parser (rmq_subexpr.h), as broker and client run it. */
static void subscription_check(const char *expr)
{
    int all = 0;
    (void)rmq_subexpr_parse(expr, &all, tag_hash, NULL);
}

static void props_check_len(const char *props, size_t len)
{
    static const char *const names[] = { RMQ_PROP_TAGS, RMQ_PROP_KEYS, RMQ_PROP_UNIQ_KEY,
                                         RMQ_PROP_WAIT, RMQ_PROP_DELAY };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        size_t vlen;
        const char *v = rmq_props_get(props, len, names[i], &vlen);

        if (v && (v < props || v + vlen > props + len))
            abort();
    }
}

static void props_check(const char *props)
{
    props_check_len(props, props ? strlen(props) : 0);
}

static void batch_check(struct evbuffer *body)
{
    size_t len = evbuffer_get_length(body), pos = 0;
    const uint8_t *data = evbuffer_pullup(body, -1);

    while (pos < len) {
        rmq_batch_entry_t e;
        size_t used;

        if (rmq_batch_decode(data + pos, len - pos, &e, &used) != RMQ_OK)
            break;
        if (used == 0 || used > len - pos)
            abort();
        props_check_len(e.properties, e.properties_len);
        pos += used;
    }
}

/* A message id that parses names a broker address rmq_addr_split reads. */
static void msg_id_check(const char *id)
{
    char addr[RMQ_HOST_TEXT_MAX], host[RMQ_HOST_TEXT_MAX];
    int64_t off;
    int port;

    if (rmq_msg_id_parse(id, addr, sizeof addr, &off) == RMQ_OK &&
        (rmq_addr_split(addr, host, sizeof host, &port) != RMQ_OK || off < 0))
        abort();
}

/* Any text read as an address ("host:port", "[v6]:port", "v6:port"):
 * a split host is shorter than the text, a numeric one round-trips. */
static void addr_check(const char *text)
{
    char host[256];
    struct sockaddr_storage ss;
    int port, len;

    if (!text)
        return;
    if (rmq_addr_split(text, host, sizeof host, &port) == RMQ_OK &&
        (strlen(host) >= strlen(text) || port < 1 || port > 65535))
        abort();
    if (rmq_addr_sockaddr(text, &ss, &len) == RMQ_OK && !rmq_addr_equal(text, text))
        abort();
}

/* Broker-side checks over the typed header. */
static void broker_checks(const Rmq__Command *cmd, struct evbuffer *body)
{
    switch (cmd->header_case) {
    case RMQ__COMMAND__HEADER_SEND:
        name_check(cmd->send->topic);
        name_check(cmd->send->producer_group);
        name_check(cmd->send->default_topic);
        props_check(cmd->send->properties);
        if (cmd->send->batch)
            batch_check(body);
        break;
    case RMQ__COMMAND__HEADER_PULL:
        name_check(cmd->pull->topic);
        name_check(cmd->pull->consumer_group);
        subscription_check(cmd->pull->subscription);
        break;
    case RMQ__COMMAND__HEADER_CONSUMER_OFFSET:
        name_check(cmd->consumer_offset->topic);
        name_check(cmd->consumer_offset->consumer_group);
        break;
    case RMQ__COMMAND__HEADER_QUEUE:
        name_check(cmd->queue->topic);
        break;
    case RMQ__COMMAND__HEADER_TOPIC_CONFIG:
        name_check(cmd->topic_config->topic_name);
        break;
    case RMQ__COMMAND__HEADER_SUBSCRIPTION_GROUP:
        name_check(cmd->subscription_group->group_name);
        break;
    case RMQ__COMMAND__HEADER_HEARTBEAT:
        for (size_t i = 0; i < cmd->heartbeat->n_consumers; i++) {
            const Rmq__ConsumerData *cd = cmd->heartbeat->consumers[i];

            name_check(cd->group_name);
            for (size_t k = 0; k < cd->n_subscriptions; k++) {
                name_check(cd->subscriptions[k]->topic);
                subscription_check(cd->subscriptions[k]->sub_string);
            }
        }
        for (size_t i = 0; i < cmd->heartbeat->n_producer_groups; i++)
            name_check(cmd->heartbeat->producer_groups[i]);
        break;
    case RMQ__COMMAND__HEADER_SEND_BACK:
        msg_id_check(cmd->send_back->origin_msg_id);
        addr_check(cmd->send_back->origin_msg_id);
        name_check(cmd->send_back->group);
        name_check(cmd->send_back->origin_topic);
        break;
    case RMQ__COMMAND__HEADER_QUERY_MESSAGE:
        name_check(cmd->query_message->topic);
        break;
    case RMQ__COMMAND__HEADER_LOCK_BATCH:
        for (size_t i = 0; i < cmd->lock_batch->n_mqs; i++)
            name_check(cmd->lock_batch->mqs[i]->topic);
        break;
    case RMQ__COMMAND__HEADER_CONSUME_STATS_REQ:
        name_check(cmd->consume_stats_req->topic);
        name_check(cmd->consume_stats_req->consumer_group);
        break;
    default:
        break;
    }
}

/* ---- the broker core ------------------------------------------------------ */

#define FUZZ_TOPIC "t"
#define FUZZ_PGROUP "g"

/* Broker state shared by every input (the store is costly to open). */
typedef struct fuzz_broker {
    char dir[64];
    struct event_base *base;
    rmq_loop_poster_t *poster;
    st_store_t *st;
    bk_persist_t *persist;
    bk_topics_t *topics;
    bk_append_t *ap;
    bk_produce_t *p;
    bk_tx_t *tx;
    bk_clients_t *clients;
    bk_groups_t *groups;
    bk_stats_t stats;
    bk_schedule_t *schedule;
    bk_sendback_t *sendback;
    int64_t half;                    /* the half message's commit-log offset */
} fuzz_broker_t;

static fuzz_broker_t fb;

static rmq_err_t fuzz_divert(void *arg, st_msg_t *m, const char **why)
{
    return bk_tx_divert(fb.tx, m, why);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

/* Removes the store's temp dir when the fuzzer exits. */
static void broker_cleanup(void)
{
    nftw(fb.dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The send-back path over the fuzz store: groups, the delay scheduler (its
 * progress in the rmq front's file format), and the core's send-back. */
static void broker_init_sendback(const char *cfgdir)
{
    char err[256], path[160];
    snprintf(path, sizeof path, "%s/delayOffset.pb", cfgdir);
    if (!(fb.groups = bk_groups_new(cfgdir, fb.persist, 1, err, sizeof err)))
        abort();
    bk_schedule_config_t sc = {.base = fb.base, .store = fb.st, .append = fb.ap, .topics = fb.topics,
                               .produce = fb.p, .persist = fb.persist, .stats = &fb.stats,
                               .delay_levels = "1s 5s 10s", .horizon_ms = 3600 * 1000, .path = path,
                               .encode = fr_schedule_encode, .decode = fr_schedule_decode};
    if (!(fb.schedule = bk_schedule_new(&sc, err, sizeof err)))
        abort();
    bk_schedule_start(fb.schedule);  /* creates SCHEDULE_TOPIC_XXXX; the loop never runs its timers */
    bk_sendback_config_t bc = {.store = fb.st, .append = fb.ap, .topics = fb.topics, .groups = fb.groups,
                               .schedule = fb.schedule,
                               .addr = "fuzz"};
    if (!(fb.sendback = bk_sendback_new(&bc)))
        abort();
}

/* Opens the store (a temp dir), the topic table and the core once. */
static void broker_init(void)
{
    static const char props[] = "TRAN_MSG\001true\002PGROUP\001" FUZZ_PGROUP;
    char err[256], cfgdir[128];
    st_store_config_t sc = {.commitlog_file_size = 1 << 20, .cq_entries_per_file = 1000,
                            .flush_type = ST_ASYNC_FLUSH, .flush_interval_ms = 500, .flush_least_pages = 4,
                            .flush_thorough_interval_ms = 10000, .sync_flush_timeout_ms = 5000,
                            .max_message_size = 65536, .file_reserved_hours = 72, .delete_when = "04",
                            .disk_max_used_ratio = 95, .disk_full_ratio = 99, .store_host_ip = 0x7F000001,
                            .store_host_port = 10911};

    snprintf(fb.dir, sizeof fb.dir, "/tmp/rmq-fuzz-request-XXXXXX");
    if (!mkdtemp(fb.dir) || atexit(broker_cleanup) != 0 || !(fb.base = event_base_new()) || !(fb.poster = rmq_loop_poster_new(fb.base)))
        abort();
    sc.root_dir = fb.dir;
    if (!(fb.st = st_store_open(&sc, err, sizeof err)) || st_store_start(fb.st, fb.base, fb.poster) != RMQ_OK ||
        !(fb.persist = bk_persist_new()))
        abort();
    snprintf(cfgdir, sizeof cfgdir, "%s/config", fb.dir);
    if (rmq_file_mkdirs(cfgdir) != RMQ_OK || !(fb.topics = bk_topics_new(cfgdir, fb.persist, 0, 8, err, sizeof err)))
        abort();
    bk_topic_t t = {.read_queues = 2, .write_queues = 2, .perm = BK_PERM_READ | BK_PERM_WRITE};
    strcpy(t.name, FUZZ_TOPIC);
    bk_append_config_t ac = {.store = fb.st, .sync_flush_timeout_ms = 5000, .permission = 6, .addr = "fuzz"};
    if (bk_topics_update(fb.topics, &t) != RMQ_OK || !(fb.ap = bk_append_new(&ac)))
        abort();
    bk_produce_config_t pc = {.append = fb.ap, .topics = fb.topics, .max_message_size = 65536, .addr = "fuzz",
                              .divert = fuzz_divert};
    if (!(fb.p = bk_produce_new(&pc)))
        abort();
    bk_tx_config_t tc = {.base = fb.base, .store = fb.st, .append = fb.ap, .produce = fb.p, .addr = "fuzz",
                         .check_interval_ms = 3600000, .time_out_ms = 6000, .check_max = 15,
                         .producer_expire_ms = 120000, .max_groups_per_conn = 64};
    if (!(fb.tx = bk_tx_new(&tc)))
        abort();
    bk_clients_config_t cc = {.expire_ms = 120000, .max_groups_per_heartbeat = 32, .max_groups_per_conn = 64,
                              .tx = fb.tx};
    if (!(fb.clients = bk_clients_new(&cc)))
        abort();
    broker_init_sendback(cfgdir);
    bk_produce_req_t req = {.cmd = "SEND", .topic = FUZZ_TOPIC, .producer_group = FUZZ_PGROUP,
                            .default_topic = "TBW102", .queue_id = 0, .body_len = 1};
    bk_produce_target_t tgt;
    bk_append_out_t out;
    bk_result_t r;
    st_msg_t m = {.body = "h", .body_len = 1, .properties = props, .properties_len = strlen(props)};
    if (!bk_produce_check(fb.p, &req, &tgt, &r) || !bk_produce_store(fb.p, &tgt, &m, 1, &out, NULL, NULL) ||
        out.r.status != BK_OK)
        abort();
    fb.half = out.put.phys_offset;
}

/* A send as the core sees it: the checks, and the divert of its properties. */
static void core_send(const Rmq__SendMessageRequest *h, struct evbuffer *body, const bk_caller_t *who)
{
    bk_produce_req_t req = {.cmd = "SEND", .topic = h->topic, .producer_group = h->producer_group,
                            .default_topic = h->default_topic, .default_topic_queue_nums = h->default_topic_queue_nums,
                            .queue_id = h->queue_id, .body_len = evbuffer_get_length(body), .who = who};
    bk_produce_target_t tgt;
    bk_result_t r;
    const char *why = NULL;
    size_t plen = h->properties ? strlen(h->properties) : 0;
    st_msg_t m = {.topic = h->topic, .topic_len = strlen(h->topic), .properties = h->properties,
                  .properties_len = plen};

    if (!bk_produce_check(fb.p, &req, &tgt, &r) && !r.why[0])
        abort();
    if (bk_tx_divert(fb.tx, &m, &why) == RMQ_EINVAL && !why)
        abort();
}

/* END_TRANSACTION with the account that signed it; an even commit-log
 * offset names the store's half message (so group and ACL checks run). An
 * undefined state goes to the core as is (refused there too). */
static void core_end(const Rmq__EndTransactionRequest *h, const bk_caller_t *who)
{
    bk_tx_end_req_t req = {.producer_group = h->producer_group,
                           .commit_log_offset = h->commit_log_offset % 2 ? h->commit_log_offset : fb.half,
                           .state = fr_tx_state(h->state), .who = who};
    bk_append_out_t out;

    if (bk_tx_end(fb.tx, &req, &out, NULL, NULL) != 1)
        abort();                     /* ASYNC_FLUSH: every outcome is final at once */
    if (out.r.status != BK_OK && !out.r.why[0])
        abort();
}

/* A heartbeat through the rmq front's decode into the core, on session ss. */
static void core_heartbeat(const Rmq__HeartbeatData *w, bk_session_t *ss, const bk_caller_t *who)
{
    bk_heartbeat_t hb;
    bk_hb_consumer_t *cons = NULL;
    bk_hb_sub_t *subs = NULL;
    bk_result_t r;

    if (fr_heartbeat_decode(w, &hb, &cons, &subs) && bk_clients_heartbeat(fb.clients, ss, who, &hb, &r) < 0 &&
        !r.why[0])
        abort();
    free(cons);
    free(subs);
}

/* CONSUMER_SEND_MSG_BACK through the core, read as the request's signer
 * (the record's topic is checked); an even offset names the half message. */
static void core_send_back(const Rmq__Command *cmd, const bk_caller_t *who)
{
    const Rmq__ConsumerSendMsgBackRequest *h = cmd->send_back;
    bk_perm_reader_t rd;
    bk_sendback_req_t req = {.group = h->group, .offset = h->offset % 2 ? h->offset : fb.half,
                             .delay_level = h->delay_level, .max_reconsume_times = h->max_reconsume_times,
                             .origin_topic = h->origin_topic, .origin_msg_id = h->origin_msg_id,
                             .reader = bk_perm_reader_init(&rd, who, BK_OP_SEND_BACK)};
    bk_append_out_t out;

    if (bk_sendback_run(fb.sendback, &req, &out, NULL, NULL) != 1)
        abort();                     /* ASYNC_FLUSH: every outcome is final at once */
    if (out.r.status != BK_OK && !out.r.why[0])
        abort();
}

/* The core's permission check of the operation cmd's code is (as the rmq
 * front routes it) on the topic and group its remark and key name. */
static void perm_check(rmq_acl_t *acl, const Rmq__Command *cmd)
{
    bk_caller_t who = {NULL};
    bk_result_t r;
    char remark[512];

    if (rmq_acl_request_signer(acl, "127.0.0.1:1", cmd, &who.account, remark, sizeof remark) < 0)
        return;
    r.why[0] = '\0';
    if (!bk_perm_check(&who, fr_routes_op(cmd->code), cmd->remark, cmd->remark, &r) && !r.why[0])
        abort();
}

/* Runs the core path of a request the ACL's signer check let through, as
 * its signer (the core checks what it touches). */
static void broker_apply(rmq_acl_t *acl, const Rmq__Command *cmd, struct evbuffer *body, bk_session_t *ss)
{
    bk_caller_t who = {NULL};
    char remark[512];

    if (rmq_acl_request_signer(acl, "127.0.0.1:1", cmd, &who.account, remark, sizeof remark) < 0)
        return;
    switch (cmd->header_case) {
    case RMQ__COMMAND__HEADER_SEND:
        if (!cmd->send->batch)
            core_send(cmd->send, body, &who);
        break;
    case RMQ__COMMAND__HEADER_END_TRANSACTION:
        if (cmd->code == RMQ__REQUEST_CODE__END_TRANSACTION)
            core_end(cmd->end_transaction, &who);
        break;
    case RMQ__COMMAND__HEADER_HEARTBEAT:
        core_heartbeat(cmd->heartbeat, ss, &who);
        break;
    case RMQ__COMMAND__HEADER_SEND_BACK:
        core_send_back(cmd, &who);
        break;
    default:
        break;
    }
}

/* Signs cmd as account "a" or "b" at now (its auth replaced by sig's). */
static void fuzz_sign(Rmq__Command *cmd, struct evbuffer *body, int64_t now, rmq_signature_t *sig)
{
    uint8_t digest[32];
    int b = cmd->flags & 8;

    cmd->auth = NULL;
    rmq_acl_body_digest_buf(body, digest);
    rmq_acl_sign(b ? "b" : "a", b ? "secret-bb" : "secret-aa", now, cmd, digest, sig);
    cmd->auth = &sig->auth;
}

/* Applies a name-server request (with its frame body) to rt as
 * ns_server's handlers do: a registration's compressed table is inflated
 * and decoded first (ns_regbody_view). */
static void namesrv_apply(ns_route_t *rt, const Rmq__Command *cmd, struct evbuffer *body, uint64_t conn_id,
                          int64_t now)
{
    char why[512];
    rmq_err_t err;

    switch (cmd->code) {
    case RMQ__REQUEST_CODE__REGISTER_BROKER:
        if (cmd->header_case == RMQ__COMMAND__HEADER_REGISTER_BROKER) {
            ns_register_result_t res;
            Rmq__RegisterBrokerRequest view;
            Rmq__TopicConfigTable *tab;

            why[0] = '\0';
            err = ns_regbody_view(cmd->register_broker, body, &view, &tab, why, sizeof why);
            if (err != RMQ_OK && !why[0] && err != RMQ_ENOMEM)
                abort();             /* a refused body always says why */
            if (err == RMQ_OK)
                err = ns_route_register(rt, &view, conn_id, now, &res, why, sizeof why);
            if (tab)
                rmq__topic_config_table__free_unpacked(tab, NULL);
            if (err == RMQ_OK && (!memchr(res.master_addr, 0, sizeof res.master_addr) ||
                                  !memchr(res.master_ha_addr, 0, sizeof res.master_ha_addr)))
                abort();
        }
        break;
    case RMQ__REQUEST_CODE__QUERY_DATA_VERSION:
        if (cmd->header_case == RMQ__COMMAND__HEADER_REGISTER_BROKER) {
            ns_register_result_t res;

            if (!ns_route_query_version(rt, cmd->register_broker, conn_id, now, &res) &&
                (!memchr(res.master_addr, 0, sizeof res.master_addr) ||
                 !memchr(res.master_ha_addr, 0, sizeof res.master_ha_addr)))
                abort();
        }
        break;
    case RMQ__REQUEST_CODE__UNREGISTER_BROKER:
        if (cmd->header_case == RMQ__COMMAND__HEADER_UNREGISTER_BROKER)
            (void)ns_route_unregister(rt, cmd->unregister_broker, why, sizeof why);
        break;
    case RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC:
        if (cmd->header_case == RMQ__COMMAND__HEADER_TOPIC) {
            Rmq__TopicRouteData *rd = ns_route_topic(rt, cmd->topic->topic, &err);

            if (rd) {
                check_repack(&rd->base, 1);
                rmq__topic_route_data__free_unpacked(rd, NULL);
            }
        }
        break;
    case RMQ__REQUEST_CODE__DELETE_TOPIC_IN_NAMESRV:
        if (cmd->header_case == RMQ__COMMAND__HEADER_TOPIC)
            (void)ns_route_delete_topic(rt, cmd->topic->topic, NULL);
        break;
    case RMQ__REQUEST_CODE__GET_BROKER_CLUSTER_INFO: {
        Rmq__ClusterInfo *ci = ns_route_cluster_info(rt, now, 1700000000000);

        if (ci) {
            check_repack(&ci->base, 1);
            rmq__cluster_info__free_unpacked(ci, NULL);
        }
        break;
    }
    case RMQ__REQUEST_CODE__GET_ALL_TOPIC_LIST_FROM_NAMESERVER: {
        Rmq__TopicList *tl = ns_route_topic_list(rt);

        if (tl) {
            check_repack(&tl->base, 1);
            rmq__topic_list__free_unpacked(tl, NULL);
        }
        break;
    }
    case RMQ__REQUEST_CODE__WIPE_WRITE_PERM_OF_BROKER:
    case RMQ__REQUEST_CODE__ADD_WRITE_PERM_OF_BROKER:
        if (cmd->header_case == RMQ__COMMAND__HEADER_BROKER_PERM) {
            if (cmd->code == RMQ__REQUEST_CODE__WIPE_WRITE_PERM_OF_BROKER)
                (void)ns_route_wipe_write_perm(rt, cmd->broker_perm->broker_name);
            else
                (void)ns_route_add_write_perm(rt, cmd->broker_perm->broker_name);
        }
        break;
    case RMQ__REQUEST_CODE__PUT_KV_CONFIG:
    case RMQ__REQUEST_CODE__GET_KV_CONFIG:
    case RMQ__REQUEST_CODE__DELETE_KV_CONFIG:
        if (cmd->header_case == RMQ__COMMAND__HEADER_KV) {
            const Rmq__KvConfig *kv = cmd->kv;

            if (cmd->code == RMQ__REQUEST_CODE__PUT_KV_CONFIG)
                (void)ns_route_kv_put(rt, kv->namespace_, kv->key, kv->value);
            else if (cmd->code == RMQ__REQUEST_CODE__GET_KV_CONFIG)
                (void)ns_route_kv_get(rt, kv->namespace_, kv->key);
            else
                (void)ns_route_kv_delete(rt, kv->namespace_, kv->key);
        }
        break;
    default:
        /* opaque selects the odd housekeeping event: expiry or a closed connection */
        if (cmd->opaque % 7 == 1)
            (void)ns_route_expire(rt, now, 1000);
        else if (cmd->opaque % 7 == 2)
            (void)ns_route_remove_conn(rt, conn_id);
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    ns_route_t *rt;
    size_t off = 0, used;
    int64_t now = 1000;
    uint64_t conn_id = 1;
    rmq_frame_t f = { 0 };

    static const char acl_text[] = "replayWindowMs=1000\nreplayCacheEntries=16\n"
                                   "account.a.secretKey=secret-aa\n"
                                   "account.a.defaultTopicPerm=PUB\n"
                                   "account.a.groupPerms=g=PUB|SUB\n"
                                   "account.b.secretKey=secret-bb\n"
                                   "account.b.topicPerms=u=PUB\n"
                                   "account.b.groupPerms=cg=SUB\n";
    char err[256], remark[512];
    rmq_acl_t *acl;
    core_fake_session_t ss;

    if (!quiet) {
        rmq_log_set_level(RMQ_LOG_OFF);
        broker_init();
        quiet = 1;
    }
    core_fake_session_init(&ss);
    acl = rmq_acl_parse(acl_text, sizeof(acl_text) - 1, "fuzz", err, sizeof err);
    if (!acl)
        abort();
    rt = ns_route_new();
    if (!rt) {
        rmq_acl_free(acl);
        return 0;
    }
    while (off < size &&
           rmq_frame_decode_bytes(data + off, size - off, FUZZ_MAX_FRAME, &f, &used, NULL) == RMQ_OK) {
        const Rmq__Command *cmd = f.cmd;

        off += used;
        if (!rmq_request_name(cmd->code) || !rmq_status_name(cmd->status) ||
            !rmq_status_name(cmd->code) || !rmq_request_name(cmd->status))
            abort();
        check_repack(&cmd->base, 0);
        broker_checks(cmd, f.body);
        now += cmd->version & 0xffff;
        conn_id = 1 + cmd->flags % 4;
        namesrv_apply(rt, cmd, f.body, conn_id, now);
        Rmq__Auth *given = f.cmd->auth;
        rmq_signature_t sig;
        if (cmd->opaque % 2 == 0)
            fuzz_sign(f.cmd, f.body, now, &sig);
        int st = rmq_acl_check(acl, RMQ_ACL_SIGNER_ONLY, "127.0.0.1:1", cmd, f.body, now, remark, sizeof remark);
        if (st != RMQ__STATUS__SUCCESS && (st != RMQ__STATUS__NO_PERMISSION || !remark[0]))
            abort();
        if (st == RMQ__STATUS__SUCCESS)
            broker_apply(acl, cmd, f.body, &ss.base);
        /* the core's check of the operation the code is, on names the frame gives */
        perm_check(acl, cmd);
        f.cmd->auth = given;
        rmq_frame_clear(&f);
    }
    rmq_frame_clear(&f);
    bk_clients_session_closed(fb.clients, &ss.base);
    bk_tx_session_closed(fb.tx, &ss.base);
    if (ss.base.groups != 0)
        abort();
    bk_session_unref(&ss.base);
    rmq_acl_free(acl);
    (void)ns_route_live_count(rt);
    ns_route_free(rt);
    return 0;
}
