/* gr_front.c: the gRPC front's set-up (one method table from every file's
 * rows) and the per-call plumbing its handlers share: request decoding,
 * reply encoding, the client id, the caller and its rights. */
#include "gr_front.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_grpc_auth.h"
#include "rmq_security.h"
#include "rmq_time.h"

/* Every file's rows; a file of the front adds its table here. */
static const gr_methods_t *const gr_tables[] = {
    &gr_client_methods,
    &gr_send_methods,
    &gr_route_methods,
    &gr_consume_methods,
};

#define GR_TABLES (sizeof(gr_tables) / sizeof(gr_tables[0]))

/* The server's side of the Settings reply, from the broker's config
 * (RocketMQ's proxy defaults where the broker has no setting). */
static gr_settings_config_t settings_config(const bk_front_t *fe)
{
    return (gr_settings_config_t){
        .max_body_size = (int32_t)fe->node->cfg->max_message_size,
        .receive_batch_size = 32,
        .long_polling_max_ms = 20000,
        .producer_max_attempts = 3,
    };
}

/* The name servers of namesrvAddr ("host:port;host:port") and a client
 * pool for them (the broker's TLS and ACL client settings). */
static rmq_err_t name_servers_open(gr_front_t *gf)
{
    const char *list = gf->fe->node->cfg->namesrv_addr ? gf->fe->node->cfg->namesrv_addr : "";
    rmq_client_opts_t opts = {.connect_timeout_ms = 3000, .name = "grpc-route"};
    rmq_security_client_opts(gf->fe->node->sec, &opts);
    gf->ns_pool = rmq_client_pool_new(gf->fe->node->base, &opts);
    gf->ns = calloc(strlen(list) / 2 + 1, sizeof(*gf->ns));
    char *copy = strdup(list), *save = NULL;
    rmq_err_t rc = gf->ns_pool && gf->ns && copy ? RMQ_OK : RMQ_ENOMEM;
    for (char *a = rc == RMQ_OK ? strtok_r(copy, ";", &save) : NULL; a && rc == RMQ_OK; a = strtok_r(NULL, ";", &save))
        if (!(gf->ns[gf->nns++] = strdup(a)))
            rc = RMQ_ENOMEM;
    free(copy);
    return rc;
}

gr_front_t *gr_front_start(bk_front_t *fe, char *err, size_t errlen)
{
    size_t n = 0;
    for (size_t t = 0; t < GR_TABLES; t++)
        n += gr_tables[t]->n;
    gr_front_t *gf = calloc(1, sizeof(*gf));
    rmq_grpc_method_t *all = calloc(n ? n : 1, sizeof(*all));
    if (!gf || !all) {
        free(gf);
        free(all);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    gf->fe = fe;
    gf->settings = settings_config(fe);
    gf->recalls = rmq_recall_fwds_new(fe->node->base, fe->node->sec->client_ctx);
    if (!gf->recalls || name_servers_open(gf) != RMQ_OK) {
        free(all);
        gr_front_free(gf);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    size_t i = 0;
    for (size_t t = 0; t < GR_TABLES; t++) {
        for (size_t r = 0; r < gr_tables[t]->n; r++) {
            all[i] = gr_tables[t]->rows[r];
            all[i++].arg = gf;
        }
    }
    rmq_err_t rc = rmq_grpc_install(fe->srv, all, n);
    free(all);
    if (rc != RMQ_OK) {
        snprintf(err, errlen, "cannot start the gRPC transport: %s", rmq_strerror(rc));
        gr_front_free(gf);
        return NULL;
    }
    return gf;
}

void gr_front_free(gr_front_t *gf)
{
    if (!gf)
        return;
    rmq_recall_fwds_free(gf->recalls);
    if (gf->ns_pool)
        rmq_client_pool_free(gf->ns_pool);
    for (size_t i = 0; i < gf->nns; i++)
        free(gf->ns[i]);
    free(gf->ns);
    free(gf);
}

/* ---- per call ---------------------------------------------------------------- */

void gr_call_answer_status(rmq_grpc_call_t *call, const ProtobufCMessageDescriptor *desc, const gr_status_t *st)
{
    rmq_grpc_answer_status(call, desc, st->code, st->message);
}

const char *gr_call_client_id(rmq_grpc_call_t *call, gr_status_t *st)
{
    const char *id = rmq_grpc_call_header(call, "x-mq-client-id");
    if (id && id[0])
        return id;
    gr_status_set(st, APACHE__ROCKETMQ__V2__CODE__CLIENT_ID_REQUIRED, "metadata x-mq-client-id is required");
    return NULL;
}

gr_session_t *gr_call_session(const gr_front_t *gf, rmq_grpc_call_t *call, gr_status_t *st)
{
    const char *id = gr_call_client_id(call, st);
    if (!id)
        return NULL;
    gr_session_t *gs = gr_session_of(call, id, (size_t)gf->settings.max_body_size);
    if (!gs)
        gr_status_set(st, APACHE__ROCKETMQ__V2__CODE__INTERNAL_SERVER_ERROR, "out of memory");
    return gs;
}

const char *gr_call_peer(const rmq_grpc_call_t *call)
{
    return rmq_conn_peer(rmq_grpc_call_conn(call));
}

int gr_call_caller(const gr_front_t *gf, rmq_grpc_call_t *call, bk_caller_t *who, gr_status_t *st)
{
    char remark[256];
    *who = (bk_caller_t){NULL, rmq_grpc_call_path(call), NULL};
    const rmq_acl_t *acl = gf->fe->node->sec->acl;
    if (!acl)
        return 1;                    /* access control off: trusted */
    who->peer = gr_call_peer(call);
    if (rmq_grpc_authenticate(acl, who->peer, rmq_grpc_call_header(call, "authorization"),
                              rmq_grpc_call_header(call, "x-mq-date-time"), rmq_wall_ms(), rmq_grpc_call_path(call),
                              &who->account, remark, sizeof(remark)) >= 0)
        return 1;
    return gr_status_set(st, APACHE__ROCKETMQ__V2__CODE__UNAUTHORIZED, "%s", remark);
}

int gr_call_allowed(const gr_front_t *gf, rmq_grpc_call_t *call, bk_op_t op, const char *topic, const char *group,
                    gr_status_t *st)
{
    bk_caller_t who;
    bk_result_t r;
    if (!gr_call_caller(gf, call, &who, st))
        return 0;
    if (bk_perm_check(&who, op, topic, group, &r))
        return 1;
    return gr_status_of_result(st, &r);
}
