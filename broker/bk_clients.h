/* bk_clients.h: consumer groups as seen through HEART_BEAT: which clients
 * (by client id and connection) belong to each group and what they
 * subscribe to. Clients leave on UNREGISTER_CLIENT, when their connection
 * closes, or after expire_ms without a heartbeat; whenever a group's
 * membership changes every member is told through its session (rmq:
 * NOTIFY_CONSUMER_IDS_CHANGED, oneway) so it rebalances at once. Loop thread only. */
#ifndef BK_CLIENTS_H
#define BK_CLIENTS_H

#include <stdint.h>

#include "bk_session.h"
#include "rmq.pb-c.h"

typedef struct bk_clients bk_clients_t;

bk_clients_t *bk_clients_new(int64_t expire_ms);
/* Releases every connection reference. */
void bk_clients_free(bk_clients_t *c);

/* Records a heartbeat from session ss (referenced while the client is
 * known). Returns how many groups changed membership (each was notified). */
int bk_clients_heartbeat(bk_clients_t *c, bk_session_t *ss, const Rmq__HeartbeatData *hb);
/* Removes client_id from group (or from every group if group is empty). */
void bk_clients_unregister(bk_clients_t *c, const char *client_id, const char *group);
/* Removes every client of session ss (its connection closed). */
void bk_clients_session_closed(bk_clients_t *c, bk_session_t *ss);
/* Removes clients silent for longer than expire_ms. */
void bk_clients_expire(bk_clients_t *c, int64_t now_ms);

/* Client ids of group into ids (borrowed, valid until the next change);
 * returns how many there are (may exceed cap). */
size_t bk_clients_ids(const bk_clients_t *c, const char *group, const char **ids, size_t cap);
/* The subscription expression group registered for topic, or NULL. */
const char *bk_clients_subscription(const bk_clients_t *c, const char *group, const char *topic);

#endif
