/* rmq_log.c: line logger to stderr and a file, with per-site rate limits. */
#include "rmq_log.h"
#include "rmq_time.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static struct {
    _Atomic int level;
    _Atomic int to_stderr;
    int fd;
    char name[32];
} g_log = { RMQ_LOG_INFO, 1, -1, "rmq" };

static const char *const level_names[] = { "DEBUG", "INFO", "WARN", "ERROR", "OFF" };

int rmq_log_open(const char *name, const char *path, rmq_log_level_t level)
{
    if (name)
        snprintf(g_log.name, sizeof(g_log.name), "%s", name);
    atomic_store(&g_log.level, (int)level);
    if (!path)
        return 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    if (g_log.fd >= 0)
        close(g_log.fd);
    g_log.fd = fd;
    return 0;
}

void rmq_log_close(void)
{
    if (g_log.fd >= 0)
        close(g_log.fd);
    g_log.fd = -1;
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
    if (g_log.fd >= 0)
        write_all(g_log.fd, buf, len);
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
