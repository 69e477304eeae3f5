/* mqadmin.h: what the mqadmin files share: the per-run context (name
 * servers, parsed options, one blocking RPC client), aligned tables and cell
 * formats, requests to name servers and brokers, and the commands. Every
 * failure is printed on stderr as "mqadmin: WHAT: ADDR: reason" by the
 * function that sees it; commands return their exit status (0 or 1). */
#ifndef MQADMIN_H
#define MQADMIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rmq_message.h"
#include "rmq_rpc.h"

#define ADM_TIMEOUT_MS 5000
#define ADM_MAX_NAMESRV 16
#define ADM_ERR_MAX 2048
#define ADM_OPT_FULL 'F'          /* --full: no short form */

/* ---- context ---------------------------------------------------------- */

typedef struct adm_ctx {
    const char *cmd;              /* command name, for messages */
    char *addrs[ADM_MAX_NAMESRV]; /* name servers, owned */
    size_t naddrs;
    const char *opt[128];         /* option letter -> its argument ("1" for flags) */
    const char *client_config;    /* --client-config FILE (TLS, signing), NULL: environment */
    rmq_sync_t *sync;
} adm_ctx_t;

/* The argument of option letter c, or NULL when it was not given. */
static inline const char *adm_opt(const adm_ctx_t *ctx, char c)
{
    return ctx->opt[(unsigned char)c & 127];
}

/* Reads option c as an integer in [min, max] into *out (def when absent);
 * -1 after printing what is wrong with it. */
int adm_opt_int(const adm_ctx_t *ctx, char c, int64_t def, int64_t min, int64_t max, int64_t *out);

/* ---- tables (mqadmin_table.c) ------------------------------------------ */

/* Rows of text cells, the first row the header; printed column-aligned. */
typedef struct adm_table {
    size_t ncols;
    size_t nrows;
    size_t cap;
    char **cells;                 /* nrows * ncols, owned */
} adm_table_t;

void adm_table_init(adm_table_t *t, size_t ncols);
/* Appends a row of ncols cells, one string argument each (NULL prints as
 * empty). Exits on out of memory (a CLI has nothing to save). */
void adm_table_row(adm_table_t *t, ...);
/* Prints t with two spaces between columns, widths from the widest cell;
 * the last column is not padded. */
void adm_table_print(const adm_table_t *t, FILE *out);
void adm_table_free(adm_table_t *t);

/* "2026-12-01 09:34:15.123" (local time) for wall-clock ms; "-" for 0. */
void adm_time_format(int64_t ms, char *buf, size_t len);
/* Length of the valid multi-byte UTF-8 sequence at data[i] (2..4), or 0. */
size_t adm_utf8_seq(const uint8_t *data, size_t len, size_t i);
/* data[0..len) as one printable line: control bytes and bytes that are not
 * valid UTF-8 escaped (\n, \t, \\, \xNN), cut after max bytes with the
 * full size noted. Returns a string the caller frees. */
char *adm_cell_escape(const uint8_t *data, size_t len, size_t max);
/* "RW-" style permission string, as RocketMQ's PermName.perm2String. */
void adm_perm_string(int32_t perm, char out[4]);

/* ---- requests (mqadmin_rpc.c) ------------------------------------------- */

/* Why an rmq_sync_call on ctx->sync failed with err: the connection's
 * reason when it has one (a TLS failure named as such), else err's text. */
const char *adm_call_error(const adm_ctx_t *ctx, rmq_err_t err);

/* Appends "addr: reason" to the "; "-separated list of failures in errs. */
void adm_note_failure(char *errs, size_t len, const char *addr, const char *reason);

/* Sends req to the name servers in order until one answers; RMQ_OK with
 * *resp filled (caller clears it; its status is not checked), or an error
 * after printing which name servers failed and why. */
rmq_err_t adm_query_namesrv(adm_ctx_t *ctx, Rmq__Command *req, rmq_frame_t *resp);

/* Returns 0 if resp succeeded with a header of type want (named
 * header_name), else prints why (what names the request). */
int adm_check_resp(const char *what, const rmq_frame_t *resp, Rmq__Command__HeaderCase want,
                   const char *header_name);

/* Sends req (+ body) to the broker at addr and checks the answer: 0 with
 * *resp owned by the caller, or -1 after printing the address and the
 * transport error or status and remark (resp then cleared). want 0 accepts
 * any header. */
int adm_broker_call(adm_ctx_t *ctx, const char *addr, Rmq__Command *req,
                    const void *body, size_t len, Rmq__Command__HeaderCase want,
                    const char *header_name, rmq_frame_t *resp);

/* The value of key in ct (may be NULL), or NULL. */
const char *adm_config_value(const Rmq__ConfigTable *ct, const char *key);
/* Asks addr for its runtime info without printing failures; the table
 * (inside *resp, which the caller clears) or NULL. */
const Rmq__ConfigTable *adm_runtime_quiet(adm_ctx_t *ctx, const char *addr, rmq_frame_t *resp);

/* The name servers' cluster info into *resp (caller clears); -1 printed. */
int adm_cluster_info(adm_ctx_t *ctx, rmq_frame_t *resp);
/* The topic's route into *resp (caller clears); -1 printed. */
int adm_topic_route(adm_ctx_t *ctx, const char *topic, rmq_frame_t *resp);

const Rmq__BrokerData *adm_find_broker(const Rmq__ClusterInfo *ci, const char *name);
const Rmq__ClusterEntry *adm_find_cluster(const Rmq__ClusterInfo *ci, const char *name);
/* The master's (broker id 0) address of bd, or NULL. */
const char *adm_broker_master(const Rmq__BrokerData *bd);
/* The master's address, else the lowest-id slave's (reads while the master
 * is down); NULL when bd has no address. */
const char *adm_broker_readable(const Rmq__BrokerData *bd);

/* A broker a change goes to: name and address point into the response
 * they came from. */
typedef struct adm_target {
    const char *name;
    const char *addr;             /* NULL: the broker name has no master */
} adm_target_t;

/* The masters of cluster (one per broker name) into a new array (*n
 * entries, caller frees); NULL after printing when the cluster is unknown. */
adm_target_t *adm_cluster_masters(const char *what, const Rmq__ClusterInfo *ci, const char *cluster,
                                  size_t *n);

/* ---- messages (mqadmin_message.c) --------------------------------------- */

/* The record's property name as an escaped cell of at most max bytes, "-"
 * when absent. Returns a string the caller frees. */
char *adm_prop_cell(const rmq_record_t *rec, const char *name, size_t max);
/* Prints every field of rec, one "Name:  value" line each, then the body
 * (cut at 4 KiB unless full). */
void adm_print_record(const char *id, const rmq_record_t *rec, int full);
/* Prints (adm_print_record) every message of topic whose UNIQ_KEY is id,
 * asking each broker of the route (QUERY_MESSAGE). Returns how many, or -1
 * after printing why nothing could be asked. */
int adm_query_by_uniq(adm_ctx_t *ctx, const char *topic, const char *id, int full);

/* ---- commands ----------------------------------------------------------- */

int adm_cmd_cluster_list(adm_ctx_t *ctx);
int adm_cmd_broker_status(adm_ctx_t *ctx);
int adm_cmd_get_namesrv_config(adm_ctx_t *ctx);
int adm_cmd_get_sync_state_set(adm_ctx_t *ctx);
int adm_cmd_topic_route(adm_ctx_t *ctx);
int adm_cmd_topic_list(adm_ctx_t *ctx);
int adm_cmd_update_topic(adm_ctx_t *ctx);
int adm_cmd_update_topic_list(adm_ctx_t *ctx);
/* Sends the change req to the masters of -c CLUSTER, else to -b ADDR, one
 * row each into t (result done on success). Returns the exit status. */
int adm_change_targets(adm_ctx_t *ctx, Rmq__Command *req, const char *done, adm_table_t *t);
int adm_cmd_delete_topic(adm_ctx_t *ctx);
int adm_cmd_topic_status(adm_ctx_t *ctx);
int adm_cmd_consumer_progress(adm_ctx_t *ctx);
int adm_cmd_query_msg_by_id(adm_ctx_t *ctx);
int adm_cmd_query_msg_by_key(adm_ctx_t *ctx);
int adm_cmd_send_message(adm_ctx_t *ctx);
int adm_cmd_consume_message(adm_ctx_t *ctx);
int adm_cmd_query_dlq(adm_ctx_t *ctx);
int adm_cmd_resend_dlq(adm_ctx_t *ctx);

#endif
