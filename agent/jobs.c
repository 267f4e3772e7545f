/* jobs.c -- runs that go on as jobs, their files and their ends (jobs.h). */
#include "agent/jobs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "talk/texts.h"

typedef struct {
    int no;
    char item[JOBS_ITEM_MAX + 1];
    size_t len;
} pending_t;

static pending_t pending[JOBS_PENDING];
static size_t npending;
static char attach_buf[JOBS_PENDING * (JOBS_ITEM_MAX + 1)];
static unsigned spool_seq;

/* Write s whole to path (atomically: a temporary file, then rename). */
static void put_file(const char *dir, const char *name, const char *s)
{
    char tmp[PATH_MAX], path[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return;
    size_t n = strlen(s), off = 0;
    while (off < n) {
        ssize_t w = write(fd, s + off, n - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(fd);
    rename(tmp, path);
}

/* mkdir -p of JOBS_DIR. */
static void make_dirs(void)
{
    mkdir("/run", 0755);
    mkdir("/run/talkback", 0755);
    mkdir(JOBS_DIR, 0755);
}

void jobs_run_init(jobs_run_t *r, int64_t cap, const char *cmd, int64_t now_ms)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    r->cap = cap > 0 ? cap : 0;
    if (!r->cap)
        return;
    r->cmd = strdup(cmd ? cmd : "");
    r->start_s = (int64_t)time(NULL);
    r->start_ms = now_ms;
}

void jobs_run_out(jobs_run_t *r, const char *p, size_t n)
{
    if (!r->cap || r->cut || n == 0)
        return;
    if (r->fd < 0) {
        make_dirs();
        snprintf(r->spool, sizeof r->spool, JOBS_DIR "/.spool-%ld-%u", (long)getpid(), ++spool_seq);
        r->fd = open(r->spool, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (r->fd < 0) {
            r->cut = true; /* nowhere to keep it: the job's file says so */
            return;
        }
    }
    if (r->bytes + (int64_t)n > r->cap) {
        n = (size_t)(r->cap - r->bytes);
        r->cut = true;
    }
    while (n > 0) {
        ssize_t w = write(r->fd, p, n);
        if (w <= 0)
            break;
        r->bytes += w;
        p += w;
        n -= (size_t)w;
    }
    if (r->cut && r->no) {
        static const char note[] = TX_AG_LOG_CAP;
        ssize_t w = write(r->fd, note, sizeof note - 1);
        (void)w;
    }
}

/* The next free job number: one past the largest there is. */
static int next_number(void)
{
    int max = 0;
    DIR *d = opendir(JOBS_DIR);
    if (!d)
        return 1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long v = strtol(e->d_name, &end, 10);
        if (*end == '\0' && v > max && v < 1000000)
            max = (int)v;
    }
    closedir(d);
    return max + 1;
}

int jobs_detach(jobs_run_t *r, int64_t timeout_ms, char *path, size_t cap)
{
    if (!r->cap || r->no)
        return -1;
    make_dirs();
    char dir[PATH_MAX];
    int no = next_number();
    for (int tries = 0; tries < 100; tries++, no++) {
        snprintf(dir, sizeof dir, JOBS_DIR "/%d", no);
        if (mkdir(dir, 0755) == 0)
            break;
        if (errno != EEXIST)
            return -1;
    }
    snprintf(path, cap, "%s/out", dir);
    if (r->fd >= 0) {
        if (rename(r->spool, path) != 0) {
            close(r->fd);
            r->fd = -1;
        }
    }
    if (r->fd < 0)
        r->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    r->spool[0] = '\0';
    r->no = no;
    char buf[64];
    put_file(dir, "cmd", r->cmd ? r->cmd : "");
    snprintf(buf, sizeof buf, "%lld\n", (long long)r->start_s);
    put_file(dir, "start", buf);
    snprintf(buf, sizeof buf, "%lld\n", (long long)(timeout_ms / 1000));
    put_file(dir, "timeout", buf);
    snprintf(buf, sizeof buf, "%lld\n", (long long)r->bytes);
    put_file(dir, "shown", buf);
    return no;
}

/* Queue the end of job r to be told (the oldest goes when full). */
static void queue_end(const jobs_run_t *r, int status, int sig, int64_t elapsed)
{
    if (npending == JOBS_PENDING) {
        memmove(pending, pending + 1, (JOBS_PENDING - 1) * sizeof *pending);
        npending--;
    }
    pending_t *p = &pending[npending++];
    p->no = r->no;
    int n = snprintf(p->item, sizeof p->item, "%d%c%d%c%d%c%d%c%lld%c%.*s", r->no, JOBS_SEP, status,
                     JOBS_SEP, sig, JOBS_SEP, r->timed_out ? 1 : 0, JOBS_SEP, (long long)elapsed,
                     JOBS_SEP, JOBS_CMD_MAX, r->cmd ? r->cmd : "");
    p->len = n < 0 ? 0 : (size_t)n < sizeof p->item ? (size_t)n : sizeof p->item - 1;
    /* An item is one NUL-terminated string: a NUL in the command ends it. */
    p->len = strnlen(p->item, p->len);
}

void jobs_run_end(jobs_run_t *r, int st, int64_t now_ms)
{
    if (!r->cap)
        return;
    if (!r->no) {
        if (r->spool[0])
            unlink(r->spool);
        r->spool[0] = '\0';
        return;
    }
    int sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    int status = sig ? 128 + sig : WEXITSTATUS(st);
    int64_t elapsed = now_ms - r->start_ms;
    char dir[64], buf[128];
    snprintf(dir, sizeof dir, JOBS_DIR "/%d", r->no);
    snprintf(buf, sizeof buf, "%d %d %d %lld %lld\n", status, sig, r->timed_out ? 1 : 0,
             (long long)elapsed, (long long)time(NULL));
    put_file(dir, "end", buf);
    queue_end(r, status, sig, elapsed);
}

void jobs_run_free(jobs_run_t *r)
{
    if (r->fd >= 0)
        close(r->fd);
    if (r->spool[0])
        unlink(r->spool);
    free(r->cmd);
    memset(r, 0, sizeof *r);
    r->fd = -1;
}

/* Whether `talkback job N` told job n's end already. */
static bool told(int n)
{
    char path[64];
    snprintf(path, sizeof path, JOBS_DIR "/%d/told", n);
    return access(path, F_OK) == 0;
}

void jobs_attach(frame_msg_t *m)
{
    if (!npending)
        return;
    size_t o = 0;
    for (size_t i = 0; i < npending; i++) {
        if (told(pending[i].no))
            continue;
        memcpy(attach_buf + o, pending[i].item, pending[i].len);
        o += pending[i].len;
        attach_buf[o++] = '\0';
        char dir[64];
        snprintf(dir, sizeof dir, JOBS_DIR "/%d", pending[i].no);
        put_file(dir, "told", "");
    }
    npending = 0;
    if (o)
        frame_set_str(m, FS_JOBS, attach_buf, o);
}

void jobs_boot(void)
{
    npending = 0;
    DIR *d = opendir(JOBS_DIR);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char *end, path[PATH_MAX];
            long v = strtol(e->d_name, &end, 10);
            if (e->d_name[0] == '.' && strncmp(e->d_name, ".spool-", 7) == 0) {
                snprintf(path, sizeof path, JOBS_DIR "/%s", e->d_name);
                unlink(path);
                continue;
            }
            if (*end || v <= 0)
                continue;
            snprintf(path, sizeof path, JOBS_DIR "/%ld/end", v);
            if (access(path, F_OK) == 0)
                continue;
            snprintf(path, sizeof path, JOBS_DIR "/%ld", v);
            put_file(path, "end", "lost\n");
        }
        closedir(d);
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    struct stat st;
    if (n > 0 && lstat(JOBS_CLI_LINK, &st) != 0) {
        self[n] = '\0';
        mkdir("/usr/local/bin", 0755);
        if (symlink(self, JOBS_CLI_LINK) != 0 && errno != EEXIST)
            return;
    }
}
