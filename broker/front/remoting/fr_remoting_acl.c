/* fr_remoting_acl.c: RocketMQ's ACL admin codes on the remoting front, as
 * 4.9's AdminBrokerProcessor serves them over PlainAccessValidator:
 * UPDATE_AND_CREATE_ACL_CONFIG (50), DELETE_ACL_CONFIG (51),
 * UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (53) change the live policy (rmq_acl_live.h:
 * written back to aclFile, then in force); GET_BROKER_CLUSTER_ACL_INFO (52)
 * answers the file's DataVersion, GET_BROKER_CLUSTER_ACL_CONFIG (54) the
 * global whitelist and every account. Admin only (bk_perm.c). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fr_remoting.h"
#include "fr_remoting_admin_wire.h"
#include "rmq_http.h"
#include "rmq_log.h"

#define CODE_UPDATE_AND_CREATE_ACL_CONFIG_FAILED 209
#define CODE_DELETE_ACL_CONFIG_FAILED 210
#define CODE_UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED 211

/* The live ACL when the signer of req may use code's operation; NULL after
 * answering (refused, or access control off: failed with failure_code). */
static rmq_acl_live_t *acl_admin(fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req,
                           int failure_code)
{
    if (!fr_rm_allowed(rm, conn, req, NULL, NULL))
        return NULL;
    if (!rm->fe->acl)
        rmq_remoting_replyf(conn, req, failure_code, "request code %d: access control is off on this broker "
                            "(aclEnable=false)", req->code);
    return rm->fe->acl;
}

/* Applies e and answers SUCCESS, or failure_code with the reason. */
static void acl_apply(rmq_conn_t *conn, const rmq_remoting_request_t *req, rmq_acl_live_t *acl, const rmq_acl_edit_t *e,
                      int failure_code)
{
    char err[512] = "";
    if (rmq_acl_live_apply(acl, e, err, sizeof err) != RMQ_OK) {
        LOG_WARN("request code %d from %s refused: %s", req->code, rmq_conn_peer(conn), err);
        rmq_remoting_replyf(conn, req, failure_code, "%s", err);
        return;
    }
    LOG_INFO("request code %d from %s: ACL changed and written to %s", req->code, rmq_conn_peer(conn),
             rmq_acl_live_path(acl));
    fr_rm_reply_body(conn, req, NULL);
}

/* UPDATE_AND_CREATE_ACL_CONFIG: CreateAccessConfigRequestHeader (accessKey,
 * secretKey, whiteRemoteAddress, admin, defaultTopicPerm, defaultGroupPerm,
 * topicPerms, groupPerms; absent ones keep the account's). */
void fr_rm_handle_acl_update(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    int failed = CODE_UPDATE_AND_CREATE_ACL_CONFIG_FAILED;
    rmq_acl_live_t *acl = acl_admin(rm, conn, req, failed);
    rmq_acl_edit_t e = {.kind = RMQ_ACL_EDIT_PUT};
    if (!acl || !(e.access_key = fr_rm_str(conn, req, "accessKey", NULL, 1, NULL)) ||
        fr_rm_bool(conn, req, "admin", 0, 0, &e.admin) != 0)
        return;
    e.secret_key = rmq_remoting_field(req, "secretKey");
    e.white = rmq_remoting_field(req, "whiteRemoteAddress");
    e.default_topic_perm = rmq_remoting_field(req, "defaultTopicPerm");
    e.default_group_perm = rmq_remoting_field(req, "defaultGroupPerm");
    e.topic_perms = rmq_remoting_field(req, "topicPerms");
    e.group_perms = rmq_remoting_field(req, "groupPerms");
    acl_apply(conn, req, acl, &e, failed);
}

/* DELETE_ACL_CONFIG: DeleteAccessConfigRequestHeader (accessKey). */
void fr_rm_handle_acl_delete(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    int failed = CODE_DELETE_ACL_CONFIG_FAILED;
    rmq_acl_live_t *acl = acl_admin(rm, conn, req, failed);
    rmq_acl_edit_t e = {.kind = RMQ_ACL_EDIT_DELETE};
    if (acl && (e.access_key = fr_rm_str(conn, req, "accessKey", NULL, 1, NULL)))
        acl_apply(conn, req, acl, &e, failed);
}

/* UPDATE_GLOBAL_WHITE_ADDRS_CONFIG: UpdateGlobalWhiteAddrsConfigRequestHeader
 * (globalWhiteAddrs; aclFileFullPath, when given, must name aclFile: the
 * broker has one). */
void fr_rm_handle_acl_white(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    int failed = CODE_UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED;
    rmq_acl_live_t *acl = acl_admin(rm, conn, req, failed);
    rmq_acl_edit_t e = {.kind = RMQ_ACL_EDIT_GLOBAL_WHITE};
    if (!acl || !(e.global_white = fr_rm_str(conn, req, "globalWhiteAddrs", NULL, 1, NULL)))
        return;
    const char *file = rmq_remoting_field(req, "aclFileFullPath");
    if (file && file[0] && strcmp(file, rmq_acl_live_path(acl)) != 0) {
        rmq_remoting_replyf(conn, req, failed, "aclFileFullPath=%.200s: this broker's ACL file is %s", file,
                            rmq_acl_live_path(acl));
        return;
    }
    acl_apply(conn, req, acl, &e, failed);
}

/* DataVersion {stateVersion, timestamp, counter} of acl as JSON into b. */
static void data_version_json(struct evbuffer *b, const rmq_acl_live_t *acl)
{
    int64_t counter, ts;
    rmq_acl_live_version(acl, &counter, &ts);
    evbuffer_add_printf(b, "{\"stateVersion\":0,\"timestamp\":%" PRId64 ",\"counter\":%" PRId64 "}", ts, counter);
}

/* GET_BROKER_CLUSTER_ACL_INFO: GetBrokerAclConfigResponseHeader (version,
 * allAclFileVersion {path: DataVersion}, brokerName, brokerAddr, clusterName). */
void fr_rm_handle_acl_version(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    rmq_acl_live_t *acl = acl_admin(rm, conn, req, RMQ_REMOTING_SYSTEM_ERROR);
    if (!acl)
        return;
    struct evbuffer *version = evbuffer_new(), *all = evbuffer_new();
    if (version && all) {
        data_version_json(version, acl);
        evbuffer_add(version, "", 1);
        FR_RM_ADD(all, "{");
        rmq_json_str(all, rmq_acl_live_path(acl));
        FR_RM_ADD(all, ":");
        data_version_json(all, acl);
        FR_RM_ADD(all, "}");
        evbuffer_add(all, "", 1);
    }
    const char *v = version ? (const char *)evbuffer_pullup(version, -1) : NULL;
    const char *a = all ? (const char *)evbuffer_pullup(all, -1) : NULL;
    const bk_config_t *cfg = rm->fe->node->cfg;
    if (v && a) {
        rmq_remoting_field_t f[] = {
            {"version", (char *)v},
            {"allAclFileVersion", (char *)a},
            {"brokerName", cfg->broker_name},
            {"brokerAddr", rm->fe->node->addr},
            {"clusterName", cfg->broker_cluster_name},
        };
        rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SUCCESS, .fields = f, .n_fields = sizeof f / sizeof f[0]};
        rmq_remoting_reply(conn, req, &rep);
    } else {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d: out of memory", req->code);
    }
    if (version)
        evbuffer_free(version);
    if (all)
        evbuffer_free(all);
}

/* A ';'- or ','-separated list (NULL: empty) as a JSON array of strings into b. */
static void list_json(struct evbuffer *b, const char *list)
{
    int first = 1;
    FR_RM_ADD(b, "[");
    for (const char *p = list ? list : ""; *p;) {
        size_t n = strcspn(p, ";,");
        if (n > 0) {
            if (!first)
                FR_RM_ADD(b, ",");
            rmq_json_strn(b, p, n);
            first = 0;
        }
        p += n + (p[n] != '\0');
    }
    FR_RM_ADD(b, "]");
}

/* An account's topic (group != 0: group) permissions as ["NAME=PERM", ...]. */
static void perms_json(struct evbuffer *b, const rmq_acl_account_t *a, int group, size_t n)
{
    FR_RM_ADD(b, "[");
    for (size_t j = 0; j < n; j++) {
        const char *perm = NULL, *name = rmq_acl_account_perm(a, group, j, &perm);
        char one[512];
        snprintf(one, sizeof one, "%s=%s", name, perm);
        if (j)
            FR_RM_ADD(b, ",");
        rmq_json_str(b, one);
    }
    FR_RM_ADD(b, "]");
}

/* One PlainAccessConfig as JSON into b. */
static void account_json(struct evbuffer *b, const rmq_acl_account_t *a)
{
    rmq_acl_account_view_t v;
    rmq_acl_account_view(a, &v);
    FR_RM_ADD(b, "{\"accessKey\":");
    rmq_json_str(b, v.access_key);
    FR_RM_ADD(b, ",\"secretKey\":");
    rmq_json_str(b, v.secret_key);
    FR_RM_ADD(b, ",\"whiteRemoteAddress\":");
    rmq_json_str(b, v.white ? v.white : "");
    evbuffer_add_printf(b, ",\"admin\":%s,\"defaultTopicPerm\":\"%s\",\"defaultGroupPerm\":\"%s\",\"topicPerms\":",
                        v.admin ? "true" : "false", v.default_topic_perm, v.default_group_perm);
    perms_json(b, a, 0, v.ntopics);
    FR_RM_ADD(b, ",\"groupPerms\":");
    perms_json(b, a, 1, v.ngroups);
    FR_RM_ADD(b, "}");
}

/* GET_BROKER_CLUSTER_ACL_CONFIG: GetBrokerClusterAclConfigResponseBody
 * {globalWhiteAddrs: [...], plainAccessConfigs: [PlainAccessConfig]}. */
void fr_rm_handle_acl_config(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    rmq_acl_live_t *acl = acl_admin(rm, conn, req, RMQ_REMOTING_SYSTEM_ERROR);
    struct evbuffer *b = acl ? evbuffer_new() : NULL;
    if (!acl)
        return;
    if (!b) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d: out of memory", req->code);
        return;
    }
    const rmq_acl_t *policy = rmq_acl_live_policy(acl);
    FR_RM_ADD(b, "{\"globalWhiteAddrs\":");
    list_json(b, rmq_acl_global_white(policy));
    FR_RM_ADD(b, ",\"plainAccessConfigs\":[");
    const rmq_acl_account_t *a;
    for (size_t i = 0; (a = rmq_acl_account_at(policy, i)); i++) {
        if (i)
            FR_RM_ADD(b, ",");
        account_json(b, a);
    }
    FR_RM_ADD(b, "]}");
    fr_rm_reply_body(conn, req, b);
    evbuffer_free(b);
}
