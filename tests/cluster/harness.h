/* harness.h: process-test harness shared by the cluster tests. Scratch
 * directories, daemons (mqnamesrv, later mqbroker) started from the build
 * tree with their output in a log file, ports read from their ready file,
 * stop by SIGTERM (SIGKILL after a bound) or kill -9, and commands (mqadmin)
 * run with their output captured.
 *
 * Every child is tracked: hn_cleanup kills whatever is still running, and
 * it runs at exit too; each daemon also gets PR_SET_PDEATHSIG so it dies
 * with the test even when the test process is killed. Test cases call
 * hn_case_begin in setup, hn_case_passed as their last statement and
 * hn_case_end in teardown: a case that did not pass gets the log tails of
 * its daemons printed. main runs its suite with hn_run_suite (CK_NOFORK,
 * so teardown always runs). */
#ifndef HARNESS_H
#define HARNESS_H

#include <check.h>
#include <limits.h>
#include <sys/types.h>

#define HN_READY_TIMEOUT_MS 10000
#define HN_STOP_TIMEOUT_MS 10000

typedef struct hn_daemon {
    pid_t pid;                    /* 0 once stopped */
    char name[64];
    char log_path[PATH_MAX];
    char ready_path[PATH_MAX];
} hn_daemon_t;

typedef struct hn_result {
    int status;                   /* exit status, 128+signal if killed, -1 if not run */
    char *out;                    /* captured stdout, NUL-terminated, owned */
    char *err;                    /* captured stderr */
} hn_result_t;

/* Starts a case: a fresh scratch directory (returned, owned by the harness). */
const char *hn_case_begin(const char *tag);
/* Marks the running case as passed (call it last in the test). */
void hn_case_passed(void);
/* Ends a case: prints daemon logs if it did not pass, kills every child,
 * removes the scratch directory. */
void hn_case_end(void);

/* The path of a build output: $RMQ_BUILD_ROOT/rel, in buf. */
const char *hn_build_path(const char *rel, char *buf, size_t len);

/* Writes text to dir/name; returns the full path in buf, or NULL. */
const char *hn_write_file(const char *dir, const char *name, const char *text, char *buf,
                          size_t len);

/* The test PKI (scripts/gen-test-certs.sh: CA, server and client
 * certificates) made once per process under a new
 * /tmp/rmq-<tag>-pki-XXXXXX by the script at script: 0, or -1 said on
 * stderr. hn_pki_path gives dir/name in buf; hn_pki_remove deletes it. */
int hn_pki_make(const char *script, const char *tag);
const char *hn_pki_path(const char *name, char *buf, size_t len);
void hn_pki_remove(void);

/* Starts binary with args (NULL-terminated, after argv[0]), output to
 * DIR/NAME.log, tracked like every child, without waiting for anything:
 * for programs that write no ready file (etcd). 0, or -1 if fork failed. */
int hn_daemon_spawn(hn_daemon_t *d, const char *binary, const char *name,
                    const char *const *args);

/* 1 (and d stopped) if the daemon has exited, 0 while it runs. */
int hn_daemon_has_exited(hn_daemon_t *d);

/* Starts binary with args (NULL-terminated, after argv[0]) plus
 * "--ready-file DIR/NAME.ready", output to DIR/NAME.log, and waits up to
 * timeout_ms for the ready file. 0, or -1 with the log tail printed. */
int hn_daemon_start(hn_daemon_t *d, const char *binary, const char *name,
                    const char *const *args, int timeout_ms);

/* Writes props to dir/NAME.properties and starts binary (a build output
 * such as "broker/mqbroker") as NAME with "-c" that file, like
 * hn_daemon_start with HN_READY_TIMEOUT_MS. addr (may be NULL) gets
 * "127.0.0.1:<listenPort>". 0, or -1 (also when it reports no listenPort). */
int hn_daemon_start_conf(hn_daemon_t *d, const char *dir, const char *binary, const char *name,
                         const char *props, char *addr, size_t len);

/* The integer value of key in the daemon's ready file, or -1. */
int hn_daemon_port(const hn_daemon_t *d, const char *key);

/* SIGTERM, then wait up to timeout_ms (SIGKILL after); returns the exit
 * status (128+signal when killed by one). */
int hn_daemon_stop(hn_daemon_t *d, int timeout_ms);

/* Like hn_daemon_stop, but keeps sending SIGTERM every 0.2 ms until the
 * daemon has exited: a clean stop must not be cut short by more signals. */
int hn_daemon_stop_burst(hn_daemon_t *d, int timeout_ms);

/* SIGKILL and reap. */
void hn_daemon_kill9(hn_daemon_t *d);

/* Prints the last lines of the daemon's log to stderr. */
void hn_daemon_log_tail(const hn_daemon_t *d, int lines);

/* 1 if the daemon's log holds text (all of it is read). */
int hn_daemon_log_has(const hn_daemon_t *d, const char *text);

/* For hn_wait_until: until d's log holds text. */
typedef struct hn_log_wait {
    const hn_daemon_t *d;
    const char *text;
} hn_log_wait_t;
int hn_log_wait_cond(void *arg);

/* Runs argv (argv[0] a path) to completion, up to timeout_ms (then
 * SIGKILL), capturing stdout and stderr into res. 0, or -1 if it could not
 * be started. */
int hn_run(const char *const *argv, int timeout_ms, hn_result_t *res);
void hn_result_free(hn_result_t *res);

/* Kills and reaps every child still running. Safe to call repeatedly. */
void hn_cleanup(void);

/* Sleeps ms milliseconds (no child process: a fork can stall under load). */
void hn_sleep_ms(int ms);
/* Monotonic ms, and polling with a bound: waits until cond(arg) is
 * non-zero or timeout_ms passes; returns the last cond value. */
long long hn_now_ms(void);
int hn_wait_until(int (*cond)(void *arg), void *arg, int timeout_ms);

/* Runs s without forking (so teardown always runs), with SIGPIPE ignored
 * (tests write to daemons they kill), then hn_cleanup; returns the exit
 * status for main. Takes s. */
int hn_run_suite(Suite *s);

#endif
