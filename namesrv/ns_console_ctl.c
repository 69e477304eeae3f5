/* ns_console_ctl.c: /api/controller's JSON (ns_console_ctl.h): per broker
 * group the committed state (ns_controller_each_group, as the metrics read
 * it) joined with the replicas' heartbeats (ns_controller_members), and
 * the controller's recent elections. */
#include "ns_console_ctl.h"

#include <inttypes.h>
#include <string.h>

#include "rmq_http.h"

static void json_key_str(struct evbuffer *out, const char *key, const char *value)
{
    evbuffer_add_printf(out, ",\"%s\":", key);
    rmq_json_str(out, value);
}

/* The member with broker_id among m[0..n), or NULL. */
static const ns_ctl_member_t *member_find(const ns_ctl_member_t *m, size_t n, int64_t broker_id)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].broker_id == broker_id)
            return &m[i];
    return NULL;
}

/* One replica: mb (NULL: an in-sync id not heard of, id) against master. */
static void replica_render(const ns_ctl_state_t *st, const ns_ctl_member_t *mb, int64_t id,
                           const ns_ctl_member_t *master, struct evbuffer *out)
{
    const char *role = !mb || !mb->alive ? "DOWN" : id == st->master_id ? "MASTER" : "SLAVE";

    evbuffer_add_printf(out, "{\"brokerId\":%" PRId64, id);
    json_key_str(out, "addr", mb ? mb->addr : "");
    json_key_str(out, "role", role);
    evbuffer_add_printf(out, ",\"alive\":%s,\"inSync\":%s", mb && mb->alive ? "true" : "false",
                        ns_ctl_state_in_sync(st, id) ? "true" : "false");
    if (!mb) {
        evbuffer_add_printf(out, ",\"epoch\":null,\"maxOffset\":null,\"lagBytes\":null}");
        return;
    }
    evbuffer_add_printf(out, ",\"epoch\":%" PRId64 ",\"maxOffset\":%" PRId64, mb->epoch, mb->max_offset);
    if (master)
        evbuffer_add_printf(out, ",\"lagBytes\":%" PRId64 "}", master->max_offset - mb->max_offset);
    else
        evbuffer_add_printf(out, ",\"lagBytes\":null}");
}

typedef struct ctl_render {
    const ns_controller_t *ctl;
    struct evbuffer *out;
    size_t n;                     /* groups rendered so far */
} ctl_render_t;

static void group_render(const char *cluster, const char *broker_name, const ns_ctl_state_t *st, void *arg)
{
    ctl_render_t *r = arg;
    struct evbuffer *out = r->out;
    ns_ctl_member_t m[NS_CTL_MAX_REPLICAS];
    size_t n = ns_controller_members(r->ctl, cluster, broker_name, m, NS_CTL_MAX_REPLICAS), shown = 0;
    const ns_ctl_member_t *master = member_find(m, n, st->master_id);

    evbuffer_add_printf(out, "%s{\"cluster\":", r->n++ ? "," : "");
    rmq_json_str(out, cluster);
    json_key_str(out, "broker", broker_name);
    evbuffer_add_printf(out, ",\"masterBrokerId\":%" PRId64, st->master_id);
    json_key_str(out, "masterAddress", st->master_addr);
    evbuffer_add_printf(out, ",\"masterEpoch\":%" PRId64 ",\"syncStateSet\":[", st->master_epoch);
    for (size_t i = 0; i < st->n_sync; i++)
        evbuffer_add_printf(out, "%s%" PRId64, i ? "," : "", st->sync_set[i]);
    evbuffer_add_printf(out, "],\"syncStateSetEpoch\":%" PRId64 ",\"replicas\":[", st->sync_set_epoch);
    for (size_t i = 0; i < n; i++, shown++) {
        evbuffer_add(out, ",", shown ? 1 : 0);
        replica_render(st, &m[i], m[i].broker_id, master, out);
    }
    for (size_t i = 0; i < st->n_sync; i++) {
        if (member_find(m, n, st->sync_set[i]))
            continue;
        evbuffer_add(out, ",", shown++ ? 1 : 0);
        replica_render(st, NULL, st->sync_set[i], master, out);
    }
    evbuffer_add(out, "]}", 2);
}

static void election_render(const ns_ctl_election_t *e, int first, struct evbuffer *out)
{
    evbuffer_add_printf(out, "%s{\"timeMs\":%" PRId64, first ? "" : ",", e->wall_ms);
    json_key_str(out, "cluster", e->cluster);
    json_key_str(out, "broker", e->broker_name);
    evbuffer_add_printf(out, ",\"oldMasterId\":%" PRId64, e->old_master_id);
    json_key_str(out, "oldMasterAddress", e->old_master_addr);
    evbuffer_add_printf(out, ",\"newMasterId\":%" PRId64, e->new_master_id);
    json_key_str(out, "newMasterAddress", e->new_master_addr);
    evbuffer_add_printf(out, ",\"masterEpoch\":%" PRId64 "}", e->master_epoch);
}

void ns_console_ctl_render(const ns_controller_t *ctl, struct evbuffer *out)
{
    ctl_render_t r = { ctl, out, 0 };
    const ns_ctl_election_t *e;

    evbuffer_add_printf(out, "{\"leader\":%s,\"electionsTotal\":%" PRIu64 ",\"groups\":[",
                        ns_controller_is_leader(ctl) ? "true" : "false", ns_controller_elections(ctl));
    ns_controller_each_group(ctl, group_render, &r);
    evbuffer_add(out, "],\"elections\":[", 15);
    for (size_t i = 0; (e = ns_controller_election(ctl, i)); i++)
        election_render(e, i == 0, out);
    evbuffer_add(out, "]}", 2);
}
