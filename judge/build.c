/* build.c -- compile, through the sandbox's compile cache (see build.h).
 *
 * A hit is told by the output being exactly the reuse marker with this
 * call's random nonce: compiler messages cannot hold a nonce they never
 * saw, so a compile can never pass for a reuse.
 */
#include "judge/build.h"
#include "talk/texts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "judge/calls.h"
#include "judge/report.h"

#define BUILD_DIR "/var/lib/talkback/build"
#define REUSED    "talkback-build-reused "

bool judge_build_cacheable(const language_t *lang, const char *code)
{
    if (!lang->build)
        return false;
    bool c_family = strcmp(lang->tag, "c") == 0 || strcmp(lang->tag, "cpp") == 0;
    return !(c_family && strstr(code, "#include \"") != NULL);
}

/* Append s single-quoted for bash. */
static void put_quoted(textbuf_t *t, const char *s)
{
    textbuf_puts(t, "'");
    for (; *s; s++) {
        if (*s == '\'')
            textbuf_puts(t, "'\\''");
        else
            textbuf_append(t, s, 1);
    }
    textbuf_puts(t, "'");
}

char *judge_build_script(const language_t *lang, const char *file, const char *compile,
                         const char *nonce)
{
    textbuf_t t;
    textbuf_init(&t);
    textbuf_puts(&t, "__l=");
    put_quoted(&t, compile);
    textbuf_puts(&t, "; __f=");
    put_quoted(&t, file);
    textbuf_puts(&t,
                 "; __d=" BUILD_DIR "\n"
                 "__k=$( { printf '%s\\n' \"$__l\"; cat -- \"$__f\"; } | sha256sum | cut -c1-64)\n"
                 "if [ -n \"$__k\" ] && [ \"$(cat \"$__d/key\" 2>/dev/null)\" = \"$__k\" ] && "
                 "cp -p \"$__d\"/art/* . 2>/dev/null; then echo '" REUSED);
    textbuf_puts(&t, nonce);
    textbuf_puts(&t, "'; exit 0; fi\nrm -rf \"$__d\"\n");
    textbuf_puts(&t, compile);
    textbuf_printf(
        &t,
        "\n__rc=$?\nif [ $__rc = 0 ]; then mkdir -p \"$__d/art\" && cp -p %s \"$__d/art/\" && "
        "echo \"$__k\" > \"$__d/key\"; fi 2>/dev/null\nexit $__rc\n",
        lang->build);
    return textbuf_take(&t, NULL);
}

/* 16 random hex digits (a fixed string only if the kernel has none). */
static void make_nonce(char out[17])
{
    unsigned char b[8] = { 0 };
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
        memcpy(b, "tbnonce!", 8);
    for (int i = 0; i < 8; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* The COMPILE ERROR line for a compile that did not succeed. */
static void say_not_built(const ops_exec_t *x, int ctimeout, int64_t memory, textbuf_t *t)
{
    int rc = (int)x->exit_code;
    if (x->timed_out) {
        textbuf_printf(t, TX_JG_COMPILE_SLOW, ctimeout);
    } else if (rc == 137) {
        textbuf_puts(t, TX_JG_COMPILE_KILLED);
        judge_say_memory(t, x, memory);
        textbuf_puts(t, ").\n");
    } else {
        textbuf_printf(t, TX_JG_COMPILE_FAILED, rc);
    }
}

judge_build_t judge_build(worker_job_t *job, const judge_opts_t *o, const language_t *lang,
                          const char *file, const char *compile, const char *code, textbuf_t *t,
                          bool *noticed)
{
    int ctimeout = (int)o->code_compile_timeout;
    char nonce[17];
    make_nonce(nonce);
    char *script =
        judge_build_cacheable(lang, code) ? judge_build_script(lang, file, compile, nonce) : NULL;
    textbuf_printf(t, "$ %s\n", compile);
    const char *line = script ? script : compile;
    proto_msg_t *r = lang->compile_runs ? judge_exec_program(job, o, line, ctimeout, false, 0)
                                        : judge_exec(job, o, line, ctimeout, false, 0);
    free(script);
    if (judge_failed(r)) {
        if (lang->compile_runs)
            judge_program_failure_text(r, t);
        else
            judge_failure_text(r, t);
        proto_msg_destroy(&r);
        return JUDGE_BUILD_LOST;
    }
    judge_take_notice(t, r, noticed);
    ops_exec_t x;
    ops_exec_read(r, &x);
    size_t olen = x.output_len;
    const char *out = x.output;
    char marker[64];
    int ml = snprintf(marker, sizeof marker, REUSED "%s\n", nonce);
    judge_build_t res = JUDGE_BUILT;
    if (x.exit_code == 0 && !x.timed_out && out && olen == (size_t)ml &&
        memcmp(out, marker, olen) == 0) {
        textbuf_printf(t, TX_JG_BUILD_REUSED, languages_title(lang));
    } else {
        if (out && olen)
            judge_trim_compiler_output(out, olen, 40, 6000, t);
        if (x.timed_out || x.exit_code != 0) {
            say_not_built(&x, ctimeout, o->memory, t);
            res = JUDGE_NOT_BUILT;
        }
    }
    proto_msg_destroy(&r);
    return res;
}
