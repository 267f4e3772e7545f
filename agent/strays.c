/* strays.c -- what a command leaves when its shepherd is killed (see
 * strays.h).
 *
 * One scan reads every /proc/PID/stat once: pid, parent, start time.  A
 * stray is a child of init (parent 1) that started at or after the
 * command, is not the agent (its supervisor is init's child too, but
 * older than any command) and is not kept; and every process whose parent
 * is a stray.  Strays are stopped as they are found and scans repeat while
 * they find new ones (at most STRAYS_ROUNDS), so a fork bomb stops
 * growing; then all are killed, and a few more scans kill what was forked
 * in between.
 */
#include "agent/strays.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Scans of the freeze (each finds new strays or ends it), and the scans
 * after the kill. */
#define STRAYS_ROUNDS      64
#define STRAYS_KILL_ROUNDS 4
/* Processes remembered as left on purpose, and released shepherds not
 * reaped yet. */
#define STRAYS_KEPT        256
#define STRAYS_SHEPHERDS   64

typedef struct {
    long pid, ppid;
    uint64_t start;
} proc_t;

typedef struct {
    proc_t *v;
    size_t n, cap;
} procs_t;

static struct {
    long pid;
    uint64_t start;
} kept[STRAYS_KEPT];
static size_t nkept, kept_next;
static struct {
    int pid; /* 0: a free slot */
    uint64_t since;
    bool reaped;
} released[STRAYS_SHEPHERDS];

uint64_t strays_now(void)
{
    struct timespec ts;
    long hz = sysconf(_SC_CLK_TCK);
    clock_gettime(CLOCK_BOOTTIME, &ts);
    if (hz <= 0)
        hz = 100;
    return (uint64_t)ts.tv_sec * (uint64_t)hz + (uint64_t)ts.tv_nsec / (1000000000u / (uint64_t)hz);
}

/* Parent and start time of pid from /proc/PID/stat (the name between the
 * parentheses may hold anything: the fields start after the last ')'). */
static bool stat_of(long pid, long *ppid, uint64_t *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    unsigned long long st;
    char state;
    /* state ppid pgrp session tty tpgid flags minflt cminflt majflt
     * cmajflt utime stime cutime cstime priority nice threads itreal
     * starttime */
    if (!p || sscanf(p + 1,
                     " %c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
                     "%*d %llu",
                     &state, ppid, &st) != 3)
        return false;
    *start = st;
    return true;
}

/* Every process but this one and its parent, into ps (emptied first). */
static void scan(procs_t *ps)
{
    ps->n = 0;
    pid_t self = getpid(), parent = getppid();
    DIR *d = opendir("/proc");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        proc_t p = { .pid = pid };
        if (*end || pid <= 1 || pid == self || pid == parent || !stat_of(pid, &p.ppid, &p.start))
            continue;
        if (ps->n == ps->cap) {
            size_t cap = ps->cap ? ps->cap * 2 : 256;
            proc_t *v = realloc(ps->v, cap * sizeof *v);
            if (!v)
                break;
            ps->v = v;
            ps->cap = cap;
        }
        ps->v[ps->n++] = p;
    }
    closedir(d);
}

static bool is_kept(const proc_t *p)
{
    for (size_t i = 0; i < nkept; i++)
        if (kept[i].pid == p->pid && kept[i].start == p->start)
            return true;
    return false;
}

static bool has(const procs_t *set, long pid)
{
    for (size_t i = 0; i < set->n; i++)
        if (set->v[i].pid == pid)
            return true;
    return false;
}

/* Add to strays what of ps is one and not in it yet, sending each sig.
 * Returns how many joined. */
static size_t gather(const procs_t *ps, procs_t *strays, uint64_t since, int sig)
{
    size_t joined = 0;
    for (bool grew = true; grew;) {
        grew = false;
        for (size_t i = 0; i < ps->n; i++) {
            const proc_t *p = &ps->v[i];
            bool root = p->ppid == 1 && p->start >= since && !is_kept(p);
            if (has(strays, p->pid) || (!root && !has(strays, p->ppid)))
                continue;
            if (strays->n == strays->cap) {
                size_t cap = strays->cap ? strays->cap * 2 : 64;
                proc_t *v = realloc(strays->v, cap * sizeof *v);
                if (!v) {
                    kill((pid_t)p->pid, SIGKILL); /* no room to remember it */
                    continue;
                }
                strays->v = v;
                strays->cap = cap;
            }
            strays->v[strays->n++] = *p;
            kill((pid_t)p->pid, sig);
            joined++;
            grew = true;
        }
    }
    return joined;
}

/* Freeze and kill the strays of a command that started at since. */
static int kill_strays(uint64_t since)
{
    procs_t ps = { 0 }, strays = { 0 };
    for (int round = 0; round < STRAYS_ROUNDS; round++) {
        scan(&ps);
        if (gather(&ps, &strays, since, SIGSTOP) == 0)
            break;
    }
    for (size_t i = 0; i < strays.n; i++)
        kill((pid_t)strays.v[i].pid, SIGKILL);
    for (int round = 0; round < STRAYS_KILL_ROUNDS; round++) {
        scan(&ps);
        if (gather(&ps, &strays, since, SIGKILL) == 0)
            break;
    }
    int n = (int)strays.n;
    free(ps.v);
    free(strays.v);
    return n;
}

/* Remember init's children that started since as kept. */
static void keep_left(uint64_t since)
{
    procs_t ps = { 0 };
    scan(&ps);
    for (size_t i = 0; i < ps.n; i++) {
        const proc_t *p = &ps.v[i];
        if (p->ppid != 1 || p->start < since || is_kept(p))
            continue;
        kept[kept_next].pid = p->pid; /* the oldest entry goes first */
        kept[kept_next].start = p->start;
        kept_next = (kept_next + 1) % STRAYS_KEPT;
        if (nkept < STRAYS_KEPT)
            nkept++;
    }
    free(ps.v);
}

int strays_kill(uint64_t since)
{
    return kill_strays(since);
}

void strays_released(int pid, uint64_t since)
{
    size_t i = 0;
    while (i < STRAYS_SHEPHERDS && released[i].pid)
        i++;
    if (i == STRAYS_SHEPHERDS) /* too many at once: the oldest is let go */
        i = 0;
    released[i].pid = pid;
    released[i].since = since;
    released[i].reaped = false;
}

void strays_reaped(int pid)
{
    for (size_t i = 0; i < STRAYS_SHEPHERDS; i++)
        if (released[i].pid == pid)
            released[i].reaped = true;
}

void strays_settle(bool others)
{
    for (size_t i = 0; i < STRAYS_SHEPHERDS; i++) {
        if (!released[i].pid || !released[i].reaped)
            continue;
        if (others)
            keep_left(released[i].since);
        released[i].pid = 0;
    }
}
