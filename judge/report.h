/* report.h -- pieces of what run_code's result says about a program's
 * end: a signal named for the model, compiler messages trimmed.  Pure;
 * used by cases.c (one run's verdict) and build.c (the compile), so
 * neither calls back into judge.c for them.
 */
#ifndef TALKBACK_JUDGE_REPORT_H
#define TALKBACK_JUDGE_REPORT_H

#include <stddef.h>

#include "common/textbuf.h"

/* Name a signal for the model: "SIGSEGV (invalid memory access)", or
 * NULL for a signal it has no words for.  Pure. */
const char *judge_signal_name(int sig);

/* Trim compiler output for the model: at most max_lines lines and
 * max_bytes bytes, cut at a line end, with a note of what was left out.
 * Appends to out.  Pure, unit-tested. */
void judge_trim_compiler_output(const char *s, size_t len, size_t max_lines, size_t max_bytes,
                                textbuf_t *out);

#endif
