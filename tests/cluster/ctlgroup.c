/* ctlgroup.c: a controller-mode broker group on loopback (ctlgroup.h). */
#include "ctlgroup.h"

#include <stdio.h>
#include <string.h>

#include "rmq_rpc.h"
#include "wire.h"

#define CG_PRODUCER "ctl_probe_producer"

/* Appends "key=value\n" to buf when value is set. */
static void prop_int(char *buf, size_t len, const char *key, int value)
{
    size_t off = strlen(buf);
    if (value > 0 && off < len)
        snprintf(buf + off, len - off, "%s=%d\n", key, value);
}

int cg_start(cg_group_t *g, const char *dir, const cg_settings_t *set)
{
    char props[1024];

    memset(g, 0, sizeof *g);
    g->dir = dir;
    g->set = *set;
    if (hn_etcd_start(&g->etcd, dir, 1, 30000) != 0)
        return -1;
    snprintf(props, sizeof props,
             "listenPort=0\nbindAddress=127.0.0.1\nenableControllerInNamesrv=true\ncontrollerType=etcd\n"
             "controllerEtcdEndpoints=%s\ncontrollerEtcdPrefix=/ctlgroup\n", g->etcd.endpoints);
    prop_int(props, sizeof props, "controllerLeaseTtlSeconds", set->lease_s);
    if (set->console && (g->console_port = hn_free_port()) < 0)
        return -1;
    prop_int(props, sizeof props, "metricsPort", g->console_port);
    if (hn_daemon_start_conf(&g->ns, dir, "namesrv/mqnamesrv", "ns", props, g->ns_addr, sizeof g->ns_addr) != 0)
        return -1;
    for (int i = 0; i < CG_REPLICAS; i++)
        if (cg_replica_start(g, i, 0) != 0)
            return -1;
    return 0;
}

int cg_replica_start(cg_group_t *g, int i, int wipe)
{
    char props[2048 + PATH_MAX], name[32], store[PATH_MAX];

    snprintf(store, sizeof store, "%s/store%d", g->dir, i + 1);
    if (wipe) {
        const char *rm[] = { "/bin/rm", "-rf", store, NULL };
        hn_result_t res;
        if (hn_run(rm, 30000, &res) != 0 || res.status != 0)
            return -1;
        hn_result_free(&res);
    }
    snprintf(props, sizeof props,
             "brokerName=broker-a\nbrokerId=%d\nbrokerRole=SYNC_MASTER\nenableControllerMode=true\n"
             "controllerAddr=%s\nnamesrvAddr=%s\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s\n"
             "mapedFileSizeCommitLog=1048576\nmaxMessageSize=262144\nsyncFlushTimeout=1500\n"
             "registerNameServerPeriod=1000\n"
             "maxTransferCountOnMessageInMemory=1024\nmaxTransferBytesOnMessageInMemory=4194304\n",
             i + 1, g->set.controller_addr[i] ? g->set.controller_addr[i] : g->ns_addr, g->ns_addr, store);
    prop_int(props, sizeof props, "controllerHeartBeatTimeoutMills", g->set.hb_timeout_ms);
    prop_int(props, sizeof props, "brokerHeartbeatInterval", g->set.hb_interval_ms);
    prop_int(props, sizeof props, "checkSyncStateSetPeriod", g->set.check_ms);
    prop_int(props, sizeof props, "haMaxTimeSlaveNotCatchup", g->set.catchup_ms);
    size_t off = strlen(props);
    snprintf(props + off, sizeof props - off, "%s", g->set.acks ? g->set.acks : "");
    if (g->starts[i]++)
        snprintf(name, sizeof name, "b%d.%d", i + 1, g->starts[i]);
    else
        snprintf(name, sizeof name, "b%d", i + 1);
    return hn_daemon_start_conf(&g->rep[i], g->dir, "broker/mqbroker", name, props, g->addr[i], sizeof g->addr[i]);
}

int cg_runtime_get(const char *addr, const char *key, char *out, size_t len)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    wire_link_t ln = { .opts = { .connect_timeout_ms = 1000 }, .timeout_ms = 3000 };

    out[0] = '\0';
    req.code = RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO;
    if (wire_call_with(&ln, addr, &req, NULL, 0, &resp) != RMQ__STATUS__SUCCESS) {
        rmq_frame_clear(&resp);
        return -1;
    }
    wire_runtime_value(&resp, key, out, len);
    rmq_frame_clear(&resp);
    return 0;
}

int cg_runtime_is(const char *addr, const char *key, const char *value)
{
    char v[256];
    return cg_runtime_get(addr, key, v, sizeof v) == 0 && strcmp(v, value) == 0;
}

int cg_wait_runtime(const char *addr, const char *key, const char *value, int timeout_ms)
{
    for (long long end = hn_now_ms() + timeout_ms; hn_now_ms() < end; hn_sleep_ms(50))
        if (cg_runtime_is(addr, key, value))
            return 1;
    return 0;
}

int cg_wait_master(cg_group_t *g, int timeout_ms)
{
    for (long long end = hn_now_ms() + timeout_ms; hn_now_ms() < end; hn_sleep_ms(50))
        for (int i = 0; i < CG_REPLICAS; i++)
            if (g->rep[i].pid && cg_runtime_is(g->addr[i], "brokerRole", "SYNC_MASTER"))
                return i;
    return -1;
}

int cg_wait_sync_set_full(const char *addr, int timeout_ms)
{
    char v[64];
    for (long long end = hn_now_ms() + timeout_ms; hn_now_ms() < end; hn_sleep_ms(50))
        if (cg_runtime_get(addr, "controllerSyncStateSet", v, sizeof v) == 0 && strchr(v, ','))
            return 1;
    return 0;
}

int cg_probe_send(const char *addr, char *why, size_t len)
{
    Rmq__Command req;
    Rmq__SendMessageRequest h;
    rmq_frame_t resp = { 0 };
    wire_link_t ln = { .opts = { .connect_timeout_ms = 1000 }, .timeout_ms = 3000 };

    wire_send_hdr(&req, &h, CG_PRODUCER, CG_PROBE_TOPIC, 0, (char *)"");
    int st = wire_call_with(&ln, addr, &req, "probe", 5, &resp);
    if (why)
        snprintf(why, len, "%s", st >= 0 && resp.cmd && resp.cmd->remark ? resp.cmd->remark : "");
    rmq_frame_clear(&resp);
    return st;
}

long long cg_probe_epoch(const char *addr)
{
    Rmq__Command req;
    Rmq__SendMessageRequest h;
    rmq_frame_t resp = { 0 };
    wire_link_t ln = { .opts = { .connect_timeout_ms = 1000 }, .timeout_ms = 3000 };
    long long epoch = -1;

    wire_send_hdr(&req, &h, CG_PRODUCER, CG_PROBE_TOPIC, 0, (char *)"");
    if (wire_call_with(&ln, addr, &req, "probe", 5, &resp) == RMQ__STATUS__SUCCESS)
        epoch = resp.cmd->send_resp ? (long long)resp.cmd->send_resp->master_epoch : 0;
    rmq_frame_clear(&resp);
    return epoch;
}

long long cg_until_send_ok(const char *addr, int timeout_ms)
{
    long long t0 = hn_now_ms();
    while (hn_now_ms() - t0 < timeout_ms) {
        if (cg_probe_send(addr, NULL, 0) == RMQ__STATUS__SUCCESS)
            return hn_now_ms() - t0;
        hn_sleep_ms(20);
    }
    return -1;
}

void cg_route_addr(const char *ns, const char *topic, long long want, char *out, size_t len)
{
    Rmq__Command req;
    Rmq__TopicRequest tr;
    rmq_frame_t resp = { 0 };

    out[0] = '\0';
    wire_topic_query(&req, &tr, RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC, topic);
    if (wire_call(ns, &req, NULL, 0, &resp) == RMQ__STATUS__SUCCESS)
        for (size_t i = 0; i < resp.cmd->topic_route->n_broker_datas; i++) {
            const Rmq__BrokerData *bd = resp.cmd->topic_route->broker_datas[i];
            for (size_t j = 0; j < bd->n_addrs; j++)
                if (bd->addrs[j]->broker_id == want)
                    snprintf(out, len, "%s", bd->addrs[j]->addr);
        }
    rmq_frame_clear(&resp);
}
