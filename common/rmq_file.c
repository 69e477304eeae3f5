/* rmq_file.c: atomic metadata files (tmp, fsync, rename, fsync dir), whole
 * file reads and directory helpers. */
#include "rmq_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rmq_log.h"

rmq_err_t rmq_file_sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    rmq_err_t rc = RMQ_OK;

    if (fd < 0) {
        LOG_ERROR("open(%s) for fsync: %s", dir, strerror(errno));
        return RMQ_EIO;
    }
    if (fsync(fd) != 0) {
        LOG_ERROR("fsync(%s): %s", dir, strerror(errno));
        rc = RMQ_EIO;
    }
    close(fd);
    return rc;
}

rmq_err_t rmq_file_sync_parent(const char *path)
{
    char dir[PATH_MAX];
    char *slash;

    if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
        return RMQ_EINVAL;
    slash = strrchr(dir, '/');
    if (!slash)
        return rmq_file_sync_dir(".");
    if (slash == dir)
        slash[1] = '\0';
    else
        *slash = '\0';
    return rmq_file_sync_dir(dir);
}

/* Writes all of buf to fd, retrying short writes and EINTR. */
static int write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

rmq_err_t rmq_file_write_atomic(const char *path, const void *data, size_t len)
{
    return rmq_file_write_atomic_mode(path, data, len, 0644);
}

rmq_err_t rmq_file_write_atomic_mode(const char *path, const void *data, size_t len, mode_t mode)
{
    char tmp[PATH_MAX];
    int fd;

    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return RMQ_EINVAL;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) {
        LOG_ERROR("open(%s): %s", tmp, strerror(errno));
        return errno == ENOSPC ? RMQ_ENOSPC : RMQ_EIO;
    }
    if (write_full(fd, data, len) != 0 || fsync(fd) != 0) {
        int e = errno;

        LOG_ERROR("write/fsync(%s): %s", tmp, strerror(e));
        close(fd);
        unlink(tmp);
        return e == ENOSPC ? RMQ_ENOSPC : RMQ_EIO;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        LOG_ERROR("close/rename(%s): %s", tmp, strerror(errno));
        unlink(tmp);
        return RMQ_EIO;
    }
    return rmq_file_sync_parent(path);
}

rmq_err_t rmq_file_read_all(const char *path, char **data, size_t *len)
{
    struct stat sb;
    char *buf;
    size_t got = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    *data = NULL;
    *len = 0;
    if (fd < 0)
        return errno == ENOENT ? RMQ_ENOTFOUND : RMQ_EIO;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return RMQ_EIO;
    }
    buf = malloc((size_t)sb.st_size + 1);
    if (!buf) {
        close(fd);
        return RMQ_ENOMEM;
    }
    while (got < (size_t)sb.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)sb.st_size - got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (got != (size_t)sb.st_size) {
        free(buf);
        return RMQ_EIO;
    }
    buf[got] = '\0';
    *data = buf;
    *len = got;
    return RMQ_OK;
}

rmq_err_t rmq_file_mkdirs(const char *dir)
{
    char buf[PATH_MAX];
    size_t n;

    if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
        return RMQ_EINVAL;
    n = strlen(buf);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        buf[i] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            LOG_ERROR("mkdir(%s): %s", buf, strerror(errno));
            return RMQ_EIO;
        }
        if (i < n)
            buf[i] = '/';
    }
    return RMQ_OK;
}
