/* judge.h -- run_code: save, compile, run, compare, in one call.
 *
 * The judge is a worker of kind "judge".  It never talks to Docker: it
 * asks the sandbox manager (kind "sandbox", through the hub) to write the
 * file and to exec the compile and run lines in the chat's container, and
 * does the comparing and the writing of the verdict itself.  Operations
 * (their arguments and replies: proto/ops.h):
 *
 *   run_code  the model's tool: save, compile, run, compare; the verdict
 *   history   the last program that ran and the last that passed in this
 *             chat (language, verdict, code), read from the sandbox
 *
 * Every run is remembered in the chat's own sandbox, under
 * /var/lib/talkback/, so Docker stays the only record.
 */
#ifndef TALKBACK_JUDGE_H
#define TALKBACK_JUDGE_H

#include <stdint.h>

#include "common/textbuf.h"
#include "hub/worker.h"

/* The judge's configuration, read by main.c (common/config.c has what
 * each key means). */
typedef struct {
    int64_t code_run_timeout;     /* s, when the call names none */
    int64_t code_timeout_max;     /* s, the most a call may ask */
    int64_t code_compile_timeout; /* s */
    int64_t code_output_limit;    /* bytes a run may print */
    int64_t call_grace;           /* s on top of a timeout for the round trip */
    int64_t memory;               /* bytes a sandbox has, when it cannot say */
} judge_opts_t;

/* The operations of kind "judge" (proto/optable.h), one handler each,
 * for the worker (worker_opts_t.ops); ctx is the judge_opts_t. */
extern const worker_op_t judge_ops[];

/* Name a signal for the model: "SIGSEGV (invalid memory access)".  Pure. */
const char *judge_signal_name(int sig);

/* Trim compiler output for the model: at most max_lines lines and
 * max_bytes bytes, cut at a line end, with a note of what was left out.
 * Appends to out.  Pure, unit-tested. */
void judge_trim_compiler_output(const char *s, size_t len, size_t max_lines, size_t max_bytes,
                                textbuf_t *out);

#endif
