/* form.h -- answers that are right in all but form, as pure functions.
 *
 * A FAIL that says "line 1 differs" sends a small model hunting for a bug
 * in an answer that is right: it printed 0.3333333333 where 0.33 was
 * expected, one number per line where they were expected on one line, the
 * answer on stderr, or it wrote LeetCode's `class Solution` that nothing
 * calls, so it printed nothing.  These functions tell those cases apart,
 * and the FAIL's first line says so instead (docs/run_code.md):
 *
 *   rounding     every line has the expected values, and each number that
 *                differs agrees with the expected one to the expected
 *                number of decimal places
 *   line breaks  the same values in the same order, split into other lines
 *   stderr       stdout did not match, but stderr would have
 *   uncalled     nothing was printed, and the code defines a function or a
 *                class that nothing in it calls
 *
 * It is still a FAIL: what is compared is the output as printed.
 */
#ifndef TALKBACK_JUDGE_FORM_H
#define TALKBACK_JUDGE_FORM_H

#include <stdbool.h>
#include <stddef.h>
#include "common/textbuf.h"

typedef enum { FORM_NONE = 0, FORM_ROUNDING, FORM_LINE_BREAKS } form_kind_t;

typedef struct {
    form_kind_t kind;
    int decimals;          /* FORM_ROUNDING: the expected number of decimals */
    size_t expected_lines; /* FORM_LINE_BREAKS: lines after normalising */
    size_t got_lines;
} form_t;

/* Whether got is expected in another form (buffers need not be
 * NUL-terminated).  Call it on a FAIL only: equal outputs are FORM_NONE. */
void form_check(const char *expected, size_t elen, const char *got, size_t glen, form_t *out);

/* The name of a function the code defines and nothing in it calls (for a
 * class nothing uses, its first method), as "twoSum"; NULL when there is
 * none, or the language has its own entry point (a main).  malloc'ed. */
char *form_uncalled(const char *code, size_t len);

/* The first line of the FAIL for f ("FAIL: ...\n"); nothing for FORM_NONE. */
void form_render(const form_t *f, textbuf_t *out);
/* The first line of the FAIL for an answer printed to stderr. */
void form_render_stderr(bool stdout_empty, textbuf_t *out);
/* The first line of the FAIL for a program that printed nothing because
 * it defines name and never calls it. */
void form_render_uncalled(const char *name, textbuf_t *out);

#endif
