/* cases.c -- one run of the program and its verdict (see cases.h). */
#include "judge/cases.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/calls.h"
#include "judge/compare.h"
#include "judge/form.h"
#include "judge/report.h"
#include "judge/stats.h"
#include "hints/output.h"
#include "proto/ops.h"
#include "talk/texts.h"

/* Shown of one input or output in a tests call, and of the output of a
 * run stopped at the output limit. */
#define SHOW_MAX 2000

/* Appended (after a newline) to the run line: once the program ends, kill
 * every process it left behind -- everything carrying this run's
 * TALKBACK_RUN marker (sandbox/run.h) but this shell and its parent --
 * with bash builtins only, so it works even when a fork bomb has used up
 * the sandbox's process slots.  Each one found is stopped at once, so it
 * cannot fork while the walk goes on; when a walk finds nothing new, all
 * of them are killed.  The exit status stays the program's. */
#define REAP_AFTER                                                                                 \
    "__tb_rc=$?; __all=' '; for __r in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "    \
    "__new=0; "                                                                                    \
    "for __d in /proc/[0-9]*; do __p=${__d#/proc/}; "                                              \
    "[ \"$__p\" = \"$$\" ] || [ \"$__p\" = \"$PPID\" ] && continue; "                              \
    "case $__all in *\" $__p \"*) continue;; esac; "                                               \
    "while IFS= read -r -d '' __e; do [ \"$__e\" = \"TALKBACK_RUN=$TALKBACK_RUN\" ] && "           \
    "{ kill -STOP \"$__p\"; __all=\"$__all$__p \"; __new=1; break; }; done 2>/dev/null < "         \
    "\"$__d/environ\"; "                                                                           \
    "done 2>/dev/null; [ $__new = 0 ] && break; done; "                                            \
    "for __p in $__all; do kill -KILL \"$__p\" 2>/dev/null; done; exit $__tb_rc"

/* label + block; at most max bytes (cut at a line end) when max > 0.
 * Binary bytes are described, never pasted (hints/output.h). */
static void show_block(textbuf_t *t, const char *label, const char *s, size_t len,
                       const char *empty, size_t max)
{
    if (len == 0) {
        textbuf_printf(t, "%s %s\n", label, empty);
        return;
    }
    if (hints_output_is_binary(s, len)) {
        textbuf_printf(t, "%s\n", label);
        hints_output_render_bytes(s, len, t);
        return;
    }
    size_t keep = len;
    if (max && len > max) {
        keep = max;
        while (keep > max / 2 && s[keep - 1] != '\n')
            keep--;
    }
    textbuf_printf(t, "%s\n", label);
    textbuf_append(t, s, keep);
    if (s[keep - 1] != '\n')
        textbuf_puts(t, "\n");
    if (keep < len)
        textbuf_printf(t, TX_JG_MORE_BYTES, len - keep);
}

/* The verdict of a run that did not end with exit code 0. */
static const char *say_crash(const ops_exec_t *x, const judge_case_t *c, int rc, int64_t memory,
                             textbuf_t *v)
{
    int sig = rc > 128 && rc < 128 + 65 ? rc - 128 : 0;
    if (sig == SIGKILL) {
        textbuf_puts(v, TX_JG_CRASH_KILLED);
        judge_say_memory(v, x, memory);
        textbuf_puts(v, ".\n");
    } else if (sig && judge_signal_name(sig)) {
        textbuf_printf(v, TX_JG_CRASH_SIGNAL, sig, judge_signal_name(sig));
    } else {
        textbuf_printf(v, TX_JG_CRASH_EXIT, rc,
                       c->expected ? "; an accepted program exits with 0" : "");
    }
    return "crash";
}

/* The FAIL of an answer right in all but form (form.h): its own first
 * line, then the detail lines of the plain FAIL in failed.  False when the
 * answer is not one of those. */
static bool say_form(const judge_runner_t *jr, const ops_exec_t *x, const judge_case_t *c,
                     const char *out, size_t olen, const compare_result_t *cr,
                     const textbuf_t *failed, textbuf_t *v)
{
    textbuf_t head;
    textbuf_init(&head);
    compare_result_t er;
    compare_outputs(c->expected, c->elen, x->err, x->err ? x->err_len : 0, c->input ? c->input : "",
                    c->input ? c->ilen : 0, &er);
    if (x->err && x->err_len && compare_passed(er.verdict)) {
        form_render_stderr(cr->verdict == COMPARE_FAIL_EMPTY, &head);
    } else if (cr->verdict == COMPARE_FAIL_EMPTY) {
        char *name = form_uncalled(jr->code, jr->code_len);
        if (name)
            form_render_uncalled(name, &head);
        free(name);
    } else {
        form_t f;
        form_check(c->expected, c->elen, out, olen, &f);
        form_render(&f, &head);
    }
    compare_result_free(&er);
    bool said = head.len > 0;
    if (said) {
        textbuf_append(v, head.buf, head.len);
        const char *nl = failed->buf ? memchr(failed->buf, '\n', failed->len) : NULL;
        if (nl)
            textbuf_append(v, nl + 1, failed->len - (size_t)(nl + 1 - failed->buf));
    }
    textbuf_free(&head);
    return said;
}

/* Compare what it printed with what was expected. */
static const char *say_compared(const judge_runner_t *jr, const ops_exec_t *x,
                                const judge_case_t *c, const char *out, size_t olen, textbuf_t *v)
{
    compare_result_t cr;
    compare_outputs(c->expected, c->elen, out, olen, c->input ? c->input : "",
                    c->input ? c->ilen : 0, &cr);
    textbuf_t plain;
    textbuf_init(&plain);
    compare_render(&cr, &plain);
    bool passed = compare_passed(cr.verdict);
    if (passed || cr.verdict == COMPARE_FAIL_PROMPT ||
        !say_form(jr, x, c, out, olen, &cr, &plain, v))
        textbuf_append(v, plain.buf, plain.len);
    textbuf_free(&plain);
    int64_t cut = x->cut;
    if (cut && !passed)
        textbuf_printf(
            v, "(the output was %" PRId64 " bytes longer than shown: its middle was cut)\n", cut);
    compare_result_free(&cr);
    return passed ? "pass" : "fail";
}

/* The verdict lines of a finished run, into v; the verdict word. */
static const char *judge_verdict(const judge_runner_t *jr, const ops_exec_t *x,
                                 const judge_case_t *c, const char *out, size_t olen, textbuf_t *v)
{
    int rc = (int)x->exit_code;
    if (x->cancelled) {
        textbuf_puts(v, TX_JG_CANCELLED);
        return "cancelled";
    }
    if (x->output_limited) {
        textbuf_printf(v, TX_JG_OUTPUT_LIMIT, jr->output_limit);
        return "output limit";
    }
    if (x->timed_out) {
        textbuf_printf(v, TX_JG_TIMEOUT, jr->timeout_s);
        return "timeout";
    }
    if (rc != 0)
        return say_crash(x, c, rc, jr->opts->memory, v);
    if (!c->expected)
        return "ran";
    return say_compared(jr, x, c, out, olen, v);
}

/* The stats line of a run, from the sandbox's reply. */
static void say_stats(const judge_runner_t *jr, const ops_exec_t *x, const judge_case_t *c,
                      textbuf_t *t)
{
    judge_stats_t s = {
        .wall_ms = x->elapsed_ms,
        .cpu_ms = x->cpu_ms,
        .rss_kb = x->max_rss_kb,
    };
    char label[48];
    if (c->number)
        snprintf(label, sizeof label, "Test %d of %d", c->number, c->count);
    else
        snprintf(label, sizeof label, "Run");
    bool timed_out = x->timed_out && !x->cancelled;
    bool oom = x->exit_code == 128 + SIGKILL && !timed_out && !x->output_limited && !x->cancelled;
    judge_stats_line(label, &s, timed_out, jr->timeout_s, oom, jr->opts->memory, t);
}

/* Save the case's input beside the program; the run line reads it. */
static bool save_input(const judge_runner_t *jr, const judge_case_t *c, char *line, size_t linesz)
{
    if (!c->input || !c->ilen) {
        snprintf(line, linesz, "%s < /dev/null", jr->run);
        return true;
    }
    char name[32], path[64];
    if (c->number)
        snprintf(name, sizeof name, "test-%d.in", c->number);
    else
        snprintf(name, sizeof name, "main.in");
    snprintf(path, sizeof path, "/work/%s", name);
    proto_msg_t *r = judge_put(jr->job, path, c->input, c->ilen);
    bool ok = !judge_failed(r);
    if (ok)
        judge_take_notice(jr->t, r, jr->noticed);
    else
        judge_failure_text(r, jr->t);
    proto_msg_destroy(&r);
    snprintf(line, linesz, "%s < %s", jr->run, name);
    return ok;
}

/* The images the run drew (sandbox/pictures.c): named in the text, before
 * the verdict (the verdict stays the last line), and sent along.  A tests
 * call shows those of the first test that drew any: the same program draws
 * the same picture for every test, and one reply must stay small. */
static void take_images(const judge_runner_t *jr, proto_msg_t *r, const ops_exec_t *x)
{
    size_t plen = x->images_len;
    const char *pics = x->images;
    if (!pics || !plen)
        return;
    if (jr->images && jr->images->n_images && r->n_images) {
        textbuf_puts(jr->t, TX_JG_IMAGES_NOT_SHOWN);
        return;
    }
    textbuf_append(jr->t, pics, plen);
    if (jr->images)
        proto_msg_take_images(jr->images, r);
}

const char *judge_case_run(const judge_runner_t *jr, const judge_case_t *c)
{
    char line[1100];
    if (!save_input(jr, c, line, sizeof line))
        return NULL;
    char *reaped = NULL;
    if (asprintf(&reaped, "%s\n%s", line, REAP_AFTER) < 0)
        return NULL;
    /* stdout is what is compared; stderr is shown apart. */
    proto_msg_t *r =
        judge_exec_program(jr->job, jr->opts, reaped, jr->timeout_s, true, jr->output_limit);
    free(reaped);
    if (judge_failed(r)) {
        judge_program_failure_text(r, jr->t);
        proto_msg_destroy(&r);
        return NULL;
    }
    judge_take_notice(jr->t, r, jr->noticed);
    ops_exec_t x;
    ops_exec_read(r, &x);
    size_t olen = x.output_len, errlen = x.err_len;
    const char *out = x.output;
    const char *err = x.err;
    bool limited = x.output_limited;
    size_t max = c->number || limited ? SHOW_MAX : 0;
    say_stats(jr, &x, c, jr->t);
    textbuf_printf(jr->t, "$ %s\n", line);
    show_block(jr->t, "input:", c->input, c->input ? c->ilen : 0, "(none: stdin was empty)",
               c->number ? SHOW_MAX : 0);
    show_block(jr->t, "output:", out ? out : "", out ? olen : 0, "(nothing)", max);
    if (err && errlen)
        show_block(jr->t, "stderr (not compared):", err, errlen, "", max);
    take_images(jr, r, &x);
    textbuf_t v;
    textbuf_init(&v);
    const char *word = judge_verdict(jr, &x, c, out ? out : "", out ? olen : 0, &v);
    if (v.len && c->number)
        textbuf_printf(jr->t, "Test %d: ", c->number);
    if (v.len)
        textbuf_append(jr->t, v.buf, v.len);
    textbuf_free(&v);
    proto_msg_destroy(&r);
    return word;
}
