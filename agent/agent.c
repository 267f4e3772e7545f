/* agent.c -- talkback-agent: the fast path inside each sandbox.
 *
 * A small static program that runs as a sandbox's main process (under
 * Docker's init) and runs commands for the sandbox manager without a
 * Docker exec each time.  It speaks frame.h over its stdin and stdout,
 * which the manager reaches through one Docker attach connection
 * (sandbox/agent_link.c).  No network listener, no socket file.
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
 * descriptors -- under a shepherd (shepherd.h), a subreaper that owns
 * every process the command starts, wherever it went (setsid, double
 * fork, env -i), and reports the command's CPU time and peak memory.
 * Things the exec path needs extra processes for are done here instead,
 * since every exec costs milliseconds: "merge" makes stderr the stdout
 * pipe (the exec path's sh -c 'exec "$@" 2>&1'), "tmo" kills the command
 * and all it started when the time is up (the exec path's timeout -s KILL;
 * the exit status reads 137 either way), and "ol" does the same once the
 * output passes that many bytes.
 * When it exits, its pipes are read until every writer is gone or 2 s
 * pass, then closed: dockerd does the same with an exec's stream, so a
 * command that leaves `server &` holding stdout costs 2 s either way and
 * prints the same; then its shepherd is released and what it left keeps
 * running (unless it is a fork bomb, see shepherd.h).  KILL has the
 * shepherd freeze and kill the whole tree, and is answered once it is
 * gone; for a command it no longer knows (or run without a shepherd) it
 * SIGKILLs every process whose environment holds the marker (/proc scan,
 * repeated while any was found: the same pass run.c makes with bash
 * builtins).  Neither needs a new process, so both work at the pids limit.
 *
 * Writes are atomic: a temporary file in the target's folder, mode and
 * mtime set, then rename.  Anything unusual (the target is a folder, a
 * parent is a file) is refused with FAIL, and the manager writes through
 * Docker's archive API instead, which decides those cases as it always
 * did.
 */
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/bgkeep.h"
#include "agent/bgwatch.h"
#include "agent/files.h"
#include "agent/images.h"
#include "agent/jobs.h"
#include "agent/limits.h"
#include "agent/shepherd.h"
#include "agent/strays.h"
#include "agent/watchdog.h"
#include "proto/frame.h"

/* How long output is still read after a command's exit: dockerd waits as
 * long for an exec's stream before closing it. */
#define AGENT_DRAIN_MS       2000
/* How long the report of a command whose leftovers held its output waits
 * for its shepherd's verdict on them (a bomb is killed first): longer than
 * the shepherd's own bound, shorter than any call's patience. */
#define AGENT_VERDICT_MS     5000
/* A half frame on stdin that has not completed for this long, while no
 * frame got through, was left by a manager that died mid-write (a live one
 * writes a whole frame in one go): skip it and look for the next frame.
 * Counted from when it started, not from the last byte, since the next
 * manager's hellos keep feeding it. */
#define AGENT_PARTIAL_MS     5000
/* Output read per OUT frame, and stdin read per feed. */
#define AGENT_CHUNK          16384
/* Restart delays of the worker: from 100 ms, doubling up to 5 s while it
 * keeps dying within a second. */
#define AGENT_BACKOFF_MIN_MS 100
#define AGENT_BACKOFF_MAX_MS 5000

extern char **environ;

typedef struct job {
    uint64_t id;
    pid_t pid; /* the shepherd's, or the command's without one */
    bool shepherd;
    bool alive;   /* pid not reaped yet */
    int ctl;      /* the shepherd's records, -1 once it ended */
    int out, err; /* read ends of stdout/stderr, -1 once closed */
    int in;       /* write end of stdin, -1 when none or done */
    char *in_data;
    size_t in_len, in_off;
    char *marker;           /* K=V, or NULL */
    int64_t kill_at;        /* mono ms of the timeout's SIGKILL, 0: none */
    int64_t out_limit;      /* output bytes allowed, 0: no limit */
    int64_t out_total;      /* output bytes sent */
    bool limited;           /* killed at the output limit */
    bool stopping;          /* a kill was ordered */
    bool kill_reply;        /* a KILL waits for its DONE */
    bool released;          /* the shepherd was told the command is done */
    bool told;              /* the shepherd said how the command ended */
    uint64_t since;         /* its start, as strays.h counts */
    bool held;              /* ... while what it left still held its output */
    bool exited;            /* the command ended */
    bool failed;            /* it could not be exec'd: FAIL was sent, no EXIT */
    int status;             /* its wait status */
    int64_t cpu_ms, rss_kb; /* -1: unknown */
    int64_t drain_until;
    uint64_t img_mark; /* images.h: images written since this are its */
    bgk_job_t bg;      /* what it left running, when watched (bgkeep.h) */
    jobs_run_t jr;     /* its spool, and its job once detached (jobs.h) */
    bool detached;     /* a job now: output to its file, no EXIT */
    struct job *next;
} job_t;

static job_t *jobs;
static int chld_pipe[2] = { -1, -1 };
static textbuf_t obuf;
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
    textbuf_reset(&obuf);
    if (frame_encode(m, &obuf) != 0)
        return;
    if (write_all(STDOUT_FILENO, obuf.buf, obuf.len) != 0)
        _exit(3);
    if (obuf.cap > 4 * AGENT_CHUNK)
        textbuf_free(&obuf);
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

/*
 * Hand a freshly spawned job its ends of the pipes: close the child's
 * ends here (so EOF arrives when the child is done), keep ours
 * non-blocking for the poll loop, and arm the timeout.  An empty stdin
 * is closed at once so the child sees EOF.
 */
static void run_wire(job_t *j, int64_t tmo, int pin[2], int pout[2], int perr[2])
{
    close_fd(&pout[1]);
    close_fd(&perr[1]);
    close_fd(&pin[0]);
    if (tmo > 0)
        j->kill_at = mono_ms() + tmo;
    if (j->ctl >= 0)
        set_nonblock(j->ctl);
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
}

/* RUN: copy the frame's argv, env, folder, stdin and marker, make the
 * pipes, start the command under its shepherd.  It is long because every
 * step can fail into the one cleanup and answer at its end (goto fail). */
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
    j->out = j->err = j->in = j->ctl = -1;
    j->cpu_ms = j->rss_kb = -1;
    j->id = m->id;
    j->jr.fd = -1;
    j->out_limit = frame_num(m, FN_OUTPUT_LIMIT, 0);
    if (frame_has_str(m, FS_MARKER) &&
        !(j->marker = dup_view(m->str[FS_MARKER], m->str_len[FS_MARKER])))
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
    if (frame_list_each(envbytes, frame_has_str(m, FS_ENV) ? m->str_len[FS_ENV] : 0, env_merge,
                        &envv) < 0 ||
        envv.oom || !envv.v)
        goto fail;

    jobs_run_init(&j->jr, frame_num(m, FN_JOB_CAP, 0), argv.v[argv.n > 2 ? 2 : 0], mono_ms());
    what = "pipe";
    bool merge = frame_num(m, FN_MERGE, 0) != 0;
    if (pipe2(pout, O_CLOEXEC) || (!merge && pipe2(perr, O_CLOEXEC)) ||
        (j->in_data && pipe2(pin, O_CLOEXEC))) {
        err = errno;
        goto fail;
    }
    what = "spawn";
    j->img_mark = images_mark();
    j->since = strays_now();
    shep_cmd_t sc = { .argv = argv.v,
                      .envp = envv.v,
                      .cwd = cwd,
                      .in = j->in_data ? pin[0] : -1,
                      .out = pout[1],
                      .err = merge ? pout[1] : perr[1] };
    j->shepherd = frame_num(m, FN_SHEPHERD, 1) != 0;
    sc.watch_ms = j->shepherd ? frame_num(m, FN_BG_WATCH, 0) : 0;
    bgk_job_start(&j->bg, sc.watch_ms > 0);
    watchdog_run(m);
    if ((j->pid = shep_spawn(&sc, j->shepherd, &j->ctl, &err)) < 0)
        goto fail;
    j->alive = true;

    run_wire(j, frame_num(m, FN_TIMEOUT, 0), pin, pout, perr);
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
        jobs_run_free(&j->jr);
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

/* The command ended with wait status st: read what is left of its output
 * for at most AGENT_DRAIN_MS. */
static void job_exited(job_t *j, int st)
{
    if (j->exited)
        return;
    j->exited = true;
    j->status = st;
    j->drain_until = mono_ms() + AGENT_DRAIN_MS;
}

/* DONE to a KILL, with what the command used when known. */
static void send_killed(job_t *j)
{
    frame_msg_t m = { .type = FRAME_DONE, .id = j->id };
    if (j->cpu_ms >= 0) {
        frame_set_num(&m, FN_CPU_MS, j->cpu_ms);
        frame_set_num(&m, FN_RSS_KB, j->rss_kb);
    }
    send_msg(&m);
    j->kill_reply = false;
}

/* Kill the command and everything it started: through its shepherd while
 * it lives (it answers with ENDED), else its group and its marker. */
static void job_stop(job_t *j)
{
    if (j->stopping)
        return;
    j->stopping = true;
    if (j->shepherd && j->alive) {
        shep_stop(j->pid);
        return;
    }
    if (j->alive) {
        kill(-j->pid, SIGKILL);
        kill(j->pid, SIGKILL);
    }
    shep_kill_marker(j->marker);
}

/* The shepherd's records: the command's end and the tree's. */
static void job_ctl(job_t *j)
{
    shep_rec_t r;
    static char item[BG_ITEM_MAX + 1];
    int got;
    while (j->ctl >= 0 && (got = shep_read(j->ctl, &r, item, sizeof item)) != 0) {
        if (got < 0) {
            close_fd(&j->ctl);
            break;
        }
        if (bgk_rec(&j->bg, &r, item))
            continue;
        if (r.kind == SHEP_FAILED && !j->failed) {
            send_fail(j->id, r.err, "spawn");
            j->failed = true;
            job_exited(j, 127 << 8);
            continue;
        }
        if (r.kind != SHEP_EXITED && r.kind != SHEP_ENDED)
            continue;
        j->told = true;
        if (r.cpu_ms >= 0) {
            j->cpu_ms = r.cpu_ms;
            j->rss_kb = r.rss_kb;
        }
        job_exited(j, r.status);
        if (r.kind == SHEP_ENDED && j->kill_reply)
            send_killed(j);
    }
}

/* KILL: through the shepherd while it lives (DONE follows its ENDED),
 * else the group and the marker at once. */
static void do_kill(const frame_msg_t *m)
{
    job_t *j = job_find(m->id);
    if (j && j->shepherd && j->alive) {
        j->kill_reply = true; /* DONE once the shepherd ended the tree */
        job_stop(j);
        return;
    }
    if (j && !j->exited && j->alive) {
        kill(-j->pid, SIGKILL);
        kill(j->pid, SIGKILL);
    }
    char *mk = NULL;
    if (frame_has_str(m, FS_MARKER))
        mk = dup_view(m->str[FS_MARKER], m->str_len[FS_MARKER]);
    shep_kill_marker(mk ? mk : j ? j->marker : NULL);
    free(mk);
    send_id(FRAME_DONE, m->id);
}

/* DETACH: the command goes on as a job (jobs.h); DETACHED (job 0: not kept). */
static void do_detach(const frame_msg_t *m)
{
    job_t *j = job_find(m->id);
    char path[128];
    int no =
        j && !j->exited && !j->stopping && !j->detached
            ? jobs_detach(&j->jr, j->kill_at ? j->kill_at - j->jr.start_ms : 0, path, sizeof path)
            : -1;
    if (no > 0)
        j->detached = true;
    /* job 0: not detached (it ended, or no file): the call goes on. */
    frame_msg_t r = { .type = FRAME_DETACHED, .id = m->id };
    frame_set_num(&r, FN_JOB, no > 0 ? no : 0);
    if (no > 0)
        frame_set_str(&r, FS_PATH, path, strlen(path));
    send_msg(&r);
}

/* Commands past their timeout are killed with all they started. */
static void expire_jobs(void)
{
    int64_t now = mono_ms();
    for (job_t *j = jobs; j; j = j->next)
        if (j->kill_at && now >= j->kill_at) {
            j->kill_at = 0;
            j->jr.timed_out |= !j->exited;
            if (!j->exited) /* timeout -s KILL leaves what outlived it too */
                job_stop(j);
        }
}

/* Output of a job: one read, one OUT frame; EOF closes that pipe.  Past
 * the output limit the rest is dropped and the command killed. */
static void job_read(job_t *j, int *fd, int stream)
{
    ssize_t n = read(*fd, chunk, sizeof chunk);
    if (n > 0) {
        if (j->limited)
            return;
        size_t k = (size_t)n;
        if (j->out_limit > 0 && j->out_total + n > j->out_limit) {
            k = (size_t)(j->out_limit - j->out_total);
            j->limited = true;
        }
        j->out_total += (int64_t)k;
        jobs_run_out(&j->jr, chunk, k);
        if (k > 0 && !j->detached) {
            frame_msg_t m = { .type = FRAME_OUT, .id = j->id };
            frame_set_num(&m, FN_STREAM, stream);
            frame_set_str(&m, FS_DATA, chunk, k);
            send_msg(&m);
        }
        if (j->limited)
            job_stop(j); /* even after it exited: what it left writes */
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
        j->in_off = j->in_len; /* the reader is gone (EPIPE) */
    if (j->in_off == j->in_len) {
        close_fd(&j->in);
        free(j->in_data);
        j->in_data = NULL;
    }
}

/* Children that ended: shepherds (their last records say how the command
 * ended; one killed without a word leaves strays, strays.h) or, without
 * one, the commands themselves.  Released shepherds have no job left. */
static void reap(void)
{
    int st;
    struct rusage ru;
    pid_t pid;
    while ((pid = wait4(-1, &st, WNOHANG, &ru)) > 0) {
        job_t *j = jobs;
        while (j && (j->pid != pid || !j->alive))
            j = j->next;
        if (!j) {
            strays_reaped(pid);
            continue;
        }
        j->alive = false;
        if (j->shepherd) {
            job_ctl(j);
            if (!j->told && !j->released && !j->failed)
                strays_kill(j->since);
        } else {
            j->cpu_ms = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                        (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
            j->rss_kb = ru.ru_maxrss;
        }
        job_exited(j, st); /* a shepherd that died without a word: its status */
        if (j->kill_reply)
            send_killed(j);
    }
    bool alive = false;
    for (job_t *j = jobs; j; j = j->next)
        alive |= j->alive;
    strays_settle(alive);
}

/* Jobs that exited and whose output is read (or waited for long enough)
 * are reported and freed.  A shepherd still alive is released, so what
 * the command left running keeps running; when that still held the
 * output (a server, or a fork bomb), the report waits for the shepherd's
 * verdict, so a bomb is gone before the next command comes. */
static void finish_jobs(void)
{
    int64_t now = mono_ms();
    for (job_t **pp = &jobs; *pp;) {
        job_t *j = *pp;
        if (!j->exited || ((j->out >= 0 || j->err >= 0) && now < j->drain_until) ||
            (j->shepherd && j->alive && j->stopping)) {
            pp = &j->next;
            continue;
        }
        if (j->shepherd && j->alive && !j->released) {
            j->held = j->out >= 0 || j->err >= 0;
            j->released = true;
            close_fd(&j->out);
            close_fd(&j->err);
            shep_release(j->pid);
            strays_released(j->pid, j->since);
            j->drain_until = now + AGENT_VERDICT_MS;
        }
        /* A watch's BG_WATCHED comes after the verdict on a bomb. */
        if ((j->bg.watch ? !j->bg.watched : j->held) && j->alive && now < j->drain_until) {
            pp = &j->next;
            continue;
        }
        close_fd(&j->out);
        close_fd(&j->err);
        close_fd(&j->in);
        if (j->alive && j->bg.watcher && j->ctl >= 0)
            bgk_adopt(j->pid, j->ctl); /* it keeps what is left running */
        else
            close_fd(&j->ctl);
        j->ctl = -1;
        jobs_run_end(&j->jr, j->status, now);
        if (j->failed || j->detached)
            goto free_job; /* a job's end is in its folder, told later */
        frame_msg_t m = { .type = FRAME_EXIT, .id = j->id };
        if (WIFSIGNALED(j->status)) {
            frame_set_num(&m, FN_STATUS, 128 + WTERMSIG(j->status));
            frame_set_num(&m, FN_SIGNAL, WTERMSIG(j->status));
        } else {
            frame_set_num(&m, FN_STATUS, WEXITSTATUS(j->status));
            frame_set_num(&m, FN_SIGNAL, 0);
        }
        if (j->cpu_ms >= 0) {
            frame_set_num(&m, FN_CPU_MS, j->cpu_ms);
            frame_set_num(&m, FN_RSS_KB, j->rss_kb);
        }
        if (j->limited)
            frame_set_num(&m, FN_LIMITED, 1);
        images_attach(&m, j->img_mark);
        watchdog_attach(&m);
        if (j->bg.watch)
            bgk_attach(&m, &j->bg);
        if (j->jr.cap)
            jobs_attach(&m); /* the model's runs only */
        send_msg(&m);
        bgk_sent(&j->bg);
    free_job:
        *pp = j->next;
        bgk_job_free(&j->bg);
        jobs_run_free(&j->jr);
        free(j->in_data);
        free(j->marker);
        free(j);
        if (!jobs)
            images_idle();
    }
}

/* ---- files ------------------------------------------------------------------ */

/* WRITE: files.c writes it atomically; DONE, or FAIL when it did not. */
static void do_write(const frame_msg_t *m)
{
    if (!frame_has_str(m, FS_PATH) || !frame_has_str(m, FS_DATA)) {
        send_fail(m->id, EINVAL, "write");
        return;
    }
    const char *what = "write";
    int err = files_write(m->str[FS_PATH], m->str_len[FS_PATH], m->str[FS_DATA],
                          m->str_len[FS_DATA], (unsigned)frame_num(m, FN_MODE, 0644),
                          frame_num(m, FN_MTIME, 0), &what);
    if (err)
        send_fail(m->id, err, what);
    else
        send_id(FRAME_DONE, m->id);
}

/* ---- limits ----------------------------------------------------------------- */

static void do_limits(const frame_msg_t *m)
{
    limits_t l;
    limits_read(&l);
    frame_msg_t r = { .type = FRAME_LIMITS_OK, .id = m->id };
    frame_set_num(&r, FN_MEM, l.mem);
    frame_set_num(&r, FN_SWAP, l.swap);
    frame_set_num(&r, FN_PIDS, l.pids);
    frame_set_num(&r, FN_CPU_QUOTA, l.cpu_quota);
    frame_set_num(&r, FN_CPU_PERIOD, l.cpu_period);
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
        watchdog_configure(m);
        say_ready(link_nonce);
        return;
    }
    if (link_nonce == 0 || frame_num(m, FN_NONCE, 0) != link_nonce)
        return;
    switch (m->type) {
    case FRAME_RUN: do_run(m); break;
    case FRAME_KILL: do_kill(m); break;
    case FRAME_WRITE: do_write(m); break;
    case FRAME_LIMITS: do_limits(m); break;
    case FRAME_DETACH: do_detach(m); break;
    default: break; /* an agent -> manager type: not for us */
    }
}

/*
 * Fill the poll set for one turn of the worker loop: the link (stdin),
 * the SIGCHLD self-pipe and the image watch first, then every open pipe
 * of every job, remembering which job owns each slot.  Returns the poll
 * timeout in ms: the nearest drain end, kill deadline or half-frame
 * expiry, or -1 when nothing is due.
 */
static int worker_pollset(struct pollfd *pf, job_t **owner, size_t *np, bool stdin_open,
                          int64_t partial_since)
{
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
        if (j->ctl >= 0) {
            owner[n] = j;
            pf[n++] = (struct pollfd){ j->ctl, POLLIN, 0 };
        }
        if (j->exited && (wake < 0 || j->drain_until < wake))
            wake = j->drain_until;
        if (j->kill_at && (wake < 0 || j->kill_at < wake))
            wake = j->kill_at;
    }
    for (size_t k = bgk_pollset(pf + n); k > 0; k--)
        owner[n++] = NULL; /* a keeper's records (bgkeep.h) */
    if (partial_since && (wake < 0 || partial_since + AGENT_PARTIAL_MS < wake))
        wake = partial_since + AGENT_PARTIAL_MS;
    *np = n;
    return wake < 0 ? -1 : wake <= now ? 0 : (int)(wake - now);
}

/*
 * Read what the manager sent on the link (when poll said it is readable)
 * and handle every whole frame.  A half frame that stays incomplete for
 * AGENT_PARTIAL_MS is skipped so one bad writer cannot wedge the link.
 */
static void worker_link(frame_reader_t *rd, bool readable, bool *stdin_open, int64_t *partial_since)
{
    if (readable) {
        ssize_t got = read(STDIN_FILENO, chunk, sizeof chunk);
        if (got > 0) {
            if (frame_reader_feed(rd, chunk, (size_t)got) != 0) {
                frame_reader_free(rd); /* out of memory: start over */
                frame_reader_init(rd, FRAME_MAX, true);
            }
        } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
            *stdin_open = false; /* nobody can reach us any more */
        }
    }
    if (*partial_since && mono_ms() - *partial_since >= AGENT_PARTIAL_MS) {
        frame_reader_skip(rd);
        *partial_since = 0;
    }
    frame_msg_t m;
    bool progress = false;
    while (frame_reader_next(rd, &m) == 1) {
        handle(&m);
        progress = true;
    }
    if (progress || !frame_reader_partial(rd))
        *partial_since = 0;
    if (frame_reader_partial(rd) && !*partial_since)
        *partial_since = mono_ms();
    frame_reader_trim(rd);
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

    jobs_boot();
    frame_reader_t rd;
    frame_reader_init(&rd, FRAME_MAX, true);
    bool stdin_open = true;
    int64_t partial_since = 0; /* 0: no half frame waiting */
    struct pollfd *pf = NULL;
    job_t **owner = NULL;
    size_t pf_cap = 0;
    say_ready(0);

    for (;;) {
        size_t need = 3 + bgk_count();
        for (job_t *j = jobs; j; j = j->next)
            need += 4;
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
        int timeout = worker_pollset(pf, owner, &n, stdin_open, partial_since);
        int r = poll(pf, n, watchdog_poll_timeout(timeout, jobs != NULL));
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
        watchdog_tick(jobs != NULL);
        for (size_t i = 3; r > 0 && i < n; i++) {
            if (!pf[i].revents)
                continue;
            job_t *j = owner[i];
            if (!j)
                bgk_read(pf[i].fd);
            else if (pf[i].fd == j->out)
                job_read(j, &j->out, 1);
            else if (pf[i].fd == j->err)
                job_read(j, &j->err, 2);
            else if (pf[i].fd == j->in)
                job_write_stdin(j);
            else if (pf[i].fd == j->ctl)
                job_ctl(j);
        }
        finish_jobs();

        worker_link(&rd, pf[0].revents != 0, &stdin_open, &partial_since);
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

int main(int argc, char **argv)
{
    const char *base = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
    if (argc > 0 && argv[0] && strcmp(base ? base + 1 : argv[0], "talkback") == 0)
        return tbcli_main(argc, argv); /* the sandbox's `talkback` (tbcli.c) */
    trim_code();
    /* Keep freed large buffers (an 8 MiB write) from staying resident. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    shep_reset_signals();
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
        backoff = mono_ms() - born > 1000              ? AGENT_BACKOFF_MIN_MS
                  : backoff * 2 > AGENT_BACKOFF_MAX_MS ? AGENT_BACKOFF_MAX_MS
                                                       : backoff * 2;
        sleep_ms(backoff);
    }
    return 0;
}
