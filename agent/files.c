/* files.c -- the agent's atomic file write (see files.h). */
#include "agent/files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* mkdir -p of path's parent folders, 0755 like Docker's archive API. */
static void make_parents(char *path)
{
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w > 0) {
            s += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else {
            return -1;
        }
    }
    return 0;
}

/* Write the temporary file fd whole, with its mode and mtime, and close
 * it: 0, or an errno (fd is closed either way). */
static int fill(int fd, const void *data, size_t len, unsigned mode, int64_t mtime)
{
    int err = 0;
    if (write_all(fd, data, len) != 0 || fchmod(fd, (mode_t)(mode & 07777)) != 0)
        err = errno;
    if (!err && mtime > 0) {
        struct timespec ts[2] = { { (time_t)mtime, 0 }, { (time_t)mtime, 0 } };
        futimens(fd, ts);
    }
    if (close(fd) != 0 && !err)
        err = errno;
    return err;
}

int files_write(const char *path_in, size_t pathlen, const void *data, size_t len, unsigned mode,
                int64_t mtime, const char **what)
{
    *what = "write";
    if (pathlen == 0 || path_in[0] != '/' || memchr(path_in, '\0', pathlen) ||
        pathlen >= PATH_MAX - 32)
        return EINVAL;
    char path[PATH_MAX], tmp[PATH_MAX];
    memcpy(path, path_in, pathlen);
    path[pathlen] = '\0';
    const char *slash = strrchr(path, '/');
    snprintf(tmp, sizeof tmp, "%.*s/.talkback-write-XXXXXX", (int)(slash - path), path);
    make_parents(path);
    struct stat st;
    /* A folder (or anything else that is not a file or a link) at the
     * path is Docker's call: refuse, the manager falls back. */
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
        return EISDIR;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        *what = "create";
        return errno ? errno : EIO;
    }
    int err = fill(fd, data, len, mode, mtime);
    if (!err && rename(tmp, path) != 0) {
        err = errno;
        *what = "rename";
    }
    if (err)
        unlink(tmp);
    return err ? err : 0;
}
