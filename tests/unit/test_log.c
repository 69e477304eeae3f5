/* test_log.c: size-based log rotation. Several threads log at once while
 * the file rotates many times: every line lands exactly once and whole, no
 * file grows past the limit, and only logMaxFiles rotated files are kept,
 * oldest dropped first. */
#include "rmq_log.h"

#include <check.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N_THREADS 4
#define N_LINES 3000

static char dir[256];
static char path[300];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/rmq-test-log-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.log", dir);
    rmq_log_set_stderr(0);
}

static void teardown(void)
{
    rmq_log_close();
    rmq_log_set_rotation(0, 1);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void *writer(void *arg)
{
    long tid = (long)arg;
    for (int i = 0; i < N_LINES; i++)
        LOG_INFO("line t%ld s%d end", tid, i);
    return NULL;
}

/* Reads one file, counting each "line tT sS end" in seen; returns lines, -1 if absent. */
static long scan(const char *file, unsigned char seen[N_THREADS][N_LINES], long *bad, off_t max)
{
    FILE *f = fopen(file, "r");
    char line[512];
    long n = 0;
    struct stat sb;
    if (!f)
        return -1;
    ck_assert_int_eq(fstat(fileno(f), &sb), 0);
    ck_assert_msg(sb.st_size <= max, "%s is %lld bytes, over %lld", file, (long long)sb.st_size, (long long)max);
    while (fgets(line, sizeof line, f)) {
        const char *at = strstr(line, "line t");
        int t, s;
        char end[8];
        if (!at || sscanf(at, "line t%d s%d %7s", &t, &s, end) != 3 || strcmp(end, "end") != 0 || t < 0 ||
            t >= N_THREADS || s < 0 || s >= N_LINES || line[strlen(line) - 1] != '\n') {
            (*bad)++;
            continue;
        }
        seen[t][s]++;
        n++;
    }
    fclose(f);
    return n;
}

START_TEST(test_rotation_loses_no_line)
{
    static unsigned char seen[N_THREADS][N_LINES];
    pthread_t th[N_THREADS];
    memset(seen, 0, sizeof seen);
    ck_assert_int_eq(rmq_log_open("test", path, RMQ_LOG_INFO), 0);
    rmq_log_set_rotation(8192, 1000);
    for (long i = 0; i < N_THREADS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, writer, (void *)i), 0);
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(th[i], NULL);
    rmq_log_close();

    long bad = 0, total = 0, files = 0;
    char file[PATH_MAX + 16];
    total += scan(path, seen, &bad, 8192);
    for (int k = 1;; k++) {
        snprintf(file, sizeof file, "%s.%d", path, k);
        long n = scan(file, seen, &bad, 8192);
        if (n < 0)
            break;
        total += n;
        files++;
    }
    ck_assert_int_eq(bad, 0);
    ck_assert_int_gt(files, 50);
    ck_assert_int_eq(total, N_THREADS * N_LINES);
    for (int t = 0; t < N_THREADS; t++)
        for (int s = 0; s < N_LINES; s++)
            ck_assert_msg(seen[t][s] == 1, "t%d s%d seen %d times", t, s, seen[t][s]);
}
END_TEST

/* The first line number of a file, or -1. */
static int first_seq(const char *file)
{
    FILE *f = fopen(file, "r");
    char line[512];
    int t, s = -1;
    if (!f)
        return -1;
    if (fgets(line, sizeof line, f)) {
        const char *at = strstr(line, "line t");
        if (!at || sscanf(at, "line t%d s%d", &t, &s) != 2)
            s = -1;
    }
    fclose(f);
    return s;
}

START_TEST(test_keeps_max_files_newest_first)
{
    char file[PATH_MAX + 16];
    ck_assert_int_eq(rmq_log_open("test", path, RMQ_LOG_INFO), 0);
    rmq_log_set_rotation(2000, 3);
    writer((void *)0);
    rmq_log_close();
    int prev = INT_MAX;
    for (int k = 1; k <= 3; k++) {
        snprintf(file, sizeof file, "%s.%d", path, k);
        int s = first_seq(file);
        ck_assert_msg(s >= 0, "%s missing", file);
        ck_assert_msg(s < prev, "%s is not older than %s.%d", file, path, k - 1);
        prev = s;
    }
    snprintf(file, sizeof file, "%s.4", path);
    ck_assert_int_ne(access(file, F_OK), 0);
    ck_assert_int_gt(first_seq(path), first_seq(file) < 0 ? 0 : first_seq(file));
    /* the newest lines are in the live file */
    FILE *f = fopen(path, "r");
    char line[512], last[512] = "";
    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof line, f))
        snprintf(last, sizeof last, "%s", line);
    fclose(f);
    char want[64];
    snprintf(want, sizeof want, "line t0 s%d end", N_LINES - 1);
    ck_assert_ptr_nonnull(strstr(last, want));
}
END_TEST

START_TEST(test_no_rotation_when_off)
{
    char file[PATH_MAX + 16];
    ck_assert_int_eq(rmq_log_open("test", path, RMQ_LOG_INFO), 0);
    rmq_log_set_rotation(0, 3);
    writer((void *)1);
    rmq_log_close();
    snprintf(file, sizeof file, "%s.1", path);
    ck_assert_int_ne(access(file, F_OK), 0);
}
END_TEST

/* Rotation that cannot rename (the directory is gone) keeps logging to the
 * open file and does not retry on every line. */
START_TEST(test_failed_rotation_keeps_writing)
{
    ck_assert_int_eq(rmq_log_open("test", path, RMQ_LOG_INFO), 0);
    rmq_log_set_rotation(1000, 2);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    writer((void *)2);
    rmq_log_close();
    ck_assert_int_eq(mkdir(dir, 0700), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("rotation");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_rotation_loses_no_line);
    tcase_add_test(tc, test_keeps_max_files_newest_first);
    tcase_add_test(tc, test_no_rotation_when_off);
    tcase_add_test(tc, test_failed_rotation_keeps_writing);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
