/* rmq_file.h: small whole-file helpers for metadata (topics, subscription
 * groups, consumer offsets, the store checkpoint, ACL files): atomic replacement and
 * whole-file reads, plus directory helpers the store uses. Blocking I/O:
 * call from threads that may block (start-up, worker threads, shutdown). */
#ifndef RMQ_FILE_H
#define RMQ_FILE_H

#include <stddef.h>

#include <sys/types.h>

#include "rmq_err.h"

/* Replaces path with data atomically and durably: writes path.tmp, fsyncs
 * it, renames it over path and fsyncs the directory. Any thread. */
rmq_err_t rmq_file_write_atomic(const char *path, const void *data, size_t len);
/* The same with the new file created with mode (before the umask; 0644 above). */
rmq_err_t rmq_file_write_atomic_mode(const char *path, const void *data, size_t len, mode_t mode);

/* Reads the whole file into a malloc'ed buffer (NUL-terminated for
 * convenience; *len excludes the NUL); the caller frees *data.
 * RMQ_ENOTFOUND if the file does not exist. Any thread. */
rmq_err_t rmq_file_read_all(const char *path, char **data, size_t *len);

/* Creates dir and its missing parents (mode 0755). Any thread. */
rmq_err_t rmq_file_mkdirs(const char *dir);

/* fsyncs a directory so entries created or removed in it are durable. */
rmq_err_t rmq_file_sync_dir(const char *dir);

/* fsyncs the directory that contains path. */
rmq_err_t rmq_file_sync_parent(const char *path);

#endif
