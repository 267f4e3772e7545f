/* imagescan.c -- a bounded walk for files changed since a time (see
 * imagescan.h).
 *
 * Every entry is looked at with fstatat(AT_SYMLINK_NOFOLLOW) on its
 * folder's descriptor: a link is never followed, a folder of another file
 * system is not entered.  The newest max_found files are kept in a small
 * array (a file newer than the oldest kept replaces it), sorted at the end.
 */
#include "agent/imagescan.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    struct timespec ctime;
    char *path;
} found_t;

struct imagescan {
    size_t max_entries, entries;
    size_t max_found, nfound;
    found_t *found;
};

imagescan_t *imagescan_new(size_t max_entries, size_t max_found)
{
    imagescan_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->max_entries = max_entries;
    s->max_found = max_found ? max_found : 1;
    s->found = calloc(s->max_found, sizeof *s->found);
    if (!s->found) {
        free(s);
        return NULL;
    }
    return s;
}

void imagescan_free(imagescan_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    imagescan_t *s = *self_p;
    for (size_t i = 0; i < s->nfound; i++)
        free(s->found[i].path);
    free(s->found);
    free(s);
    *self_p = NULL;
}

static int ts_cmp(const struct timespec *a, const struct timespec *b)
{
    if (a->tv_sec != b->tv_sec)
        return a->tv_sec < b->tv_sec ? -1 : 1;
    return a->tv_nsec < b->tv_nsec ? -1 : a->tv_nsec > b->tv_nsec;
}

/* Keep path (changed at ct) among the newest max_found. */
static void keep(imagescan_t *s, const char *path, const struct timespec *ct)
{
    size_t at = s->nfound;
    if (s->nfound == s->max_found) {
        at = 0;
        for (size_t i = 1; i < s->nfound; i++)
            if (ts_cmp(&s->found[i].ctime, &s->found[at].ctime) < 0)
                at = i;
        if (ts_cmp(ct, &s->found[at].ctime) <= 0)
            return;
    }
    char *copy = strdup(path);
    if (!copy)
        return;
    if (at < s->nfound)
        free(s->found[at].path);
    else
        s->nfound++;
    s->found[at] = (found_t){ .ctime = *ct, .path = copy };
}

/* One folder (open as fd, named path), depth levels left below it. */
static void walk(imagescan_t *s, int fd, const char *path, int depth, dev_t dev,
                 const struct timespec *since)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while (s->entries < s->max_entries && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        s->entries++;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != dev)
            continue;
        char sub[PATH_MAX];
        int n = snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        if (n < 0 || (size_t)n >= sizeof sub)
            continue;
        if (S_ISREG(st.st_mode) && ts_cmp(&st.st_ctim, since) >= 0) {
            keep(s, sub, &st.st_ctim);
        } else if (S_ISDIR(st.st_mode) && depth > 0) {
            int sfd = openat(dirfd(d), e->d_name,
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
            if (sfd >= 0)
                walk(s, sfd, sub, depth - 1, dev, since);
        }
    }
    closedir(d);
}

void imagescan_walk(imagescan_t *s, const char *root, int max_depth, const struct timespec *since)
{
    if (!s || max_depth < 0)
        return;
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return;
    }
    walk(s, fd, root, max_depth, st.st_dev, since);
}

static int found_cmp(const void *a, const void *b)
{
    return ts_cmp(&((const found_t *)a)->ctime, &((const found_t *)b)->ctime);
}

void imagescan_each(const imagescan_t *s, void (*fn)(const char *path, void *ctx), void *ctx)
{
    if (!s)
        return;
    qsort(s->found, s->nfound, sizeof *s->found, found_cmp);
    for (size_t i = 0; i < s->nfound; i++)
        fn(s->found[i].path, ctx);
}

size_t imagescan_entries(const imagescan_t *s)
{
    return s ? s->entries : 0;
}
