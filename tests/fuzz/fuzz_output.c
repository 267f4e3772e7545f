/* fuzz_output.c -- libFuzzer harness for what talkback makes of a
 * program's output before a model reads it: hints/output.c (binary
 * described, control bytes taken out: the bytes come from anything that
 * runs in a sandbox) and judge/form.c (run_code's "right in all but form"
 * checks, on an expected output, a program's output and its code).
 *
 * Input layout: byte 0 picks the target.  Even: the rest is a run's
 * output; whether whole or through the head+tail cap, what comes out must
 * hold no control byte but tab, newline and the CR of a CR LF.  Odd: the
 * rest is split at the first 0xff byte into the expected output and the
 * program's output (also read as its code); form_check, form_render and
 * form_uncalled must stay within the bytes given and say one line.
 *
 * Built only with -DTALKBACK_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt);
 * run by tests/fuzz/run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hints/output.h"
#include "judge/form.h"

static void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_output: %s\n", what);
    abort();
}

/* No control byte but tab, newline and the CR before a newline. */
static void check_clean(const textbuf_t *t)
{
    for (size_t i = 0; i < t->len; i++) {
        unsigned char c = (unsigned char)t->buf[i];
        if (c == '\r' && i + 1 < t->len && t->buf[i + 1] == '\n')
            continue;
        if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
            fuzz_fail("a control byte reached the text");
    }
}

static void fuzz_render(const uint8_t *p, size_t n)
{
    char *copy = malloc(n ? n : 1);
    if (!copy)
        return;
    memcpy(copy, p, n);
    textbuf_t t;
    textbuf_init(&t);
    hints_output_render_bytes(copy, n, &t);
    check_clean(&t);
    textbuf_free(&t);
    capbuf_t c;
    if (capbuf_init(&c, 256) == 0) {
        capbuf_append(&c, copy, n);
        hints_output_render(&c, &t);
        check_clean(&t);
        textbuf_free(&t);
        capbuf_free(&c);
    }
    free(copy);
}

static void fuzz_form(const uint8_t *p, size_t n)
{
    const uint8_t *cut = memchr(p, 0xff, n);
    size_t elen = cut ? (size_t)(cut - p) : n;
    size_t glen = cut ? n - elen - 1 : 0;
    char *e = malloc(elen ? elen : 1), *g = malloc(glen ? glen : 1);
    if (e && g) {
        memcpy(e, p, elen);
        if (glen)
            memcpy(g, cut + 1, glen);
        form_t f;
        form_check(e, elen, g, glen, &f);
        textbuf_t t;
        textbuf_init(&t);
        form_render(&f, &t);
        if (f.kind != FORM_NONE && (!t.len || memchr(t.buf, '\n', t.len) != t.buf + t.len - 1))
            fuzz_fail("a form FAIL is not one line");
        textbuf_free(&t);
        char *name = form_uncalled(g, glen);
        if (name && (!*name || strlen(name) > 64))
            fuzz_fail("an uncalled name out of bounds");
        free(name);
    }
    free(e);
    free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] % 2 == 0)
        fuzz_render(data + 1, size - 1);
    else
        fuzz_form(data + 1, size - 1);
    return 0;
}
