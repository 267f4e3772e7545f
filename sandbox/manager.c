/* manager.c -- one kept container per chat, and the sandbox tools (see
 * manager.h).
 *
 * Finding a chat's container costs nothing on the hot path: the id is
 * cached per conversation, and an exec that fails because the container is
 * gone (404) or stopped (409) drops the cache and goes through
 * manager_ensure (ensure.c), which asks Docker.
 */
#include "sandbox/manager.h"
#include "sandbox/manager_int.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/convid.h"
#include "common/log.h"
#include "kept/chatname.h"
#include "kept/claim.h"
#include "kept/kept.h"
#include "proto/ops.h"
#include "sandbox/agent_link.h"
#include "sandbox/cache.h"
#include "sandbox/disk.h"
#include "hints/hints.h"
#include "hints/output.h"
#include "sandbox/hostops.h"
#include "sandbox/inotify_cap.h"
#include "sandbox/jobs.h"
#include "sandbox/background.h"
#include "sandbox/notices.h"
#include "sandbox/pictures.h"
#include "sandbox/run.h"
#include "sandbox/running.h"
#include "talk/texts.h"

#define LABEL_CONV    SPEC_LABEL_CONV
#define LABEL_USER    SPEC_LABEL_USER
#define LABEL_CREATED SPEC_LABEL_CREATED

/* ---- tools ----------------------------------------------------------------------- */

typedef struct {
    char s[CONVID_NAME_MAX];
} name_t;

static name_t container_name(const char *conv)
{
    name_t n;
    convid_container_name(conv, n.s);
    return n;
}

/* Find or make the container, then run fn; if fn reports the container
 * vanished or stopped (404/409), ensure again once and retry. */
typedef docker_err_t (*with_fn)(manager_t *m, const char *id, void *arg);

static proto_msg_t *with_container(manager_t *m, worker_job_t *job, with_fn fn, void *arg,
                                   textbuf_t *notice)
{
    const proto_msg_t *req = job->req;
    char id[72];
    char *cached_user = NULL;
    textbuf_t err;
    textbuf_init(&err);
    bool have = cache_get(m->cache, req->conv, id, &cached_user);
    if (have && !convid_owner_ok(cached_user, req->user)) {
        free(cached_user);
        return proto_reply_new(req, PROTO_ST_OK, true, TX_SB_OTHER_USER);
    }
    free(cached_user);
    int parked = 0; /* times its sandbox was found parked (running.h) */
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!have) {
            ensure_t en = manager_ensure(m, req->conv, req->user, id, notice, &err);
            if (en != ENSURE_OK) {
                proto_msg_t *r =
                    proto_reply_new(req, PROTO_ST_OK, true, err.buf ? err.buf : TX_SB_ERROR);
                textbuf_free(&err);
                return r;
            }
        }
        int64_t deadline_s =
            (req->deadline_ms ? req->deadline_ms / 1000 : (int64_t)time(NULL) + 3600) + 1;
        if (!running_call_begin(m->running, req->conv, id, deadline_s)) {
            /* Stopped to make room, or paused, meanwhile: find it again. */
            cache_drop(m->cache, req->conv);
            have = false;
            if (parked++ < 3)
                attempt--;
            continue;
        }
        disk_call_begin(m->disk, id, req->conv, container_name(req->conv).s);
        docker_err_t e = fn(m, id, arg);
        running_call_end(m->running, req->conv, id);
        disk_after_call(m->disk, id, req->conv, container_name(req->conv).s);
        if ((e == DOCKER_ENOTFOUND || e == DOCKER_ECONFLICT) && attempt == 0) {
            cache_drop(m->cache, req->conv);
            have = false;
            continue;
        }
        textbuf_free(&err);
        return NULL; /* fn produced the reply through arg */
    }
    textbuf_free(&err);
    return proto_reply_new(req, PROTO_ST_OK, true, TX_SB_VANISHED);
}

typedef struct {
    worker_job_t *job;
    const char *command;
    bool separate_stderr;
    int timeout_s;
    const char *stdin_data;
    size_t stdin_len;
    int64_t output_limit; /* exec: kill past this many output bytes; 0: none */
    bool watch_bg;        /* the model's run: watch what it leaves (background.h),
                             and a job when the call must answer (jobs.h) */
    run_result_t res;
    bool ran;
    char id[72];          /* the container it ran in, for hint probes */
    disk_t *disk;         /* to ask whether its sandbox passed disk_cap */
    int64_t disk_written; /* what it had written then */
} run_arg_t;

/* run.h's capped check: the sandbox passed disk_cap while the command ran. */
static bool run_capped(void *ctx)
{
    run_arg_t *a = ctx;
    return disk_over(a->disk, a->id, &a->disk_written);
}

static docker_err_t do_run(manager_t *m, const char *id, void *arg)
{
    run_arg_t *a = arg;
    if (a->ran)
        run_result_free(&a->res);
    run_opts_t o = {
        .command = a->command,
        .timeout_s = a->timeout_s,
        .stdin_data = a->stdin_data,
        .stdin_len = a->stdin_len,
        .output_cap = (size_t)m->o.output_cap,
        .job = a->job,
        .separate_stderr = a->separate_stderr,
        .output_limit = a->output_limit,
        .capped = run_capped,
        .capped_ctx = a,
        .watchdog_report = true,
        .bg_watch_ms = a->watch_bg ? m->o.background_watch_ms : 0,
        .job_at_ms = a->watch_bg && a->job->req->deadline_ms
                         ? a->job->req->deadline_ms - m->o.job_answer_ms
                         : 0,
        .job_log_cap = m->o.job_log_cap,
    };
    a->ran = true;
    a->disk = m->disk;
    snprintf(a->id, sizeof a->id, "%s", id);
    return run_command(&m->via, id, &o, &a->res);
}

/* The largest timeout the gateway accepts for run (gateway/tools.c): a
 * command past the client's ceiling goes on as a job. */
static int64_t run_timeout_max(const manager_opts_t *o)
{
    return o->run_timeout_max;
}

static void render_run(const manager_opts_t *o, const run_arg_t *a, textbuf_t *t, bool with_command)
{
    if (with_command)
        textbuf_printf(t, "$ %s\n", a->command);
    size_t before = t->len;
    if (with_command)
        hints_output_render(&a->res.out, t); /* the model's run: binary described */
    else
        capbuf_render(&a->res.out, t);
    if (t->len > before && t->buf[t->len - 1] != '\n')
        textbuf_puts(t, "\n");
    if (a->res.disk_capped)
        disk_capped_line(o->disk.cap, a->disk_written, t);
    else if (a->res.job)
        jobs_started_line(a->res.job, a->res.elapsed_ms, a->timeout_s, t);
    else if (a->res.unkept)
        jobs_unkept_line(a->res.elapsed_ms, t);
    else if (a->res.timed_out)
        textbuf_printf(t, TX_SB_TIMED_OUT, a->timeout_s, run_timeout_max(o));
    else if (a->res.cancelled)
        textbuf_puts(t, TX_SB_CANCELLED);
    else if (a->res.agent_lost)
        textbuf_puts(t, TX_SB_AGENT_BROKE);
    else if (a->res.output_limited)
        textbuf_printf(t, TX_SB_OUTPUT_LIMIT, a->output_limit);
    else if (a->res.exit_code != 0)
        textbuf_printf(t, TX_SB_EXIT_CODE, a->res.exit_code);
    icap_line(&a->res.watchdog, t);
}

/* Hint probes (hints.h): a short read-only command in the same container. */
typedef struct {
    manager_t *m;
    const char *id;
    worker_job_t *job;
} hint_probe_ctx_t;

static int hint_probe(void *ctx, const char *command, textbuf_t *out)
{
    hint_probe_ctx_t *p = ctx;
    run_opts_t o = { .command = command, .timeout_s = 10, .output_cap = 8192, .job = p->job };
    run_result_t res;
    int rc = -1;
    if (run_command(&p->m->via, p->id, &o, &res) == DOCKER_OK && !res.timed_out && !res.cancelled) {
        capbuf_render(&res.out, out);
        rc = res.exit_code;
    }
    run_result_free(&res);
    return rc;
}

/* The sandbox's limits as its agent reads its cgroup (hints.h); -1 when it
 * has no agent, and the hints say the configuration's. */
static int hint_limits(void *ctx, hints_limits_t *out)
{
    hint_probe_ctx_t *p = ctx;
    agent_limits_t a;
    if (run_limits(&p->m->via, p->id, &a) != 0)
        return -1;
    out->memory = a.memory > 0 ? a.memory : 0;
    out->memory_swap = a.memory_swap;
    out->pids = a.pids > 0 ? a.pids : 0;
    out->nano_cpus = a.cpu_quota > 0 && a.cpu_period > 0 ? a.cpu_quota * 1000000000 / a.cpu_period
                                                         : 0;
    return 0;
}

/* After a model's run: the hint lines, then the retry line when the same
 * command just failed the same way again. */
static void run_hints(manager_t *m, worker_job_t *job, const run_arg_t *a, textbuf_t *t)
{
    if (a->res.cancelled || a->res.agent_lost || a->res.disk_capped || a->res.job || a->res.unkept)
        return; /* (a sandbox past its disk cap is gone; a job still runs) */
    textbuf_t out;
    textbuf_init(&out);
    capbuf_render(&a->res.out, &out);
    hint_probe_ctx_t pc = { .m = m, .id = a->id, .job = job };
    /* A timed-out run gets only the hints about timeouts (a server run in
     * the foreground), and is no retry. */
    hints_for_run(a->command, out.buf ? out.buf : "", out.len, a->res.exit_code, a->res.timed_out,
                  hint_probe, hint_limits, &pc, &m->hints_tmpl, t);
    disk_hint(m->disk, m->o.disk.cap, out.buf, out.len, t);
    if (!a->res.timed_out &&
        hints_retry_note(m->retry, job->req->conv, a->command, a->res.exit_code, out.buf, out.len))
        textbuf_puts(t, HINTS_RETRY_LINE "\n");
    textbuf_free(&out);
}

/* After a model's run: what it left in the background that ended or
 * listens, and the record of what runs now (background.h). */
static void run_background(manager_t *m, worker_job_t *job, const run_arg_t *a, textbuf_t *t)
{
    bg_record(m->o.kept, a->id, &a->res.bg);
    if (a->res.cancelled || a->res.agent_lost || a->res.disk_capped || a->res.timed_out ||
        a->res.job || a->res.unkept)
        return;
    textbuf_t out;
    textbuf_init(&out);
    capbuf_render(&a->res.out, &out);
    hint_probe_ctx_t pc = { .m = m, .id = a->id, .job = job };
    bg_left_lines(&a->res.bg, out.buf, out.len, hint_probe, &pc, t);
    textbuf_free(&out);
}

/* Fill a run's reply data with the numbers every caller gets: exit code,
 * timeout, cancel, cut, time and memory used. */
static void run_data(const run_arg_t *a, proto_msg_t *r)
{
    proto_map_set_int(&r->data, DATA_EXIT_CODE, a->res.exit_code);
    proto_map_set_bool(&r->data, DATA_TIMED_OUT, a->res.timed_out);
    proto_map_set_bool(&r->data, DATA_CANCELLED, a->res.cancelled);
    proto_map_set_int(&r->data, DATA_CUT, (int64_t)capbuf_cut(&a->res.out));
    proto_map_set_int(&r->data, DATA_ELAPSED_MS, a->res.elapsed_ms);
    if (a->res.cpu_ms >= 0) {
        proto_map_set_int(&r->data, DATA_CPU_MS, a->res.cpu_ms);
        proto_map_set_int(&r->data, DATA_MAX_RSS_KB, a->res.max_rss_kb);
    }
}

/* What only exec's caller (a judge) gets on top of run_data: whether the
 * output limit killed it, the bare output without our notes, stderr, the
 * notice and, when the run was killed, how much memory there was. */
static void exec_data(manager_t *m, worker_job_t *job, const run_arg_t *a, const textbuf_t *notice,
                      proto_msg_t *r)
{
    proto_map_set_bool(&r->data, DATA_OUTPUT_LIMITED, a->res.output_limited);
    textbuf_t out;
    textbuf_init(&out);
    capbuf_render(&a->res.out, &out);
    proto_map_set_str(&r->data, DATA_OUTPUT, out.buf ? out.buf : "", out.len);
    textbuf_free(&out);
    if (a->separate_stderr) {
        textbuf_t err;
        textbuf_init(&err);
        capbuf_render(&a->res.errout, &err);
        proto_map_set_str(&r->data, DATA_STDERR, err.buf ? err.buf : "", err.len);
        textbuf_free(&err);
    }
    if (notice->len)
        proto_map_set_str(&r->data, DATA_NOTICE, notice->buf, notice->len);
    if (a->res.exit_code == 137) {
        /* Killed: the judge says how much memory there was. */
        hint_probe_ctx_t pc = { .m = m, .id = a->id, .job = job };
        textbuf_t mem;
        textbuf_init(&mem);
        hints_memory_phrase(hint_limits, &pc, &m->hints_tmpl, &mem);
        if (mem.buf)
            proto_map_set_str(&r->data, DATA_MEMORY, mem.buf, mem.len);
        textbuf_free(&mem);
    }
}

/*
 * The part run and exec share: check `command`, take `timeout` and
 * `stdin`, and run it in the chat's sandbox (a->separate_stderr and
 * a->output_limit are the caller's).  NULL: it ran, or could not start
 * (a->res.err says which), and *notice holds what the sandbox's set-up
 * said; else the reply to send as it is.
 */
static proto_msg_t *run_in_sandbox(manager_t *m, worker_job_t *job, run_arg_t *a, textbuf_t *notice)
{
    const proto_msg_t *req = job->req;
    size_t clen;
    const char *cmd = proto_map_str(&req->args, ARG_COMMAND, &clen);
    textbuf_init(notice);
    if (!cmd || clen == 0 || memchr(cmd, '\0', clen))
        return proto_reply_new(req, PROTO_ST_OK, true, TX_SB_NO_COMMAND);
    int64_t tmo = proto_map_int(&req->args, ARG_TIMEOUT, m->o.run_timeout);
    if (tmo < 1)
        tmo = 1;
    if (tmo > m->o.run_timeout_max)
        tmo = m->o.run_timeout_max;
    a->job = job;
    a->command = cmd;
    a->timeout_s = (int)tmo;
    a->stdin_data = proto_map_str(&req->args, ARG_STDIN, &a->stdin_len);
    proto_msg_t *r = with_container(m, job, do_run, a, notice);
    if (r && a->ran)
        run_result_free(&a->res);
    if (r)
        textbuf_free(notice);
    return r;
}

/* The reply when the command could not be started at all. */
static proto_msg_t *run_not_started(const proto_msg_t *req, const run_arg_t *a,
                                    const textbuf_t *notice, textbuf_t *t)
{
    textbuf_printf(t, TX_SB_NOT_STARTED, notice->buf ? notice->buf : "", a->command,
                   docker_strerror(a->res.err));
    return proto_reply_new(req, PROTO_ST_OK, true, NULL);
}

/* Whether the reply to a command that ran counts as an error. */
static bool run_failed(const run_arg_t *a)
{
    if (a->res.job)
        return false; /* it runs on */
    return a->res.timed_out || a->res.cancelled || a->res.output_limited || a->res.disk_capped ||
           a->res.unkept || a->res.exit_code != 0;
}

/* Give r its text t and the images of pics (both may be empty), then free
 * what the run held. */
static proto_msg_t *run_finish(proto_msg_t *r, textbuf_t *t, proto_msg_t *pics, textbuf_t *notice,
                               run_arg_t *a)
{
    if (r) {
        size_t len;
        char *text = textbuf_take(t, &len);
        proto_msg_set_text(r, text, len);
        free(text);
        if (pics)
            proto_msg_take_images(r, pics);
    }
    proto_msg_destroy(&pics);
    textbuf_free(t);
    textbuf_free(notice);
    if (a->ran)
        run_result_free(&a->res);
    return r;
}

/* The run tool, for the model: the command, its output with our notes,
 * the images it drew and the hints for what went wrong, in the text. */
static proto_msg_t *tool_run(manager_t *m, worker_job_t *job)
{
    run_arg_t a = { .watch_bg = true };
    textbuf_t notice, t;
    proto_msg_t *r = run_in_sandbox(m, job, &a, &notice);
    if (r)
        return r;
    textbuf_init(&t);
    proto_msg_t *pics = NULL;
    if (a.res.err != DOCKER_OK)
        return run_finish(run_not_started(job->req, &a, &notice, &t), &t, NULL, &notice, &a);
    if (notice.len)
        textbuf_append(&t, notice.buf, notice.len);
    jobs_ended_lines(a.res.jobs, a.res.jobs_len, &t); /* jobs that ended, said once */
    bg_died_lines(&a.res.bg, false, &t);              /* what ended between calls, said once */
    render_run(&m->o, &a, &t, true);
    /* The images it drew (pictures.h): named in the text, sent along (not
     * from a sandbox removed for its disk cap). */
    if (!a.res.disk_capped)
        pics = pictures_collect(&m->via, &m->o.pictures, a.id, a.res.images, a.res.images_len);
    if (pics)
        textbuf_append(&t, pics->text, pics->text_len);
    run_hints(m, job, &a, &t);
    run_background(m, job, &a, &t);
    bg_died_lines(&a.res.bg, true, &t); /* what ended while it ran (it stopped a server) */
    if (a.res.job) /* not paused or stopped while it may run (+2: the agent's kill) */
        running_job_until(m->running, job->req->conv, a.id,
                          (int64_t)time(NULL) + a.timeout_s - a.res.elapsed_ms / 1000 + 2);
    r = proto_reply_new(job->req, PROTO_ST_OK, run_failed(&a), NULL);
    if (r)
        run_data(&a, r);
    return run_finish(r, &t, pics, &notice, &a);
}

/* The exec operation, for judges: output apart from our notes, stderr
 * apart on request, an output limit, the images named in the data. */
static proto_msg_t *op_exec(manager_t *m, worker_job_t *job)
{
    const proto_msg_t *req = job->req;
    run_arg_t a = { .separate_stderr = proto_map_int(&req->args, ARG_SEPARATE_STDERR, 0),
                    .output_limit = proto_map_int(&req->args, ARG_OUTPUT_LIMIT, 0) };
    textbuf_t notice, t;
    proto_msg_t *r = run_in_sandbox(m, job, &a, &notice);
    if (r)
        return r;
    textbuf_init(&t);
    if (a.res.err != DOCKER_OK)
        return run_finish(run_not_started(req, &a, &notice, &t), &t, NULL, &notice, &a);
    if (notice.len)
        textbuf_append(&t, notice.buf, notice.len);
    render_run(&m->o, &a, &t, false);
    proto_msg_t *pics =
        pictures_collect(&m->via, &m->o.pictures, a.id, a.res.images, a.res.images_len);
    r = proto_reply_new(req, PROTO_ST_OK, run_failed(&a), NULL);
    if (r) {
        run_data(&a, r);
        exec_data(m, job, &a, &notice, r);
        if (pics)
            proto_map_set_str(&r->data, DATA_IMAGES, pics->text, pics->text_len);
    }
    return run_finish(r, &t, pics, &notice, &a);
}

typedef struct {
    const char *abspath;
    const char *content;
    size_t len;
    unsigned mode;
    docker_err_t err;
    long status;
    char msg[512];
    char id[72]; /* the container written to, for hint probes */
} put_arg_t;

static docker_err_t do_put(manager_t *m, const char *id, void *arg)
{
    put_arg_t *a = arg;
    json_t *ans = NULL;
    snprintf(a->id, sizeof a->id, "%s", id);
    a->err =
        run_put_file(&m->via, id, a->abspath, a->content, a->len, a->mode, 0, &a->status, &ans);
    snprintf(a->msg, sizeof a->msg, "%s", docker_message(ans));
    json_decref(ans);
    /* A missing container is 404 here too; a stopped one still takes
     * archives, so 409 does not happen. */
    return a->err == DOCKER_ENOTFOUND && strstr(a->msg, "container") ? DOCKER_ENOTFOUND : DOCKER_OK;
}

/* write_file (model: the retry note cleared, the write hints) and put.
 * It is long because the arguments' checks (path, content, size), the
 * write through the sandbox and the result's lines (the notice, the bytes
 * written, the hints) share the call's state; each part is a few lines. */
static proto_msg_t *tool_write(manager_t *m, worker_job_t *job, bool model)
{
    const proto_msg_t *req = job->req;
    size_t plen, clen;
    const char *path = proto_map_str(&req->args, ARG_PATH, &plen);
    const char *content = proto_map_str(&req->args, ARG_CONTENT, &clen);
    if (!path)
        return proto_reply_new(req, PROTO_ST_OK, true, TX_SB_NO_PATH);
    if (!content)
        return proto_reply_new(req, PROTO_ST_OK, true, TX_SB_NO_CONTENT);
    char abspath[4096];
    if (manager_resolve_path(path, plen, abspath, sizeof abspath))
        return proto_reply_new(req, PROTO_ST_OK, true, TX_SB_PATH_NOT_FILE);
    if ((int64_t)clen > m->o.write_file_max) {
        textbuf_t t;
        textbuf_init(&t);
        textbuf_printf(&t, TX_SB_CONTENT_BIG, clen, m->o.write_file_max);
        proto_msg_t *r = proto_reply_new(req, PROTO_ST_OK, true, t.buf);
        textbuf_free(&t);
        return r;
    }
    int64_t mode = proto_map_int(&req->args, ARG_MODE, 0644);
    put_arg_t a = {
        .abspath = abspath, .content = content, .len = clen, .mode = (unsigned)(mode & 07777)
    };
    textbuf_t notice;
    textbuf_init(&notice);
    proto_msg_t *r = with_container(m, job, do_put, &a, &notice);
    if (r) {
        textbuf_free(&notice);
        return r;
    }
    textbuf_t t;
    textbuf_init(&t);
    if (notice.len)
        textbuf_append(&t, notice.buf, notice.len);
    bool failed = a.err != DOCKER_OK;
    if (failed) {
        /* Docker's reason names the path part that is in the way. */
        textbuf_printf(&t, TX_SB_WRITE_FAILED, abspath, a.msg[0] ? a.msg : docker_strerror(a.err));
        textbuf_t h;
        textbuf_init(&h);
        disk_hint(m->disk, m->o.disk.cap, a.msg, strlen(a.msg), &h);
        if (h.len) {
            textbuf_puts(&t, "\n");
            textbuf_append(&t, h.buf, h.len - 1); /* without its last newline */
        }
        textbuf_free(&h);
    } else {
        textbuf_printf(&t, "Wrote %zu bytes to %s.", clen, abspath);
        if (model) {
            /* A write is a change: re-running a failed command is no longer
             * a pointless retry.  Shell scripts get ShellCheck's findings. */
            hints_retry_clear(m->retry, req->conv);
            textbuf_t h;
            textbuf_init(&h);
            hint_probe_ctx_t pc = { .m = m, .id = a.id, .job = job };
            hints_for_write(abspath, content, clen, hint_probe, &pc, &h);
            if (h.len) {
                textbuf_puts(&t, "\n");
                textbuf_append(&t, h.buf, h.len - 1); /* without its last newline */
            }
            textbuf_free(&h);
        }
    }
    r = proto_reply_new(req, PROTO_ST_OK, failed, t.buf);
    if (r && !failed) {
        proto_map_set_cstr(&r->data, DATA_PATH, abspath);
        proto_map_set_int(&r->data, DATA_BYTES, (int64_t)clen);
    }
    if (r && notice.len)
        proto_map_set_str(&r->data, DATA_NOTICE, notice.buf, notice.len);
    textbuf_free(&t);
    textbuf_free(&notice);
    return r;
}

static proto_msg_t *tool_reset(manager_t *m, worker_job_t *job)
{
    const proto_msg_t *req = job->req;
    char name[CONVID_NAME_MAX];
    chatname_of(m->d, m->o.kept, req->conv, name);
    char path[CONVID_NAME_MAX + 64];
    long status;
    json_t *info = NULL;
    snprintf(path, sizeof path, "/containers/%s/json", name);
    docker_err_t e = docker_call(m->d, "GET", path, NULL, &status, &info);
    cache_drop(m->cache, req->conv);
    if (e == DOCKER_ENOTFOUND) {
        json_decref(info);
        return proto_reply_new(req, PROTO_ST_OK, false, TX_SB_RESET_NONE);
    }
    if (e != DOCKER_OK) {
        json_decref(info);
        return proto_reply_new(req, PROTO_ST_OK, true, TX_SB_RESET_NO_DOCKER);
    }
    /* Whose it is: its labels, or a claimed spare's record (claim.h). */
    json_t *labels = json_object_get(json_object_get(info, "Config"), "Labels");
    char label_conv[CONVID_MAX + 1], label_user[CLAIM_USER_MAX + 1];
    if (!claim_identity(m->o.kept, labels, json_string_value(json_object_get(info, "Id")),
                        json_string_value(json_object_get(info, "Name")), label_conv, label_user) ||
        strcmp(label_conv, req->conv) != 0 || !convid_owner_ok(label_user, req->user)) {
        json_decref(info);
        return proto_reply_new(req, PROTO_ST_OK, true, TX_SB_RESET_OTHER_USER);
    }
    char id[72];
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(info, "Id")) ?: "");
    snprintf(path, sizeof path, "/containers/%s?force=1&v=1", *id ? id : name);
    json_decref(info);
    json_t *ans = NULL;
    e = docker_call(m->d, "DELETE", path, NULL, &status, &ans);
    json_decref(ans);
    if (e != DOCKER_OK && e != DOCKER_ENOTFOUND)
        return proto_reply_new(req, PROTO_ST_OK, true, TX_SB_RESET_FAILED);
    kept_record_drop(m->o.kept, id);
    hints_retry_clear(m->retry, req->conv);
    log_info("reset: removed sandbox %s", name);
    return proto_reply_new(req, PROTO_ST_OK, false, TX_SB_RESET_DONE);
}

/* "forget": the reaper stopped or removed this chat's sandbox; what this
 * manager keeps of the chat goes with it (the next call finds it again). */
static proto_msg_t *op_forget(manager_t *m, worker_job_t *job)
{
    cache_drop(m->cache, job->req->conv);
    hints_retry_clear(m->retry, job->req->conv);
    log_debug("forgot chat %s: its sandbox was stopped or removed", job->req->conv);
    return proto_reply_new(job->req, PROTO_ST_OK, false, "");
}

/* "busy": how many calls of this chat are in flight right now.  The reaper
 * asks before it stops a sandbox, so a call in flight is never cut short
 * even if the sandbox's stamp says otherwise. */
static proto_msg_t *op_busy(manager_t *m, worker_job_t *job)
{
    int inflight = running_inflight(m->running, job->req->conv);
    proto_msg_t *r = proto_reply_new(job->req, PROTO_ST_OK, false, "");
    if (r)
        proto_map_set_int(&r->data, DATA_INFLIGHT, inflight);
    return r;
}

void manager_use_capacity(manager_t *m, struct capacity *cap)
{
    m->hostops.cap = cap;
}

/* ---- the operations served (proto/optable.h, kind sandbox) -------------------- */

/* Each handler gets the manager as ctx; the worker library has already
 * refused a call whose ids are unusable (OPS_CONV). */
static proto_msg_t *h_run(worker_job_t *job, void *ctx)
{
    return tool_run(ctx, job);
}
static proto_msg_t *h_exec(worker_job_t *job, void *ctx)
{
    return op_exec(ctx, job);
}
static proto_msg_t *h_write_file(worker_job_t *job, void *ctx)
{
    return tool_write(ctx, job, true);
}
static proto_msg_t *h_put(worker_job_t *job, void *ctx)
{
    return tool_write(ctx, job, false);
}
static proto_msg_t *h_reset(worker_job_t *job, void *ctx)
{
    return tool_reset(ctx, job);
}
static proto_msg_t *h_busy(worker_job_t *job, void *ctx)
{
    return op_busy(ctx, job);
}
static proto_msg_t *h_forget(worker_job_t *job, void *ctx)
{
    return op_forget(ctx, job);
}
static proto_msg_t *h_pause(worker_job_t *job, void *ctx)
{
    return pause_op(ctx, job);
}
/* The host operations (hostops.h), on the manager's hostops. */
static proto_msg_t *h_locate(worker_job_t *job, void *ctx)
{
    return hostops_locate(&((manager_t *)ctx)->hostops, job);
}
static proto_msg_t *h_list(worker_job_t *job, void *ctx)
{
    return hostops_list(&((manager_t *)ctx)->hostops, job);
}
static proto_msg_t *h_drain(worker_job_t *job, void *ctx)
{
    return hostops_drain(&((manager_t *)ctx)->hostops, job);
}
static proto_msg_t *h_undrain(worker_job_t *job, void *ctx)
{
    return hostops_undrain(&((manager_t *)ctx)->hostops, job);
}
static proto_msg_t *h_stop(worker_job_t *job, void *ctx)
{
    return hostops_stop(&((manager_t *)ctx)->hostops, job);
}
static proto_msg_t *h_rm(worker_job_t *job, void *ctx)
{
    return hostops_rm(&((manager_t *)ctx)->hostops, job);
}

const worker_op_t manager_ops[] = {
    { OP_RUN, h_run },       { OP_EXEC, h_exec },   { OP_WRITE_FILE, h_write_file },
    { OP_PUT, h_put },       { OP_RESET, h_reset }, { OP_BUSY, h_busy },
    { OP_FORGET, h_forget }, { OP_PAUSE, h_pause }, { OP_LOCATE, h_locate },
    { OP_LIST, h_list },     { OP_DRAIN, h_drain }, { OP_UNDRAIN, h_undrain },
    { OP_STOP, h_stop },     { OP_RM, h_rm },       { NULL, NULL },
};

int manager_spares(manager_t *m)
{
    return m ? pool_spares(m->pool) : 0;
}

/* ---- lifecycle ------------------------------------------------------------------- */

static int ensure_network(docker_t *d, const char *net)
{
    char path[512];
    long status;
    snprintf(path, sizeof path, "/networks/%s", net);
    docker_err_t e = docker_call(d, "GET", path, NULL, &status, NULL);
    if (e == DOCKER_OK)
        return 0;
    if (e != DOCKER_ENOTFOUND) {
        log_error("cannot inspect network %s: %s", net, docker_strerror(e));
        return -1;
    }
    json_t *body = json_pack("{s:s, s:s, s:b, s:{s:s}, s:{s:s}}", "Name", net, "Driver", "bridge",
                             "CheckDuplicate", 1, "Labels", SPEC_LABEL_NETWORK, SPEC_NETWORK_KIND,
                             "Options", "com.docker.network.bridge.enable_icc", "false");
    json_t *ans = NULL;
    e = docker_call(d, "POST", "/networks/create", body, &status, &ans);
    json_decref(body);
    if (e != DOCKER_OK && e != DOCKER_ECONFLICT) {
        log_error("cannot create network %s: %s", net, docker_message(ans));
        json_decref(ans);
        return -1;
    }
    json_decref(ans);
    log_info("created network %s (it is never removed by talkback)", net);
    return 0;
}

/* The disk sizing removed a chat's sandbox: forget the chat. */
static void forget_conv(void *ctx, const char *conv)
{
    manager_t *m = ctx;
    cache_drop(m->cache, conv);
    hints_retry_clear(m->retry, conv);
}

manager_t *manager_new(docker_t *d, const manager_opts_t *o)
{
    manager_t *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->o = *o;
    m->o.disk.forget = forget_conv;
    m->o.disk.ctx = m;
    m->o.disk.kept = o->kept;
    m->hints_tmpl = (hints_limits_t){ .memory = o->tmpl.memory,
                                      .memory_swap = o->tmpl.memory_swap,
                                      .nano_cpus = o->tmpl.nano_cpus,
                                      .pids = o->tmpl.pids_limit,
                                      .disk_cap = o->disk.cap };
    m->d = d;
    if (kept_state_init(o->kept)) {
        log_error(
            "cannot use state_dir %s (%s): the sandbox manager keeps each sandbox's last-call "
            "record there",
            kept_state_dir(o->kept), strerror(errno));
        free(m);
        return NULL;
    }
    m->o.running.forget = forget_conv;
    m->o.running.ctx = m;
    m->o.running.kept = o->kept;
    m->running = running_new(d, &m->o.running);
    m->retry = hints_retry_new(); /* NULL only means no retry lines */
    char agent[4096];
    m->agents =
        agent_pool_new(d, agent_find_binary(m->o.agent_path, agent, sizeof agent) ? agent : NULL,
                       m->o.agent_frame_deadline);
    m->via = (run_via_t){ .d = d, .agents = m->agents, .shepherd = m->o.agent_shepherd };
    /* Twice the cap: room for sandboxes stopped behind our back (cache.h). */
    m->cache = cache_new(o->running.max_running > 0 ? 2 * o->running.max_running : 1024);
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->ensure_cv, NULL);
    m->disk = disk_new(d, &m->o.disk);
    m->hostops = (hostops_t){
        .d = d, .image = m->o.tmpl.image, .kept = o->kept, .forget = forget_conv, .ctx = m
    };
    if (!m->running || !m->cache || !m->disk || ensure_network(d, m->o.tmpl.network) ||
        !(m->o.netcheck = netcheck_new(d, &m->o.egress))) {
        manager_destroy(&m);
        return NULL;
    }
    const pool_opts_t po = { .tmpl = m->o.tmpl,
                             .warm_pool = o->warm_pool,
                             .warm_pool_check = o->warm_pool_check,
                             .mem_floor = o->mem_floor,
                             .netcheck = m->o.netcheck,
                             .kept = o->kept };
    m->pool = pool_new(d, &po, m->agents, m->disk); /* NULL: no warm pool */
    return m;
}

void manager_destroy(manager_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    manager_t *m = *self_p;
    pool_destroy(&m->pool); /* first: its thread uses the agents and the disk */
    disk_destroy(&m->disk); /* its thread may call forget_conv */
    netcheck_destroy(&m->o.netcheck);
    running_destroy(&m->running);
    cache_destroy(&m->cache);
    pthread_cond_destroy(&m->ensure_cv);
    pthread_mutex_destroy(&m->mu);
    hints_retry_free(&m->retry);
    agent_pool_destroy(&m->agents);
    free(m);
    *self_p = NULL;
}
