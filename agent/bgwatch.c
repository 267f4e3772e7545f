/* bgwatch.c -- the shepherd's look at what its command left running (see
 * bgwatch.h for the why).
 *
 * One look reads the process table once (/proc/PID/stat of every
 * process: a sandbox holds tens of them, at most its pids limit), and for
 * the programs still running their command lines, the files their stdout
 * and stderr point at, and -- when anything listens at all -- the sockets
 * of their trees, matched against the listening ones of /proc/net/tcp and
 * tcp6.  Everything read here is bounded and cleaned of control bytes:
 * the text goes to the manager, which checks it again.
 */
#include "agent/bgwatch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* One process of the table. */
typedef struct {
    pid_t pid, ppid;
    unsigned long cpu; /* utime + stime, ticks */
    char state;        /* R runnable, D in the disk, S asleep, ... */
    char comm[20];
} pent_t;

static int by_pid(const void *a, const void *b)
{
    pid_t x = ((const pent_t *)a)->pid, y = ((const pent_t *)b)->pid;
    return (x > y) - (x < y);
}

/* A listening socket: its inode and address. */
typedef struct {
    unsigned long inode;
    char addr[64];
} listen_t;

/* Replace what must not travel: control bytes (but newlines and tabs
 * where keep_nl), DEL and the field separator. */
static void clean(char *s, bool keep_nl)
{
    for (unsigned char *p = (unsigned char *)s; *p; p++)
        if ((*p < 0x20 && !(keep_nl && (*p == '\n' || *p == '\t'))) || *p == 0x7f)
            *p = *p == BG_SEP || !keep_nl ? ' ' : '?';
}

/* A command line (words joined by spaces, a leading "bash -c " left
 * out: the rest is the model's own command), cut and cleaned, into out. */
static void label_of(char *const *argv, char *out, size_t cap)
{
    static const char *const shells[] = { "bash", "sh", "/bin/bash", "/bin/sh" };
    size_t o = 0, i = 0;
    out[0] = '\0';
    for (size_t k = 0; argv[0] && argv[1] && k < sizeof shells / sizeof shells[0]; k++)
        if (!strcmp(argv[0], shells[k]) && !strcmp(argv[1], "-c"))
            i = 2;
    for (; argv[i] && o + 1 < cap; i++) {
        int n = snprintf(out + o, cap - o, "%s%s", o ? " " : "", argv[i]);
        o = n < 0 || (size_t)n >= cap - o ? cap - 1 : o + (size_t)n;
    }
    clean(out, false);
}

void bg_init(bg_set_t *s, pid_t self, char *const *argv)
{
    memset(s, 0, sizeof *s);
    s->self = self;
    if (argv)
        label_of(argv, s->cmd, sizeof s->cmd);
}

/* The whole process table, malloc'ed; its length in *n. */
static pent_t *ptable(size_t *n)
{
    size_t cap = 64;
    pent_t *t = malloc(cap * sizeof *t);
    *n = 0;
    DIR *d = opendir("/proc");
    if (!t || !d) {
        free(t);
        if (d)
            closedir(d);
        return NULL;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end, path[64], buf[512];
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 1)
            continue;
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t k = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (k <= 0)
            continue;
        buf[k] = '\0';
        char *open_p = strchr(buf, '('), *close_p = strrchr(buf, ')');
        long ppid;
        char st;
        unsigned long ut, stime;
        if (!open_p || !close_p || close_p < open_p ||
            sscanf(close_p + 1, " %c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &st, &ppid,
                   &ut, &stime) != 4)
            continue;
        if (*n == cap) {
            pent_t *nt = realloc(t, cap * 2 * sizeof *t);
            if (!nt)
                break;
            t = nt;
            cap *= 2;
        }
        pent_t *x = &t[(*n)++];
        x->pid = (pid_t)pid;
        x->ppid = (pid_t)ppid;
        x->cpu = ut + stime;
        x->state = st;
        snprintf(x->comm, sizeof x->comm, "%.*s", (int)(close_p - open_p - 1), open_p + 1);
    }
    closedir(d);
    qsort(t, *n, sizeof *t, by_pid);
    return t;
}

static bool is_shell(const char *comm)
{
    return !strcmp(comm, "bash") || !strcmp(comm, "sh") || !strcmp(comm, "dash");
}

/* The command line of pid as a label (label_of) into out.  False when it
 * has none (gone, or a zombie). */
static bool cmdline(pid_t pid, char *out, size_t cap)
{
    char path[64], buf[BG_LABEL_MAX + 64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t k = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (k <= 0)
        return false;
    buf[k] = '\0';
    char *argv[BG_LABEL_MAX / 2 + 2];
    size_t n = 0;
    for (char *p = buf; p < buf + k && n + 1 < sizeof argv / sizeof argv[0]; p += strlen(p) + 1)
        argv[n++] = p;
    argv[n] = NULL;
    label_of(argv, out, cap);
    return true;
}

/* The file pid's stdout (else stderr) is, into out ("" when neither is a
 * file: a pipe, a terminal, /dev/null). */
static void log_of(pid_t pid, char *out, size_t cap)
{
    for (int fd = 1; fd <= 2; fd++) {
        char path[64], target[BG_LOG_MAX];
        snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
        ssize_t k = readlink(path, target, sizeof target - 1);
        if (k <= 0)
            continue;
        target[k] = '\0';
        if (target[0] != '/' || !strncmp(target, "/dev/", 5) || !strncmp(target, "/proc/", 6))
            continue;
        snprintf(out, cap, "%s", target);
        clean(out, false);
        return;
    }
}

/* Name program p after the process that does its work: itself, or for a
 * fork of the command's own shell its child that is no shell. */
static void name_it(const bg_set_t *s, bg_proc_t *p, const pent_t *t, size_t n)
{
    pid_t who = p->pid;
    char own[BG_LABEL_MAX];
    bool fork_of_cmd = cmdline(p->pid, own, sizeof own) && !strcmp(own, s->cmd);
    /* Its child that is no shell, else any child (sh -c '...'). */
    for (size_t j = 0; j < n && fork_of_cmd; j++)
        if (t[j].ppid == p->pid && (who == p->pid || !is_shell(t[j].comm)))
            who = t[j].pid;
    char label[BG_LABEL_MAX];
    if (cmdline(who, label, sizeof label))
        memcpy(p->label, label, sizeof label);
    char log[BG_LOG_MAX] = "";
    log_of(who, log, sizeof log);
    if (!log[0] && who != p->pid)
        log_of(p->pid, log, sizeof log);
    if (log[0])
        memcpy(p->log, log, sizeof log);
}

/* "0100007F:1F90" (IPv4) or 32 hex digits and a port (IPv6), as
 * /proc/net/tcp{,6} write them, into "127.0.0.1:8080" or "[::]:8080". */
static void fmt_addr(const char *hex, bool v6, char *out, size_t cap)
{
    unsigned port = 0;
    const char *colon = strchr(hex, ':');
    if (!colon || sscanf(colon + 1, "%x", &port) != 1)
        port = 0;
    unsigned w[4] = { 0 };
    if (!v6) {
        sscanf(hex, "%8x", &w[0]);
        snprintf(out, cap, "%u.%u.%u.%u:%u", w[0] & 255, (w[0] >> 8) & 255, (w[0] >> 16) & 255,
                 w[0] >> 24, port);
        return;
    }
    sscanf(hex, "%8x%8x%8x%8x", &w[0], &w[1], &w[2], &w[3]);
    if (!w[0] && !w[1] && !w[2] && !w[3])
        snprintf(out, cap, "[::]:%u", port);
    else if (!w[0] && !w[1] && w[2] == 0xffff0000u)
        snprintf(out, cap, "%u.%u.%u.%u:%u", w[3] & 255, (w[3] >> 8) & 255, (w[3] >> 16) & 255,
                 w[3] >> 24, port);
    else if (!w[0] && !w[1] && !w[2] && w[3] == 0x01000000u)
        snprintf(out, cap, "[::1]:%u", port);
    else
        snprintf(out, cap, "[%08x%08x%08x%08x]:%u", w[0], w[1], w[2], w[3], port);
}

/* The listening TCP sockets of the sandbox, malloc'ed; count in *n. */
static listen_t *listeners(size_t *n)
{
    listen_t *l = NULL;
    size_t cap = 0;
    *n = 0;
    for (int v6 = 0; v6 <= 1; v6++) {
        FILE *f = fopen(v6 ? "/proc/net/tcp6" : "/proc/net/tcp", "re");
        char line[512];
        while (f && fgets(line, sizeof line, f)) {
            char local[64];
            unsigned st;
            unsigned long inode;
            if (sscanf(line, " %*s %63s %*s %x %*s %*s %*s %*s %*s %lu", local, &st, &inode) != 3 ||
                st != 0x0A || inode == 0)
                continue;
            if (*n == cap) {
                size_t nc = cap ? cap * 2 : 16;
                listen_t *nl = realloc(l, nc * sizeof *nl);
                if (!nl)
                    break;
                l = nl;
                cap = nc;
            }
            l[*n].inode = inode;
            fmt_addr(local, v6, l[*n].addr, sizeof l[*n].addr);
            (*n)++;
        }
        if (f)
            fclose(f);
    }
    return l;
}

/* The index of pid in t (sorted by pid), or -1. */
static long find(const pent_t *t, size_t n, pid_t pid)
{
    pent_t key = { .pid = pid };
    const pent_t *x = bsearch(&key, t, n, sizeof *t, by_pid);
    return x ? (long)(x - t) : -1;
}

/* own[i]: which program of s (an index of s->p) t[i] belongs to -- it or
 * an ancestor is that program -- or -1.  Each chain of parents is walked
 * once (what it found is kept for every process on it): a table of a
 * fork bomb costs n log n, not n squared. */
static void owners(const bg_set_t *s, const pent_t *t, size_t n, int *own)
{
    for (size_t i = 0; i < n; i++)
        own[i] = -2; /* not known yet */
    long chain[64];
    for (size_t i = 0; i < n; i++) {
        int found = -1;
        size_t len = 0;
        for (long j = (long)i; j >= 0 && len < 64; j = find(t, n, t[j].ppid)) {
            if (own[j] != -2) {
                found = own[j];
                break;
            }
            chain[len++] = j;
            for (size_t k = 0; k < s->n && found < 0; k++)
                if (!s->p[k].dead && s->p[k].pid == t[j].pid)
                    found = (int)k;
            if (found >= 0 || t[j].ppid <= 1 || t[j].ppid == s->self)
                break;
        }
        for (size_t c = 0; c < len; c++)
            own[chain[c]] = found;
    }
}

/* Append to ports what process x holds of the listening sockets l. */
static void ports_of(const pent_t *x, const listen_t *l, size_t nl, char *ports, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)x->pid);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char link[320], target[64];
        snprintf(link, sizeof link, "%s/%s", path, e->d_name);
        ssize_t k = readlink(link, target, sizeof target - 1);
        unsigned long inode;
        if (k <= 0)
            continue;
        target[k] = '\0';
        if (sscanf(target, "socket:[%lu]", &inode) != 1)
            continue;
        for (size_t i = 0; i < nl; i++) {
            if (l[i].inode != inode || strstr(ports, l[i].addr))
                continue;
            size_t used = strlen(ports);
            snprintf(ports + used, cap - used, "%s%s (%s, pid %d)", used ? "; " : "", l[i].addr,
                     x->comm, (int)x->pid);
        }
    }
    if (d)
        closedir(d);
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The ports the living programs' trees listen on; whether one that does
 * not listen is busy (used CPU lately: still starting, or computing). */
static void scan_ports(bg_set_t *s, const pent_t *t, size_t n)
{
    int64_t now = mono_ms();
    size_t nl;
    int *own = malloc((n ? n : 1) * sizeof *own);
    if (!own)
        return;
    owners(s, t, n, own);
    listen_t *l = listeners(&nl);
    unsigned long cpu[BG_PROCS_MAX] = { 0 };
    bool runnable[BG_PROCS_MAX] = { false }; /* waiting for a CPU counts as using one */
    size_t fds = 0;
    for (size_t k = 0; k < s->n; k++)
        s->p[k].ports[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (own[i] < 0)
            continue;
        bg_proc_t *p = &s->p[own[i]];
        cpu[own[i]] += t[i].cpu;
        runnable[own[i]] |= t[i].state == 'R' || t[i].state == 'D';
        if (nl && fds++ < BG_FD_SCAN_MAX)
            ports_of(&t[i], l, nl, p->ports, sizeof p->ports);
    }
    s->busy = false;
    for (size_t k = 0; k < s->n; k++) {
        bg_proc_t *p = &s->p[k];
        if (p->dead)
            continue;
        clean(p->ports, false);
        if (!p->grew || cpu[k] != p->cpu || runnable[k])
            p->grew = now;
        p->cpu = cpu[k];
        s->busy |= !p->ports[0] && now - p->grew < BG_BUSY_MS;
    }
    free(l);
    free(own);
}

void bg_scan(bg_set_t *s)
{
    size_t n;
    pent_t *t = ptable(&n);
    if (!t)
        return;
    for (size_t i = 0; s->until && i < n && s->n < BG_PROCS_MAX; i++) {
        if (t[i].ppid != s->self)
            continue;
        bool known = false;
        for (size_t k = 0; k < s->n && !known; k++)
            known = s->p[k].pid == t[i].pid && !s->p[k].dead;
        if (!known) {
            bg_proc_t *p = &s->p[s->n++];
            memset(p, 0, sizeof *p);
            p->pid = t[i].pid;
            snprintf(p->label, sizeof p->label, "%s", t[i].comm);
            clean(p->label, false);
        }
    }
    for (size_t k = 0; k < s->n; k++)
        if (!s->p[k].dead)
            name_it(s, &s->p[k], t, n);
    scan_ports(s, t, n);
    free(t);
}

void bg_start(bg_set_t *s, int64_t now, int64_t ms)
{
    s->until = now + ms / 2;
    s->hard = now + ms; /* never past background_watch_ms (<= 1.5 s) */
    s->since = now;
    bg_scan(s);
}

bool bg_open(const bg_set_t *s, int64_t now)
{
    return s->until && (now < s->until || (s->busy && now < s->hard));
}

void bg_ended(bg_set_t *s, pid_t pid, int st)
{
    for (size_t k = 0; k < s->n; k++)
        if (s->p[k].pid == pid && !s->p[k].dead) {
            s->p[k].dead = true;
            s->p[k].status = st;
            s->p[k].ports[0] = '\0';
        }
}

bool bg_settled(const bg_set_t *s)
{
    for (size_t k = 0; k < s->n; k++)
        if (!s->p[k].dead && !s->p[k].ports[0])
            return false;
    return true;
}

bool bg_any_alive(const bg_set_t *s)
{
    for (size_t k = 0; k < s->n; k++)
        if (!s->p[k].dead)
            return true;
    return false;
}

/* The last lines of the regular file path (at most BG_TAIL_LINES lines,
 * BG_TAIL_MAX bytes), cleaned, into out. */
static void tail_of(const char *path, char *out, size_t cap)
{
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        return;
    }
    char buf[BG_TAIL_MAX + 1];
    off_t from = st.st_size > BG_TAIL_MAX ? st.st_size - BG_TAIL_MAX : 0;
    ssize_t k = pread(fd, buf, BG_TAIL_MAX, from);
    close(fd);
    if (k <= 0)
        return;
    while (k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == '\r'))
        k--;
    buf[k] = '\0';
    for (ssize_t i = 0; i < k; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    char *start = buf;
    int lines = 0;
    for (char *p = buf + k; p > buf; p--)
        if (p[-1] == '\n' && ++lines == BG_TAIL_LINES) {
            start = p;
            break;
        }
    snprintf(out, cap, "%s", start);
    clean(out, true);
}

size_t bg_item(const bg_proc_t *p, char *out, size_t cap)
{
    char state = 'r';
    int code = 0;
    if (p->dead && WIFSIGNALED(p->status)) {
        state = 'k';
        code = WTERMSIG(p->status);
    } else if (p->dead) {
        state = 'x';
        code = WEXITSTATUS(p->status);
    }
    char tail[BG_TAIL_MAX + 1] = "";
    if (p->dead && p->log[0])
        tail_of(p->log, tail, sizeof tail);
    int k = snprintf(out, cap, "%d%c%c%c%d%c%s%c%s%c%s%c%s", (int)p->pid, BG_SEP, state, BG_SEP,
                     code, BG_SEP, p->ports, BG_SEP, p->label, BG_SEP, p->log, BG_SEP, tail);
    return k < 0 ? 0 : (size_t)k >= cap ? cap - 1 : (size_t)k;
}
