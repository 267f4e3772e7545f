/* shepherd.c -- one command of the agent and every process it starts
 * (see shepherd.h for the why).
 *
 * Three processes take part: the worker (agent.c) calls shep_spawn, which
 * forks the shepherd, which forks the command.  The command's side is the
 * same whether a shepherd sits in between or not: setsid, default signals,
 * the three descriptors, the folder, exec; an exec error goes back through
 * a close-on-exec pipe, so "it runs" is known the moment exec succeeds.
 *
 * The shepherd blocks the signals it serves and takes them with
 * sigwaitinfo: no handler runs, so nothing is asynchronous in it.  It
 * keeps no descriptor of the agent's (the worker's pipes of other
 * commands among them: holding a write end would keep their readers from
 * ever seeing the end), only its record pipe.
 *
 * Finding "the processes of this command": every process whose chain of
 * parents reaches the shepherd.  Orphans are re-parented to it (it is a
 * subreaper), so the chain never breaks while it lives.  The walk reads
 * each /proc/PID/stat once per round and marks members in a bitmap indexed
 * by pid, so a round costs one pass over /proc plus one more per level of
 * the tree that /proc lists out of order (rare: children usually get
 * higher pids than their parents).
 */
#include "agent/shepherd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/bgwatch.h"
#include "agent/limits.h"

/* Rounds of the freeze walk (each either finds new processes or ends it):
 * a fork bomb stops growing once its members are stopped, so a few rounds
 * suffice; the bound is for a tree that keeps finding ways to grow. */
#define SHEP_FREEZE_ROUNDS   64
/* How long the shepherd waits for its killed tree to be gone. */
#define SHEP_REAP_MS         3000
/* While waiting, it walks the tree again this often and kills what it
 * finds (a process that was forked while its parent was being stopped). */
#define SHEP_REWALK_MS       20
/* Processes left running after a normal end are kept unless they number
 * at least this share of the sandbox's process limit (1/SHEP_RUNAWAY_DIV),
 * or SHEP_RUNAWAY_NOLIMIT without a limit: a fork bomb, not a server. */
#define SHEP_RUNAWAY_DIV     2
#define SHEP_RUNAWAY_NOLIMIT 1024
/* Past this many left, the count is looked at SHEP_RUNAWAY_LOOKS more
 * times, SHEP_RUNAWAY_LOOK_MS apart (a handful of servers never is). */
#define SHEP_RUNAWAY_FEW     16
#define SHEP_RUNAWAY_LOOKS   4
#define SHEP_RUNAWAY_LOOK_MS 25
/* Rounds of the marker kill pass (a process may fork between two). */
#define SHEP_KILL_ROUNDS     8

extern char **environ;

void shep_reset_signals(void)
{
    /* Every signal back to its default, with the raw system call: glibc
     * refuses to touch its own two real-time signals, and an ignored
     * signal survives exec, so a command would inherit what a Docker exec
     * never has.  (That is also why commands start with fork + exec, not
     * posix_spawn: glibc's posix_spawn leaves those two ignored.) */
    struct {
        void *handler;
        unsigned long flags;
        void *restorer;
        uint64_t mask;
    } dfl = { 0 }; /* SIG_DFL, no flags, empty mask */
    for (long sig = 1; sig <= 64; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof dfl.mask);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Milliseconds of the monotonic clock. */
static int64_t shep_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the command ---------------------------------------------------------- */

/* In the command's process: never returns.  An errno goes to report. */
static void exec_child(const shep_cmd_t *c, int report)
{
    setsid();
    shep_reset_signals();
    int e = 0;
    int in = c->in >= 0 ? c->in : open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0 || dup2(in, STDIN_FILENO) < 0 || dup2(c->out, STDOUT_FILENO) < 0 ||
        dup2(c->err, STDERR_FILENO) < 0 || (c->cwd && chdir(c->cwd) != 0))
        e = errno;
    if (!e) {
        execvpe(c->argv[0], c->argv, c->envp);
        e = errno;
    }
    ssize_t w = write(report, &e, sizeof e);
    (void)w;
    _exit(127);
}

/* Fork the command and wait until it exec'd.  Its pid, or -1 with *err. */
static pid_t fork_command(const shep_cmd_t *c, int *err)
{
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        *err = errno;
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0)
        exec_child(c, report[1]);
    close(report[1]);
    if (pid < 0) {
        *err = errno;
        close(report[0]);
        return -1;
    }
    int child_err = 0;
    ssize_t got;
    while ((got = read(report[0], &child_err, sizeof child_err)) < 0 && errno == EINTR)
        ;
    close(report[0]);
    if (got == (ssize_t)sizeof child_err) {
        waitpid(pid, NULL, 0);
        *err = child_err;
        return -1;
    }
    return pid;
}

/* ---- the tree ------------------------------------------------------------------ */

typedef struct {
    unsigned char *bits; /* pid -> member */
    long max;            /* pids below this fit */
    pid_t *list;         /* members, in the order found */
    size_t n, cap;
} tree_t;

/* Whether pid is a member. */
static bool tree_has(const tree_t *t, long pid)
{
    return pid >= 0 && pid < t->max && (t->bits[pid >> 3] >> (pid & 7)) & 1;
}

/* Make pid a member (pids past the bitmap cannot occur: see tree_init). */
static void tree_add(tree_t *t, long pid)
{
    if (pid < 0 || pid >= t->max)
        return;
    t->bits[pid >> 3] |= (unsigned char)(1u << (pid & 7));
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        pid_t *l = realloc(t->list, cap * sizeof *l);
        if (!l)
            return; /* still marked; it is killed by a later walk */
        t->list = l;
        t->cap = cap;
    }
    t->list[t->n++] = (pid_t)pid;
}

/* An empty tree whose bitmap covers every pid this kernel hands out. */
static bool tree_init(tree_t *t)
{
    memset(t, 0, sizeof *t);
    t->max = 1 << 22; /* the kernel's largest pid_max */
    FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
    if (f) {
        long v;
        if (fscanf(f, "%ld", &v) == 1 && v > 0 && v <= (1L << 22))
            t->max = v + 1;
        fclose(f);
    }
    t->bits = calloc((size_t)(t->max + 7) / 8, 1);
    return t->bits != NULL;
}

/* Release what tree_init and tree_add took. */
static void tree_free(tree_t *t)
{
    free(t->bits);
    free(t->list);
}

/* The parent of pid from /proc/PID/stat, -1 when gone.  The name between
 * the parentheses may hold anything, so the fields start after the last
 * ')'. */
static long parent_of(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    long ppid;
    char state;
    if (!p || sscanf(p + 1, " %c %ld", &state, &ppid) != 2)
        return -1;
    return ppid;
}

/* One walk: every process whose parent is self or a member joins the tree
 * and gets sig (0: none).  Repeated over the pids read while a pass adds
 * any (a child listed before its parent).  Returns how many joined. */
static size_t tree_walk(tree_t *t, pid_t self, int sig)
{
    size_t before = t->n, cap = 0, n = 0;
    long(*pp)[2] = NULL; /* pid, parent */
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 1 || pid == self || tree_has(t, pid))
            continue;
        long ppid = parent_of(pid);
        if (ppid < 0)
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 512;
            long(*np)[2] = realloc(pp, nc * sizeof *np);
            if (!np)
                break;
            pp = np;
            cap = nc;
        }
        pp[n][0] = pid;
        pp[n][1] = ppid;
        n++;
    }
    closedir(d);
    for (bool grew = true; grew;) {
        grew = false;
        for (size_t i = 0; i < n; i++) {
            if (tree_has(t, pp[i][0]) || (pp[i][1] != self && !tree_has(t, pp[i][1])))
                continue;
            tree_add(t, pp[i][0]);
            if (sig)
                kill((pid_t)pp[i][0], sig);
            grew = true;
        }
    }
    free(pp);
    return t->n - before;
}

/* ---- the shepherd ------------------------------------------------------------------ */

/* Write record r to the worker, with the CPU time and peak RSS of every
 * process of the command reaped so far. */
static void send_rec(int ctl, shep_rec_t *r)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
        r->cpu_ms = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
        r->rss_kb = ru.ru_maxrss;
    } else {
        r->cpu_ms = r->rss_kb = -1;
    }
    ssize_t w;
    while ((w = write(ctl, r, sizeof *r)) < 0 && errno == EINTR)
        ;
}

/* Reap every child that ended; notes the command's status.  -1 when the
 * shepherd has no children left. */
static int reap_all(pid_t cmd, int *status, bool *cmd_done)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
        if (pid == cmd) {
            *status = st;
            *cmd_done = true;
        }
    return pid < 0 && errno == ECHILD ? -1 : 0;
}

/* Freeze the tree, kill it, and wait for it to be gone. */
static void kill_tree(pid_t self, pid_t cmd, int *status, bool *cmd_done)
{
    tree_t t;
    if (!tree_init(&t)) {
        kill(-cmd, SIGKILL); /* no memory for the walk: the group, at least */
        kill(cmd, SIGKILL);
    } else {
        for (int round = 0; round < SHEP_FREEZE_ROUNDS; round++)
            if (tree_walk(&t, self, SIGSTOP) == 0)
                break;
        for (size_t i = 0; i < t.n; i++)
            kill(t.list[i], SIGKILL);
    }
    int64_t until = shep_mono_ms() + SHEP_REAP_MS, rewalk = shep_mono_ms() + SHEP_REWALK_MS;
    while (reap_all(cmd, status, cmd_done) == 0 && shep_mono_ms() < until) {
        if (t.bits && shep_mono_ms() >= rewalk) {
            tree_walk(&t, self, SIGKILL);
            rewalk = shep_mono_ms() + SHEP_REWALK_MS;
        }
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    if (t.bits)
        tree_free(&t);
}

/* Nothing of the command is left: no child, so no descendant. */
static bool tree_empty(void)
{
    siginfo_t si;
    return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD;
}

/* How many processes the tree holds now. */
static size_t tree_count(pid_t self)
{
    tree_t t;
    if (!tree_init(&t))
        return 0;
    tree_walk(&t, self, 0);
    size_t n = t.n;
    tree_free(&t);
    return n;
}

/* What is left after a normal end: a handful of servers stay, a process
 * table's worth is a fork bomb and is killed.  A bomb at the process
 * limit swings: its forks fail, those shells exit, others fork again, so
 * one look can catch it low.  More than a handful left is looked at a few
 * times more, SHEP_RUNAWAY_LOOK_MS apart; a bomb is a bomb if any look
 * reaches the bar, or if the count doubled (one still on its way up). */
static bool runaway(pid_t self)
{
    if (tree_empty())
        return false;
    limits_t lim;
    limits_read(&lim);
    size_t bar = lim.pids > 0 ? (size_t)(lim.pids / SHEP_RUNAWAY_DIV) : SHEP_RUNAWAY_NOLIMIT;
    size_t first = tree_count(self), n = first;
    for (int look = 0; n < bar && first >= SHEP_RUNAWAY_FEW && look < SHEP_RUNAWAY_LOOKS; look++) {
        struct timespec ts = { 0, SHEP_RUNAWAY_LOOK_MS * 1000000L };
        nanosleep(&ts, NULL);
        n = tree_count(self);
        if (n >= 2 * first && n >= 2 * SHEP_RUNAWAY_FEW)
            return true;
    }
    return n >= bar;
}

/* Keep only the descriptors a and b (a < b). */
static void close_others(int a, int b)
{
    if (a > b) {
        int x = a;
        a = b;
        b = x;
    }
    if (a > 0)
        syscall(SYS_close_range, 0u, (unsigned)a - 1, 0u);
    if (b > a + 1)
        syscall(SYS_close_range, (unsigned)a + 1, (unsigned)b - 1, 0u);
    syscall(SYS_close_range, (unsigned)b + 1, ~0u, 0u);
}

/* Send one program's item (bgwatch.h) as a record of kind, in one write. */
static void send_item(int ctl, int kind, const bg_proc_t *p)
{
    char buf[sizeof(shep_rec_t) + BG_ITEM_MAX + 1];
    size_t len = bg_item(p, buf + sizeof(shep_rec_t), sizeof buf - sizeof(shep_rec_t));
    shep_rec_t r = { .kind = kind, .pid = p->pid, .err = (int32_t)len, .cpu_ms = -1, .rss_kb = -1 };
    memcpy(buf, &r, sizeof r);
    ssize_t w;
    while ((w = write(ctl, buf, sizeof r + len)) < 0 && errno == EINTR)
        ;
}

/* Reap every child that ended, noting the programs' ends.  -1 when none
 * is left. */
static int reap_bg(bg_set_t *bg)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
        bg_ended(bg, pid, st);
    return pid < 0 && errno == ECHILD ? -1 : 0;
}

/* After the window: stay while a program runs, as their subreaper, and
 * say each one's end.  Never returns. */
static void keep(bg_set_t *bg, int ctl, const sigset_t *set)
{
    prctl(PR_SET_PDEATHSIG, 0); /* a worker's restart leaves servers alone */
    bool told[BG_PROCS_MAX] = { false }, ports[BG_PROCS_MAX] = { false };
    for (size_t k = 0; k < bg->n; k++) {
        told[k] = bg->p[k].dead;
        ports[k] = bg->p[k].ports[0] != '\0';
    }
    bg->until = 0; /* no program joins any more */
    int64_t late_until = shep_mono_ms() + BG_LATE_MS;
    for (;;) {
        int gone = reap_bg(bg);
        for (size_t k = 0; k < bg->n; k++)
            if (bg->p[k].dead && !told[k]) {
                told[k] = true;
                send_item(ctl, SHEP_BG_DIED, &bg->p[k]);
            }
        if (gone < 0 || !bg_any_alive(bg))
            _exit(0);
        /* A server slow to start: its ports, once it listens. */
        bool waiting = false;
        for (size_t k = 0; k < bg->n; k++)
            waiting |= !bg->p[k].dead && !ports[k];
        siginfo_t si;
        struct timespec ts = { 0, BG_LATE_EVERY_MS * 1000000L };
        int sig = waiting && shep_mono_ms() < late_until ? sigtimedwait(set, &si, &ts)
                                                         : sigwaitinfo(set, &si);
        if (sig == SIGTERM)
            _exit(0);
        if (sig >= 0 || !waiting)
            continue;
        bg_scan(bg);
        for (size_t k = 0; k < bg->n; k++)
            if (!bg->p[k].dead && !ports[k] && bg->p[k].ports[0]) {
                ports[k] = true;
                send_item(ctl, SHEP_BG_PORTS, &bg->p[k]);
            }
    }
}

/* The window is over: each program's fate, then BG_WATCHED; then keep
 * watching those still running.  Never returns. */
static void leave(bg_set_t *bg, int ctl, const sigset_t *set)
{
    reap_bg(bg);
    bg_scan(bg); /* a last look: the output's drain may have outlasted the window */
    for (size_t k = 0; k < bg->n; k++)
        send_item(ctl, SHEP_BG_LEFT, &bg->p[k]);
    shep_rec_t x = { .kind = SHEP_BG_WATCHED, .cpu_ms = -1, .rss_kb = -1 };
    ssize_t w = write(ctl, &x, sizeof x);
    (void)w;
    keep(bg, ctl, set);
}

/* The next signal of set; 0 when the watch window wants a look first. */
static int shep_wait(const sigset_t *set, const bg_set_t *bg)
{
    siginfo_t si;
    int64_t now = shep_mono_ms();
    if (!bg_open(bg, now))
        return sigwaitinfo(set, &si);
    /* Often at first: a program that ends at once is named (and its file
     * found) only if a look sees it after its exec. */
    long every = now - bg->since < BG_EARLY_MS ? BG_EARLY_SCAN_MS : BG_SCAN_MS;
    struct timespec ts = { 0, every * 1000000L };
    int sig = sigtimedwait(set, &si, &ts);
    return sig < 0 ? 0 : sig;
}

/* The command ended: say so; exit when it left nothing, else open the
 * watch window when the RUN asked for one. */
static void cmd_ended(const shep_cmd_t *c, int ctl, pid_t cmd, int status, bg_set_t *bg)
{
    bool empty = tree_empty();
    /* err 1: a watch follows (BG_WATCHED will come); 0: nothing to wait for. */
    shep_rec_t x = {
        .kind = SHEP_EXITED, .status = status, .pid = cmd, .err = !empty && c->watch_ms > 0
    };
    send_rec(ctl, &x);
    if (empty)
        _exit(0); /* the usual case: nothing to watch over */
    if (c->watch_ms > 0)
        bg_start(bg, shep_mono_ms(), c->watch_ms < BG_WATCH_MAX_MS ? c->watch_ms : BG_WATCH_MAX_MS);
}

/* The shepherd's life: never returns.  The worker does not wait for the
 * exec: a command that could not be exec'd is told as a FAILED record. */
static void shepherd(const shep_cmd_t *c, int ctl, pid_t worker)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGCHLD, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    pid_t self = getpid();

    int err = 0;
    pid_t cmd = fork_command(c, &err);
    if (cmd < 0) {
        shep_rec_t x = { .kind = SHEP_FAILED, .err = err };
        ssize_t w = write(ctl, &x, sizeof x);
        (void)w;
        _exit(0);
    }
    close_others(ctl, ctl); /* the command's descriptors and the worker's */
    if (getppid() != worker)
        kill(self, SIGTERM); /* the worker died before the death signal was set */

    int status = 0;
    bool done = false, released = false;
    bg_set_t bg;
    bg_init(&bg, self, c->argv);
    for (;;) {
        int sig = shep_wait(&set, &bg);
        if ((sig == SIGCHLD || sig == 0) && !done) {
            reap_all(cmd, &status, &done);
            if (done)
                cmd_ended(c, ctl, cmd, status, &bg);
        } else if (sig == SIGCHLD || sig == 0) {
            reap_bg(&bg); /* what it left, ending on its own */
            if (bg_open(&bg, shep_mono_ms()))
                bg_scan(&bg);
        } else if (sig == SIGTERM || (sig == SIGUSR1 && done && runaway(self))) {
            /* A bomb at the limit may outlast one pass: up to three,
             * when no kill waits on the answer (SIGTERM's has 5 s). */
            int passes = sig == SIGTERM ? 1 : 3;
            for (int pass = 0; pass < passes && (pass == 0 || !tree_empty()); pass++)
                kill_tree(self, cmd, &status, &done);
            if (!done)
                status = SIGKILL; /* it did not even die: say killed */
            shep_rec_t x = { .kind = SHEP_ENDED, .status = status, .pid = cmd };
            send_rec(ctl, &x);
            _exit(0);
        } else if (sig == SIGUSR1 && done) {
            if (!bg.until)
                _exit(0); /* what is left keeps running, re-parented to init */
            released = true;
        }
        if (released && (!bg_open(&bg, shep_mono_ms()) || bg_settled(&bg)))
            leave(&bg, ctl, &set);
    }
}

/* ---- the marker kill pass ------------------------------------------------------ */

/* Whether the environment of pid holds the entry mk exactly. */
static bool env_has(long pid, const char *mk, size_t mklen)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/environ", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    /* Match entry by entry across reads: idx is how much of mk the
     * current entry matched so far, -1 once it cannot match. */
    long idx = 0;
    bool found = false;
    ssize_t n;
    char chunk[4096];
    while (!found && (n = read(fd, chunk, sizeof chunk)) > 0) {
        for (ssize_t i = 0; i < n && !found; i++) {
            char b = chunk[i];
            if (b == '\0') {
                found = idx == (long)mklen;
                idx = 0;
            } else if (idx >= 0 && idx < (long)mklen && b == mk[idx]) {
                idx++;
            } else {
                idx = -1;
            }
        }
    }
    if (!found && idx == (long)mklen)
        found = true;
    close(fd);
    return found;
}

void shep_kill_marker(const char *mk)
{
    if (!mk || !*mk)
        return;
    size_t mklen = strlen(mk);
    pid_t self = getpid(), parent = getppid();
    for (int round = 0; round < SHEP_KILL_ROUNDS; round++) {
        bool found = false;
        DIR *d = opendir("/proc");
        if (!d)
            return;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char *end;
            long pid = strtol(e->d_name, &end, 10);
            if (*end || pid <= 1 || pid == self || pid == parent)
                continue;
            if (env_has(pid, mk, mklen)) {
                kill((pid_t)pid, SIGKILL);
                found = true;
            }
        }
        closedir(d);
        if (!found)
            break;
    }
}

/* ---- the worker's side ------------------------------------------------------------------ */

/* See shepherd.h.  Without a shepherd it waits for the exec, as the
 * agent always did; with one it returns at once (one wake-up less on the
 * way of every command) and an exec error comes as a FAILED record. */
pid_t shep_spawn(const shep_cmd_t *cmd, bool use_shepherd, int *ctl, int *err)
{
    *ctl = -1;
    if (!use_shepherd)
        return fork_command(cmd, err);
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        *err = errno;
        return -1;
    }
    pid_t worker = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        shepherd(cmd, p[1], worker);
    }
    close(p[1]);
    if (pid < 0) {
        *err = errno;
        close(p[0]);
        return -1;
    }
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    *ctl = p[0];
    return pid;
}

/* Records are written whole (smaller than PIPE_BUF), so a read gets one,
 * and a BG record's item is in the pipe with it. */
int shep_read(int ctl, shep_rec_t *rec, char *item, size_t cap)
{
    ssize_t n;
    while ((n = read(ctl, rec, sizeof *rec)) < 0 && errno == EINTR)
        ;
    if (n < 0 && errno == EAGAIN)
        return 0;
    if (n != (ssize_t)sizeof *rec)
        return -1; /* the end, or a short record (never written so) */
    if (rec->kind != SHEP_BG_LEFT && rec->kind != SHEP_BG_DIED && rec->kind != SHEP_BG_PORTS)
        return 1;
    if (rec->err < 0 || (size_t)rec->err >= cap)
        return -1;
    size_t got = 0;
    while (got < (size_t)rec->err) {
        n = read(ctl, item + got, (size_t)rec->err - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    item[got] = '\0';
    return 1;
}

/* The shepherd serves SIGTERM with kill_tree. */
void shep_stop(pid_t shepherd)
{
    kill(shepherd, SIGTERM);
}

/* The shepherd serves SIGUSR1 by exiting (or by kill_tree for a bomb), or
 * by watching what the command left (bgwatch.h). */
void shep_release(pid_t shepherd)
{
    kill(shepherd, SIGUSR1);
}
