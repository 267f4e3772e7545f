/* judge.c -- run_code: save, compile, run, compare (see judge.h).
 *
 * The text the model reads is built in one order, every time:
 *
 *   [a resume notice, when the sandbox was woken up]
 *   Saved /work/main.cpp (245 bytes).
 *   $ g++ -O2 -std=c++17 ... -o main main.cpp       (compiled languages)
 *   <compiler messages, trimmed, or "Build reused: ...">
 *   Run: 0.01 s wall time, 0.00 s CPU time, 3.4 MiB peak memory.
 *   $ ./main < main.in                               the run line (main.in holds
 *                                                    the input; /dev/null without)
 *   input:                                           what was fed, or "(none: ...)"
 *   output:                                          what it printed
 *   <verdict lines>                                  PASS / FAIL / CRASH / TIMEOUT /
 *                                                    OUTPUT LIMIT
 *   Don't answer yet: fix the code and call run_code again until it says PASS.
 *
 * With `tests`, the run part repeats per case ("Test 2 of 3: ...", input
 * saved as test-2.in, verdict lines starting "Test 2: "), and one overall
 * PASS or FAIL line closes it.  The last sentence closes every FAIL,
 * crash, timeout and compile error, because a small model acts on the last
 * thing it read.  A run with no expected output gets no verdict at all:
 * inventing a test, or asking the model to work out the answer by hand,
 * made things worse.
 */
#include "judge/judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/textbuf.h"
#include "judge/build.h"
#include "judge/calls.h"
#include "judge/cases.h"
#include "judge/install.h"
#include "judge/others.h"
#include "judge/languages.h"
#include "proto/ops.h"
#include "talk/texts.h"

#define DONT_ANSWER TX_JG_DONT_ANSWER
#define HISTORY_DIR "/var/lib/talkback"

/* ---- history ------------------------------------------------------------------- */

static void remember(worker_job_t *job, const char *file, const language_t *lang,
                     const char *verdict, const char *code, size_t clen)
{
    textbuf_t t;
    textbuf_init(&t);
    textbuf_printf(&t, "%s\n%s\n", lang->tag, verdict);
    textbuf_append(&t, code, clen);
    char path[128];
    snprintf(path, sizeof path, HISTORY_DIR "/%s", file);
    proto_msg_t *r = judge_put(job, path, t.buf ? t.buf : "", t.len);
    if (judge_failed(r))
        log_warn("could not remember the run of conversation %s",
                 job->req->conv ? job->req->conv : "?");
    proto_msg_destroy(&r);
    textbuf_free(&t);
}

static proto_msg_t *op_history(worker_job_t *job, const judge_opts_t *o)
{
    const proto_msg_t *req = job->req;
    proto_msg_t *reply = proto_reply_new(req, PROTO_ST_OK, false, "");
    if (!reply)
        return NULL;
    /* Each file remembered (see remember) and the data keys it fills. */
    static const struct {
        const char *file, *language, *verdict, *code;
    } files[] = {
        { "last-ran", DATA_LAST_RAN_LANGUAGE, DATA_LAST_RAN_VERDICT, DATA_LAST_RAN_CODE },
        { "last-passed", DATA_LAST_PASSED_LANGUAGE, DATA_LAST_PASSED_VERDICT,
          DATA_LAST_PASSED_CODE },
    };
    for (size_t i = 0; i < 2; i++) {
        char cmd[160];
        snprintf(cmd, sizeof cmd, "cat " HISTORY_DIR "/%s 2>/dev/null || true", files[i].file);
        proto_msg_t *r = judge_exec(job, o, cmd, 10, false, 0);
        ops_exec_t x;
        ops_exec_read(r, &x);
        size_t olen = x.output_len;
        const char *out = x.output;
        /* language \n verdict \n code */
        const char *nl1 = out ? memchr(out, '\n', olen) : NULL;
        const char *nl2 = nl1 ? memchr(nl1 + 1, '\n', olen - (size_t)(nl1 + 1 - out)) : NULL;
        if (nl2) {
            proto_map_set_str(&reply->data, files[i].language, out, (size_t)(nl1 - out));
            proto_map_set_str(&reply->data, files[i].verdict, nl1 + 1, (size_t)(nl2 - nl1 - 1));
            proto_map_set_str(&reply->data, files[i].code, nl2 + 1, olen - (size_t)(nl2 + 1 - out));
        }
        proto_msg_destroy(&r);
    }
    return reply;
}

/* ---- run_code ------------------------------------------------------------------- */

/* A reply that says nothing ran, and why. */
static proto_msg_t *refuse(const proto_msg_t *req, const char *text)
{
    return proto_reply_new(req, PROTO_ST_OK, true, text);
}

/* Arguments that cannot run at all: NULL when they can. */
static proto_msg_t *check_args(const proto_msg_t *req, const language_t *lang, const char *lname,
                               const char *code, size_t clen, int64_t ntests)
{
    if (!lang) {
        char list[1024], text[2048];
        languages_list(list, sizeof list);
        const other_lang_t *other = others_find(lname);
        if (other)
            others_say(other, list, text, sizeof text);
        else
            snprintf(text, sizeof text, TX_JG_UNKNOWN_LANGUAGE, lname ? lname : "", list);
        return refuse(req, text);
    }
    if (!code || clen == 0 || memchr(code, '\0', clen))
        return refuse(req, TX_JG_NO_CODE);
    bool single = proto_map_get(&req->args, ARG_INPUT) || proto_map_get(&req->args, ARG_EXPECTED);
    if (ntests && single)
        return refuse(req, TX_JG_TESTS_AND_INPUT);
    if (ntests < 0 || ntests > ARG_TESTS_MAX) {
        char text[160];
        snprintf(text, sizeof text, TX_JG_TOO_MANY_TESTS, ARG_TESTS_MAX);
        return refuse(req, text);
    }
    return NULL;
}

/* The tests call: every case, then one overall line.  The verdict word. */
static const char *run_tests(const judge_runner_t *jr, const proto_msg_t *req, int n, bool *lost)
{
    int passed = 0;
    char failed[128] = "";
    size_t fl = 0;
    for (int i = 0; i < n; i++) {
        char key[40];
        judge_case_t c = { .number = i + 1, .count = n };
        ops_item_key(key, sizeof key, ARG_TESTS, (size_t)i, ARG_INPUT);
        c.input = proto_map_str(&req->args, key, &c.ilen);
        ops_item_key(key, sizeof key, ARG_TESTS, (size_t)i, ARG_EXPECTED);
        c.expected = proto_map_str(&req->args, key, &c.elen);
        const char *w = judge_case_run(jr, &c);
        if (!w) {
            *lost = true;
            return NULL;
        }
        if (strcmp(w, "pass") == 0)
            passed++;
        else if (fl < sizeof failed - 8)
            fl += (size_t)snprintf(failed + fl, sizeof failed - fl, "%s%d", fl ? ", " : "", i + 1);
    }
    if (passed == n) {
        textbuf_printf(jr->t, TX_JG_PASS_ALL, n);
        return "pass";
    }
    textbuf_printf(jr->t, TX_JG_FAIL_SOME, passed, n, failed);
    return "fail";
}

/* Everything after the checks: save, build, run once or on every test.
 * It is long because it is run_code's steps in their order (the files,
 * the install of a missing toolchain, the compile, the timeout's bounds,
 * the runs, the verdict, the images), each a call to its own module, with
 * one early answer per step that can end the call. */
static proto_msg_t *run_program(worker_job_t *job, const judge_opts_t *o, const language_t *lang,
                                const char *code, size_t clen, int64_t ntests, textbuf_t *t)
{
    const proto_msg_t *req = job->req;
    char *file = languages_expand(lang, "{file}", code);
    char *compile = lang->compile ? languages_expand(lang, lang->compile, code) : NULL;
    char *run = languages_expand(lang, lang->run, code);
    proto_msg_t *reply = NULL, *images = proto_msg_new(PROTO_REPLY);
    bool noticed = false, lost = false;
    const char *verdict = NULL;
    if (!file || !run || (lang->compile && !compile) || !images) {
        reply = proto_reply_new(req, PROTO_ST_INTERNAL, true, TX_JG_NO_MEMORY);
        goto out;
    }
    char path[512];
    snprintf(path, sizeof path, "/work/%s", file);
    proto_msg_t *r = judge_put(job, path, code, clen);
    lost = judge_failed(r);
    if (lost)
        judge_failure_text(r, t);
    else
        judge_take_notice(t, r, &noticed);
    proto_msg_destroy(&r);
    if (lost)
        goto out;
    textbuf_printf(t, "Saved %s (%zu bytes).\n", path, clen);
    judge_install_t in = judge_install(job, o, lang, t, &noticed);
    if (in == JUDGE_INSTALL_FAILED || in == JUDGE_INSTALL_LOST) {
        lost = in == JUDGE_INSTALL_LOST;
        verdict = lost ? NULL : "install failed";
        goto out;
    }
    if (compile) {
        judge_build_t b = judge_build(job, o, lang, file, compile, code, t, &noticed);
        lost = b == JUDGE_BUILD_LOST;
        if (b != JUDGE_BUILT) {
            verdict = lost ? NULL : "compile error";
            goto out;
        }
    }
    judge_runner_t jr = {
        .job = job,
        .run = run,
        .t = t,
        .noticed = &noticed,
        .images = images,
        .timeout_s = (int)proto_map_int(&req->args, ARG_TIMEOUT, o->code_run_timeout),
        .output_limit = o->code_output_limit,
        .opts = o,
        .code = code,
        .code_len = clen,
    };
    if (jr.timeout_s < 1)
        jr.timeout_s = 1;
    if (jr.timeout_s > o->code_timeout_max)
        jr.timeout_s = (int)o->code_timeout_max;
    if (ntests) {
        verdict = run_tests(&jr, req, (int)ntests, &lost);
    } else {
        judge_case_t c = { 0 };
        c.input = proto_map_str(&req->args, ARG_INPUT, &c.ilen);
        c.expected = proto_map_str(&req->args, ARG_EXPECTED, &c.elen);
        verdict = judge_case_run(&jr, &c);
        lost = !verdict;
    }
out:
    if (!reply) {
        bool failed = lost || !verdict ||
                      (strcmp(verdict, "pass") != 0 && strcmp(verdict, "ran") != 0);
        if (failed && !lost)
            textbuf_puts(t, DONT_ANSWER);
        reply = proto_reply_new(req, PROTO_ST_OK, failed, t->buf ? t->buf : "");
        if (reply && verdict)
            proto_map_set_cstr(&reply->data, DATA_VERDICT, verdict);
    }
    if (reply && images)
        proto_msg_take_images(reply, images);
    proto_msg_destroy(&images);
    if (verdict) {
        remember(job, "last-ran", lang, verdict, code, clen);
        if (strcmp(verdict, "pass") == 0)
            remember(job, "last-passed", lang, verdict, code, clen);
    }
    free(file);
    free(compile);
    free(run);
    return reply;
}

static proto_msg_t *op_run_code(worker_job_t *job, const judge_opts_t *o)
{
    const proto_msg_t *req = job->req;
    const char *lname = proto_map_str(&req->args, ARG_LANGUAGE, NULL);
    size_t clen = 0;
    const char *code = proto_map_str(&req->args, ARG_CODE, &clen);
    int64_t ntests = proto_map_int(&req->args, ARG_TESTS, 0);
    const language_t *lang = languages_find(lname);
    proto_msg_t *refused = check_args(req, lang, lname, code, clen, ntests);
    if (refused)
        return refused;
    textbuf_t t;
    textbuf_init(&t);
    proto_msg_t *reply = run_program(job, o, lang, code, clen, ntests, &t);
    textbuf_free(&t);
    return reply;
}

/* The operations of kind judge (proto/optable.h); ctx is the judge_opts_t. */
static proto_msg_t *h_run_code(worker_job_t *job, void *ctx)
{
    return op_run_code(job, ctx);
}
static proto_msg_t *h_history(worker_job_t *job, void *ctx)
{
    return op_history(job, ctx);
}

const worker_op_t judge_ops[] = {
    { OP_RUN_CODE, h_run_code },
    { OP_HISTORY, h_history },
    { NULL, NULL },
};
