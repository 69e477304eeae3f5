/* rmq_log.c: line logger to stderr and a file, with per-site rate limits
 * and size-based rotation. File writes and rotation happen under one mutex,
 * so a rotation never splits or drops a line: the line that crosses the
 * limit goes to the fresh file. If a rotation step fails, the old file stays
 * open and keeps every line; the failure is reported once on stderr and the
 * rotation is retried after another limit's worth of bytes. */
#include "rmq_log.h"
#include "rmq_time.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static struct {
    _Atomic int level;
    _Atomic int to_stderr;
    int fd;
    char name[32];
    pthread_mutex_t mu;        /* guards fd, size, path and the rotation settings */
    int64_t size;              /* bytes in the current file */
    int64_t max_bytes;         /* rotate past this size; 0: never */
    int max_files;             /* rotated files kept: path.1 .. path.N */
    int64_t retry_at;          /* after a failed rotation: size at which to try again */
    char path[4096];
} g_log = { RMQ_LOG_INFO, 1, -1, "rmq", PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, "" };

static const char *const level_names[] = { "DEBUG", "INFO", "WARN", "ERROR", "OFF" };

int rmq_log_open(const char *name, const char *path, rmq_log_level_t level)
{
    if (name)
        snprintf(g_log.name, sizeof(g_log.name), "%s", name);
    atomic_store(&g_log.level, (int)level);
    if (!path)
        return 0;
    if (strlen(path) >= sizeof(g_log.path))
        return -ENAMETOOLONG;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    struct stat sb;
    pthread_mutex_lock(&g_log.mu);
    if (g_log.fd >= 0)
        close(g_log.fd);
    g_log.fd = fd;
    g_log.size = fstat(fd, &sb) == 0 ? (int64_t)sb.st_size : 0;
    g_log.retry_at = 0;
    snprintf(g_log.path, sizeof(g_log.path), "%s", path);
    pthread_mutex_unlock(&g_log.mu);
    return 0;
}

void rmq_log_set_rotation(int64_t max_bytes, int max_files)
{
    pthread_mutex_lock(&g_log.mu);
    g_log.max_bytes = max_bytes > 0 ? max_bytes : 0;
    g_log.max_files = max_files > 0 ? max_files : 1;
    g_log.retry_at = 0;
    pthread_mutex_unlock(&g_log.mu);
}

void rmq_log_close(void)
{
    pthread_mutex_lock(&g_log.mu);
    if (g_log.fd >= 0)
        close(g_log.fd);
    g_log.fd = -1;
    g_log.path[0] = '\0';
    pthread_mutex_unlock(&g_log.mu);
}

void rmq_log_set_level(rmq_log_level_t level) { atomic_store(&g_log.level, (int)level); }
rmq_log_level_t rmq_log_get_level(void) { return (rmq_log_level_t)atomic_load(&g_log.level); }
void rmq_log_set_stderr(int enabled) { atomic_store(&g_log.to_stderr, enabled); }

int rmq_log_level_parse(const char *text)
{
    static const char *const names[] = { "debug", "info", "warn", "error", "off" };
    for (int i = 0; i < 5; i++)
        if (strcasecmp(text, names[i]) == 0)
            return i;
    return -1;
}

static size_t format_prefix(char *buf, size_t cap, rmq_log_level_t level, const char *file, int line)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    const char *base = strrchr(file, '/');
    int n = snprintf(buf, cap, "%04d-%02d-%02d %02d:%02d:%02d.%03ld %s[%ld] %-5s %s:%d ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000, g_log.name, (long)syscall(SYS_gettid),
                     level_names[level], base ? base + 1 : file, line);
    return n < 0 ? 0 : ((size_t)n < cap ? (size_t)n : cap - 1);
}

static void write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        buf += n;
        len -= (size_t)n;
    }
}

/* Reports a failed rotation step on stderr (the file may be what failed). */
static void rotate_failed(const char *what, const char *file, int err)
{
    char buf[4600];
    int n = snprintf(buf, sizeof(buf),
                     "%s: log rotation failed: %s %s: %s; still writing to %s, retrying after "
                     "another %lld bytes\n",
                     g_log.name, what, file, strerror(err), g_log.path, (long long)g_log.max_bytes);
    if (n > 0)
        write_all(STDERR_FILENO, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* Shifts path.(N-1) -> path.N ... path -> path.1 and reopens path empty.
 * Caller holds g_log.mu. On failure the current fd stays open. */
static void rotate_locked(void)
{
    char from[4200], to[4200];
    for (int i = g_log.max_files - 1; i >= 1; i--) {
        snprintf(from, sizeof(from), "%s.%d", g_log.path, i);
        snprintf(to, sizeof(to), "%s.%d", g_log.path, i + 1);
        if (rename(from, to) != 0 && errno != ENOENT) {
            rotate_failed("rename", from, errno);
            goto fail;
        }
    }
    snprintf(to, sizeof(to), "%s.1", g_log.path);
    if (rename(g_log.path, to) != 0) {
        rotate_failed("rename", g_log.path, errno);
        goto fail;
    }
    int fd = open(g_log.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        rotate_failed("open", g_log.path, errno);
        goto fail;
    }
    close(g_log.fd);
    g_log.fd = fd;
    g_log.size = 0;
    g_log.retry_at = 0;
    return;
fail:
    g_log.retry_at = g_log.size + g_log.max_bytes;
}

/* Appends one line to the file, rotating first if it would cross the limit. */
static void file_write(const char *buf, size_t len)
{
    pthread_mutex_lock(&g_log.mu);
    if (g_log.fd >= 0) {
        if (g_log.max_bytes > 0 && g_log.size > 0 && g_log.size + (int64_t)len > g_log.max_bytes &&
            g_log.size >= g_log.retry_at && g_log.path[0])
            rotate_locked();
        write_all(g_log.fd, buf, len);
        g_log.size += (int64_t)len;
    }
    pthread_mutex_unlock(&g_log.mu);
}

void rmq_log_write(rmq_log_level_t level, const char *file, int line, const char *fmt, ...)
{
    char buf[2048];
    size_t len = format_prefix(buf, sizeof(buf), level, file, line);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + len, sizeof(buf) - len - 1, fmt, ap);
    va_end(ap);
    if (n > 0)
        len += (size_t)n < sizeof(buf) - len - 1 ? (size_t)n : sizeof(buf) - len - 2;
    buf[len++] = '\n';
    file_write(buf, len);
    if (atomic_load(&g_log.to_stderr))
        write_all(STDERR_FILENO, buf, len);
}

int rmq_log_ratelimit(_Atomic int64_t *last, int64_t interval_ms, _Atomic uint64_t *suppressed)
{
    int64_t now = rmq_mono_ms();
    int64_t prev = atomic_load(last);
    if (prev != 0 && now - prev < interval_ms) {
        atomic_fetch_add(suppressed, 1);
        return 0;
    }
    if (!atomic_compare_exchange_strong(last, &prev, now))
        return 0;
    uint64_t dropped = atomic_exchange(suppressed, 0);
    if (dropped > 0 && rmq_log_get_level() <= RMQ_LOG_WARN)
        rmq_log_write(RMQ_LOG_WARN, __FILE__, __LINE__, "%llu similar lines suppressed",
                      (unsigned long long)dropped);
    return 1;
}
