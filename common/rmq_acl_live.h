/* rmq_acl_live.h: an access-control policy kept live without a
 * restart: reloaded from aclFile on SIGHUP and when the file changes (its
 * identity, size or time, looked at every second, as RocketMQ's
 * PlainPermissionManager watches plain_acl.yml), and changed by
 * RocketMQ's ACL admin requests, each change written back to the file
 * atomically before it takes effect. A file that does not load is refused
 * with its line named in the log and the policy in force kept. Every
 * change is swapped into the one rmq_acl_t the codecs and the core hold
 * (rmq_acl_replace), so connections carry on under the new policy. Each
 * change counts one version (RocketMQ's DataVersion of the ACL file).
 * The broker and the name server each keep one; only the broker takes the
 * admin requests. Loop thread only. */
#ifndef RMQ_ACL_LIVE_H
#define RMQ_ACL_LIVE_H

#include <stdint.h>

#include <event2/event.h>

#include "rmq_acl_policy.h"

typedef struct rmq_acl_live rmq_acl_live_t;

/* Keeps acl (borrowed, loaded from path) live on base. NULL when out of
 * memory or when the SIGHUP or watch events cannot be armed. */
rmq_acl_live_t *rmq_acl_live_new(struct event_base *base, rmq_acl_t *acl, const char *path);
void rmq_acl_live_free(rmq_acl_live_t *la);

/* Applies e: the edited policy is written to the file, then put in force.
 * RMQ_OK, or RMQ_EINVAL (a refused edit) / RMQ_EIO (the file could not be
 * written; nothing changed) with the reason in err. */
rmq_err_t rmq_acl_live_apply(rmq_acl_live_t *la, const rmq_acl_edit_t *e, char *err, size_t errlen);

/* Loads the file again: 0 when its policy is now in force, -1 when it was
 * refused (logged with the line; the policy in force kept). */
int rmq_acl_live_reload(rmq_acl_live_t *la);

const rmq_acl_t *rmq_acl_live_policy(const rmq_acl_live_t *la);
const char *rmq_acl_live_path(const rmq_acl_live_t *la);
/* The policy's version: changes since start and the wall-clock ms of the last. */
void rmq_acl_live_version(const rmq_acl_live_t *la, int64_t *counter, int64_t *timestamp_ms);

#endif
