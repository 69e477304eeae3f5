/* rmq_acl_live.c: a live access-control policy (rmq_acl_live.h): SIGHUP and
 * file-change reloads, admin edits written back atomically, the version. */
#include "rmq_acl_live.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rmq_time.h"
#include "rmq_log.h"
#include "rmq_file.h"

#define WATCH_INTERVAL_MS 1000

/* What tells one version of the file from another without reading it. */
typedef struct file_id {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} file_id_t;

struct rmq_acl_live {
    rmq_acl_t *acl;              /* the codecs' and the core's (borrowed) */
    char *path;
    struct event *hup;
    struct event *watch;
    file_id_t seen;              /* the file as last loaded, written or refused */
    int64_t counter;
    int64_t timestamp_ms;
};

/* The permission bits of path, or 0600 when it cannot be stat'ed: the
 * file holds secret keys, and its rewrite keeps the operator's mode. */
static mode_t file_mode_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_mode & 07777 : 0600;
}

/* The file's identity now; all zero when it cannot be stat'ed. */
static file_id_t file_id_of(const char *path)
{
    struct stat st;
    file_id_t id;
    memset(&id, 0, sizeof id);
    if (stat(path, &st) == 0)
        id = (file_id_t){st.st_dev, st.st_ino, st.st_size, st.st_mtim};
    return id;
}

static int file_id_same(const file_id_t *a, const file_id_t *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
           a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* Puts fresh in force and counts a version. */
static void take(rmq_acl_live_t *la, rmq_acl_t *fresh)
{
    rmq_acl_replace(la->acl, fresh);
    la->counter++;
    la->timestamp_ms = rmq_wall_ms();
}

int rmq_acl_live_reload(rmq_acl_live_t *la)
{
    char err[512] = "";
    la->seen = file_id_of(la->path);
    rmq_acl_t *fresh = rmq_acl_load(la->path, err, sizeof err);
    if (!fresh) {
        LOG_ERROR("ACL reload refused, the policy in force is kept: %s", err);
        return -1;
    }
    take(la, fresh);
    LOG_INFO("ACL reloaded from %s: %zu accounts (version %lld)", la->path, rmq_acl_account_count(la->acl),
             (long long)la->counter);
    return 0;
}

static void on_hup(evutil_socket_t sig, short what, void *arg)
{
    (void)sig;
    (void)what;
    LOG_INFO("SIGHUP: reloading the ACL");
    rmq_acl_live_reload(arg);
}

/* Reloads when the file is not the one last seen. */
static void on_watch(evutil_socket_t fd, short what, void *arg)
{
    rmq_acl_live_t *la = arg;
    (void)fd;
    (void)what;
    file_id_t now = file_id_of(la->path);
    if (!file_id_same(&now, &la->seen)) {
        LOG_INFO("aclFile %s changed: reloading the ACL", la->path);
        rmq_acl_live_reload(la);
    }
}

rmq_acl_live_t *rmq_acl_live_new(struct event_base *base, rmq_acl_t *acl, const char *path)
{
    rmq_acl_live_t *la = calloc(1, sizeof *la);
    struct timeval every = {WATCH_INTERVAL_MS / 1000, (WATCH_INTERVAL_MS % 1000) * 1000};
    if (!la || !(la->path = strdup(path)))
        goto fail;
    la->acl = acl;
    la->seen = file_id_of(path);
    la->timestamp_ms = rmq_wall_ms();
    la->hup = evsignal_new(base, SIGHUP, on_hup, la);
    la->watch = event_new(base, -1, EV_PERSIST, on_watch, la);
    if (!la->hup || !la->watch || evsignal_add(la->hup, NULL) != 0 || event_add(la->watch, &every) != 0)
        goto fail;
    return la;
fail:
    rmq_acl_live_free(la);
    return NULL;
}

void rmq_acl_live_free(rmq_acl_live_t *la)
{
    if (!la)
        return;
    if (la->hup)
        event_free(la->hup);
    if (la->watch)
        event_free(la->watch);
    free(la->path);
    free(la);
}

rmq_err_t rmq_acl_live_apply(rmq_acl_live_t *la, const rmq_acl_edit_t *e, char *err, size_t errlen)
{
    rmq_acl_t *fresh = rmq_acl_edit(la->acl, e, err, errlen);
    if (!fresh)
        return RMQ_EINVAL;
    size_t len = 0;
    char *text = rmq_acl_format(fresh, &len);
    rmq_err_t rc = text ? rmq_file_write_atomic_mode(la->path, text, len, file_mode_of(la->path)) : RMQ_ENOMEM;
    free(text);
    if (rc != RMQ_OK) {
        snprintf(err, errlen, "aclFile=%s: cannot write: %s", la->path, rmq_strerror(rc));
        rmq_acl_free(fresh);
        return RMQ_EIO;
    }
    la->seen = file_id_of(la->path);
    take(la, fresh);
    return RMQ_OK;
}

const rmq_acl_t *rmq_acl_live_policy(const rmq_acl_live_t *la)
{
    return la->acl;
}

const char *rmq_acl_live_path(const rmq_acl_live_t *la)
{
    return la->path;
}

void rmq_acl_live_version(const rmq_acl_live_t *la, int64_t *counter, int64_t *timestamp_ms)
{
    *counter = la->counter;
    *timestamp_ms = la->timestamp_ms;
}
