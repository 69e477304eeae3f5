/* wire.h: broker protocol helpers shared by the cluster tests that talk to
 * brokers over rmq_client / rmq_sync directly (no librmq): message bodies
 * regenerated from their index, blocking calls, request headers, and a
 * pipelined sender and puller that check every pulled body byte for byte
 * (the index travels in the KEYS property). No state is shared between
 * calls, so the request builders serve any thread; the rest asserts with
 * Check and belongs on the test thread. */
#ifndef WIRE_H
#define WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "harness.h"
#include "rmq_rpc.h"

#define WIRE_RPC_TIMEOUT_MS 10000
#define WIRE_QUEUES 4              /* queues the sender spreads over and the puller reads */
#define WIRE_BODY_MAX 4096

/* MurmurHash3's 64-bit finaliser (fmix64): test data derived from an index. */
uint64_t wire_mix(uint64_t x);
/* Writes message i's body (1..WIRE_BODY_MAX bytes) into buf; returns its size. */
size_t wire_body_gen(int i, uint8_t *buf);

/* How a blocking call connects, and how long it waits for the answer. */
typedef struct wire_link {
    rmq_client_opts_t opts;
    int timeout_ms;
    int keep_successes;          /* keep gets only SUCCESS answers */
} wire_link_t;

/* Sends req (+ body) to addr over a fresh connection and returns the
 * status, or -1 on a transport error. keep (may be NULL) gets the response
 * (only a SUCCESS one if ln->keep_successes; the caller clears it);
 * otherwise it is cleared. */
int wire_call_with(const wire_link_t *ln, const char *addr, Rmq__Command *req, const void *body,
                   size_t len, rmq_frame_t *keep);
/* wire_call_with over plaintext, 3 s to connect, WIRE_RPC_TIMEOUT_MS to answer. */
int wire_call(const char *addr, Rmq__Command *req, const void *body, size_t len, rmq_frame_t *keep);

/* The value of key in a GET_BROKER_RUNTIME_INFO response into out ("" if absent). */
void wire_runtime_value(const rmq_frame_t *resp, const char *key, char *out, size_t len);

/* Fills req (with tc) as UPDATE_AND_CREATE_TOPIC: queues read and write
 * queues, read-write permission. */
void wire_topic_request(Rmq__Command *req, Rmq__TopicConfig *tc, const char *topic, int queues);
/* Fills req (with tr) as request code about topic (GET_ROUTEINFO_BY_TOPIC,
 * GET_TOPIC_STATS_INFO, ...). */
void wire_topic_query(Rmq__Command *req, Rmq__TopicRequest *tr, int code, const char *topic);
/* Fills req (with qr) as GET_MAX_OFFSET of topic's queue q. */
void wire_max_offset_request(Rmq__Command *req, Rmq__QueueRequest *qr, const char *topic, int q);
/* The offset in a response to wire_max_offset_request, or -1. */
long long wire_resp_offset(const rmq_frame_t *resp);
/* Fills req (with h) as SEND_MESSAGE to topic's queue (auto-created from
 * TBW102 with WIRE_QUEUES queues); props is borrowed. */
void wire_send_hdr(Rmq__Command *req, Rmq__SendMessageRequest *h, const char *group, const char *topic,
                   int queue_id, char *props);
/* Fills req (with h) as PULL_MESSAGE of up to 1024 messages, subscription "*". */
void wire_pull_hdr(Rmq__Command *req, Rmq__PullMessageRequest *h, const char *group, const char *topic,
                   int q, int64_t offset);

/* What a pipelined sender or puller works on. */
typedef struct wire_flow {
    const char *topic;
    const char *producer_group;
    const char *consumer_group;
    int count_busy;              /* SYSTEM_BUSY answers go to busy, not failed */
} wire_flow_t;

typedef struct wire_sender wire_sender_t;
typedef struct wire_send_slot {
    wire_sender_t *sd;
    int idx;
} wire_send_slot_t;

/* Sends messages 0..total-1 (body wire_body_gen(i), KEYS i, queue i % WIRE_QUEUES)
 * with up to window in flight on one client; breaks the loop once all answered. */
struct wire_sender {
    const wire_flow_t *flow;
    struct event_base *base;
    rmq_client_t *cli;
    int total, next, inflight, window;
    int acked, failed, busy;
    int first_fail;              /* status, or the rmq_err_t of the first failure */
    int stop;                    /* stop issuing (kill -9 cases) */
    uint8_t *acked_map;          /* [total]: 1 where SUCCESS came back */
    wire_send_slot_t *slots;
    uint8_t body[WIRE_BODY_MAX];
    int64_t bytes;
};

/* Prepares sd over cli on base (both borrowed); flow is borrowed. */
void wire_sender_init(wire_sender_t *sd, const wire_flow_t *flow, struct event_base *base,
                      rmq_client_t *cli, int total, int window);
/* Issues sends until the window is full. */
void wire_send_pump(wire_sender_t *sd);
void wire_sender_deinit(wire_sender_t *sd);
/* Sends total messages to addr with window in flight; returns seconds taken.
 * sd stays initialised (wire_sender_deinit). */
double wire_send_all(const char *addr, wire_sender_t *sd, const wire_flow_t *flow, int total, int window);

/* Sends up to total messages to addr with window in flight and kill -9s
 * victim after_ms into it, which stops the sender; then sd->total is the
 * number issued. sd stays initialised (wire_sender_deinit). */
void wire_send_kill9(const char *addr, wire_sender_t *sd, const wire_flow_t *flow, int total, int window,
                     hn_daemon_t *victim, int after_ms);

typedef struct wire_puller wire_puller_t;
typedef struct wire_pull_slot {
    wire_puller_t *pl;
    int q;
} wire_pull_slot_t;

/* Pulls every queue from offset 0 to its end, checking each record. */
struct wire_puller {
    const wire_flow_t *flow;
    struct event_base *base;
    rmq_client_t *cli;
    int total;
    int64_t next[WIRE_QUEUES];
    wire_pull_slot_t slots[WIRE_QUEUES];
    int ndone;
    uint8_t *seen;               /* [total] times each index came back; free() */
    int count, dup, bad, errors, first_error;
    int64_t bytes;
    uint8_t body[WIRE_BODY_MAX];
};

/* Pulls flow's topic from addr into pl; returns seconds taken. The caller frees pl->seen. */
double wire_pull_all(const char *addr, wire_puller_t *pl, const wire_flow_t *flow, int total);

/* END_TRANSACTION commit, as producer group, of the half message at
 * commit-log offset phys on addr; the answer's status. */
int wire_commit(const char *addr, const char *group, long long phys);

/* A message to look for: body in queue q of topic on addr, pulled from
 * offset 0 as group. */
typedef struct wire_want_body {
    const char *addr, *group, *topic, *body;
    int q;
} wire_want_body_t;
/* 1 if the queue holds a message with that body (want is a
 * wire_want_body_t, so this serves as an hn_wait_until condition). */
int wire_queue_has(void *want);

/* Asserts every message of acked_map (total entries) is pulled back intact
 * from addr, once; returns how many messages the pull found. */
int wire_assert_acked_on(const char *addr, const wire_flow_t *flow, const uint8_t *acked_map, int total);

#endif
