/* ns_kvstore.h: the KV config's file (kvConfigPath). One entry per line,
 * "namespace TAB key TAB value", with backslash escapes for backslash, tab,
 * newline and carriage return. Saved whole, atomically (temp file, fsync,
 * rename) after every change; KV changes are rare admin operations. */
#ifndef NS_KVSTORE_H
#define NS_KVSTORE_H

#include <stddef.h>

#include "ns_route.h"
#include "rmq_err.h"

/* Adds the entries in path to rt. A missing file is an empty config.
 * RMQ_ECORRUPT (why names the line) or RMQ_EIO (why names the errno). */
rmq_err_t ns_kvstore_load(ns_route_t *rt, const char *path, char *why, size_t whylen);

/* Writes every KV entry of rt to path, replacing it atomically and durably
 * (rmq_file_write_atomic). RMQ_EIO or RMQ_ENOSPC with why naming the file. */
rmq_err_t ns_kvstore_save(const ns_route_t *rt, const char *path, char *why, size_t whylen);

#endif
