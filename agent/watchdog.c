/* watchdog.c -- the sandbox's share of the kernel's inotify (see watchdog.h).
 *
 * One check: every process of the sandbox but the agent itself (its worker
 * and its supervisor; Docker's init holds none) is looked at in /proc: each
 * descriptor of /proc/PID/fd that reads "anon_inode:inotify" is an
 * instance, and its /proc/PID/fdinfo/N has one "inotify wd:" line per
 * watch.  Descriptors are not told apart when two processes share one
 * instance (fork without close-on-exec): such an instance counts once per
 * holder, so the count can only be too high, never evaded by splitting.
 *
 * Bounds of one check: at most WATCHDOG_FDS descriptors are read (a
 * sandbox with more carries on at the next check from the process it
 * stopped at), at most WATCHDOG_HOLDERS holders are remembered (the
 * biggest), and an fdinfo is read only up to the line past the cap.
 *
 * Past a cap, the biggest holder is SIGKILLed, then the next, until the
 * rest is under both caps.  What is killed is reported once, in the next
 * EXIT of a command whose result the model reads (its RUN says so; a hint
 * probe's does not): the biggest one's pid, name and counts, and how many
 * were killed.
 */
#include "agent/watchdog.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Time between two checks while a command runs, and while none does. */
#define WATCHDOG_BUSY_MS 500
#define WATCHDOG_IDLE_MS 2000
/* Descriptors read in one check, and holders remembered. */
#define WATCHDOG_FDS     32768
#define WATCHDOG_HOLDERS 64
#define WATCHDOG_COMM    16
/* Jobs remembered as wanting the report. */
#define WATCHDOG_WANT    64
/* What /proc/PID/fd/N reads for an inotify instance. */
#define INOTIFY_LINK     "anon_inode:inotify"

typedef struct {
    long pid;
    int64_t watches, instances;
} holder_t;

static struct {
    int64_t cap_watches, cap_instances; /* 0: none */
    int64_t next_ms;                    /* when the next check is due */
    long resume_pid;                    /* a check cut short goes on after it */
    /* the report for the next EXIT */
    int64_t killed;
    long pid;
    int64_t watches, instances;
    char comm[WATCHDOG_COMM];
    uint64_t want[WATCHDOG_WANT]; /* jobs whose EXIT may carry it */
    size_t nwant;
} wd;

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool armed(void)
{
    return wd.cap_watches > 0 || wd.cap_instances > 0;
}

void watchdog_configure(const frame_msg_t *hello)
{
    wd.cap_watches = frame_num(hello, FN_INOTIFY_WATCHES, 0);
    wd.cap_instances = frame_num(hello, FN_INOTIFY_INSTANCES, 0);
    if (wd.cap_watches < 0)
        wd.cap_watches = 0;
    if (wd.cap_instances < 0)
        wd.cap_instances = 0;
    wd.next_ms = mono_ms(); /* first check at once */
}

size_t watchdog_own_watches(size_t max)
{
    return wd.cap_watches > 0 && (uint64_t)wd.cap_watches < max ? (size_t)wd.cap_watches : max;
}

int watchdog_poll_timeout(int timeout, bool busy)
{
    if (!armed())
        return timeout;
    int64_t now = mono_ms();
    int64_t limit = now + (busy ? WATCHDOG_BUSY_MS : WATCHDOG_IDLE_MS);
    if (wd.next_ms > limit)
        wd.next_ms = limit; /* a command started: check sooner */
    int64_t left = wd.next_ms > now ? wd.next_ms - now : 0;
    return timeout < 0 || left < timeout ? (int)left : timeout;
}

size_t watchdog_count_lines(watchdog_lines_t *st, const char *p, size_t n)
{
    static const char want[] = "inotify ";
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == '\n') {
            st->match = 0;
            continue;
        }
        if (st->match < 0)
            continue;
        if (c == want[st->match]) {
            if (++st->match == (int)sizeof want - 1) {
                st->count++;
                st->match = -1; /* the rest of this line */
            }
        } else {
            st->match = -1;
        }
    }
    return st->count;
}

/* Watches of the instance /proc/PID/fdinfo/FD, counted up to past limit. */
static int64_t fdinfo_watches(long pid, const char *fd, int64_t limit)
{
    char path[320], buf[16384];
    snprintf(path, sizeof path, "/proc/%ld/fdinfo/%s", pid, fd);
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return 0;
    watchdog_lines_t st = { 0 };
    ssize_t n;
    while ((n = read(f, buf, sizeof buf)) > 0)
        if ((int64_t)watchdog_count_lines(&st, buf, (size_t)n) > limit)
            break;
    close(f);
    return (int64_t)st.count;
}

/* The inotify instances of process pid and their watches; *budget is the
 * descriptors this check may still read (false when it ran out). */
static bool count_process(long pid, holder_t *h, int64_t *budget)
{
    char path[48];
    snprintf(path, sizeof path, "/proc/%ld/fd", pid);
    DIR *d = opendir(path);
    if (!d)
        return true; /* gone, or not ours to read */
    int64_t limit = wd.cap_watches > 0 ? wd.cap_watches : INT64_MAX - 1;
    struct dirent *e;
    bool more = true;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (--*budget < 0) {
            more = false;
            break;
        }
        char link[32];
        ssize_t n = readlinkat(dirfd(d), e->d_name, link, sizeof link - 1);
        if (n != (ssize_t)sizeof INOTIFY_LINK - 1 || memcmp(link, INOTIFY_LINK, (size_t)n) != 0)
            continue;
        h->instances++;
        h->watches += fdinfo_watches(pid, e->d_name, limit - h->watches);
    }
    closedir(d);
    return more;
}

/* Keep the WATCHDOG_HOLDERS biggest holders, biggest first. */
static void keep_holder(holder_t *top, size_t *n, const holder_t *h)
{
    size_t at = *n;
    while (at > 0 && (top[at - 1].watches < h->watches ||
                      (top[at - 1].watches == h->watches && top[at - 1].instances < h->instances)))
        at--;
    if (at >= WATCHDOG_HOLDERS)
        return;
    size_t last = *n < WATCHDOG_HOLDERS ? *n : WATCHDOG_HOLDERS - 1;
    memmove(&top[at + 1], &top[at], (last - at) * sizeof *top);
    top[at] = *h;
    if (*n < WATCHDOG_HOLDERS)
        (*n)++;
}

/* SIGKILL pid and remember it for the report. */
static void kill_holder(const holder_t *h)
{
    char path[48], comm[WATCHDOG_COMM] = "";
    snprintf(path, sizeof path, "/proc/%ld/comm", h->pid);
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f >= 0) {
        ssize_t n = read(f, comm, sizeof comm - 1);
        comm[n > 0 ? n : 0] = '\0';
        close(f);
        comm[strcspn(comm, "\n")] = '\0';
    }
    if (kill((pid_t)h->pid, SIGKILL) != 0)
        return;
    wd.killed++;
    if (h->watches >= wd.watches) {
        wd.pid = h->pid;
        wd.watches = h->watches;
        wd.instances = h->instances;
        memcpy(wd.comm, comm, sizeof wd.comm);
    }
}

/* Whether the totals are past a cap. */
static bool over(int64_t watches, int64_t instances)
{
    return (wd.cap_watches > 0 && watches > wd.cap_watches) ||
           (wd.cap_instances > 0 && instances > wd.cap_instances);
}

/* One check of every process of the sandbox (see the top of the file). */
static void check(void)
{
    DIR *proc = opendir("/proc");
    if (!proc)
        return;
    long self = (long)getpid(), parent = (long)getppid();
    holder_t top[WATCHDOG_HOLDERS];
    size_t ntop = 0;
    int64_t budget = WATCHDOG_FDS, watches = 0, instances = 0;
    long resume = wd.resume_pid;
    wd.resume_pid = 0;
    struct dirent *e;
    while ((e = readdir(proc)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 1 || pid == self || pid == parent || pid <= resume)
            continue;
        holder_t h = { .pid = pid };
        bool more = count_process(pid, &h, &budget);
        if (h.instances > 0) {
            watches += h.watches;
            instances += h.instances;
            keep_holder(top, &ntop, &h);
        }
        if (!more) {
            wd.resume_pid = pid - 1; /* this one again, first */
            break;
        }
    }
    closedir(proc);
    for (size_t i = 0; i < ntop && over(watches, instances); i++) {
        kill_holder(&top[i]);
        watches -= top[i].watches;
        instances -= top[i].instances;
    }
}

void watchdog_tick(bool busy)
{
    if (!armed())
        return;
    int64_t now = mono_ms();
    if (now < wd.next_ms)
        return;
    check();
    wd.next_ms = mono_ms() + (busy ? WATCHDOG_BUSY_MS : WATCHDOG_IDLE_MS);
}

void watchdog_run(const frame_msg_t *run)
{
    if (frame_num(run, FN_WD_REPORT, 0) != 1)
        return;
    if (wd.nwant == WATCHDOG_WANT) /* the oldest never ended (FAIL) */
        memmove(&wd.want[0], &wd.want[1], --wd.nwant * sizeof *wd.want);
    wd.want[wd.nwant++] = run->id;
}

/* Whether job id's EXIT may carry the report; it is forgotten either way. */
static bool wanted(uint64_t id)
{
    for (size_t i = 0; i < wd.nwant; i++)
        if (wd.want[i] == id) {
            memmove(&wd.want[i], &wd.want[i + 1], (--wd.nwant - i) * sizeof *wd.want);
            return true;
        }
    return false;
}

void watchdog_attach(frame_msg_t *m)
{
    if (!wanted(m->id) || wd.killed == 0)
        return;
    frame_set_num(m, FN_WD_KILLED, wd.killed);
    frame_set_num(m, FN_WD_PID, wd.pid);
    frame_set_num(m, FN_WD_WATCHES, wd.watches);
    frame_set_num(m, FN_WD_INSTANCES, wd.instances);
    frame_set_str(m, FS_WD_COMM, wd.comm, strlen(wd.comm));
    /* The string is a view: wd.comm keeps its bytes until the next report,
     * and the EXIT is encoded before any check runs again. */
    wd.killed = 0;
    wd.pid = 0;
    wd.watches = wd.instances = 0;
}
