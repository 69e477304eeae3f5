/* ns_ctl_state.c: the controller's group state codec and election rule
 * (ns_ctl_state.h). */
#include "ns_ctl_state.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rmq_http.h"
#include "rmq_json.h"

void ns_ctl_state_init(ns_ctl_state_t *st)
{
    memset(st, 0, sizeof *st);
    st->master_id = -1;
}

rmq_err_t ns_ctl_state_encode(const ns_ctl_state_t *st, struct evbuffer *out)
{
    if (evbuffer_add_printf(out, "{\"masterBrokerId\":%" PRId64 ",\"masterAddress\":", st->master_id) < 0)
        return RMQ_ENOMEM;
    rmq_json_str(out, st->master_addr);
    if (evbuffer_add_printf(out, ",\"masterEpoch\":%" PRId64 ",\"syncStateSet\":[", st->master_epoch) < 0)
        return RMQ_ENOMEM;
    for (size_t i = 0; i < st->n_sync; i++)
        if (evbuffer_add_printf(out, "%s%" PRId64, i ? "," : "", st->sync_set[i]) < 0)
            return RMQ_ENOMEM;
    if (evbuffer_add_printf(out, "],\"syncStateSetEpoch\":%" PRId64 ",\"masterHeartbeatTimeoutMs\":%" PRId64 "}",
                            st->sync_set_epoch, st->master_timeout_ms) < 0)
        return RMQ_ENOMEM;
    return RMQ_OK;
}

int ns_ctl_state_in_sync(const ns_ctl_state_t *st, int64_t broker_id)
{
    for (size_t i = 0; i < st->n_sync; i++)
        if (st->sync_set[i] == broker_id)
            return 1;
    return 0;
}

/* Reads obj.name as an integer in [min, max] into out; 0, or -1 with why. */
static int field_int(const rmq_json_t *obj, const char *name, int64_t min, int64_t max, int64_t *out,
                     char *why, size_t whylen)
{
    if (rmq_json_int(rmq_json_get(obj, name), min, max, out) == 0)
        return 0;
    snprintf(why, whylen, "group state: %s missing or no integer in [%" PRId64 ", %" PRId64 "]", name,
             min, max);
    return -1;
}

static rmq_err_t decode_sync_set(const rmq_json_t *arr, ns_ctl_state_t *st, char *why, size_t whylen)
{
    if (!arr || arr->type != RMQ_JSON_ARRAY) {
        snprintf(why, whylen, "group state: syncStateSet missing or no array");
        return RMQ_EPROTO;
    }
    if (arr->n > NS_CTL_MAX_REPLICAS) {
        snprintf(why, whylen, "group state: syncStateSet has %zu ids (at most %d)", arr->n,
                 NS_CTL_MAX_REPLICAS);
        return RMQ_EPROTO;
    }
    for (size_t i = 0; i < arr->n; i++) {
        int64_t id;
        if (rmq_json_int(arr->items[i], 0, INT64_MAX, &id) != 0 || ns_ctl_state_in_sync(st, id)) {
            snprintf(why, whylen, "group state: syncStateSet[%zu] is no broker id or repeats one", i);
            return RMQ_EPROTO;
        }
        st->sync_set[st->n_sync++] = id;
    }
    return RMQ_OK;
}

rmq_err_t ns_ctl_state_decode(const char *text, size_t len, ns_ctl_state_t *st, char *why,
                              size_t whylen)
{
    char jerr[128];
    rmq_json_t *doc = rmq_json_parse(text, len, jerr, sizeof jerr);
    rmq_err_t rc = RMQ_EPROTO;

    ns_ctl_state_init(st);
    if (!doc || doc->type != RMQ_JSON_OBJECT) {
        snprintf(why, whylen, "group state: %s", doc ? "no JSON object" : jerr);
        goto out;
    }
    const rmq_json_t *addr = rmq_json_get(doc, "masterAddress");
    if (!addr || addr->type != RMQ_JSON_STRING || addr->len > NS_CTL_ADDR_MAX) {
        snprintf(why, whylen, "group state: masterAddress missing, no string or over %d bytes",
                 NS_CTL_ADDR_MAX);
        goto out;
    }
    memcpy(st->master_addr, addr->str, addr->len + 1);
    if (field_int(doc, "masterBrokerId", -1, INT64_MAX, &st->master_id, why, whylen) ||
        field_int(doc, "masterEpoch", 0, INT64_MAX, &st->master_epoch, why, whylen) ||
        field_int(doc, "syncStateSetEpoch", 0, INT64_MAX, &st->sync_set_epoch, why, whylen) ||
        (rmq_json_get(doc, "masterHeartbeatTimeoutMs") &&
         field_int(doc, "masterHeartbeatTimeoutMs", 0, NS_CTL_TIMEOUT_MAX_MS, &st->master_timeout_ms, why, whylen)))
        goto out;
    rc = decode_sync_set(rmq_json_get(doc, "syncStateSet"), st, why, whylen);
out:
    rmq_json_free(doc);
    if (rc != RMQ_OK)
        ns_ctl_state_init(st);
    return rc;
}

/* 1 if a ranks before b as a master candidate. */
static int ranks_before(const ns_ctl_member_t *a, const ns_ctl_member_t *b)
{
    if (a->epoch != b->epoch)
        return a->epoch > b->epoch;
    if (a->max_offset != b->max_offset)
        return a->max_offset > b->max_offset;
    if (a->priority != b->priority)
        return a->priority < b->priority;
    return a->broker_id < b->broker_id;
}

int ns_ctl_elect(const ns_ctl_state_t *st, const ns_ctl_member_t *members, size_t n, int unclean)
{
    int best = -1;

    for (size_t i = 0; i < n; i++) {
        if (!members[i].alive || (!unclean && !ns_ctl_state_in_sync(st, members[i].broker_id)))
            continue;
        if (best < 0 || ranks_before(&members[i], &members[best]))
            best = (int)i;
    }
    return best;
}

/* No two masters acknowledge writes at once. A master acknowledges only
 * within its lease (bk_controller.c; bk_append refuses sends and withholds
 * their answers past it), which ends at the send time of its last
 * heartbeat a leader confirmed + T - margin, T its
 * controllerHeartBeatTimeoutMills, margin min(T/4, 1 s). A leader confirms
 * only heartbeats it receives while its own etcd lease is valid, and stops
 * acting a margin before that lease can expire; the next leader wins the
 * key only after it expired. So each confirmation the master holds came
 * from this leader, no later than the master's last heartbeat here, or
 * from an earlier one, before this leadership began, and the lease is over
 * a margin before the later of the two + T. Nothing here shortens that: a
 * closed connection or a refused port may be a firewall resetting a live
 * broker, and a new leader's stale view of the master proves nothing. A
 * master this leader never heard is timed from its start alone, with the
 * longer of the T the group state keeps (the master's, written at its
 * election and when it announces another) and the controller's own. */
int64_t ns_ctl_master_lapse_ms(int64_t heard_ms, int64_t leader_since_ms, int64_t timeout_ms)
{
    return (heard_ms > leader_since_ms ? heard_ms : leader_since_ms) + timeout_ms;
}

void ns_ctl_state_promote(const ns_ctl_state_t *st, const ns_ctl_member_t *winner,
                          ns_ctl_state_t *next)
{
    ns_ctl_state_init(next);
    next->master_id = winner->broker_id;
    snprintf(next->master_addr, sizeof next->master_addr, "%s", winner->addr);
    next->master_epoch = st->master_epoch + 1;
    next->sync_set[0] = winner->broker_id;
    next->n_sync = 1;
    next->sync_set_epoch = st->sync_set_epoch + 1;
    next->master_timeout_ms = winner->timeout_ms;
}
