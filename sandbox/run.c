/* run.c -- one command inside a sandbox (see run.h for why it is shaped
 * this way).
 *
 * Two ways to run it, one result: through the sandbox's agent when the
 * manager holds a live link to it (sandbox/agent_link.h), else through a Docker
 * exec.  Both get the same argv, environment, working folder and marker,
 * so the model reads the same bytes whichever ran it.  When the agent
 * cannot start a command, it runs through exec; when the link breaks after
 * the command started, what is left of it is killed by its marker and it
 * reads as killed (exit code 137) -- it is never run twice.
 */
#include "sandbox/run.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "proto/frame.h"
#include "sandbox/agent_link.h"

/* Walk /proc with builtins only and SIGSTOP each process whose environment
 * holds the marker, so it cannot fork any more; walk again while new ones
 * turn up (one may have forked between two walks); then SIGKILL them all. */
static const char kill_script[] =
    "m=$1; all=' '\n"
    "for r in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do\n"
    "  found=0\n"
    "  for d in /proc/[0-9]*; do\n"
    "    p=${d#/proc/}\n"
    "    [ \"$p\" = \"$$\" ] && continue\n"
    "    case $all in *\" $p \"*) continue;; esac\n"
    "    while IFS= read -r -d '' e; do\n"
    "      if [ \"$e\" = \"$m\" ]; then kill -STOP \"$p\"; all=\"$all$p \"; found=1; break; fi\n"
    "    done 2>/dev/null < \"$d/environ\"\n"
    "  done 2>/dev/null\n"
    "  [ $found = 0 ] && break\n"
    "done\n"
    "for p in $all; do kill -KILL \"$p\" 2>/dev/null; done\n"
    "exit 0\n";

typedef struct {
    run_result_t *res;
    const run_opts_t *o;
    int64_t start_ms;
    int64_t out_total; /* output bytes so far */
} run_ctx_t;

static void on_output(void *ctx, int stream, const char *data, size_t len)
{
    run_ctx_t *c = ctx;
    if (stream == FRAME_STREAM_IMAGES) {
        free(c->res->images);
        c->res->images = malloc(len);
        c->res->images_len = c->res->images ? len : 0;
        if (c->res->images)
            memcpy(c->res->images, data, len);
        return;
    }
    /* The output limit: on the exec path it is enforced here (and the
     * cancel check below stops the command); the agent enforces it
     * itself, so it never sends more. */
    int64_t lim = c->o->output_limit;
    if (lim > 0 && c->out_total + (int64_t)len > lim) {
        len = (size_t)(lim - c->out_total);
        c->res->output_limited = true;
    }
    c->out_total += (int64_t)len;
    if (len == 0)
        return;
    if (stream == 2 && c->o->separate_stderr)
        capbuf_append(&c->res->errout, data, len);
    else
        capbuf_append(&c->res->out, data, len);
}

/* Run at the call's answer time a command is kept as a job: a grace for
 * the agent's answer, past which it was not kept (an older agent, or the
 * exec path) and is stopped before the call's deadline. */
#define RUN_DETACH_GRACE_MS 500

/* The call must answer now and the command is still running. */
static bool detach_due(void *ctx)
{
    run_ctx_t *c = ctx;
    return c->o->job_at_ms && proto_now_ms() >= c->o->job_at_ms;
}

static bool should_stop(void *ctx)
{
    run_ctx_t *c = ctx;
    if (c->res->output_limited)
        return true;
    if (c->o->job_at_ms && proto_now_ms() >= c->o->job_at_ms + RUN_DETACH_GRACE_MS) {
        c->res->unkept = true;
        return true;
    }
    if (c->o->job && worker_job_cancelled(c->o->job)) {
        c->res->cancelled = true;
        return true;
    }
    if (c->o->capped && c->o->capped(c->o->capped_ctx)) {
        c->res->disk_capped = true;
        return true;
    }
    if (proto_mono_ms() - c->start_ms >= (int64_t)c->o->timeout_s * 1000) {
        c->res->timed_out = true;
        return true;
    }
    return false;
}

static void make_marker(char *out, size_t outlen)
{
    unsigned char rnd[12];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, rnd, sizeof rnd) != (ssize_t)sizeof rnd) {
        /* Fall back to time and address bits: unique enough per sandbox. */
        uint64_t t = (uint64_t)proto_mono_ms() ^ (uint64_t)(uintptr_t)out;
        memcpy(rnd, &t, sizeof t);
        memset(rnd + 8, 0, 4);
    }
    if (fd >= 0)
        close(fd);
    size_t o = (size_t)snprintf(out, outlen, "TALKBACK_RUN=");
    for (size_t i = 0; i < sizeof rnd && o + 2 < outlen; i++)
        o += (size_t)snprintf(out + o, outlen - o, "%02x", rnd[i]);
}

static bool kill_pass_late(void *ctx)
{
    return proto_mono_ms() >= *(const int64_t *)ctx;
}

void run_kill_marker(docker_t *d, const char *id, const char *marker)
{
    const char *argv[] = { "bash", "-c", kill_script, "talkback-kill", marker, NULL };
    int64_t until = proto_mono_ms() + 15000;
    docker_exec_t x = { .argv = argv, .workdir = "/", .cancelled = kill_pass_late, .ctx = &until };
    int code;
    docker_err_t err = docker_exec(d, id, &x, &code);
    if (err == DOCKER_OK)
        return;
    /* No room even for the kill pass (a fork bomb at the pids limit):
     * restart the sandbox, which ends every process in it and keeps its
     * files.  The last resort, so it is logged. */
    log_warn("kill pass in %.12s failed (%s): restarting the sandbox", id, docker_strerror(err));
    char path[160];
    snprintf(path, sizeof path, "/containers/%s/restart?t=1", id);
    long st;
    json_t *ans = NULL;
    docker_err_t re = docker_call(d, "POST", path, NULL, &st, &ans);
    if (re != DOCKER_OK)
        log_error("could not restart %.12s: %s", id, docker_message(ans));
    json_decref(ans);
}

/* Run through the sandbox's agent when a link to it is up.  True when
 * that settled the run (res filled); false when it must go through Docker
 * exec (no link, or the agent never started it). */
static bool run_via_agent(const run_via_t *v, const char *id, const run_opts_t *o, const char **env,
                          const char *marker, run_ctx_t *ctx)
{
    run_result_t *res = ctx->res;
    agent_link_t *link = agent_get(v->agents, id);
    if (!link)
        return false;
    agent_exit_t ax;
    int code;
    /* The agent does the timeout and the 2>&1 itself: two fewer
     * processes to start, each a few milliseconds. */
    const char *direct[] = { "bash", "-c", o->command, NULL };
    agent_run_t ar = {
        .argv = direct,
        .env = env,
        .workdir = "/work",
        .marker = marker,
        .stdin_data = o->stdin_data,
        .stdin_len = o->stdin_len,
        .timeout_ms = ((int64_t)o->timeout_s + 2) * 1000,
        .merge_stderr = !o->separate_stderr,
        .no_shepherd = !v->shepherd,
        .output_limit = o->output_limit,
        .watchdog_report = o->watchdog_report,
        .bg_watch_ms = o->bg_watch_ms,
        .on_output = on_output,
        .cancelled = should_stop,
        .job_cap = o->job_at_ms ? o->job_log_cap : 0,
        .detach_due = detach_due,
        .ctx = ctx,
    };
    agent_err_t ae = agent_run(link, &ar, &ax);
    agent_release(&link);
    res->jobs = ax.jobs;
    res->jobs_len = ax.jobs_len;
    if (ae == AGENT_DETACHED) {
        res->job = ax.job; /* it runs on: its end is told later */
        res->err = DOCKER_OK;
        bgr_free(&ax.bg);
        return true;
    }
    code = ax.exit_code;
    res->cpu_ms = ax.cpu_ms;
    res->max_rss_kb = ax.max_rss_kb;
    res->output_limited |= ax.output_limited;
    res->watchdog = ax.wd;
    bgr_free(&res->bg);
    res->bg = ax.bg;
    if (res->cancelled || res->timed_out || res->disk_capped || res->unkept ||
        (res->output_limited && ae != AGENT_OK)) {
        /* The agent's kill pass ran unless it said otherwise. */
        if (ae != AGENT_CANCELLED)
            run_kill_marker(v->d, id, marker);
        res->err = DOCKER_OK;
        res->exit_code = res->output_limited ? 137 : -1;
        return true;
    }
    if (ae == AGENT_OK) {
        res->exit_code = code;
        if (code == 137 && !res->output_limited &&
            proto_mono_ms() - ctx->start_ms >= (int64_t)o->timeout_s * 1000)
            res->timed_out = true;
        return true;
    }
    if (ae == AGENT_LOST || ae == AGENT_UNKNOWN)
        run_kill_marker(v->d, id, marker);
    if (ae == AGENT_LOST) {
        res->agent_lost = true; /* what was left is killed by the pass just made */
        res->exit_code = -1;
        return true;
    }
    /* Not started (or killed before it could do anything): exec. */
    return false;
}

docker_err_t run_command(const run_via_t *v, const char *id, const run_opts_t *o, run_result_t *res)
{
    docker_t *d = v->d;
    memset(res, 0, sizeof *res);
    res->exit_code = -1;
    res->cpu_ms = res->max_rss_kb = -1;
    size_t cap = o->output_cap ? o->output_cap : 65536;
    if (capbuf_init(&res->out, cap) || capbuf_init(&res->errout, o->separate_stderr ? cap : 2)) {
        res->err = DOCKER_ENOMEM;
        return res->err;
    }
    char marker[64];
    make_marker(marker, sizeof marker);
    char tmo[32];
    snprintf(tmo, sizeof tmo, "%d", o->timeout_s + 2);
    /* Docker reads stdout and stderr through two pipes, so their relative
     * order would be lost; unless asked to keep them apart, the command's
     * stderr is its stdout, and the output reads as a terminal shows it. */
    const char *merged[] = { "timeout",          "-s", "KILL", tmo,  "sh",       "-c",
                             "exec \"$@\" 2>&1", "sh", "bash", "-c", o->command, NULL };
    const char *apart[] = { "timeout", "-s", "KILL", tmo, "bash", "-c", o->command, NULL };
    const char *const *argv = o->separate_stderr ? apart : merged;
    /* The answer time lets `talkback job N` (agent/tbcli.c) wait no longer. */
    char answer_at[48] = "";
    if (o->job_at_ms)
        snprintf(answer_at, sizeof answer_at, "TALKBACK_ANSWER_AT=%lld", (long long)o->job_at_ms);
    const char *env[] = { marker,
                          "HOME=/root",
                          "TERM=dumb",
                          "DEBIAN_FRONTEND=noninteractive",
                          "PIP_BREAK_SYSTEM_PACKAGES=1",
                          answer_at[0] ? answer_at : NULL,
                          NULL };
    run_ctx_t ctx = { .res = res, .o = o, .start_ms = proto_mono_ms() };
    docker_exec_t x = {
        .argv = argv,
        .env = env,
        .workdir = "/work",
        .stdin_data = o->stdin_data,
        .stdin_len = o->stdin_len,
        .on_output = on_output,
        .cancelled = should_stop,
        .ctx = &ctx,
    };
    int code = -1;
    if (run_via_agent(v, id, o, env, marker, &ctx))
        goto done;
    res->err = docker_exec(d, id, &x, &code);
    if (res->err == DOCKER_ECANCELLED) {
        run_kill_marker(d, id, marker);
        res->err = DOCKER_OK;
        res->exit_code = res->output_limited ? 137 : -1; /* killed, as the agent says it */
    } else if (res->err == DOCKER_OK) {
        res->exit_code = code;
        /* timeout's own safety net fired (the manager was too slow to). */
        if (code == 137 && !res->output_limited &&
            proto_mono_ms() - ctx.start_ms >= (int64_t)o->timeout_s * 1000)
            res->timed_out = true;
    }
done:
    res->elapsed_ms = proto_mono_ms() - ctx.start_ms;
    return res->err;
}

docker_err_t run_put_file(const run_via_t *v, const char *id, const char *abspath, const void *data,
                          size_t len, unsigned mode, int64_t mtime, long *status, json_t **out)
{
    if (mtime == 0)
        mtime = (int64_t)time(NULL);
    agent_link_t *link = agent_get(v->agents, id);
    if (link) {
        int rc = agent_write(link, abspath, data, len, mode, mtime);
        agent_release(&link);
        if (rc == 0) {
            if (status)
                *status = 200;
            if (out)
                *out = NULL;
            return DOCKER_OK;
        }
    }
    return docker_put_file(v->d, id, abspath, data, len, mode, mtime, status, out);
}

typedef struct {
    textbuf_t buf;
    size_t max;
    bool over;
    int64_t until;
} read_ctx_t;

static void read_output(void *ctx, int stream, const char *data, size_t len)
{
    read_ctx_t *r = ctx;
    if (stream != 1 || r->over)
        return;
    if (r->buf.len + len > r->max) {
        r->over = true;
        return;
    }
    textbuf_append(&r->buf, data, len);
}

static bool read_late(void *ctx)
{
    read_ctx_t *r = ctx;
    return r->over || proto_mono_ms() >= r->until;
}

int run_read_file(const run_via_t *v, const char *id, const char *abspath, size_t max, char **data,
                  size_t *len)
{
    *data = NULL;
    *len = 0;
    agent_link_t *link = agent_get(v->agents, id);
    if (!link)
        return docker_get_file(v->d, id, abspath, max, data, len, NULL) == DOCKER_OK ? 0 : -1;
    const char *argv[] = { "cat", "--", abspath, NULL };
    const char *env[] = { "LC_ALL=C", NULL };
    read_ctx_t r = { .max = max, .until = proto_mono_ms() + 10000 };
    textbuf_init(&r.buf);
    agent_run_t ar = {
        .argv = argv,
        .env = env,
        .workdir = "/",
        .timeout_ms = 10000,
        .on_output = read_output,
        .cancelled = read_late,
        .ctx = &r,
    };
    agent_exit_t ex;
    agent_err_t ae = agent_run(link, &ar, &ex);
    agent_release(&link);
    if (ae != AGENT_OK || ex.exit_code != 0 || r.over || r.buf.oom) {
        textbuf_free(&r.buf);
        return -1;
    }
    *data = textbuf_take(&r.buf, len);
    if (!*data)
        *data = calloc(1, 1);
    textbuf_free(&r.buf);
    return *data ? 0 : -1;
}

int run_limits(const run_via_t *v, const char *id, agent_limits_t *out)
{
    agent_link_t *link = agent_get(v->agents, id);
    if (!link)
        return -1;
    int rc = agent_limits(link, out);
    agent_release(&link);
    return rc;
}

void run_result_free(run_result_t *res)
{
    capbuf_free(&res->out);
    capbuf_free(&res->errout);
    free(res->images);
    res->images = NULL;
    free(res->jobs);
    res->jobs = NULL;
    bgr_free(&res->bg);
}
