/* rmq_err.h: the internal error enum shared by every module.
 * 0 is success, negative values are errors; RMQ_EAGAIN means "not done yet"
 * (need more input, a waiter is parked) and is not a failure. */
#ifndef RMQ_ERR_H
#define RMQ_ERR_H

typedef enum rmq_err {
    RMQ_OK = 0,
    RMQ_EAGAIN = -1,      /* not done yet: more bytes needed, answer later */
    RMQ_EINVAL = -2,      /* bad argument or input value */
    RMQ_ENOMEM = -3,
    RMQ_EIO = -4,         /* a read, write or sync failed */
    RMQ_EPROTO = -5,      /* malformed frame or header from a peer */
    RMQ_ETOOBIG = -6,     /* over a configured size limit */
    RMQ_ETIMEDOUT = -7,
    RMQ_ECLOSED = -8,     /* connection closed or not connected */
    RMQ_ENOTFOUND = -9,
    RMQ_EEXIST = -10,
    RMQ_ENOSPC = -11,     /* disk full */
    RMQ_EREADONLY = -12,  /* store latched read-only after a failure */
    RMQ_ECORRUPT = -13,   /* a record or file fails its checks */
    RMQ_ECONNECT = -14,   /* could not connect */
    RMQ_ESHUTDOWN = -15,  /* object is shutting down */
    RMQ_EBUSY = -16,      /* queue full; try later */
    RMQ_ESTATUS = -17,    /* the peer answered with a non-success status */
    RMQ_ETLS = -18,       /* TLS set-up or handshake failed */
    RMQ_ERR_MIN = -18
} rmq_err_t;

/* Returns a static, human-readable description of err. Any thread. */
const char *rmq_strerror(int err);

#endif
