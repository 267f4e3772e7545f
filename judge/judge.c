/* judge.c -- run_code: save, compile, run, compare (see judge.h).
 *
 * The text the model reads is built here in one order, every time:
 *
 *   [a resume notice, when the sandbox was woken up]
 *   Saved /work/main.cpp (245 bytes).
 *   $ g++ -O2 -std=c++17 ... -o main main.cpp       (compiled languages)
 *   <compiler messages, trimmed>                    (only when there are any)
 *   $ ./main < main.in                               the run line (main.in holds
 *                                                    the input; /dev/null without)
 *   input:                                           what was fed, or "(none: ...)"
 *   output:                                          what it printed
 *   <verdict lines>                                  PASS / FAIL / CRASH / TIMEOUT
 *   Don't answer yet: fix the code and call run_code again until it says PASS.
 *
 * The last sentence closes every FAIL, crash, timeout and compile error,
 * because a small model acts on the last thing it read.  A run with no
 * expected output gets no verdict at all: inventing a test, or asking the
 * model to work out the answer by hand, made things worse.
 */
#include "judge/judge.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/log.h"
#include "common/textbuf.h"
#include "judge/compare.h"
#include "judge/languages.h"

#define DONT_ANSWER "Don't answer yet: fix the code and call run_code again until it says PASS.\n"
#define HISTORY_DIR "/var/lib/talkback"
#define INPUT_FILE "main.in"   /* run_code's input, saved beside main.<ext> */

/* Appended (after a newline) to the run line: once the program ends, kill
 * every process it left behind -- everything carrying this run's
 * TALKBACK_RUN marker (sandbox/run.h) but this shell and its parent --
 * with bash builtins only, so it works even when a fork bomb has used up
 * the sandbox's process slots.  Each one found is stopped at once, so it
 * cannot fork while the walk goes on; when a walk finds nothing new, all
 * of them are killed.  The exit status stays the program's. */
#define REAP_AFTER \
    "__tb_rc=$?; __all=' '; for __r in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do __new=0; " \
    "for __d in /proc/[0-9]*; do __p=${__d#/proc/}; " \
    "[ \"$__p\" = \"$$\" ] || [ \"$__p\" = \"$PPID\" ] && continue; " \
    "case $__all in *\" $__p \"*) continue;; esac; " \
    "while IFS= read -r -d '' __e; do [ \"$__e\" = \"TALKBACK_RUN=$TALKBACK_RUN\" ] && " \
    "{ kill -STOP \"$__p\"; __all=\"$__all$__p \"; __new=1; break; }; done 2>/dev/null < \"$__d/environ\"; " \
    "done 2>/dev/null; [ $__new = 0 ] && break; done; " \
    "for __p in $__all; do kill -KILL \"$__p\" 2>/dev/null; done; exit $__tb_rc"

const char *judge_signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV (invalid memory access: a bad pointer, an index out of range, or a stack overflow from deep recursion)";
    case SIGABRT: return "SIGABRT (the program aborted: a failed assert, an uncaught exception, or a corrupted heap)";
    case SIGFPE: return "SIGFPE (arithmetic error: most often a division by zero)";
    case SIGKILL: return "SIGKILL";
    case SIGBUS: return "SIGBUS (bad memory access)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGPIPE: return "SIGPIPE (wrote to a closed pipe)";
    case SIGTERM: return "SIGTERM";
    default: return NULL;
    }
}

void judge_trim_compiler_output(const char *s, size_t len, size_t max_lines, size_t max_bytes,
                                textbuf_t *out)
{
    size_t lines = 0, i = 0, keep = 0;
    while (i < len && lines < max_lines && i < max_bytes) {
        const char *nl = memchr(s + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - s) + 1 : len;
        if (end > max_bytes && lines > 0)
            break;
        i = end;
        keep = end;
        lines++;
    }
    if (keep == 0 && len)
        keep = len < max_bytes ? len : max_bytes;
    textbuf_append(out, s, keep);
    if (keep && s[keep - 1] != '\n')
        textbuf_puts(out, "\n");
    if (keep < len) {
        size_t rest_lines = 0;
        for (size_t j = keep; j < len; j++)
            if (s[j] == '\n')
                rest_lines++;
        if (len && s[len - 1] != '\n')
            rest_lines++;
        textbuf_printf(out, "[... %zu more line(s) of compiler messages left out: fix the first errors first, "
                       "they often cause the rest]\n", rest_lines);
    }
}

/* ---- calls to the sandbox manager -------------------------------------------- */

static proto_msg_t *sandbox_request(const proto_msg_t *req, const char *op, int64_t deadline_ms)
{
    proto_msg_t *m = proto_msg_new(PROTO_REQUEST);
    if (!m)
        return NULL;
    if (proto_msg_set_kind(m, "sandbox") || proto_msg_set_name(m, op) ||
        proto_msg_set_conv(m, req->conv) || proto_msg_set_user(m, req->user ? req->user : "")) {
        proto_msg_destroy(&m);
        return NULL;
    }
    m->deadline_ms = deadline_ms;
    return m;
}

static proto_msg_t *sandbox_put(worker_job_t *job, const char *path, const char *content, size_t len)
{
    proto_msg_t *m = sandbox_request(job->req, "put", proto_now_ms() + 60000);
    if (!m || proto_map_set_cstr(&m->args, "path", path) ||
        proto_map_set_str(&m->args, "content", content, len)) {
        proto_msg_destroy(&m);
        return NULL;
    }
    return worker_call(job->worker, m, job);
}

static proto_msg_t *sandbox_exec(worker_job_t *job, const char *command, int timeout_s,
                                 const char *stdin_data, size_t stdin_len, bool separate_stderr)
{
    int64_t grace = config_int("call_grace") * 1000;
    proto_msg_t *m = sandbox_request(job->req, "exec", proto_now_ms() + timeout_s * 1000LL + grace);
    if (!m || proto_map_set_cstr(&m->args, "command", command) ||
        proto_map_set_int(&m->args, "timeout", timeout_s) ||
        (stdin_data && proto_map_set_str(&m->args, "stdin", stdin_data, stdin_len)) ||
        (separate_stderr && proto_map_set_bool(&m->args, "separate_stderr", true))) {
        proto_msg_destroy(&m);
        return NULL;
    }
    return worker_call(job->worker, m, job);
}

/* A reply that is not a usable result of the sandbox manager: pass its text
 * on (it already says what happened and what to do). */
static bool sandbox_failed(const proto_msg_t *r)
{
    return !r || r->status != PROTO_ST_OK || (r->is_error && !proto_map_has(&r->data, "exit_code", PROTO_V_INT));
}

static proto_msg_t *reply_from_failure(const proto_msg_t *req, const proto_msg_t *r, textbuf_t *t)
{
    if (!r)
        textbuf_puts(t, "[talkback: out of memory in the judge. Try again.]\n");
    else if (r->status == PROTO_ST_NO_WORKER)
        textbuf_puts(t, "[talkback: the sandbox manager is not running, so nothing ran. Try the same call again "
                        "in a minute; if it keeps failing, tell the user the sandbox service is down.]\n");
    else if (r->status == PROTO_ST_WORKER_LOST)
        textbuf_puts(t, "[talkback: the sandbox manager stopped while handling this call. Try again.]\n");
    else if (r->status == PROTO_ST_DEADLINE)
        textbuf_puts(t, "[talkback: the sandbox did not answer in time. Try again.]\n");
    else if (r->text)
        textbuf_append(t, r->text, r->text_len);
    proto_msg_t *out = proto_reply_new(req, PROTO_ST_OK, true, t->buf ? t->buf : "");
    return out;
}

/* ---- history ------------------------------------------------------------------- */

static void remember(worker_job_t *job, const char *file, const language_t *lang, const char *verdict,
                     const char *code, size_t clen)
{
    textbuf_t t;
    textbuf_init(&t);
    textbuf_printf(&t, "%s\n%s\n", lang->tag, verdict);
    textbuf_append(&t, code, clen);
    char path[128];
    snprintf(path, sizeof path, HISTORY_DIR "/%s", file);
    proto_msg_t *r = sandbox_put(job, path, t.buf ? t.buf : "", t.len);
    if (sandbox_failed(r))
        log_warn("could not remember the run of conversation %s", job->req->conv ? job->req->conv : "?");
    proto_msg_destroy(&r);
    textbuf_free(&t);
}

/* How much memory the sandbox has: as the sandbox manager read it from
 * the sandbox (its cgroup, swap as far as the host has any), else the
 * configured memory. */
static void say_memory(textbuf_t *t, const proto_msg_t *r)
{
    size_t n = 0;
    const char *m = proto_map_str(&r->data, "memory", &n);
    if (m && n)
        textbuf_append(t, m, n);
    else
        textbuf_printf(t, "%" PRId64 " MiB of memory", config_int("memory") >> 20);
}

static proto_msg_t *op_history(worker_job_t *job)
{
    const proto_msg_t *req = job->req;
    proto_msg_t *reply = proto_reply_new(req, PROTO_ST_OK, false, "");
    if (!reply)
        return NULL;
    static const char *const files[] = { "last-ran", "last-passed" };
    for (size_t i = 0; i < 2; i++) {
        char cmd[160];
        snprintf(cmd, sizeof cmd, "cat " HISTORY_DIR "/%s 2>/dev/null || true", files[i]);
        proto_msg_t *r = sandbox_exec(job, cmd, 10, NULL, 0, false);
        size_t olen = 0;
        const char *out = r ? proto_map_str(&r->data, "output", &olen) : NULL;
        /* language \n verdict \n code */
        const char *nl1 = out ? memchr(out, '\n', olen) : NULL;
        const char *nl2 = nl1 ? memchr(nl1 + 1, '\n', olen - (size_t)(nl1 + 1 - out)) : NULL;
        if (nl2) {
            char key[64];
            snprintf(key, sizeof key, "%s_language", files[i]);
            proto_map_set_str(&reply->data, key, out, (size_t)(nl1 - out));
            snprintf(key, sizeof key, "%s_verdict", files[i]);
            proto_map_set_str(&reply->data, key, nl1 + 1, (size_t)(nl2 - nl1 - 1));
            snprintf(key, sizeof key, "%s_code", files[i]);
            proto_map_set_str(&reply->data, key, nl2 + 1, olen - (size_t)(nl2 + 1 - out));
        }
        proto_msg_destroy(&r);
    }
    return reply;
}

/* ---- run_code ------------------------------------------------------------------- */

static void show_block(textbuf_t *t, const char *label, const char *s, size_t len, const char *empty)
{
    if (len == 0) {
        textbuf_printf(t, "%s %s\n", label, empty);
        return;
    }
    textbuf_printf(t, "%s\n", label);
    textbuf_append(t, s, len);
    if (s[len - 1] != '\n')
        textbuf_puts(t, "\n");
}

static void take_notice(textbuf_t *t, const proto_msg_t *r, bool *noticed)
{
    size_t nl;
    const char *n = r ? proto_map_str(&r->data, "notice", &nl) : NULL;
    if (n && nl && !*noticed) {
        textbuf_append(t, n, nl);
        *noticed = true;
    }
}

/* Write one file of the run into the sandbox, passing on the sandbox's
 * notice the first time.  NULL when written; else the reply that says why
 * not. */
static proto_msg_t *save(worker_job_t *job, const char *path, const char *data, size_t len, textbuf_t *t,
                         bool *noticed)
{
    proto_msg_t *r = sandbox_put(job, path, data, len);
    proto_msg_t *reply = NULL;
    if (sandbox_failed(r))
        reply = reply_from_failure(job->req, r, t);
    else
        take_notice(t, r, noticed);
    proto_msg_destroy(&r);
    return reply;
}

static proto_msg_t *op_run_code(worker_job_t *job)
{
    const proto_msg_t *req = job->req;
    const char *lname = proto_map_str(&req->args, "language", NULL);
    size_t clen = 0, ilen = 0, elen = 0;
    const char *code = proto_map_str(&req->args, "code", &clen);
    const char *input = proto_map_str(&req->args, "input", &ilen);
    const char *expected = proto_map_str(&req->args, "expected", &elen);
    textbuf_t t;
    textbuf_init(&t);

    const language_t *lang = languages_find(lname);
    if (!lang) {
        char list[512];
        languages_list(list, sizeof list);
        textbuf_printf(&t, "[talkback: run_code does not know the language `%s`. Use one of: %s. "
                       "Nothing ran.]", lname ? lname : "", list);
        proto_msg_t *r = proto_reply_new(req, PROTO_ST_OK, true, t.buf);
        textbuf_free(&t);
        return r;
    }
    if (!code || clen == 0 || memchr(code, '\0', clen)) {
        proto_msg_t *r = proto_reply_new(req, PROTO_ST_OK, true,
                                         "[talkback: argument `code` is required: the whole program as a string. "
                                         "Nothing ran.]");
        textbuf_free(&t);
        return r;
    }
    int run_timeout = (int)proto_map_int(&req->args, "timeout", config_int("code_run_timeout"));
    if (run_timeout < 1)
        run_timeout = 1;
    if (run_timeout > config_int("code_timeout_max"))
        run_timeout = (int)config_int("code_timeout_max");

    char *file = languages_expand(lang, "{file}", code);
    char *compile = lang->compile ? languages_expand(lang, lang->compile, code) : NULL;
    char *run = languages_expand(lang, lang->run, code);
    proto_msg_t *reply = NULL, *r = NULL;
    bool noticed = false;
    if (!file || !run || (lang->compile && !compile))
        goto oom;

    /* 1. save */
    char path[512];
    snprintf(path, sizeof path, "/work/%s", file);
    if ((reply = save(job, path, code, clen, &t, &noticed)) != NULL)
        goto out;
    textbuf_printf(&t, "Saved %s (%zu bytes).\n", path, clen);

    /* 2. compile */
    if (compile) {
        int ctimeout = (int)config_int("code_compile_timeout");
        textbuf_printf(&t, "$ %s\n", compile);
        r = sandbox_exec(job, compile, ctimeout, NULL, 0, false);
        if (sandbox_failed(r)) {
            reply = reply_from_failure(req, r, &t);
            goto out;
        }
        take_notice(&t, r, &noticed);
        size_t olen;
        const char *out = proto_map_str(&r->data, "output", &olen);
        if (out && olen)
            judge_trim_compiler_output(out, olen, 40, 6000, &t);
        bool timed_out = proto_map_int(&r->data, "timed_out", 0);
        int code_rc = (int)proto_map_int(&r->data, "exit_code", -1);
        if (timed_out || code_rc != 0) {
            if (timed_out) {
                textbuf_printf(&t, "COMPILE ERROR: the compiler ran longer than %d s and was stopped.\n", ctimeout);
            } else if (code_rc == 137) {
                textbuf_puts(&t, "COMPILE ERROR: the compiler was killed, most likely out of memory (this sandbox has ");
                say_memory(&t, r);
                textbuf_puts(&t, ").\n");
            } else {
                textbuf_printf(&t, "COMPILE ERROR: the program did not compile (exit code %d), so it did not run.\n",
                               code_rc);
            }
            textbuf_puts(&t, DONT_ANSWER);
            reply = proto_reply_new(req, PROTO_ST_OK, true, t.buf);
            remember(job, "last-ran", lang, "compile error", code, clen);
            goto out;
        }
        proto_msg_destroy(&r);
    }

    /* 3. run, stdin always redirected (from /dev/null when there is no
     * input): nobody types here.  The input is a file next to the program,
     * not exec stdin, so the model can rerun the same line with `run`, and
     * no proxy between talkback and Docker has to carry a stdin stream. */
    char line[1024];
    if (input && ilen) {
        char in_path[600];
        snprintf(in_path, sizeof in_path, "/work/%s", INPUT_FILE);
        if ((reply = save(job, in_path, input, ilen, &t, &noticed)) != NULL)
            goto out;
        snprintf(line, sizeof line, "%s < %s", run, INPUT_FILE);
    } else {
        snprintf(line, sizeof line, "%s < /dev/null", run);
    }
    textbuf_printf(&t, "$ %s\n", line);
    show_block(&t, "input:", input, input ? ilen : 0, "(none: stdin was empty)");
    /* stdout is what is compared; stderr is shown apart.  What the program
     * left running in the background (a fork bomb, say) is killed as soon
     * as it ends: see REAP_AFTER. */
    char *reaped = NULL;
    if (asprintf(&reaped, "%s\n%s", line, REAP_AFTER) < 0) {
        reaped = NULL;
        goto oom;
    }
    r = sandbox_exec(job, reaped, run_timeout, NULL, 0, true);
    free(reaped);
    if (sandbox_failed(r)) {
        reply = reply_from_failure(req, r, &t);
        goto out;
    }
    take_notice(&t, r, &noticed);
    size_t olen = 0;
    const char *out = proto_map_str(&r->data, "output", &olen);
    if (!out)
        out = "";
    show_block(&t, "output:", out, olen, "(nothing)");
    size_t elen_err = 0;
    const char *err = proto_map_str(&r->data, "stderr", &elen_err);
    if (err && elen_err)
        show_block(&t, "stderr (not compared):", err, elen_err, "");
    bool timed_out = proto_map_int(&r->data, "timed_out", 0);
    bool cancelled = proto_map_int(&r->data, "cancelled", 0);
    int rc = (int)proto_map_int(&r->data, "exit_code", -1);
    int64_t cut = proto_map_int(&r->data, "cut", 0);
    bool failed = true;
    const char *verdict = "fail";

    if (cancelled) {
        textbuf_puts(&t, "[cancelled: the program and everything it started were killed]\n");
        verdict = "cancelled";
    } else if (timed_out) {
        textbuf_printf(&t, "TIMEOUT: the program ran longer than %d s and was killed, with everything it started. "
                       "It loops forever, waits for input that was not given, or is too slow.\n", run_timeout);
        verdict = "timeout";
    } else if (rc != 0) {
        int sig = rc > 128 && rc < 128 + 65 ? rc - 128 : 0;
        if (sig == SIGKILL) {
            textbuf_puts(&t, "CRASH: the program was killed (exit code 137, SIGKILL), most likely because it ran "
                             "out of memory: this sandbox has ");
            say_memory(&t, r);
            textbuf_puts(&t, ".\n");
        } else if (sig && judge_signal_name(sig)) {
            textbuf_printf(&t, "CRASH: the program was killed by signal %d, %s.\n", sig, judge_signal_name(sig));
        } else {
            textbuf_printf(&t, "CRASH: the program exited with code %d (a run-time error)%s.\n", rc,
                           expected ? "; an accepted program exits with 0" : "");
        }
        verdict = "crash";
    } else if (!expected) {
        failed = false;
        verdict = "ran";
    } else {
        compare_result_t cr;
        compare_outputs(expected, elen, out, olen, input ? input : "", input ? ilen : 0, &cr);
        compare_render(&cr, &t);
        if (cut && !compare_passed(cr.verdict))
            textbuf_printf(&t, "(the output was %" PRId64 " bytes longer than shown: its middle was cut)\n", cut);
        failed = !compare_passed(cr.verdict);
        verdict = failed ? "fail" : "pass";
        compare_result_free(&cr);
    }
    size_t plen = 0;   /* the images the program drew: named, then sent along */
    const char *pics = proto_map_str(&r->data, "images", &plen);
    if (pics)
        textbuf_append(&t, pics, plen);
    if (failed)
        textbuf_puts(&t, DONT_ANSWER);
    reply = proto_reply_new(req, PROTO_ST_OK, failed, t.buf);
    if (reply)
        proto_map_set_cstr(&reply->data, "verdict", verdict);
    if (reply)
        proto_msg_take_images(reply, r);
    remember(job, "last-ran", lang, verdict, code, clen);
    if (strcmp(verdict, "pass") == 0)
        remember(job, "last-passed", lang, verdict, code, clen);
    goto out;

oom:
    reply = proto_reply_new(req, PROTO_ST_INTERNAL, true, "[talkback: out of memory in the judge]");
out:
    proto_msg_destroy(&r);
    free(file);
    free(compile);
    free(run);
    textbuf_free(&t);
    return reply;
}

proto_msg_t *judge_handle(worker_job_t *job, void *ctx)
{
    (void)ctx;
    const char *op = job->req->name ? job->req->name : "";
    if (strcmp(op, "run_code") == 0)
        return op_run_code(job);
    if (strcmp(op, "history") == 0)
        return op_history(job);
    return proto_reply_new(job->req, PROTO_ST_BAD_REQUEST, true, "[talkback: unknown judge operation]");
}
