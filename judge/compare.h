/* compare.h -- how run_code decides PASS or FAIL, as pure functions.
 *
 * The policy (docs/run_code.md):
 *   1. Exact, after normalising line endings (CRLF/CR -> LF), trailing
 *      spaces and tabs on each line, and trailing blank lines: PASS.
 *   2. Else DMOJ's standard rule: compare whitespace-separated tokens; any
 *      run of spaces equals any other, but a gap holding a newline must
 *      match a gap holding a newline ("1 2" != "1\n2").  Equal tokens:
 *      PASS, and the text says spacing differed (leniency is never silent).
 *   3. Else, tokens that both parse as numbers and differ by at most 1e-6
 *      absolute or relative count as equal (DMOJ's float checker, Kattis'
 *      float tolerance): PASS, and the text says numbers differed within
 *      1e-6.
 *   Case always matters.  Anything else is a FAIL that names the first
 *   line that differs, with the expected and the got line, or the
 *   missing/extra lines at the end.
 *
 * Prompts: a program that prints "Enter the number of elements (N): "
 * before its answer waits for a person who is not there; the FAIL says so.
 * A prompt-like line whose rest is nothing but the input's own values
 * ("Input: [100, 4, 200, 1, 3, 2]" for input "100 4 200 1 3 2") is a label,
 * not a prompt.
 */
#ifndef TALKBACK_COMPARE_H
#define TALKBACK_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include "common/textbuf.h"

typedef enum {
    COMPARE_PASS = 0,     /* equal after normalising */
    COMPARE_PASS_SPACING, /* equal as tokens; spacing differed */
    COMPARE_PASS_FLOAT,   /* equal within 1e-6 (and maybe spacing) */
    COMPARE_FAIL_PROMPT,  /* differs, and the output holds input prompts */
    COMPARE_FAIL_LINE,    /* a line differs */
    COMPARE_FAIL_MISSING, /* output stops early: expected lines missing */
    COMPARE_FAIL_EXTRA,   /* output goes on after all expected lines */
    COMPARE_FAIL_EMPTY    /* no output at all, something was expected */
} compare_verdict_t;

typedef struct {
    compare_verdict_t verdict;
    size_t line;           /* 1-based line of the first difference */
    size_t expected_lines; /* after normalising */
    size_t got_lines;
    char *expected_line; /* malloc'ed, truncated for display; or NULL */
    char *got_line;      /* malloc'ed, truncated for display; or NULL */
    char *prompt;        /* COMPARE_FAIL_PROMPT: the first prompt text */
} compare_result_t;

/* Compare a program's output with the expected output; input is what was
 * fed on stdin (used to tell labels from prompts).  Buffers need not be
 * NUL-terminated.  Always fills res; free with compare_result_free. */
void compare_outputs(const char *expected, size_t elen, const char *got, size_t glen,
                     const char *input, size_t ilen, compare_result_t *res);
void compare_result_free(compare_result_t *res);

/* Whether a verdict is a PASS of any kind. */
bool compare_passed(compare_verdict_t v);

/* Append the verdict lines the model reads, e.g.
 *   "PASS: the output matches the expected output.\n"
 *   "FAIL: line 2 differs.\n  expected: 6\n  got:      7\n"
 * (without the closing "Don't answer yet" sentence: the judge adds it). */
void compare_render(const compare_result_t *res, textbuf_t *out);

/* Find the first input prompt in output that is not a label of input's
 * values and does not appear in expected (may be NULL).  Returns a
 * malloc'ed copy of the prompt text (e.g. "Enter the number of elements
 * (N):"), or NULL when there is none. */
char *compare_find_prompt(const char *got, size_t glen, const char *expected, size_t elen,
                          const char *input, size_t ilen);

#endif
