/* bk_perm.h: what each neutral operation of the broker touches (a topic, a
 * group, the groups of a heartbeat, a stored record, or the broker itself)
 * and which right it needs there (PUB, SUB, admin, or only a known
 * signer): one table for every front-end. A front says who is asking (the
 * account its codec's signature check found) and which operation its
 * request code is (its code-to-handler table); the check runs on the
 * names of the decoded neutral request that the core then executes, so
 * what is checked is what is touched. A record's topic is known only once
 * the record is read: the reader (bk_query.h) made here checks it there.
 * Loop thread (reads the ACL only). */
#ifndef BK_PERM_H
#define BK_PERM_H

#include <stddef.h>

#include "bk_clients.h"
#include "bk_query.h"
#include "bk_status.h"
#include "rmq_acl_policy.h"

/* Every operation a front-end may ask of the broker. */
typedef enum bk_op {
    BK_OP_UNDECLARED = 0,            /* a served code must never map here */
    BK_OP_SEND,
    BK_OP_SEND_REPLY,                /* a responder's reply to a request, pushed to its requester */
    BK_OP_PULL,
    BK_OP_OFFSET_QUERY,
    BK_OP_OFFSET_COMMIT,
    BK_OP_QUEUE_OFFSET,              /* max, min, earliest store time, by timestamp */
    BK_OP_VIEW,                      /* a record by id or offset */
    BK_OP_QUERY_BY_KEY,
    BK_OP_HEARTBEAT,
    BK_OP_UNREGISTER,
    BK_OP_CONSUMER_LIST,
    BK_OP_CHECK_CLIENT,              /* a consumer's subscription checked before it starts */
    BK_OP_QUEUE_LOCK,                /* lock and unlock */
    BK_OP_SEND_BACK,
    BK_OP_END_TRANSACTION,
    BK_OP_RECALL,                    /* a timer message recalled by its handle (bk_recall.h) */
    BK_OP_TOPIC_UPDATE,
    BK_OP_TOPIC_DELETE,
    BK_OP_TOPIC_LIST,
    BK_OP_SYSTEM_TOPICS,             /* the names of the broker's system topics */
    BK_OP_TOPIC_CONFIG,
    BK_OP_TOPIC_STATS,
    BK_OP_TOPIC_CONSUMERS,           /* which groups consume a topic */
    BK_OP_GROUP_UPDATE,
    BK_OP_GROUP_DELETE,
    BK_OP_GROUP_LIST,
    BK_OP_CONSUMER_CONNECTIONS,
    BK_OP_PRODUCER_CONNECTIONS,
    BK_OP_ALL_PRODUCERS,             /* every producer group and its clients */
    BK_OP_CONSUME_STATS,
    BK_OP_CONSUME_TIME_SPAN,         /* a group's time span on each queue of a topic */
    BK_OP_OFFSET_RESET,              /* an operator's reset of a group's offsets to a time */
    BK_OP_OFFSET_CLONE,              /* an operator's copy of one group's offsets to another */
    BK_OP_ALL_OFFSETS,
    BK_OP_DELAY_OFFSETS,
    BK_OP_RUNTIME_INFO,
    BK_OP_BROKER_STATS,              /* one stats item of the broker (statsAll) */
    BK_OP_BROKER_CONSUME_STATS,      /* every group's consumption on the broker */
    BK_OP_BROKER_CONFIG,
    BK_OP_BROKER_CONFIG_UPDATE,
    BK_OP_POP,                       /* pop messages */
    BK_OP_POP_ACK,                   /* ack or change the invisible time of popped messages */
    BK_OP_CONSUMER_RUNNING_INFO,     /* asks one consumer for its running state */
    BK_OP_CONSUMER_STATUS,           /* asks a group's consumers for their offsets on a topic */
    BK_OP_CONSUME_DIRECTLY,          /* makes one consumer consume a stored message now */
    BK_OP_QUERY_ASSIGNMENT,          /* the queues a pop consumer is to pop */
    BK_OP_REQUEST_MODE,              /* an operator's choice of a group's consume mode (pull or pop) */
    BK_OP_ACL_UPDATE,                /* an ACL account created or changed */
    BK_OP_ACL_DELETE,                /* an ACL account removed */
    BK_OP_ACL_WHITE,                 /* the ACL's global whitelist replaced */
    BK_OP_ACL_VERSION,               /* the ACL file's version */
    BK_OP_ACL_CONFIG,                /* the ACL's accounts, secret keys included */
    BK_OP_COUNT
} bk_op_t;

/* What an operation touches (bits). */
enum {
    BK_TOUCH_BROKER = 0,             /* the broker as a whole (admin operations) */
    BK_TOUCH_TOPIC = 1,
    BK_TOUCH_GROUP = 2,              /* a consumer group */
    BK_TOUCH_GROUPS = 4,             /* a heartbeat's consumer (SUB) and producer (PUB) groups */
    BK_TOUCH_RECORD = 8,             /* a stored record, checked on its topic once read */
};

/* The right an operation needs on what it touches. */
typedef enum bk_right {
    BK_RIGHT_UNDECLARED = 0,
    BK_RIGHT_SIGNED,                 /* any known signer */
    BK_RIGHT_PUB,
    BK_RIGHT_SUB,
    BK_RIGHT_ADMIN,
} bk_right_t;

typedef struct bk_perm {
    const char *name;                /* the operation, opens refusals */
    unsigned touches;                /* BK_TOUCH_* */
    bk_right_t needs;
} bk_perm_t;

/* The declared permission of op; the BK_OP_UNDECLARED row (needs
 * BK_RIGHT_UNDECLARED) for a value out of range. */
const bk_perm_t *bk_perm_of(bk_op_t op);

/* Who is asking, as the front's signature check found: an ACL account, or
 * NULL when access control is off or the peer is whitelisted (trusted). A
 * NULL caller is trusted too (the broker's own re-stores, tests). */
typedef struct bk_caller {
    const rmq_acl_account_t *account;
    const char *request;             /* names the request in refusals (NULL: the operation's name) */
    const char *peer;                /* where it comes from, for the log (NULL: not said) */
} bk_caller_t;

/* 1 if who may do op on topic and group (the names of the decoded request
 * the core executes; NULL when op touches none); else 0 with r set
 * (BK_NO_PERMISSION, naming the account, the resource and op), logged
 * (rate-limited). An undeclared op is refused to everyone but a trusted
 * caller. What is known only later is checked there: a record's topic by
 * the reader below, a heartbeat's groups by bk_perm_check_heartbeat. */
int bk_perm_check(const bk_caller_t *who, bk_op_t op, const char *topic, const char *group, bk_result_t *r);

/* bk_perm_check of BK_OP_HEARTBEAT on the groups of hb. */
int bk_perm_check_heartbeat(const bk_caller_t *who, const bk_heartbeat_t *hb, bk_result_t *r);

/* A reader (bk_query.h) for who, asking op's right on the topic of each
 * record read. */
typedef struct bk_perm_reader {
    bk_reader_t base;
    bk_caller_t who;
    bk_op_t op;
} bk_perm_reader_t;

/* Fills rd; returns &rd->base (a trusted caller reads everything). */
const bk_reader_t *bk_perm_reader_init(bk_perm_reader_t *rd, const bk_caller_t *who, bk_op_t op);

#endif
