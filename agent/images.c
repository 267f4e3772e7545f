/* images.c -- the image files a command wrote under /work (see images.h).
 *
 * Why inotify and not a scan: a scan of what changed since the command
 * started walks all of /work on every call, tens of milliseconds for a
 * folder of 50 000 files even when nothing was drawn.  Watches cost one
 * walk of /work's folders, at the first command, and then only the events
 * of files really written.  Each folder gets a watch for files written to
 * and then closed, or moved in, and for folders made or moved in (those get
 * watches of their own at once, and what is already in them is looked at,
 * since a file can be written there before the watch exists).
 *
 * Bounds: at most IMAGES_MAX_WATCHES folders (fewer when the sandbox's
 * inotify cap is lower, agent/watchdog.h) and IMAGES_MAX_DEPTH levels are
 * watched (images deeper are not seen), at most IMAGES_MAX_NOTES images
 * are remembered while commands run, and an EXIT names at most
 * IMAGES_MAX_ITEMS of them in IMAGES_LIST_MAX bytes.
 *
 * Where a folder cannot be watched -- the watch cap is reached, or the
 * kernel refuses a watch or the instance itself because another sandbox
 * (or the host) took the host's inotify -- it is remembered (at most
 * IMAGES_MAX_SKIPPED folders; past that, all of /work), and a command's
 * end walks those folders for files changed since it started
 * (agent/imagescan.h, at most IMAGES_SCAN_MAX entries): the command's
 * pictures still come back, at the cost of that walk.  A refusal by the
 * kernel is tried again at the next command (a new instance, or a new walk
 * of /work's folders).
 *
 * A file opened for writing and closed without a write (touch) did not
 * change: a close counts only after a write to that file was seen
 * (IN_MODIFY), or when more files are being written at once than
 * IMAGES_MAX_DIRTY (then every close counts).
 *
 * Files are read with O_NOFOLLOW and only when regular: a link or a FIFO
 * named like a picture is never followed or opened for long.
 */
#include "agent/images.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/imagescan.h"
#include "agent/watchdog.h"
#include "common/imagehdr.h"

#define IMAGES_MAX_WATCHES 8192
#define IMAGES_MAX_DEPTH   24
#define IMAGES_MAX_NOTES   256
#define IMAGES_MAX_ITEMS   64
/* Bytes of one EXIT's list: far below what the manager reads in one frame
 * (FRAME_AGENT_MAX), whatever the paths' length. */
#define IMAGES_LIST_MAX    32768
#define IMAGES_MAX_DIRTY   256
/* Folders remembered as not watched, entries the fallback walk looks at,
 * and commands running at once whose start is kept for it. */
#define IMAGES_MAX_SKIPPED 64
#define IMAGES_SCAN_MAX    50000
#define IMAGES_MAX_MARKS   64
/* What is read of each image to find its pixel size (a JPEG's size may
 * follow metadata). */
#define IMAGES_HEAD        65536

#define IMAGES_DIR_MASK                                                                            \
    (IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ONLYDIR | IN_DONT_FOLLOW |          \
     IN_EXCL_UNLINK)

typedef struct {
    uint64_t seq;
    char *path;
} note_t;

static int ifd = -1;
static bool lost_kernel;                  /* the kernel refused a watch: walk again */
static char *skipped[IMAGES_MAX_SKIPPED]; /* folders not watched */
static size_t nskipped;
static bool skipped_all;  /* more than that, or no instance: all of /work */
static uint64_t lost_seq; /* when a folder last went unwatched */
typedef struct {
    uint64_t mark;
    struct timespec since; /* the command's start, as file times count */
} mark_t;
static mark_t marks[IMAGES_MAX_MARKS];
static size_t nmarks;
static int root_wd = -1;
static char **wd_path; /* folder of each watch, by wd */
static size_t wd_cap, watches;
static note_t notes[IMAGES_MAX_NOTES];
static size_t nnotes;
static uint64_t next_seq = 1;
static char *list_buf;                /* the last EXIT's FS_IMAGES */
static char *dirty[IMAGES_MAX_DIRTY]; /* written to, not closed yet */
static size_t ndirty;
static bool dirty_full; /* one did not fit: every close counts */

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    if (a + b + 2 > PATH_MAX)
        return NULL;
    char *p = malloc(a + b + 2);
    if (p) {
        memcpy(p, dir, a);
        p[a] = '/';
        memcpy(p + a + 1, name, b + 1);
    }
    return p;
}

/* Remember path as written now, after any earlier note of it. */
static void note(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return;
    for (size_t i = 0; i < nnotes; i++)
        if (strcmp(notes[i].path, path) == 0) {
            free(notes[i].path);
            memmove(&notes[i], &notes[i + 1], (nnotes - i - 1) * sizeof *notes);
            nnotes--;
            break;
        }
    if (nnotes == IMAGES_MAX_NOTES) { /* the oldest goes */
        free(notes[0].path);
        memmove(&notes[0], &notes[1], (nnotes - 1) * sizeof *notes);
        nnotes--;
    }
    notes[nnotes].seq = next_seq++;
    notes[nnotes].path = copy;
    nnotes++;
}

/* Up to max bytes of the start of a regular file, or -1. */
static ssize_t read_head(const char *path, unsigned char *buf, size_t max, off_t *size)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        size_t got = 0;
        ssize_t r = 0;
        while (got < max && (r = read(fd, buf + got, max - got)) > 0)
            got += (size_t)r;
        n = r < 0 && got == 0 ? -1 : (ssize_t)got;
        if (size)
            *size = st.st_size;
    }
    close(fd);
    return n;
}

/* A file was written: note it when its first bytes are an image. */
static void look_at(const char *path)
{
    unsigned char head[IMAGEHDR_MAGIC_LEN];
    ssize_t n = read_head(path, head, sizeof head, NULL);
    imagehdr_t h;
    if (n > 0 && imagehdr_parse(head, (size_t)n, &h) != IMAGEHDR_NONE)
        note(path);
}

static int depth_of(const char *path)
{
    int d = 0;
    for (const char *p = path + strlen(IMAGES_ROOT); *p; p++)
        d += *p == '/';
    return d;
}

/* Watch folder path and the folders under it; with look, note the images
 * already in them (a folder just made or moved in). */
/* Folder path is not watched (nor what is under it): the fallback walks it
 * at the end of the commands running now. */
static void skip_folder(const char *path)
{
    lost_seq = next_seq++;
    if (skipped_all)
        return;
    for (size_t i = 0; i < nskipped; i++)
        if (strcmp(skipped[i], path) == 0)
            return;
    char *copy = nskipped < IMAGES_MAX_SKIPPED ? strdup(path) : NULL;
    if (copy)
        skipped[nskipped++] = copy;
    else
        skipped_all = true;
}

static void skipped_clear(void)
{
    for (size_t i = 0; i < nskipped; i++)
        free(skipped[i]);
    nskipped = 0;
    skipped_all = false;
}

static void watch_tree(const char *path, bool look)
{
    if (depth_of(path) > IMAGES_MAX_DEPTH)
        return;
    if (ifd < 0 || watches >= watchdog_own_watches(IMAGES_MAX_WATCHES)) {
        skip_folder(path);
        return;
    }
    int wd = inotify_add_watch(ifd, path, IMAGES_DIR_MASK);
    if (wd < 0) {
        if (errno == ENOSPC || errno == ENOMEM) { /* the host's watches are used up */
            lost_kernel = true;
            skip_folder(path);
        }
        return;
    }
    if ((size_t)wd >= wd_cap) {
        size_t cap = wd_cap ? wd_cap : 64;
        while (cap <= (size_t)wd)
            cap *= 2;
        char **n = realloc(wd_path, cap * sizeof *n);
        if (!n) {
            inotify_rm_watch(ifd, wd);
            return;
        }
        memset(n + wd_cap, 0, (cap - wd_cap) * sizeof *n);
        wd_path = n;
        wd_cap = cap;
    }
    if (!wd_path[wd])
        watches++;
    free(wd_path[wd]);
    wd_path[wd] = strdup(path);
    if (strcmp(path, IMAGES_ROOT) == 0)
        root_wd = wd;
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN && !(look && e->d_type == DT_REG))
            continue;
        char *sub = join(path, e->d_name);
        struct stat st;
        if (sub && lstat(sub, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                watch_tree(sub, look);
            else if (look && S_ISREG(st.st_mode))
                look_at(sub);
        }
        free(sub);
    }
    closedir(d);
}

/* A file was written to (add) or closed after writing (take): whether
 * that close follows a write. */
static bool dirty_mark(const char *path, bool add)
{
    for (size_t i = 0; i < ndirty; i++)
        if (strcmp(dirty[i], path) == 0) {
            if (!add) {
                free(dirty[i]);
                dirty[i] = dirty[--ndirty];
                if (ndirty == 0)
                    dirty_full = false;
            }
            return true;
        }
    if (!add)
        return dirty_full;
    char *copy = ndirty < IMAGES_MAX_DIRTY ? strdup(path) : NULL;
    if (copy)
        dirty[ndirty++] = copy;
    else
        dirty_full = true;
    return true;
}

/* One event: a folder to watch, a file to look at, a watch gone. */
static void take_event(const struct inotify_event *ev)
{
    if (ev->wd < 0 || (size_t)ev->wd >= wd_cap || !wd_path[ev->wd])
        return;
    if (ev->mask & IN_IGNORED) {
        free(wd_path[ev->wd]);
        wd_path[ev->wd] = NULL;
        watches--;
        if (ev->wd == root_wd)
            root_wd = -1;
        return;
    }
    if (ev->len == 0 || !ev->name[0])
        return;
    char *path = join(wd_path[ev->wd], ev->name);
    if (!path)
        return;
    if (ev->mask & IN_ISDIR) {
        if (ev->mask & (IN_CREATE | IN_MOVED_TO))
            watch_tree(path, true);
    } else if (ev->mask & IN_MODIFY) {
        dirty_mark(path, true);
    } else if ((ev->mask & IN_MOVED_TO) ||
               ((ev->mask & IN_CLOSE_WRITE) && dirty_mark(path, false))) {
        look_at(path);
    }
    free(path);
}

void images_drain(void)
{
    if (ifd < 0)
        return;
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t n = read(ifd, buf, sizeof buf);
        if (n <= 0)
            return; /* EAGAIN: all taken in */
        for (ssize_t off = 0; off + (ssize_t)sizeof(struct inotify_event) <= n;) {
            const struct inotify_event *ev = (const void *)(buf + off);
            take_event(ev);
            off += (ssize_t)sizeof *ev + ev->len;
        }
    }
}

int images_fd(void)
{
    return ifd;
}

/* Get an inotify instance, or try again to watch what the kernel refused
 * before (another sandbox may have freed its watches since). */
static void images_retry(void)
{
    if (ifd < 0) {
        ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (ifd < 0) { /* no instance: every folder is walked */
            skipped_all = true;
            lost_seq = next_seq++;
            return;
        }
        skipped_clear();
        root_wd = -1;
    } else if (lost_kernel) {
        lost_kernel = false;
        skipped_clear();
        watch_tree(IMAGES_ROOT, false); /* folders watched already keep their watch */
    }
}

uint64_t images_mark(void)
{
    images_retry();
    images_drain();
    if (ifd >= 0 && root_wd < 0)
        watch_tree(IMAGES_ROOT, false); /* first command, or /work was remade */
    uint64_t mark = next_seq++;
    if (nmarks == IMAGES_MAX_MARKS) /* the oldest goes: its command gets no walk */
        memmove(&marks[0], &marks[1], --nmarks * sizeof *marks);
    marks[nmarks].mark = mark;
    /* The clock file times are taken from. */
    clock_gettime(CLOCK_REALTIME_COARSE, &marks[nmarks].since);
    nmarks++;
    return mark;
}

static void note_found(const char *path, void *ctx)
{
    (void)ctx;
    look_at(path);
}

/* The command that started at mark ends: when a folder was not watched
 * while it ran, walk the folders not watched (all of /work when they are
 * too many, or no longer known) for files changed since its start. */
static void images_fallback(uint64_t mark)
{
    size_t i = 0;
    while (i < nmarks && marks[i].mark != mark)
        i++;
    if (i == nmarks)
        return;
    struct timespec since = marks[i].since;
    memmove(&marks[i], &marks[i + 1], (--nmarks - i) * sizeof *marks);
    if (!skipped_all && nskipped == 0 && lost_seq < mark)
        return; /* every folder was watched */
    imagescan_t *scan = imagescan_new(IMAGES_SCAN_MAX, IMAGES_MAX_NOTES);
    if (!scan)
        return;
    if (skipped_all || nskipped == 0)
        imagescan_walk(scan, IMAGES_ROOT, IMAGES_MAX_DEPTH, &since);
    for (size_t k = 0; !skipped_all && k < nskipped; k++)
        imagescan_walk(scan, skipped[k], IMAGES_MAX_DEPTH - depth_of(skipped[k]), &since);
    imagescan_each(scan, note_found, NULL);
    imagescan_free(&scan);
}

void images_attach(frame_msg_t *m, uint64_t mark)
{
    images_drain();
    images_fallback(mark);
    free(list_buf);
    list_buf = NULL;
    size_t len = 0, items = 0;
    unsigned char *head = NULL;
    for (size_t i = 0; i < nnotes && items < IMAGES_MAX_ITEMS; i++) {
        if (notes[i].seq < mark)
            continue;
        if (!head && !(head = malloc(IMAGES_HEAD)))
            break;
        off_t size = 0;
        imagehdr_t h;
        ssize_t n = read_head(notes[i].path, head, IMAGES_HEAD, &size);
        if (n <= 0 || imagehdr_parse(head, (size_t)n, &h) == IMAGEHDR_NONE)
            continue; /* gone, or no longer an image */
        char item[PATH_MAX + 64];
        int k = snprintf(item, sizeof item, "%lld %ux%u %s %s", (long long)size, h.width, h.height,
                         imagehdr_name(h.kind), notes[i].path);
        if (k < 0 || (size_t)k >= sizeof item || len + (size_t)k + 1 > IMAGES_LIST_MAX)
            continue;
        char *nb = realloc(list_buf, len + (size_t)k + 1);
        if (!nb)
            break;
        list_buf = nb;
        memcpy(list_buf + len, item, (size_t)k + 1);
        len += (size_t)k + 1;
        items++;
    }
    free(head);
    if (len)
        frame_set_str(m, FS_IMAGES, list_buf, len);
}

void images_idle(void)
{
    for (size_t i = 0; i < nnotes; i++)
        free(notes[i].path);
    nnotes = 0;
    nmarks = 0; /* commands that never ended (FAIL) */
}
