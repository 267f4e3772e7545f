/* agent.c -- talkback-agent: the fast path inside each sandbox.
 *
 * A small static program that runs as a sandbox's main process (under
 * Docker's init) and runs commands for the sandbox manager without a
 * Docker exec each time.  It speaks frame.h over its stdin and stdout,
 * which the manager reaches through one Docker attach connection
 * (sandbox/agent.c).  No network listener, no socket file.
 *
 * Two processes:
 *   supervisor  the container's main process.  It forks the worker and
 *               forks it again when it dies, after writing FRAME_AGENT_MAX
 *               zero bytes to stdout: whatever half frame the dead worker
 *               left, the manager's reader then fails on it at once
 *               instead of waiting for bytes that never come, drops the
 *               link and attaches again.  SIGTERM (docker stop) ends both.
 *   worker      one poll loop: stdin frames in, commands' output out.
 *
 * A command runs as the manager's Docker exec path runs it: setsid, so it
 * leads its own process group, the container's environment with the given
 * variables replaced or appended in the order Docker uses, stdin /dev/null
 * unless bytes were given, default signal dispositions, no inherited
 * descriptors.  Two things the exec path needs extra processes for are
 * done here instead, since every exec costs milliseconds: "merge" makes
 * stderr the stdout pipe (the exec path's sh -c 'exec "$@" 2>&1'), and
 * "tmo" SIGKILLs the group, then the marker, when the time is up (the exec
 * path's timeout -s KILL; the exit status reads 137 either way).
 * When it exits, its pipes are read until every writer is gone or 2 s
 * pass, then closed: dockerd does the same with an exec's stream, so a
 * command that leaves `server &` holding stdout costs 2 s either way and
 * prints the same.  KILL SIGKILLs the process group, then every process
 * whose environment holds the command's marker (/proc scan, repeated while
 * any was found: the same pass run.c makes with bash builtins), and needs
 * no new process, so it works at the pids limit too.
 *
 * Writes are atomic: a temporary file in the target's folder, mode and
 * mtime set, then rename.  Anything unusual (the target is a folder, a
 * parent is a file) is refused with FAIL, and the manager writes through
 * Docker's archive API instead, which decides those cases as it always
 * did.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/images.h"
#include "proto/frame.h"

/* How long output is still read after a command's exit: dockerd waits as
 * long for an exec's stream before closing it. */
#define AGENT_DRAIN_MS    2000
/* A half frame on stdin that has not completed for this long, while no
 * frame got through, was left by a manager that died mid-write (a live one
 * writes a whole frame in one go): skip it and look for the next frame.
 * Counted from when it started, not from the last byte, since the next
 * manager's hellos keep feeding it. */
#define AGENT_PARTIAL_MS  5000
/* Output read per OUT frame, and stdin read per feed. */
#define AGENT_CHUNK       16384
/* Rounds of the marker kill pass (a process may fork between two). */
#define AGENT_KILL_ROUNDS 8
/* Restart delays of the worker: from 100 ms, doubling up to 5 s while it
 * keeps dying within a second. */
#define AGENT_BACKOFF_MIN_MS 100
#define AGENT_BACKOFF_MAX_MS 5000

extern char **environ;

typedef struct job {
    uint64_t id;
    pid_t pid;
    int out, err;          /* read ends of stdout/stderr, -1 once closed */
    int in;                /* write end of stdin, -1 when none or done */
    char *in_data;
    size_t in_len, in_off;
    char *marker;          /* K=V, or NULL */
    int64_t kill_at;       /* mono ms of the timeout's SIGKILL, 0: none */
    bool exited;
    int status;
    int64_t drain_until;
    uint64_t img_mark;     /* images.h: images written since this are its */
    struct job *next;
} job_t;

static job_t *jobs;
static int chld_pipe[2] = { -1, -1 };
static frame_buf_t obuf;
static char chunk[AGENT_CHUNK];

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w > 0) {
            s += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EAGAIN) {
            struct pollfd pf = { fd, POLLOUT, 0 };
            poll(&pf, 1, 1000);
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else {
            return -1;
        }
    }
    return 0;
}

/* Send one frame to the manager.  A failed write means stdout is gone:
 * nothing can be told any more, so the worker ends (and is restarted). */
static void send_msg(const frame_msg_t *m)
{
    obuf.len = 0;
    if (frame_encode(m, &obuf) != 0)
        return;
    if (write_all(STDOUT_FILENO, obuf.buf, obuf.len) != 0)
        _exit(3);
    if (obuf.cap > 4 * AGENT_CHUNK)
        frame_buf_free(&obuf);
}

static void send_fail(uint64_t id, int err, const char *what)
{
    char msg[256];
    snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
    frame_msg_t m = { .type = FRAME_FAIL, .id = id };
    frame_set_num(&m, FN_ERRNO, err);
    frame_set_str(&m, FS_MSG, msg, strlen(msg));
    send_msg(&m);
}

static void send_id(uint32_t type, uint64_t id)
{
    frame_msg_t m = { .type = type, .id = id };
    send_msg(&m);
}

static char *dup_view(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        if (n)
            memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

/* ---- the marker kill pass ---------------------------------------------- */

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

static void kill_marker(const char *mk)
{
    if (!mk || !*mk)
        return;
    size_t mklen = strlen(mk);
    pid_t self = getpid(), parent = getppid();
    for (int round = 0; round < AGENT_KILL_ROUNDS; round++) {
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

/* Every signal back to its default, with the raw system call: glibc
 * refuses to touch its own two real-time signals, and an ignored signal
 * survives exec, so a command would inherit what a Docker exec never has.
 * (That is also why commands start with fork + exec, not posix_spawn:
 * glibc's posix_spawn leaves those two ignored in the child.) */
static void reset_signals(void)
{
    struct {
        void *handler;
        unsigned long flags;
        void *restorer;
        uint64_t mask;
    } dfl = { 0 };   /* SIG_DFL, no flags, empty mask */
    for (long sig = 1; sig <= 64; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof dfl.mask);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* ---- commands ------------------------------------------------------------ */

typedef struct {
    char **v;
    size_t n, cap;
    bool oom;
} vec_t;

static void vec_push(void *ctx, const char *item)
{
    vec_t *v = ctx;
    if (v->n + 2 > v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        char **n = realloc(v->v, cap * sizeof *n);
        if (!n) {
            v->oom = true;
            return;
        }
        v->v = n;
        v->cap = cap;
    }
    v->v[v->n++] = (char *)item;
    v->v[v->n] = NULL;
}

/* Docker's ReplaceOrAppendEnvValues: a given K=V replaces the entry of the
 * same K where it stands, or is appended. */
static void env_merge(void *ctx, const char *item)
{
    vec_t *v = ctx;
    const char *eq = strchr(item, '=');
    size_t klen = eq ? (size_t)(eq - item) : strlen(item);
    for (size_t i = 0; i < v->n; i++)
        if (strncmp(v->v[i], item, klen) == 0 && (v->v[i][klen] == '=' || v->v[i][klen] == '\0')) {
            v->v[i] = (char *)item;
            return;
        }
    vec_push(v, item);
}

static void set_nonblock(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static void do_run(const frame_msg_t *m)
{
    if (!frame_has_str(m, FS_ARGV) || m->str_len[FS_ARGV] == 0) {
        send_fail(m->id, EINVAL, "no command");
        return;
    }
    /* Views die with the next read: copy what outlives this call. */
    char *argbytes = dup_view(m->str[FS_ARGV], m->str_len[FS_ARGV]);
    char *envbytes = dup_view(m->str[FS_ENV], frame_has_str(m, FS_ENV) ? m->str_len[FS_ENV] : 0);
    char *cwd = frame_has_str(m, FS_CWD) ? dup_view(m->str[FS_CWD], m->str_len[FS_CWD]) : NULL;
    job_t *j = calloc(1, sizeof *j);
    vec_t argv = { 0 }, envv = { 0 };
    int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 };
    int err = ENOMEM;
    const char *what = "out of memory";

    if (!argbytes || !envbytes || !j || (frame_has_str(m, FS_CWD) && !cwd))
        goto fail;
    j->out = j->err = j->in = -1;
    j->id = m->id;
    if (frame_has_str(m, FS_MARKER) && !(j->marker = dup_view(m->str[FS_MARKER], m->str_len[FS_MARKER])))
        goto fail;
    if (frame_has_str(m, FS_STDIN)) {
        j->in_len = m->str_len[FS_STDIN];
        if (!(j->in_data = dup_view(m->str[FS_STDIN], j->in_len)))
            goto fail;
    }
    err = EINVAL;
    what = "malformed argv or env";
    if (frame_list_each(argbytes, m->str_len[FS_ARGV], vec_push, &argv) < 1 || argv.oom)
        goto fail;
    for (char **e = environ; e && *e; e++)
        vec_push(&envv, *e);
    if (frame_list_each(envbytes, frame_has_str(m, FS_ENV) ? m->str_len[FS_ENV] : 0, env_merge, &envv) < 0 ||
        envv.oom || !envv.v)
        goto fail;

    what = "pipe";
    bool merge = frame_num(m, FN_MERGE, 0) != 0;
    if (pipe2(pout, O_CLOEXEC) || (!merge && pipe2(perr, O_CLOEXEC)) ||
        (j->in_data && pipe2(pin, O_CLOEXEC))) {
        err = errno;
        goto fail;
    }
    what = "spawn";
    j->img_mark = images_mark();
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        err = errno;
        goto fail;
    }
    j->pid = fork();
    if (j->pid == 0) {
        /* The child: setsid, default signals, the three pipes,
         * the folder, then exec; an errno goes back through report. */
        setsid();
        reset_signals();
        int e = 0;
        int in = j->in_data ? pin[0] : open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (in < 0 || dup2(in, STDIN_FILENO) < 0 || dup2(pout[1], STDOUT_FILENO) < 0 ||
            dup2(merge ? pout[1] : perr[1], STDERR_FILENO) < 0 || (cwd && chdir(cwd) != 0))
            e = errno;
        if (!e) {
            execvpe(argv.v[0], argv.v, envv.v);
            e = errno;
        }
        ssize_t w = write(report[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(report[1]);
    if (j->pid < 0) {
        err = errno;
        close(report[0]);
        goto fail;
    }
    int child_err = 0;
    ssize_t got;
    while ((got = read(report[0], &child_err, sizeof child_err)) < 0 && errno == EINTR)
        ;
    close(report[0]);
    if (got == (ssize_t)sizeof child_err) {
        waitpid(j->pid, NULL, 0);
        err = child_err;
        goto fail;
    }

    close_fd(&pout[1]);
    close_fd(&perr[1]);
    close_fd(&pin[0]);
    int64_t tmo = frame_num(m, FN_TIMEOUT, 0);
    if (tmo > 0)
        j->kill_at = mono_ms() + tmo;
    j->out = pout[0];
    j->err = perr[0];
    j->in = pin[1];
    set_nonblock(j->out);
    if (j->err >= 0)
        set_nonblock(j->err);
    if (j->in >= 0) {
        set_nonblock(j->in);
        if (j->in_len == 0)
            close_fd(&j->in);
    }
    j->next = jobs;
    jobs = j;
    frame_msg_t r = { .type = FRAME_STARTED, .id = m->id };
    frame_set_num(&r, FN_PID, j->pid);
    send_msg(&r);
    j = NULL;
    goto done;

fail:
    send_fail(m->id, err, what);
    close_fd(&pin[0]);
    close_fd(&pin[1]);
    close_fd(&pout[0]);
    close_fd(&pout[1]);
    close_fd(&perr[0]);
    close_fd(&perr[1]);
    if (j) {
        free(j->in_data);
        free(j->marker);
        free(j);
    }
done:
    free(argv.v);
    free(envv.v);
    free(argbytes);
    free(envbytes);
    free(cwd);
}

static job_t *job_find(uint64_t id)
{
    for (job_t *j = jobs; j; j = j->next)
        if (j->id == id)
            return j;
    return NULL;
}

static void do_kill(const frame_msg_t *m)
{
    job_t *j = job_find(m->id);
    if (j && !j->exited) {
        kill(-j->pid, SIGKILL);
        kill(j->pid, SIGKILL);
    }
    char *mk = NULL;
    if (frame_has_str(m, FS_MARKER))
        mk = dup_view(m->str[FS_MARKER], m->str_len[FS_MARKER]);
    kill_marker(mk ? mk : j ? j->marker : NULL);
    free(mk);
    send_id(FRAME_DONE, m->id);
}

/* Commands past their timeout: the group, then the marker, SIGKILLed. */
static void expire_jobs(void)
{
    int64_t now = mono_ms();
    for (job_t *j = jobs; j; j = j->next)
        if (j->kill_at && now >= j->kill_at) {
            j->kill_at = 0;
            if (j->exited)
                continue;   /* timeout -s KILL leaves what outlived it too */
            kill(-j->pid, SIGKILL);
            kill(j->pid, SIGKILL);
            kill_marker(j->marker);
        }
}

/* Output of a job: one read, one OUT frame; EOF closes that pipe. */
static void job_read(job_t *j, int *fd, int stream)
{
    ssize_t n = read(*fd, chunk, sizeof chunk);
    if (n > 0) {
        frame_msg_t m = { .type = FRAME_OUT, .id = j->id };
        frame_set_num(&m, FN_STREAM, stream);
        frame_set_str(&m, FS_DATA, chunk, (size_t)n);
        send_msg(&m);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        close_fd(fd);
    }
}

static void job_write_stdin(job_t *j)
{
    ssize_t n = write(j->in, j->in_data + j->in_off, j->in_len - j->in_off);
    if (n > 0)
        j->in_off += (size_t)n;
    else if (n < 0 && errno != EAGAIN && errno != EINTR)
        j->in_off = j->in_len;   /* the reader is gone (EPIPE) */
    if (j->in_off == j->in_len) {
        close_fd(&j->in);
        free(j->in_data);
        j->in_data = NULL;
    }
}

static void reap(void)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
        for (job_t *j = jobs; j; j = j->next)
            if (j->pid == pid && !j->exited) {
                j->exited = true;
                j->status = st;
                j->drain_until = mono_ms() + AGENT_DRAIN_MS;
            }
}

/* Jobs that exited and whose output is read (or waited for long enough)
 * are reported and freed. */
static void finish_jobs(void)
{
    int64_t now = mono_ms();
    for (job_t **pp = &jobs; *pp;) {
        job_t *j = *pp;
        if (!j->exited || ((j->out >= 0 || j->err >= 0) && now < j->drain_until)) {
            pp = &j->next;
            continue;
        }
        close_fd(&j->out);
        close_fd(&j->err);
        close_fd(&j->in);
        frame_msg_t m = { .type = FRAME_EXIT, .id = j->id };
        if (WIFSIGNALED(j->status)) {
            frame_set_num(&m, FN_STATUS, 128 + WTERMSIG(j->status));
            frame_set_num(&m, FN_SIGNAL, WTERMSIG(j->status));
        } else {
            frame_set_num(&m, FN_STATUS, WEXITSTATUS(j->status));
            frame_set_num(&m, FN_SIGNAL, 0);
        }
        images_attach(&m, j->img_mark);
        send_msg(&m);
        *pp = j->next;
        free(j->in_data);
        free(j->marker);
        free(j);
        if (!jobs)
            images_idle();
    }
}

/* ---- files ------------------------------------------------------------------ */

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

static void do_write(const frame_msg_t *m)
{
    if (!frame_has_str(m, FS_PATH) || !frame_has_str(m, FS_DATA)) {
        send_fail(m->id, EINVAL, "write");
        return;
    }
    char *path = dup_view(m->str[FS_PATH], m->str_len[FS_PATH]);
    if (!path) {
        send_fail(m->id, ENOMEM, "write");
        return;
    }
    if (path[0] != '/' || strlen(path) != m->str_len[FS_PATH] || strlen(path) >= PATH_MAX - 32) {
        send_fail(m->id, EINVAL, "write");
        free(path);
        return;
    }
    char tmp[PATH_MAX];
    const char *slash = strrchr(path, '/');
    snprintf(tmp, sizeof tmp, "%.*s/.talkback-write-XXXXXX", (int)(slash - path), path);
    make_parents(path);
    struct stat st;
    int fd = -1, err = 0;
    const char *what = "write";
    /* A folder (or anything else that is not a file or a link) at the
     * path is Docker's call: refuse, the manager falls back. */
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
        err = EISDIR;
        goto fail;
    }
    if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
        err = errno;
        what = "create";
        goto fail;
    }
    if (write_all(fd, m->str[FS_DATA], m->str_len[FS_DATA]) != 0 ||
        fchmod(fd, (mode_t)(frame_num(m, FN_MODE, 0644) & 07777)) != 0) {
        err = errno;
        goto fail_unlink;
    }
    int64_t mt = frame_num(m, FN_MTIME, 0);
    if (mt > 0) {
        struct timespec ts[2] = { { (time_t)mt, 0 }, { (time_t)mt, 0 } };
        futimens(fd, ts);
    }
    if (close(fd) != 0) {
        fd = -1;
        err = errno;
        goto fail_unlink;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        err = errno;
        what = "rename";
        goto fail_unlink;
    }
    free(path);
    send_id(FRAME_DONE, m->id);
    return;

fail_unlink:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
fail:
    send_fail(m->id, err ? err : EIO, what);
    free(path);
}

/* ---- limits ----------------------------------------------------------------- */

/* The start of a small file as a C string in buf; false when unreadable. */
static bool read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return true;
}

/* The first number in a file, -1 when absent or "max". */
static int64_t read_num(const char *path, int64_t *second)
{
    char buf[128];
    if (!read_small(path, buf, sizeof buf))
        return -1;
    char *end;
    long long v = strtoll(buf, &end, 10);
    if (second)
        *second = strtoll(end, NULL, 10);
    if (end == buf)
        return -1;
    return v;
}

/* The host's swap in bytes (a container's /proc/meminfo is the host's),
 * -1 when unknown: a cgroup may allow swap the host does not have. */
static int64_t host_swap(void)
{
    if (!read_small("/proc/meminfo", chunk, sizeof chunk))
        return -1;
    const char *p = strstr(chunk, "\nSwapTotal:");
    if (!p)
        return -1;
    char *end;
    long long kib = strtoll(p + 11, &end, 10);
    return end == p + 11 ? -1 : (int64_t)kib * 1024;
}

static void do_limits(const frame_msg_t *m)
{
    frame_msg_t r = { .type = FRAME_LIMITS_OK, .id = m->id };
    int64_t mem, swap, pids, cq, cp = 0;
    if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {   /* cgroup v2 */
        mem = read_num("/sys/fs/cgroup/memory.max", NULL);
        int64_t sw = read_num("/sys/fs/cgroup/memory.swap.max", NULL);
        swap = mem >= 0 && sw >= 0 ? mem + sw : -1;
        pids = read_num("/sys/fs/cgroup/pids.max", NULL);
        cq = read_num("/sys/fs/cgroup/cpu.max", &cp);
    } else {
        mem = read_num("/sys/fs/cgroup/memory/memory.limit_in_bytes", NULL);
        swap = read_num("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes", NULL);
        pids = read_num("/sys/fs/cgroup/pids/pids.max", NULL);
        cq = read_num("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", NULL);
        cp = read_num("/sys/fs/cgroup/cpu/cpu.cfs_period_us", NULL);
    }
    /* cgroup v1 says "no limit" with a huge number. */
    if (mem >= (int64_t)1 << 62)
        mem = -1;
    if (swap >= (int64_t)1 << 62)
        swap = -1;
    /* Memory + swap as far as the host has swap to give. */
    int64_t hs = host_swap();
    if (mem >= 0 && hs >= 0 && (swap < 0 || swap > mem + hs))
        swap = mem + hs;
    frame_set_num(&r, FN_MEM, mem);
    frame_set_num(&r, FN_SWAP, swap);
    frame_set_num(&r, FN_PIDS, pids);
    frame_set_num(&r, FN_CPU_QUOTA, cq);
    frame_set_num(&r, FN_CPU_PERIOD, cp > 0 ? cp : -1);
    send_msg(&r);
}

/* ---- the worker loop --------------------------------------------------------- */

static void on_sigchld(int sig)
{
    (void)sig;
    int e = errno;
    ssize_t w = write(chld_pipe[1], "c", 1);
    (void)w;
    errno = e;
}

static void say_ready(int64_t nonce)
{
    frame_msg_t m = { .type = FRAME_READY };
    frame_set_num(&m, FN_VERSION, FRAME_VERSION);
    frame_set_num(&m, FN_PID, getpid());
    frame_set_num(&m, FN_NONCE, nonce);
    send_msg(&m);
}

/* The nonce of the link this worker last said READY to.  A request of any
 * other link is dropped: that link is gone, and its frames may still sit
 * in stdin (a worker that hung never read them; its successor must not run
 * them after the manager gave up on them and ran the command another
 * way). */
static int64_t link_nonce;

static void handle(const frame_msg_t *m)
{
    if (m->type == FRAME_HELLO) {
        link_nonce = frame_num(m, FN_NONCE, 0);
        say_ready(link_nonce);
        return;
    }
    if (link_nonce == 0 || frame_num(m, FN_NONCE, 0) != link_nonce)
        return;
    switch (m->type) {
    case FRAME_RUN:    do_run(m); break;
    case FRAME_KILL:   do_kill(m); break;
    case FRAME_WRITE:  do_write(m); break;
    case FRAME_LIMITS: do_limits(m); break;
    default: break;    /* an agent -> manager type: not for us */
    }
}

static int worker(void)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (pipe2(chld_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigchld;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    set_nonblock(STDIN_FILENO);

    frame_reader_t rd;
    frame_reader_init(&rd, FRAME_MAX, true);
    bool stdin_open = true;
    int64_t partial_since = 0;   /* 0: no half frame waiting */
    struct pollfd *pf = NULL;
    job_t **owner = NULL;
    size_t pf_cap = 0;
    say_ready(0);

    for (;;) {
        size_t need = 3;
        for (job_t *j = jobs; j; j = j->next)
            need += 3;
        if (need > pf_cap) {
            struct pollfd *np = realloc(pf, need * sizeof *pf);
            job_t **no = realloc(owner, need * sizeof *owner);
            if (np)
                pf = np;
            if (no)
                owner = no;
            if (!np || !no) {
                sleep_ms(100);
                continue;
            }
            pf_cap = need;
        }
        size_t n = 0;
        pf[n++] = (struct pollfd){ stdin_open ? STDIN_FILENO : -1, POLLIN, 0 };
        pf[n++] = (struct pollfd){ chld_pipe[0], POLLIN, 0 };
        pf[n++] = (struct pollfd){ images_fd(), POLLIN, 0 };
        int64_t now = mono_ms(), wake = -1;
        for (job_t *j = jobs; j; j = j->next) {
            if (j->out >= 0) {
                owner[n] = j;
                pf[n++] = (struct pollfd){ j->out, POLLIN, 0 };
            }
            if (j->err >= 0) {
                owner[n] = j;
                pf[n++] = (struct pollfd){ j->err, POLLIN, 0 };
            }
            if (j->in >= 0) {
                owner[n] = j;
                pf[n++] = (struct pollfd){ j->in, POLLOUT, 0 };
            }
            if (j->exited && (wake < 0 || j->drain_until < wake))
                wake = j->drain_until;
            if (j->kill_at && (wake < 0 || j->kill_at < wake))
                wake = j->kill_at;
        }
        if (partial_since && (wake < 0 || partial_since + AGENT_PARTIAL_MS < wake))
            wake = partial_since + AGENT_PARTIAL_MS;
        int timeout = wake < 0 ? -1 : wake <= now ? 0 : (int)(wake - now);
        int r = poll(pf, n, timeout);
        if (r < 0 && errno != EINTR)
            sleep_ms(10);

        if (pf[1].revents & POLLIN) {
            char drain[64];
            while (read(chld_pipe[0], drain, sizeof drain) > 0)
                ;
        }
        if (pf[2].revents & POLLIN)
            images_drain();
        reap();
        expire_jobs();
        for (size_t i = 3; r > 0 && i < n; i++) {
            if (!pf[i].revents)
                continue;
            job_t *j = owner[i];
            if (pf[i].fd == j->out)
                job_read(j, &j->out, 1);
            else if (pf[i].fd == j->err)
                job_read(j, &j->err, 2);
            else if (pf[i].fd == j->in)
                job_write_stdin(j);
        }
        finish_jobs();

        if (pf[0].revents) {
            ssize_t got = read(STDIN_FILENO, chunk, sizeof chunk);
            if (got > 0) {
                if (frame_reader_feed(&rd, chunk, (size_t)got) != 0) {
                    frame_reader_free(&rd);   /* out of memory: start over */
                    frame_reader_init(&rd, FRAME_MAX, true);
                }
            } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
                stdin_open = false;   /* nobody can reach us any more */
            }
        }
        if (partial_since && mono_ms() - partial_since >= AGENT_PARTIAL_MS) {
            frame_reader_skip(&rd);
            partial_since = 0;
        }
        frame_msg_t m;
        bool progress = false;
        while (frame_reader_next(&rd, &m) == 1) {
            handle(&m);
            progress = true;
        }
        if (progress || !frame_reader_partial(&rd))
            partial_since = 0;
        if (frame_reader_partial(&rd) && !partial_since)
            partial_since = mono_ms();
        frame_reader_trim(&rd);
        finish_jobs();
    }
}

/* ---- the supervisor -------------------------------------------------------------- */

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}

/* The program's code, from the linker. */
extern char __executable_start[], etext[];

/* Drop the code pages start-up touched (libc's initialisation reads most
 * of a static binary, and the kernel maps neighbours of every page it
 * faults in) and fault the rest in one page at a time: what stays
 * resident is what the two loops run.  The binary is a file in each
 * sandbox's own layer, so its pages are not shared between sandboxes and
 * every page counts. */
static void trim_code(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)__executable_start & ~(uintptr_t)(pg - 1);
    uintptr_t b = ((uintptr_t)etext + (uintptr_t)pg - 1) & ~(uintptr_t)(pg - 1);
    madvise((void *)a, b - a, MADV_RANDOM);
    madvise((void *)a, b - a, MADV_DONTNEED);
}

int main(void)
{
    trim_code();
    /* Keep freed large buffers (an 8 MiB write) from staying resident. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    reset_signals();
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    int64_t backoff = AGENT_BACKOFF_MIN_MS;
    while (!stopping) {
        int64_t born = mono_ms();
        pid_t pid = fork();
        if (pid == 0) {
            signal(SIGTERM, SIG_DFL);
            signal(SIGINT, SIG_DFL);
            signal(SIGHUP, SIG_DFL);
            _exit(worker());
        }
        if (pid < 0) {
            sleep_ms(backoff);
            continue;
        }
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            if (stopping)
                kill(pid, SIGKILL);
        if (stopping)
            break;
        /* Pad past any half frame the worker left (see the top). */
        static const char zeros[4096];
        for (size_t left = FRAME_AGENT_MAX + FRAME_HDR; left > 0;) {
            size_t k = left < sizeof zeros ? left : sizeof zeros;
            if (write_all(STDOUT_FILENO, zeros, k) != 0)
                break;
            left -= k;
        }
        backoff = mono_ms() - born > 1000 ? AGENT_BACKOFF_MIN_MS
                : backoff * 2 > AGENT_BACKOFF_MAX_MS ? AGENT_BACKOFF_MAX_MS : backoff * 2;
        sleep_ms(backoff);
    }
    return 0;
}
