/* wire.c: the cluster tests' broker protocol helpers (see wire.h): body
 * generation, blocking calls, request headers, pipelined send and pull. */
#include "wire.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rmq_message.h"

uint64_t wire_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

size_t wire_body_gen(int i, uint8_t *buf)
{
    size_t len = 1 + (size_t)(wire_mix((uint64_t)i) % WIRE_BODY_MAX);
    uint64_t s = wire_mix((uint64_t)i + 0x9e3779b97f4a7c15ull);
    for (size_t k = 0; k < len; k++) {
        if (k % 8 == 0)
            s = wire_mix(s + k);
        buf[k] = (uint8_t)(s >> (8 * (k % 8)));
    }
    return len;
}

/* ---- blocking requests ---------------------------------------------------- */

int wire_call_with(const wire_link_t *ln, const char *addr, Rmq__Command *req, const void *body,
                   size_t len, rmq_frame_t *keep)
{
    rmq_sync_t *s = rmq_sync_new(&ln->opts);
    rmq_frame_t resp = { 0 };
    ck_assert_ptr_nonnull(s);
    int status = -1;
    if (rmq_sync_call(s, addr, req, body, len, ln->timeout_ms, &resp) == RMQ_OK) {
        status = resp.cmd->status;
        if (keep && (!ln->keep_successes || status == RMQ__STATUS__SUCCESS))
            *keep = resp;
        else
            rmq_frame_clear(&resp);
    }
    rmq_sync_free(s);
    return status;
}

int wire_call(const char *addr, Rmq__Command *req, const void *body, size_t len, rmq_frame_t *keep)
{
    static const wire_link_t ln = {
        .opts = { .connect_timeout_ms = 3000, .name = "test" },
        .timeout_ms = WIRE_RPC_TIMEOUT_MS,
    };
    return wire_call_with(&ln, addr, req, body, len, keep);
}

void wire_runtime_value(const rmq_frame_t *resp, const char *key, char *out, size_t len)
{
    const Rmq__ConfigTable *config = resp->cmd->config;
    out[0] = '\0';
    for (size_t i = 0; config && i < config->n_entries; i++)
        if (strcmp(config->entries[i]->key, key) == 0)
            snprintf(out, len, "%s", config->entries[i]->value);
}

void wire_topic_request(Rmq__Command *req, Rmq__TopicConfig *tc, const char *topic, int queues)
{
    rmq__command__init(req);
    rmq__topic_config__init(tc);
    tc->topic_name = (char *)topic;
    tc->read_queue_nums = queues;
    tc->write_queue_nums = queues;
    tc->perm = RMQ__PERM__PERM_READ | RMQ__PERM__PERM_WRITE;
    req->code = RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC;
    req->header_case = RMQ__COMMAND__HEADER_TOPIC_CONFIG;
    req->topic_config = tc;
}

void wire_topic_query(Rmq__Command *req, Rmq__TopicRequest *tr, int code, const char *topic)
{
    rmq__command__init(req);
    rmq__topic_request__init(tr);
    tr->topic = (char *)topic;
    req->code = code;
    req->header_case = RMQ__COMMAND__HEADER_TOPIC;
    req->topic = tr;
}

void wire_max_offset_request(Rmq__Command *req, Rmq__QueueRequest *qr, const char *topic, int q)
{
    rmq__command__init(req);
    rmq__queue_request__init(qr);
    qr->topic = (char *)topic;
    qr->queue_id = q;
    req->code = RMQ__REQUEST_CODE__GET_MAX_OFFSET;
    req->header_case = RMQ__COMMAND__HEADER_QUEUE;
    req->queue = qr;
}

long long wire_resp_offset(const rmq_frame_t *resp)
{
    return resp->cmd->header_case == RMQ__COMMAND__HEADER_OFFSET_RESP ? resp->cmd->offset_resp->offset : -1;
}

void wire_send_hdr(Rmq__Command *req, Rmq__SendMessageRequest *h, const char *group, const char *topic,
                   int queue_id, char *props)
{
    rmq__command__init(req);
    rmq__send_message_request__init(h);
    h->producer_group = (char *)group;
    h->topic = (char *)topic;
    h->default_topic = (char *)"TBW102";
    h->default_topic_queue_nums = WIRE_QUEUES;
    h->queue_id = queue_id;
    h->properties = props;
    req->code = RMQ__REQUEST_CODE__SEND_MESSAGE;
    req->header_case = RMQ__COMMAND__HEADER_SEND;
    req->send = h;
}

void wire_pull_hdr(Rmq__Command *req, Rmq__PullMessageRequest *h, const char *group, const char *topic,
                   int q, int64_t offset)
{
    rmq__command__init(req);
    rmq__pull_message_request__init(h);
    h->consumer_group = (char *)group;
    h->topic = (char *)topic;
    h->queue_id = q;
    h->queue_offset = offset;
    h->max_msg_nums = 1024;
    h->subscription = (char *)"*";
    req->code = RMQ__REQUEST_CODE__PULL_MESSAGE;
    req->header_case = RMQ__COMMAND__HEADER_PULL;
    req->pull = h;
}

/* ---- pipelined sender ------------------------------------------------------ */

static void send_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    wire_send_slot_t *slot = arg;
    wire_sender_t *sd = slot->sd;
    sd->inflight--;
    if (err == RMQ_OK && resp->cmd->status == RMQ__STATUS__SUCCESS) {
        sd->acked_map[slot->idx] = 1;
        sd->acked++;
    } else if (err == RMQ_OK && resp->cmd->status == RMQ__STATUS__SYSTEM_BUSY && sd->flow->count_busy) {
        sd->busy++;
    } else {
        if (!sd->failed)
            sd->first_fail = err != RMQ_OK ? err : resp->cmd->status;
        sd->failed++;
    }
    wire_send_pump(sd);
}

void wire_send_pump(wire_sender_t *sd)
{
    char props[64];
    while (!sd->stop && sd->next < sd->total && sd->inflight < sd->window) {
        int i = sd->next++;
        size_t len = wire_body_gen(i, sd->body);
        Rmq__Command req;
        Rmq__SendMessageRequest h;
        snprintf(props, sizeof props, "KEYS\001%d\002", i);
        wire_send_hdr(&req, &h, sd->flow->producer_group, sd->flow->topic, i % WIRE_QUEUES, props);
        sd->slots[i].sd = sd;
        sd->slots[i].idx = i;
        if (rmq_client_call(sd->cli, &req, sd->body, len, WIRE_RPC_TIMEOUT_MS, send_done, &sd->slots[i]) !=
            RMQ_OK) {
            sd->failed++;
            continue;
        }
        sd->bytes += (int64_t)len;
        sd->inflight++;
    }
    if (sd->inflight == 0 && (sd->stop || sd->next >= sd->total))
        event_base_loopbreak(sd->base);
}

void wire_sender_init(wire_sender_t *sd, const wire_flow_t *flow, struct event_base *base,
                      rmq_client_t *cli, int total, int window)
{
    memset(sd, 0, sizeof(*sd));
    sd->flow = flow;
    sd->base = base;
    sd->cli = cli;
    sd->total = total;
    sd->window = window;
    sd->acked_map = calloc((size_t)total, 1);
    sd->slots = calloc((size_t)total, sizeof(*sd->slots));
    ck_assert_ptr_nonnull(sd->acked_map);
    ck_assert_ptr_nonnull(sd->slots);
}

void wire_sender_deinit(wire_sender_t *sd)
{
    free(sd->acked_map);
    free(sd->slots);
}

double wire_send_all(const char *addr, wire_sender_t *sd, const wire_flow_t *flow, int total, int window)
{
    struct event_base *base = event_base_new();
    rmq_client_opts_t opts = { .connect_timeout_ms = 3000, .name = "sender" };
    rmq_client_t *cli = rmq_client_new(base, addr, &opts);
    wire_sender_init(sd, flow, base, cli, total, window);
    long long t0 = hn_now_ms();
    wire_send_pump(sd);
    event_base_dispatch(base);
    double secs = (double)(hn_now_ms() - t0) / 1000.0;
    rmq_client_free(cli);
    event_base_free(base);
    return secs;
}

typedef struct killer {
    hn_daemon_t *victim;
    wire_sender_t *sd;
} killer_t;

static void kill_timer(evutil_socket_t fd, short what, void *arg)
{
    killer_t *k = arg;
    hn_daemon_kill9(k->victim);
    k->sd->stop = 1;
}

void wire_send_kill9(const char *addr, wire_sender_t *sd, const wire_flow_t *flow, int total, int window,
                     hn_daemon_t *victim, int after_ms)
{
    struct event_base *base = event_base_new();
    rmq_client_opts_t opts = { .connect_timeout_ms = 3000, .name = "sender" };
    rmq_client_t *cli = rmq_client_new(base, addr, &opts);
    wire_sender_init(sd, flow, base, cli, total, window);
    killer_t k = { victim, sd };
    struct event *t = evtimer_new(base, kill_timer, &k);
    struct timeval tv = { after_ms / 1000, (after_ms % 1000) * 1000 };
    evtimer_add(t, &tv);
    wire_send_pump(sd);
    event_base_dispatch(base);
    event_free(t);
    rmq_client_free(cli);
    event_base_free(base);
    sd->total = sd->next;
}

/* ---- puller ------------------------------------------------------------------ */

static void pull_one(wire_puller_t *pl, int q);

/* Checks every record of a pull response body against its regenerated body. */
static void pull_check_body(wire_puller_t *pl, struct evbuffer *body, int q)
{
    size_t len = evbuffer_get_length(body);
    const uint8_t *data = evbuffer_pullup(body, (ssize_t)len);
    size_t off = 0;
    while (off < len) {
        rmq_record_t rec;
        if (rmq_record_decode(data + off, len - off, 1, &rec) != RMQ_OK) {
            pl->bad++;
            return;
        }
        off += rec.total_size;
        size_t vlen = 0;
        const char *key = rmq_props_get(rec.properties, rec.properties_len, RMQ_PROP_KEYS, &vlen);
        int idx = key ? atoi(key) : -1;
        if (idx < 0 || idx >= pl->total || rec.queue_id != q) {
            pl->bad++;
            continue;
        }
        size_t want = wire_body_gen(idx, pl->body);
        if (want != rec.body_len || memcmp(pl->body, rec.body, want) != 0)
            pl->bad++;
        if (pl->seen[idx]++)
            pl->dup++;
        pl->count++;
        pl->bytes += rec.body_len;
    }
}

static void pull_finish_queue(wire_puller_t *pl)
{
    if (++pl->ndone == WIRE_QUEUES)
        event_base_loopbreak(pl->base);
}

static void pull_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    wire_pull_slot_t *slot = arg;
    wire_puller_t *pl = slot->pl;
    int status = err == RMQ_OK ? resp->cmd->status : -1;
    if (status == RMQ__STATUS__SUCCESS) {
        pull_check_body(pl, resp->body, slot->q);
        pl->next[slot->q] = resp->cmd->pull_resp->next_begin_offset;
        pull_one(pl, slot->q);
        return;
    }
    if (status == RMQ__STATUS__PULL_RETRY_IMMEDIATELY) {
        pull_one(pl, slot->q);
        return;
    }
    if (status != RMQ__STATUS__PULL_NOT_FOUND && !pl->errors++)
        pl->first_error = status;
    pull_finish_queue(pl);
}

static void pull_one(wire_puller_t *pl, int q)
{
    Rmq__Command req;
    Rmq__PullMessageRequest h;
    wire_pull_hdr(&req, &h, pl->flow->consumer_group, pl->flow->topic, q, pl->next[q]);
    pl->slots[q].pl = pl;
    pl->slots[q].q = q;
    if (rmq_client_call(pl->cli, &req, NULL, 0, WIRE_RPC_TIMEOUT_MS, pull_done, &pl->slots[q]) != RMQ_OK) {
        pl->errors++;
        pull_finish_queue(pl);
    }
}

double wire_pull_all(const char *addr, wire_puller_t *pl, const wire_flow_t *flow, int total)
{
    struct event_base *base = event_base_new();
    rmq_client_opts_t opts = { .connect_timeout_ms = 3000, .name = "puller" };
    memset(pl, 0, sizeof(*pl));
    pl->flow = flow;
    pl->base = base;
    pl->cli = rmq_client_new(base, addr, &opts);
    pl->total = total;
    pl->seen = calloc((size_t)total, 1);
    ck_assert_ptr_nonnull(pl->seen);
    long long t0 = hn_now_ms();
    for (int q = 0; q < WIRE_QUEUES; q++)
        pull_one(pl, q);
    event_base_dispatch(base);
    double secs = (double)(hn_now_ms() - t0) / 1000.0;
    rmq_client_free(pl->cli);
    event_base_free(base);
    return secs;
}

int wire_assert_acked_on(const char *addr, const wire_flow_t *flow, const uint8_t *acked_map, int total)
{
    wire_puller_t pl;
    wire_pull_all(addr, &pl, flow, total);
    ck_assert_msg(pl.errors == 0, "%d pull errors, first status %d", pl.errors, pl.first_error);
    ck_assert_int_eq(pl.bad, 0);
    ck_assert_int_eq(pl.dup, 0);
    int missing = 0, acked = 0;
    for (int i = 0; i < total; i++) {
        acked += acked_map[i];
        missing += acked_map[i] && !pl.seen[i];
    }
    ck_assert_msg(missing == 0, "%d of %d acknowledged messages missing on %s", missing, acked, addr);
    free(pl.seen);
    return pl.count;
}

int wire_queue_has(void *want)
{
    const wire_want_body_t *w = want;
    Rmq__Command req;
    Rmq__PullMessageRequest h;
    rmq_frame_t resp = { 0 };
    int found = 0;
    wire_pull_hdr(&req, &h, w->group, w->topic, w->q, 0);
    if (wire_call(w->addr, &req, NULL, 0, &resp) == RMQ__STATUS__SUCCESS) {
        size_t len = resp.body ? evbuffer_get_length(resp.body) : 0, off = 0;
        const uint8_t *data = len ? evbuffer_pullup(resp.body, -1) : NULL;
        while (off < len && !found) {
            rmq_record_t rec;
            if (rmq_record_decode(data + off, len - off, 1, &rec) != RMQ_OK)
                break;
            off += rec.total_size;
            found = rec.body_len == strlen(w->body) && memcmp(rec.body, w->body, rec.body_len) == 0;
        }
    }
    rmq_frame_clear(&resp);      /* a refusal still carries a frame */
    return found;
}

int wire_commit(const char *addr, const char *group, long long phys)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__EndTransactionRequest h = RMQ__END_TRANSACTION_REQUEST__INIT;
    h.producer_group = (char *)group;
    h.commit_log_offset = phys;
    h.state = RMQ__TRANSACTION_STATE__TX_COMMIT;
    req.code = RMQ__REQUEST_CODE__END_TRANSACTION;
    req.header_case = RMQ__COMMAND__HEADER_END_TRANSACTION;
    req.end_transaction = &h;
    return wire_call(addr, &req, NULL, 0, NULL);
}
