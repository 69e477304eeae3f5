/* bk_status.h: the broker core's neutral outcome of an operation: one
 * status per cause and a reason a person can act on. Front-ends map a
 * status to their wire code in one table (front/rmq/fr_status.c); the core
 * never sees a wire status. */
#ifndef BK_STATUS_H
#define BK_STATUS_H

typedef enum bk_status {
    BK_OK = 0,
    BK_BAD_REQUEST,                  /* the request is malformed or names nothing valid */
    BK_MESSAGE_ILLEGAL,              /* a message over a limit, or with bad properties */
    BK_MESSAGE_TOO_LARGE,            /* a body (or batch body) over maxMessageSize */
    BK_NAME_ILLEGAL,                 /* a topic or group name breaks the naming rule */
    BK_NO_PERMISSION,                /* broker or topic not writable / readable */
    BK_TOPIC_NOT_EXIST,
    BK_GROUP_NOT_EXIST,
    BK_NOT_MASTER,                   /* this broker is a slave: writes go to its master */
    BK_SHUTDOWN,                     /* the broker is stopping */
    BK_DISK_FULL,
    BK_WRITE_ERROR,                  /* the store latched read-only, or a write failed */
    BK_FLUSH_DISK_TIMEOUT,           /* SYNC_FLUSH: no disk sync within syncFlushTimeout */
    BK_FLUSH_SLAVE_TIMEOUT,          /* SYNC_MASTER: no slave ack within syncFlushTimeout */
    BK_SLAVE_NOT_AVAILABLE,          /* SYNC_MASTER: no slave in sync range */
    BK_IN_SYNC_REPLICAS_NOT_ENOUGH,  /* controller mode: sync state set below minInSyncReplicas */
    BK_BUSY,                         /* queue full or waited too long */
    BK_TRANSACTION_FAILED,           /* no half message where the request says */
    BK_SUBSCRIPTION_PARSE_FAILED,    /* a subscription expression that names no tag */
    BK_NOT_FOUND,                    /* a query found nothing (no offset stored, no record, no key match) */
    BK_ILLEGAL_OPERATION,            /* a recall's handle is bad, or names another topic, broker or a past time */
    BK_INVALID_PARAMETER,            /* an operator's change RocketMQ refuses: a system topic, a MIXED topic */
    BK_SYSTEM_ERROR,                 /* out of memory, or an internal failure */
} bk_status_t;

#define BK_WHY_MAX 192

/* A status and its reason ("" on success). */
typedef struct bk_result {
    bk_status_t status;
    char why[BK_WHY_MAX];
} bk_result_t;

/* Sets r to status with a printf-formatted reason; returns status. */
bk_status_t bk_result_set(bk_result_t *r, bk_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets r to BK_OK with no reason; returns BK_OK. */
static inline bk_status_t bk_result_ok(bk_result_t *r)
{
    r->status = BK_OK;
    r->why[0] = '\0';
    return BK_OK;
}

/* The status's name (for logs and tests). */
const char *bk_status_name(bk_status_t status);

#endif
