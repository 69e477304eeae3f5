/* rmq_log.h: process-wide logging to stderr and, optionally, a file.
 * One line per call, written with a single write(2) so lines from several
 * threads never interleave. Rate-limited variants keep a flood of identical
 * runtime errors down to one line per interval per call site. */
#ifndef RMQ_LOG_H
#define RMQ_LOG_H

#include <stdatomic.h>
#include <stdint.h>

typedef enum rmq_log_level {
    RMQ_LOG_DEBUG = 0,
    RMQ_LOG_INFO = 1,
    RMQ_LOG_WARN = 2,
    RMQ_LOG_ERROR = 3,
    RMQ_LOG_OFF = 4
} rmq_log_level_t;

/* Opens path for appending (NULL: stderr only) and sets the minimum level and
 * the process name shown on each line. Call once at start-up, before threads.
 * Returns 0, or -errno if the file cannot be opened (stderr still works). */
int rmq_log_open(const char *name, const char *path, rmq_log_level_t level);

/* Size-based rotation of the file opened by rmq_log_open: before a line
 * would take the file past max_bytes, path.(N-1) becomes path.N, ...,
 * path becomes path.1 and a fresh path is opened; max_files (N, at least
 * 1) rotated files are kept, older ones are overwritten. max_bytes 0: never
 * rotate. No line is lost or split. Any thread. */
void rmq_log_set_rotation(int64_t max_bytes, int max_files);

/* Closes the log file. Call at shutdown after threads are joined. */
void rmq_log_close(void);

void rmq_log_set_level(rmq_log_level_t level);
rmq_log_level_t rmq_log_get_level(void);

/* Parses "debug|info|warn|error|off"; returns -1 if unknown. */
int rmq_log_level_parse(const char *text);

/* Disables (0) or enables (1) the copy to stderr; on by default. */
void rmq_log_set_stderr(int enabled);

/* Writes one line if level passes the threshold. Any thread. */
void rmq_log_write(rmq_log_level_t level, const char *file, int line,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Per-call-site limiter: returns 1 if the caller may log now, at most once per
 * interval_ms; counts suppressed calls in *suppressed. Any thread. */
int rmq_log_ratelimit(_Atomic int64_t *last_ms, int64_t interval_ms, _Atomic uint64_t *suppressed);

#define RMQ_LOG_AT(lvl, ...) \
    do { if ((lvl) >= rmq_log_get_level()) rmq_log_write((lvl), __FILE__, __LINE__, __VA_ARGS__); } while (0)
#define LOG_DEBUG(...) RMQ_LOG_AT(RMQ_LOG_DEBUG, __VA_ARGS__)
#define LOG_INFO(...) RMQ_LOG_AT(RMQ_LOG_INFO, __VA_ARGS__)
#define LOG_WARN(...) RMQ_LOG_AT(RMQ_LOG_WARN, __VA_ARGS__)
#define LOG_ERROR(...) RMQ_LOG_AT(RMQ_LOG_ERROR, __VA_ARGS__)

/* Logs at most once per 5 s from this call site; notes how many were dropped. */
#define LOG_ERROR_RL(...) \
    do { \
        static _Atomic int64_t rl_last_; \
        static _Atomic uint64_t rl_dropped_; \
        if (rmq_log_ratelimit(&rl_last_, 5000, &rl_dropped_)) \
            RMQ_LOG_AT(RMQ_LOG_ERROR, __VA_ARGS__); \
    } while (0)
#define LOG_WARN_RL(...) \
    do { \
        static _Atomic int64_t rl_last_; \
        static _Atomic uint64_t rl_dropped_; \
        if (rmq_log_ratelimit(&rl_last_, 5000, &rl_dropped_)) \
            RMQ_LOG_AT(RMQ_LOG_WARN, __VA_ARGS__); \
    } while (0)

#endif
