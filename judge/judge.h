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

#include "hub/worker.h"
#include "judge/opts.h"

/* The operations of kind "judge" (proto/optable.h), one handler each,
 * for the worker (worker_opts_t.ops); ctx is the judge_opts_t. */
extern const worker_op_t judge_ops[];

#endif
