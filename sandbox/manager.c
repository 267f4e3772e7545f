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

#include "common/config.h"
#include "common/convid.h"
#include "common/log.h"
#include "docker/claim.h"
#include "docker/kept.h"
#include "sandbox/agent_link.h"
#include "sandbox/caps.h"
#include "sandbox/disk.h"
#include "sandbox/hints.h"
#include "sandbox/notices.h"
#include "sandbox/pictures.h"
#include "sandbox/run.h"
#include "sandbox/running.h"

#define LABEL_CONV KEPT_LABEL_CONV
#define LABEL_USER KEPT_LABEL_USER
#define LABEL_CREATED KEPT_LABEL_CREATED

/* ---- cache --------------------------------------------------------------------- */

bool manager_cache_get(manager_t *m, const char *conv, char id[72], char **user)
{
    bool hit = false;
    pthread_mutex_lock(&m->mu);
    for (cache_entry_t *e = m->cache; e; e = e->next)
        if (strcmp(e->conv, conv) == 0) {
            memcpy(id, e->id, 72);
            if (user)
                *user = strdup(e->user);
            hit = true;
            break;
        }
    pthread_mutex_unlock(&m->mu);
    return hit;
}

void manager_cache_put(manager_t *m, const char *conv, const char *id, const char *user)
{
    cache_entry_t *e = calloc(1, sizeof *e);
    if (!e || !(e->conv = strdup(conv)) || !(e->user = strdup(user ? user : ""))) {
        if (e) {
            free(e->conv);
            free(e);
        }
        return;
    }
    snprintf(e->id, sizeof e->id, "%s", id);
    /* The cache holds running sandboxes, which the caps bound; entries of
     * sandboxes stopped behind talkback's back (a Docker restart) are
     * dropped oldest first past twice that, at the cost of one inspect
     * should their chat come back. */
    int64_t bound = config_int("max_running") > 0 ? 2 * config_int("max_running") : 1024;
    int64_t n = 0;
    pthread_mutex_lock(&m->mu);
    for (cache_entry_t **pp = &m->cache; *pp;) {
        cache_entry_t *old = *pp;
        if (strcmp(old->conv, conv) == 0 || ++n >= bound) {
            *pp = old->next;
            free(old->conv);
            free(old->user);
            free(old);
            continue;
        }
        pp = &old->next;
    }
    e->next = m->cache;
    m->cache = e;
    pthread_mutex_unlock(&m->mu);
}

void manager_cache_drop(manager_t *m, const char *conv)
{
    pthread_mutex_lock(&m->mu);
    for (cache_entry_t **pp = &m->cache; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->conv, conv) == 0) {
            cache_entry_t *old = *pp;
            *pp = old->next;
            free(old->conv);
            free(old->user);
            free(old);
            break;
        }
    pthread_mutex_unlock(&m->mu);
}

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
    bool have = manager_cache_get(m, req->conv, id, &cached_user);
    if (have && !convid_owner_ok(cached_user, req->user)) {
        free(cached_user);
        return proto_reply_new(req, PROTO_ST_OK, true,
                               "[talkback refused this call: this chat's sandbox belongs to another user. "
                               "Nothing ran.]");
    }
    free(cached_user);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!have) {
            ensure_t en = manager_ensure(m, req->conv, req->user, id, notice, &err);
            if (en != ENSURE_OK) {
                proto_msg_t *r = proto_reply_new(req, PROTO_ST_OK, true, err.buf ? err.buf : "[talkback error]");
                textbuf_free(&err);
                return r;
            }
        }
        int64_t deadline_s = (req->deadline_ms ? req->deadline_ms / 1000 : (int64_t)time(NULL) + 3600) + 1;
        running_call_begin(m->running, req->conv, id, deadline_s);
        docker_err_t e = fn(m, id, arg);
        running_call_end(m->running, req->conv, id);
        disk_after_call(m->disk, id, req->conv, container_name(req->conv).s);
        if ((e == DOCKER_ENOTFOUND || e == DOCKER_ECONFLICT) && attempt == 0) {
            manager_cache_drop(m, req->conv);
            have = false;
            continue;
        }
        textbuf_free(&err);
        return NULL; /* fn produced the reply through arg */
    }
    textbuf_free(&err);
    return proto_reply_new(req, PROTO_ST_OK, true,
                           "[talkback: this chat's sandbox kept disappearing while this call ran. Try again.]");
}

typedef struct {
    worker_job_t *job;
    const char *command;
    bool separate_stderr;
    int timeout_s;
    const char *stdin_data;
    size_t stdin_len;
    int64_t output_limit;     /* exec: kill past this many output bytes; 0: none */
    run_result_t res;
    bool ran;
    char id[72];              /* the container it ran in, for hint probes */
} run_arg_t;

static docker_err_t do_run(manager_t *m, const char *id, void *arg)
{
    run_arg_t *a = arg;
    if (a->ran)
        run_result_free(&a->res);
    run_opts_t o = {
        .command = a->command, .timeout_s = a->timeout_s,
        .stdin_data = a->stdin_data, .stdin_len = a->stdin_len,
        .output_cap = (size_t)config_int("output_cap"), .job = a->job,
        .separate_stderr = a->separate_stderr, .output_limit = a->output_limit,
    };
    a->ran = true;
    snprintf(a->id, sizeof a->id, "%s", id);
    return run_command(m->d, id, &o, &a->res);
}

/* The largest timeout the gateway accepts for run: run_timeout_max, kept
 * below what the client waits for a call (client_timeout) less set-up,
 * as gateway/tools.c advertises it. */
static int64_t run_timeout_max(void)
{
    int64_t max = config_int("run_timeout_max");
    int64_t client = config_int("client_timeout");
    if (client > 0) {
        int64_t room = client - 10 - config_int("call_grace");
        if (room < max)
            max = room > 1 ? room : 1;
    }
    return max;
}

static void render_run(const run_arg_t *a, textbuf_t *t, bool with_command)
{
    if (with_command)
        textbuf_printf(t, "$ %s\n", a->command);
    size_t before = t->len;
    capbuf_render(&a->res.out, t);
    if (t->len > before && t->buf[t->len - 1] != '\n')
        textbuf_puts(t, "\n");
    if (a->res.timed_out)
        textbuf_printf(t, "[timed out after %d s: the command and everything it started were killed. "
                       "If it needs longer, call run again with a larger timeout (up to %" PRId64 " s); "
                       "if it waits for input, give it the input in the command.]\n",
                       a->timeout_s, run_timeout_max());
    else if (a->res.cancelled)
        textbuf_puts(t, "[cancelled: the command and everything it started were killed]\n");
    else if (a->res.agent_lost)
        textbuf_puts(t, "[talkback: the link to this sandbox's agent broke while the command ran (something in the "
                        "sandbox wrote into the agent's output), so its output may be incomplete and its exit code "
                        "is unknown; what was left of it was killed. The next call works normally: run it again "
                        "if you need its result.]\n");
    else if (a->res.output_limited)
        textbuf_printf(t, "[output limit of %" PRId64 " bytes reached: the command and everything it started "
                       "were killed]\n", a->output_limit);
    else if (a->res.exit_code != 0)
        textbuf_printf(t, "[exit code %d]\n", a->res.exit_code);
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
    if (run_command(p->m->d, p->id, &o, &res) == DOCKER_OK && !res.timed_out && !res.cancelled) {
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
    if (run_limits(p->id, &a) != 0)
        return -1;
    out->memory = a.memory > 0 ? a.memory : 0;
    out->memory_swap = a.memory_swap;
    out->pids = a.pids > 0 ? a.pids : 0;
    out->nano_cpus = a.cpu_quota > 0 && a.cpu_period > 0 ? a.cpu_quota * 1000000000 / a.cpu_period : 0;
    return 0;
}

/* After a model's run: the hint lines, then the retry line when the same
 * command just failed the same way again. */
static void run_hints(manager_t *m, worker_job_t *job, const run_arg_t *a, textbuf_t *t)
{
    if (a->res.cancelled || a->res.agent_lost)
        return;
    textbuf_t out;
    textbuf_init(&out);
    capbuf_render(&a->res.out, &out);
    hint_probe_ctx_t pc = { .m = m, .id = a->id, .job = job };
    /* A timed-out run gets only the hints about timeouts (a server run in
     * the foreground), and is no retry. */
    hints_for_run(a->command, out.buf ? out.buf : "", out.len, a->res.exit_code, a->res.timed_out,
                  hint_probe, hint_limits, &pc, t);
    disk_hint(m->disk, out.buf, out.len, t);
    if (!a->res.timed_out
        && hints_retry_note(m->retry, job->req->conv, a->command, a->res.exit_code, out.buf, out.len))
        textbuf_puts(t, HINTS_RETRY_LINE "\n");
    textbuf_free(&out);
}

/*
 * Fill a run's reply data: the numbers every caller gets (exit code,
 * timeout, cut, time and memory used) and, for the structured (judge)
 * form, the bare output, stderr, the notice and, when the run was
 * killed, how much memory there was.
 */
static void run_data(manager_t *m, worker_job_t *job, const run_arg_t *a, const textbuf_t *notice,
                     bool structured, proto_msg_t *r)
{
    proto_map_set_int(&r->data, "exit_code", a->res.exit_code);
    proto_map_set_bool(&r->data, "timed_out", a->res.timed_out);
    proto_map_set_bool(&r->data, "cancelled", a->res.cancelled);
    proto_map_set_int(&r->data, "cut", (int64_t)capbuf_cut(&a->res.out));
    proto_map_set_int(&r->data, "elapsed_ms", a->res.elapsed_ms);
    if (a->res.cpu_ms >= 0) {
        proto_map_set_int(&r->data, "cpu_ms", a->res.cpu_ms);
        proto_map_set_int(&r->data, "max_rss_kb", a->res.max_rss_kb);
    }
    if (structured)
        proto_map_set_bool(&r->data, "output_limited", a->res.output_limited);
    if (structured) {
        /* For judges: the bare output, without our notes. */
        textbuf_t out;
        textbuf_init(&out);
        capbuf_render(&a->res.out, &out);
        proto_map_set_str(&r->data, "output", out.buf ? out.buf : "", out.len);
        textbuf_free(&out);
        if (a->separate_stderr) {
            textbuf_t err;
            textbuf_init(&err);
            capbuf_render(&a->res.errout, &err);
            proto_map_set_str(&r->data, "stderr", err.buf ? err.buf : "", err.len);
            textbuf_free(&err);
        }
        if (notice->len)
            proto_map_set_str(&r->data, "notice", notice->buf, notice->len);
        if (a->res.exit_code == 137) {
            /* Killed: the judge says how much memory there was. */
            hint_probe_ctx_t pc = { .m = m, .id = a->id, .job = job };
            textbuf_t mem;
            textbuf_init(&mem);
            hints_memory_phrase(hint_limits, &pc, &mem);
            if (mem.buf)
                proto_map_set_str(&r->data, "memory", mem.buf, mem.len);
            textbuf_free(&mem);
        }
    }
}

static proto_msg_t *tool_run(manager_t *m, worker_job_t *job, bool structured)
{
    const proto_msg_t *req = job->req;
    size_t clen;
    const char *cmd = proto_map_str(&req->args, "command", &clen);
    if (!cmd || clen == 0 || memchr(cmd, '\0', clen))
        return proto_reply_new(req, PROTO_ST_OK, true,
                               "[talkback: argument `command` is required and must be a non-empty string "
                               "without NUL bytes. Nothing ran.]");
    int64_t tmo = proto_map_int(&req->args, "timeout", config_int("run_timeout"));
    if (tmo < 1)
        tmo = 1;
    if (tmo > config_int("run_timeout_max"))
        tmo = config_int("run_timeout_max");
    run_arg_t a = { .job = job, .command = cmd, .timeout_s = (int)tmo,
                    .separate_stderr = structured && proto_map_int(&req->args, "separate_stderr", 0),
                    .output_limit = structured ? proto_map_int(&req->args, "output_limit", 0) : 0 };
    a.stdin_data = proto_map_str(&req->args, "stdin", &a.stdin_len);
    textbuf_t notice;
    textbuf_init(&notice);
    proto_msg_t *r = with_container(m, job, do_run, &a, &notice);
    if (r) {
        if (a.ran)
            run_result_free(&a.res);
        textbuf_free(&notice);
        return r;
    }
    textbuf_t t;
    textbuf_init(&t);
    proto_msg_t *pics = NULL;
    if (a.res.err != DOCKER_OK) {
        textbuf_printf(&t, "%s$ %s\n[talkback: the command could not be started in the sandbox (%s). "
                       "Try again; if it keeps failing, call reset.]\n",
                       notice.buf ? notice.buf : "", cmd, docker_strerror(a.res.err));
        r = proto_reply_new(req, PROTO_ST_OK, true, NULL);
    } else {
        if (notice.len)
            textbuf_append(&t, notice.buf, notice.len);
        render_run(&a, &t, !structured);
        /* The images it drew (pictures.h): named in the text, sent along. */
        pics = pictures_collect(m->d, a.id, a.res.images, a.res.images_len);
        if (pics && !structured)
            textbuf_append(&t, pics->text, pics->text_len);
        if (!structured)
            run_hints(m, job, &a, &t);
        bool failed = a.res.timed_out || a.res.cancelled || a.res.output_limited || a.res.exit_code != 0;
        r = proto_reply_new(req, PROTO_ST_OK, failed, NULL);
        if (r)
            run_data(m, job, &a, &notice, structured, r);
    }
    if (r) {
        size_t len;
        char *text = textbuf_take(&t, &len);
        proto_msg_set_text(r, text, len);
        free(text);
        if (pics && structured)
            proto_map_set_str(&r->data, "images", pics->text, pics->text_len);
        if (pics)
            proto_msg_take_images(r, pics);
    }
    proto_msg_destroy(&pics);
    textbuf_free(&t);
    textbuf_free(&notice);
    if (a.ran)
        run_result_free(&a.res);
    return r;
}

typedef struct {
    const char *abspath;
    const char *content;
    size_t len;
    unsigned mode;
    docker_err_t err;
    long status;
    char msg[512];
    char id[72];              /* the container written to, for hint probes */
} put_arg_t;

static docker_err_t do_put(manager_t *m, const char *id, void *arg)
{
    put_arg_t *a = arg;
    json_t *ans = NULL;
    snprintf(a->id, sizeof a->id, "%s", id);
    a->err = run_put_file(m->d, id, a->abspath, a->content, a->len, a->mode, 0, &a->status, &ans);
    snprintf(a->msg, sizeof a->msg, "%s", docker_message(ans));
    json_decref(ans);
    /* A missing container is 404 here too; a stopped one still takes
     * archives, so 409 does not happen. */
    return a->err == DOCKER_ENOTFOUND && strstr(a->msg, "container") ? DOCKER_ENOTFOUND : DOCKER_OK;
}

static proto_msg_t *tool_write(manager_t *m, worker_job_t *job)
{
    const proto_msg_t *req = job->req;
    size_t plen, clen;
    const char *path = proto_map_str(&req->args, "path", &plen);
    const char *content = proto_map_str(&req->args, "content", &clen);
    if (!path)
        return proto_reply_new(req, PROTO_ST_OK, true,
                               "[talkback: argument `path` is required and must be a string. Nothing was written.]");
    if (!content)
        return proto_reply_new(req, PROTO_ST_OK, true,
                               "[talkback: argument `content` is required and must be a string. Nothing was written.]");
    char abspath[4096];
    if (manager_resolve_path(path, plen, abspath, sizeof abspath))
        return proto_reply_new(req, PROTO_ST_OK, true,
                               "[talkback: argument `path` must name a file, like `main.py` or `/work/src/app.js` "
                               "(not a folder, not empty). Nothing was written.]");
    if ((int64_t)clen > config_int("write_file_max")) {
        textbuf_t t;
        textbuf_init(&t);
        textbuf_printf(&t, "[talkback: `content` is %zu bytes, over the %" PRId64 "-byte limit. Nothing was "
                       "written. Write it in smaller files, or generate it with a command.]",
                       clen, config_int("write_file_max"));
        proto_msg_t *r = proto_reply_new(req, PROTO_ST_OK, true, t.buf);
        textbuf_free(&t);
        return r;
    }
    int64_t mode = proto_map_int(&req->args, "mode", 0644);
    put_arg_t a = { .abspath = abspath, .content = content, .len = clen, .mode = (unsigned)(mode & 07777) };
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
        textbuf_printf(&t, "[talkback: could not write %s: %s. Nothing was written. If a folder on the way is "
                       "a file, pick another path.]", abspath, a.msg[0] ? a.msg : docker_strerror(a.err));
        textbuf_t h;
        textbuf_init(&h);
        disk_hint(m->disk, a.msg, strlen(a.msg), &h);
        if (h.len) {
            textbuf_puts(&t, "\n");
            textbuf_append(&t, h.buf, h.len - 1); /* without its last newline */
        }
        textbuf_free(&h);
    } else {
        textbuf_printf(&t, "Wrote %zu bytes to %s.", clen, abspath);
        if (req->name && strcmp(req->name, "write_file") == 0) {
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
        proto_map_set_cstr(&r->data, "path", abspath);
        proto_map_set_int(&r->data, "bytes", (int64_t)clen);
    }
    if (r && notice.len)
        proto_map_set_str(&r->data, "notice", notice.buf, notice.len);
    textbuf_free(&t);
    textbuf_free(&notice);
    return r;
}

static proto_msg_t *tool_reset(manager_t *m, worker_job_t *job)
{
    const proto_msg_t *req = job->req;
    char name[CONVID_NAME_MAX];
    convid_container_name(req->conv, name);
    char path[CONVID_NAME_MAX + 64];
    long status;
    json_t *info = NULL;
    snprintf(path, sizeof path, "/containers/%s/json", name);
    docker_err_t e = docker_call(m->d, "GET", path, NULL, &status, &info);
    manager_cache_drop(m, req->conv);
    if (e == DOCKER_ENOTFOUND) {
        json_decref(info);
        return proto_reply_new(req, PROTO_ST_OK, false,
                               "[Reset: this chat had no sandbox. The next call starts a clean one.]");
    }
    if (e != DOCKER_OK) {
        json_decref(info);
        return proto_reply_new(req, PROTO_ST_OK, true,
                               "[talkback: Docker did not answer, so nothing was reset. Try again.]");
    }
    /* Whose it is: its labels, or a claimed spare's record (claim.h). */
    json_t *labels = json_object_get(json_object_get(info, "Config"), "Labels");
    char label_conv[CONVID_MAX + 1], label_user[CLAIM_USER_MAX + 1];
    if (!claim_identity(labels, json_string_value(json_object_get(info, "Id")),
                        json_string_value(json_object_get(info, "Name")), label_conv, label_user) ||
        strcmp(label_conv, req->conv) != 0 || !convid_owner_ok(label_user, req->user)) {
        json_decref(info);
        return proto_reply_new(req, PROTO_ST_OK, true,
                               "[talkback refused this call: this chat's sandbox belongs to another user. "
                               "Nothing was reset.]");
    }
    char id[72];
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(info, "Id")) ?: "");
    snprintf(path, sizeof path, "/containers/%s?force=1&v=1", *id ? id : name);
    json_decref(info);
    json_t *ans = NULL;
    e = docker_call(m->d, "DELETE", path, NULL, &status, &ans);
    json_decref(ans);
    if (e != DOCKER_OK && e != DOCKER_ENOTFOUND)
        return proto_reply_new(req, PROTO_ST_OK, true,
                               "[talkback: Docker would not remove this chat's sandbox. Try reset again.]");
    kept_record_drop(id);
    hints_retry_clear(m->retry, req->conv);
    log_info("reset: removed sandbox %s", name);
    return proto_reply_new(req, PROTO_ST_OK, false,
                           "[Reset: this chat's sandbox was deleted with all its files and installs. "
                           "The next call starts a clean one.]");
}

/* "forget": the reaper stopped or removed this chat's sandbox; what this
 * manager keeps of the chat goes with it (the next call finds it again). */
static proto_msg_t *op_forget(manager_t *m, worker_job_t *job)
{
    manager_cache_drop(m, job->req->conv);
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
        proto_map_set_int(&r->data, "inflight", inflight);
    return r;
}

proto_msg_t *manager_handle(worker_job_t *job, void *ctx)
{
    manager_t *m = ctx;
    const proto_msg_t *req = job->req;
    convid_err_t ce = convid_check(req->conv);
    if (ce != CONVID_OK)
        return proto_reply_new(req, PROTO_ST_OK, true,
                               "[talkback refused this call: the conversation id is unusable, so talkback cannot "
                               "tell which chat's sandbox to use. Nothing ran.]");
    if (req->user && !convid_user_ok(req->user))
        return proto_reply_new(req, PROTO_ST_OK, true,
                               "[talkback refused this call: the user id is unusable. Nothing ran.]");
    const char *tool = req->name ? req->name : "";
    if (strcmp(tool, "run") == 0)
        return tool_run(m, job, false);
    if (strcmp(tool, "exec") == 0)
        return tool_run(m, job, true);
    if (strcmp(tool, "write_file") == 0 || strcmp(tool, "put") == 0)
        return tool_write(m, job);
    if (strcmp(tool, "reset") == 0)
        return tool_reset(m, job);
    if (strcmp(tool, "busy") == 0)
        return op_busy(m, job);
    if (strcmp(tool, "forget") == 0)
        return op_forget(m, job);
    return proto_reply_new(req, PROTO_ST_BAD_REQUEST, true, "[talkback: unknown sandbox operation]");
}

int manager_spares(manager_t *m)
{
    return m ? pool_spares(m->pool) : 0;
}

/* ---- lifecycle ------------------------------------------------------------------- */

static int ensure_network(docker_t *d)
{
    const char *net = config_str("network");
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
                             "CheckDuplicate", 1, "Labels", "talkback.network", "sandboxes",
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

/* Calls of a chat running now (for the disk sizing). */
static int busy_conv(void *ctx, const char *conv)
{
    manager_t *m = ctx;
    return running_inflight(m->running, conv);
}

/* The disk sizing removed a chat's sandbox: forget the chat. */
static void forget_conv(void *ctx, const char *conv)
{
    manager_t *m = ctx;
    manager_cache_drop(m, conv);
    hints_retry_clear(m->retry, conv);
}

manager_t *manager_new(docker_t *d)
{
    manager_t *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->d = d;
    if (kept_state_init()) {
        log_error("cannot use state_dir %s (%s): the sandbox manager keeps each sandbox's last-call "
                  "record there", config_str("state_dir"), strerror(errno));
        free(m);
        return NULL;
    }
    m->running = running_new(d);
    m->retry = hints_retry_new(); /* NULL only means no retry lines */
    char agent[4096];
    m->agents = agent_pool_new(d, agent_find_binary(config_str("agent_path"), agent, sizeof agent) ? agent : NULL);
    run_use_agents(m->agents);
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->ensure_cv, NULL);
    m->disk = disk_new(d);
    disk_on_remove(m->disk, busy_conv, forget_conv, m);
    if (!m->running || !m->disk || ensure_network(d)) {
        manager_destroy(&m);
        return NULL;
    }
    m->pool = pool_new(d, m->agents, m->disk); /* NULL: no warm pool */
    return m;
}

void manager_destroy(manager_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    manager_t *m = *self_p;
    pool_destroy(&m->pool); /* first: its thread uses the agents and the disk */
    disk_destroy(&m->disk); /* its thread may call forget_conv */
    running_destroy(&m->running);
    while (m->cache) {
        cache_entry_t *e = m->cache;
        m->cache = e->next;
        free(e->conv);
        free(e->user);
        free(e);
    }
    pthread_cond_destroy(&m->ensure_cv);
    pthread_mutex_destroy(&m->mu);
    hints_retry_free(&m->retry);
    run_use_agents(NULL);
    agent_pool_destroy(&m->agents);
    free(m);
    *self_p = NULL;
}
