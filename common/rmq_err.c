/* rmq_err.c: text for the internal error enum. */
#include "rmq_err.h"

const char *rmq_strerror(int err)
{
    switch ((rmq_err_t)err) {
    case RMQ_OK: return "ok";
    case RMQ_EAGAIN: return "not done yet";
    case RMQ_EINVAL: return "invalid argument";
    case RMQ_ENOMEM: return "out of memory";
    case RMQ_EIO: return "i/o error";
    case RMQ_EPROTO: return "protocol error";
    case RMQ_ETOOBIG: return "too big";
    case RMQ_ETIMEDOUT: return "timed out";
    case RMQ_ECLOSED: return "connection closed";
    case RMQ_ENOTFOUND: return "not found";
    case RMQ_EEXIST: return "already exists";
    case RMQ_ENOSPC: return "no space left on device";
    case RMQ_EREADONLY: return "store is read-only after a write failure";
    case RMQ_ECORRUPT: return "corrupt data";
    case RMQ_ECONNECT: return "connection failed";
    case RMQ_ESHUTDOWN: return "shutting down";
    case RMQ_EBUSY: return "busy";
    case RMQ_ESTATUS: return "peer answered with an error status";
    case RMQ_ETLS: return "tls error";
    }
    return "unknown error";
}
