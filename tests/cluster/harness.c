/* harness.c: process-test harness (see harness.h). Holds the one piece of
 * global state in the tests: the registry of live children and the running
 * case, so that teardown and atexit can clean up after a failed case. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HN_MAX_CHILDREN 64

/* A daemon of the running case, whose log is printed if the case fails. */
typedef struct hn_case_log {
    char name[64];
    char path[PATH_MAX];
} hn_case_log_t;

static struct {
    pid_t children[HN_MAX_CHILDREN];     /* live children, 0: free slot */
    hn_case_log_t logs[HN_MAX_CHILDREN];
    size_t nlogs;
    char dir[1024];
    int passed;
    int atexit_set;
} hn;

long long hn_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void hn_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int hn_wait_until(int (*cond)(void *arg), void *arg, int timeout_ms)
{
    long long deadline = hn_now_ms() + timeout_ms;
    int v;

    while (!(v = cond(arg)) && hn_now_ms() < deadline)
        hn_sleep_ms(20);
    return v;
}

/* ---- child registry ----------------------------------------------------- */

static void track(pid_t pid)
{
    if (!hn.atexit_set) {
        atexit(hn_cleanup);
        hn.atexit_set = 1;
    }
    for (size_t i = 0; i < HN_MAX_CHILDREN; i++) {
        if (hn.children[i])
            continue;
        hn.children[i] = pid;
        return;
    }
    fprintf(stderr, "harness: more than %d children\n", HN_MAX_CHILDREN);
}

static void untrack(pid_t pid)
{
    for (size_t i = 0; i < HN_MAX_CHILDREN; i++)
        if (hn.children[i] == pid)
            hn.children[i] = 0;
}

/* Waits up to timeout_ms for pid; returns its status as an exit code
 * (128+signal when signalled) or -1 if it is still running. */
static int reap(pid_t pid, int timeout_ms)
{
    long long deadline = hn_now_ms() + timeout_ms;
    int st;

    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            untrack(pid);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        if (r < 0 && errno != EINTR) {
            untrack(pid);
            return -1;
        }
        if (hn_now_ms() >= deadline)
            return -1;
        hn_sleep_ms(10);
    }
}

void hn_cleanup(void)
{
    for (size_t i = 0; i < HN_MAX_CHILDREN; i++) {
        pid_t pid = hn.children[i];
        if (!pid)
            continue;
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        hn.children[i] = 0;
    }
}

/* ---- files and directories ---------------------------------------------- */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void print_tail(const char *name, const char *path, int lines)
{
    FILE *f = fopen(path, "r");
    char *buf;
    long size, start;

    if (!f) {
        fprintf(stderr, "---- %s: no log at %s\n", name, path);
        return;
    }
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    start = size > 65536 ? size - 65536 : 0;
    buf = malloc((size_t)(size - start) + 1);
    fseek(f, start, SEEK_SET);
    size_t n = buf ? fread(buf, 1, (size_t)(size - start), f) : 0;
    fclose(f);
    if (!buf)
        return;
    buf[n] = '\0';
    const char *p = buf + n;
    for (int seen = 0; p > buf; p--)
        if (p[-1] == '\n' && p != buf + n && ++seen == lines)
            break;
    fprintf(stderr, "---- last %d lines of %s (%s)\n%s---- end of %s\n", lines, name, path, p,
            name);
    free(buf);
}

const char *hn_case_begin(const char *tag)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(hn.dir, sizeof hn.dir, "%s/rmq-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
    if (!mkdtemp(hn.dir)) {
        fprintf(stderr, "harness: mkdtemp %s: %s\n", hn.dir, strerror(errno));
        hn.dir[0] = '\0';
        return NULL;
    }
    hn.passed = 0;
    return hn.dir;
}

void hn_case_passed(void)
{
    hn.passed = 1;
}

void hn_case_end(void)
{
    if (!hn.passed)
        for (size_t i = 0; i < hn.nlogs; i++)
            print_tail(hn.logs[i].name, hn.logs[i].path, 40);
    hn.nlogs = 0;
    hn_cleanup();
    if (hn.dir[0] && hn.passed)
        nftw(hn.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    else if (hn.dir[0])
        fprintf(stderr, "harness: case failed; its files stay in %s\n", hn.dir);
    hn.dir[0] = '\0';
}

const char *hn_build_path(const char *rel, char *buf, size_t len)
{
    const char *root = getenv("RMQ_BUILD_ROOT");

    snprintf(buf, len, "%s/%s", root && *root ? root : ".", rel);
    return buf;
}

const char *hn_write_file(const char *dir, const char *name, const char *text, char *buf,
                          size_t len)
{
    FILE *f;

    snprintf(buf, len, "%s/%s", dir, name);
    f = fopen(buf, "w");
    if (!f)
        return NULL;
    fputs(text, f);
    return fclose(f) == 0 ? buf : NULL;
}

static char pki_dir[128];

int hn_pki_make(const char *script, const char *tag)
{
    hn_result_t res;

    snprintf(pki_dir, sizeof pki_dir, "/tmp/rmq-%.32s-pki-XXXXXX", tag);
    if (!mkdtemp(pki_dir)) {
        fprintf(stderr, "harness: mkdtemp %s: %s\n", pki_dir, strerror(errno));
        pki_dir[0] = '\0';
        return -1;
    }
    const char *gen[] = {"/bin/sh", script, pki_dir, NULL};
    int ok = hn_run(gen, 30000, &res) == 0 && res.status == 0;
    if (!ok)
        fprintf(stderr, "harness: %s failed: %s\n", script, res.err ? res.err : "");
    hn_result_free(&res);
    return ok ? 0 : -1;
}

const char *hn_pki_path(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%.64s", pki_dir, name);
    return buf;
}

void hn_pki_remove(void)
{
    const char *rm[] = {"/bin/rm", "-rf", pki_dir, NULL};
    hn_result_t res;

    if (pki_dir[0] && hn_run(rm, 10000, &res) == 0)
        hn_result_free(&res);
    pki_dir[0] = '\0';
}

/* ---- daemons ------------------------------------------------------------ */

/* Remembers d's log for the running case (once per log file). */
static void note_case_log(const hn_daemon_t *d)
{
    for (size_t i = 0; i < hn.nlogs; i++)
        if (strcmp(hn.logs[i].path, d->log_path) == 0)
            return;
    if (hn.nlogs == HN_MAX_CHILDREN)
        return;
    snprintf(hn.logs[hn.nlogs].name, sizeof hn.logs[hn.nlogs].name, "%s", d->name);
    snprintf(hn.logs[hn.nlogs].path, sizeof hn.logs[hn.nlogs].path, "%s", d->log_path);
    hn.nlogs++;
}

/* In the child: output to log_path, die with the parent, exec argv. */
static void exec_child(const char *const *argv, const char *log_path)
{
    int fd = log_path ? open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
    execv(argv[0], (char *const *)argv);
    fprintf(stderr, "harness: exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

typedef struct ready_wait {
    hn_daemon_t *d;
    int exited;
} ready_wait_t;

static int ready_or_exited(void *arg)
{
    ready_wait_t *w = arg;

    if (access(w->d->ready_path, R_OK) == 0)
        return 1;
    w->exited = hn_daemon_has_exited(w->d);
    return w->exited;
}

int hn_daemon_spawn(hn_daemon_t *d, const char *binary, const char *name,
                    const char *const *args)
{
    const char *argv[64];
    size_t n = 0;

    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    snprintf(d->log_path, sizeof d->log_path, "%s/%s.log", hn.dir, name);
    snprintf(d->ready_path, sizeof d->ready_path, "%s/%s.ready", hn.dir, name);
    unlink(d->ready_path);
    argv[n++] = binary;
    for (size_t i = 0; args && args[i] && n < 63; i++)
        argv[n++] = args[i];
    argv[n] = NULL;

    fflush(NULL);
    d->pid = fork();
    if (d->pid < 0) {
        d->pid = 0;
        return -1;
    }
    if (d->pid == 0)
        exec_child(argv, d->log_path);
    track(d->pid);
    note_case_log(d);
    return 0;
}

int hn_daemon_has_exited(hn_daemon_t *d)
{
    int st;

    if (!d->pid)
        return 1;
    if (waitpid(d->pid, &st, WNOHANG) != d->pid)
        return 0;
    untrack(d->pid);
    d->pid = 0;
    return 1;
}

int hn_daemon_start(hn_daemon_t *d, const char *binary, const char *name,
                    const char *const *args, int timeout_ms)
{
    const char *argv[64];
    char ready[PATH_MAX];
    size_t n = 0;

    snprintf(ready, sizeof ready, "%s/%s.ready", hn.dir, name);
    for (size_t i = 0; args && args[i] && n < 60; i++)
        argv[n++] = args[i];
    argv[n++] = "--ready-file";
    argv[n++] = ready;
    argv[n] = NULL;
    if (hn_daemon_spawn(d, binary, name, argv) != 0)
        return -1;

    ready_wait_t w = { d, 0 };
    if (hn_wait_until(ready_or_exited, &w, timeout_ms) && !w.exited)
        return 0;
    fprintf(stderr, "harness: %s %s within %d ms\n", name,
            w.exited ? "exited before it was ready" : "not ready", timeout_ms);
    hn_daemon_log_tail(d, 40);
    hn_daemon_kill9(d);
    return -1;
}

int hn_daemon_start_conf(hn_daemon_t *d, const char *dir, const char *binary, const char *name,
                         const char *props, char *addr, size_t len)
{
    char file[128], path[PATH_MAX], bin[PATH_MAX];
    snprintf(file, sizeof file, "%s.properties", name);
    if (!hn_write_file(dir, file, props, path, sizeof path))
        return -1;
    const char *args[] = { "-c", path, NULL };
    if (hn_daemon_start(d, hn_build_path(binary, bin, sizeof bin), name, args, HN_READY_TIMEOUT_MS) != 0)
        return -1;
    int port = hn_daemon_port(d, "listenPort");
    if (port <= 0)
        return -1;
    if (addr)
        snprintf(addr, len, "127.0.0.1:%d", port);
    return 0;
}

int hn_daemon_port(const hn_daemon_t *d, const char *key)
{
    FILE *f = fopen(d->ready_path, "r");
    char line[256];
    size_t klen = strlen(key);
    int port = -1;

    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, klen) == 0 && line[klen] == '=')
            port = atoi(line + klen + 1);
    fclose(f);
    return port;
}

/* Ends a stop that reap gave up on (status < 0) with SIGKILL; clears d. */
static int stop_finish(hn_daemon_t *d, int status, int timeout_ms)
{
    if (status < 0) {
        fprintf(stderr, "harness: %s did not stop within %d ms; SIGKILL\n", d->name, timeout_ms);
        hn_daemon_log_tail(d, 40);
        kill(d->pid, SIGKILL);
        status = reap(d->pid, HN_STOP_TIMEOUT_MS);
    }
    d->pid = 0;
    return status;
}

int hn_daemon_stop(hn_daemon_t *d, int timeout_ms)
{
    if (!d->pid)
        return -1;
    kill(d->pid, SIGTERM);
    return stop_finish(d, reap(d->pid, timeout_ms), timeout_ms);
}

int hn_daemon_stop_burst(hn_daemon_t *d, int timeout_ms)
{
    long long deadline = hn_now_ms() + timeout_ms;
    struct timespec gap = { 0, 200 * 1000 };
    int status;

    if (!d->pid)
        return -1;
    do {
        kill(d->pid, SIGTERM);
        nanosleep(&gap, NULL);
    } while ((status = reap(d->pid, 0)) < 0 && hn_now_ms() < deadline);
    return stop_finish(d, status, timeout_ms);
}

void hn_daemon_kill9(hn_daemon_t *d)
{
    if (!d->pid)
        return;
    kill(d->pid, SIGKILL);
    reap(d->pid, HN_STOP_TIMEOUT_MS);
    d->pid = 0;
}

void hn_daemon_log_tail(const hn_daemon_t *d, int lines)
{
    print_tail(d->name, d->log_path, lines);
}

int hn_daemon_log_has(const hn_daemon_t *d, const char *text)
{
    FILE *f = fopen(d->log_path, "r");
    if (!f)
        return 0;
    size_t tlen = strlen(text), keep = 0, n;
    char buf[(1 << 16) + 1];
    int found = 0;
    /* each chunk starts with the previous one's last tlen-1 bytes */
    while (!found && (n = fread(buf + keep, 1, sizeof buf - 1 - keep, f)) > 0) {
        n += keep;
        buf[n] = '\0';
        found = strstr(buf, text) != NULL;
        keep = tlen > 1 && n >= tlen - 1 ? tlen - 1 : 0;
        memmove(buf, buf + n - keep, keep);
    }
    fclose(f);
    return found;
}

int hn_log_wait_cond(void *arg)
{
    const hn_log_wait_t *w = arg;
    return hn_daemon_log_has(w->d, w->text);
}

/* ---- commands ----------------------------------------------------------- */

/* Appends what fd has to *buf (grown); returns 0 at EOF, 1 if more may come. */
static int drain(int fd, char **buf, size_t *len)
{
    char chunk[4096];
    ssize_t r = read(fd, chunk, sizeof chunk);

    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return 1;
    if (r <= 0)
        return 0;
    char *grown = realloc(*buf, *len + (size_t)r + 1);
    if (!grown)
        return 0;
    memcpy(grown + *len, chunk, (size_t)r);
    *len += (size_t)r;
    grown[*len] = '\0';
    *buf = grown;
    return 1;
}

int hn_run(const char *const *argv, int timeout_ms, hn_result_t *res)
{
    int out[2], err[2];
    size_t out_len = 0, err_len = 0;
    long long deadline = hn_now_ms() + timeout_ms;

    res->status = -1;
    res->out = calloc(1, 1);
    res->err = calloc(1, 1);
    if (pipe(out) || pipe(err))
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        close(out[0]);
        close(err[0]);
        close(out[1]);
        close(err[1]);
        exec_child(argv, NULL);
    }
    track(pid);
    close(out[1]);
    close(err[1]);
    struct pollfd pfd[2] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 } };
    while (pfd[0].fd >= 0 || pfd[1].fd >= 0) {
        long long left = deadline - hn_now_ms();
        if (left <= 0) {
            fprintf(stderr, "harness: %s still running after %d ms; SIGKILL\n", argv[0],
                    timeout_ms);
            kill(pid, SIGKILL);
            break;
        }
        if (poll(pfd, 2, (int)left) <= 0)
            continue;
        if (pfd[0].revents && !drain(out[0], &res->out, &out_len))
            pfd[0].fd = -1;
        if (pfd[1].revents && !drain(err[0], &res->err, &err_len))
            pfd[1].fd = -1;
    }
    close(out[0]);
    close(err[0]);
    res->status = reap(pid, HN_STOP_TIMEOUT_MS);
    return 0;
}

void hn_result_free(hn_result_t *res)
{
    free(res->out);
    free(res->err);
    res->out = NULL;
    res->err = NULL;
}

int hn_run_suite(Suite *s)
{
    signal(SIGPIPE, SIG_IGN);   /* a write to a daemon just killed is an error to see, not a death */
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    hn_cleanup();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
