/* calls.h -- the judge's requests to the sandbox manager (put, exec).
 *
 * The judge never talks to Docker: every file it writes and every line it
 * runs goes through the sandbox manager of the chat, so a build or an
 * input always lands in that chat's own sandbox.
 */
#ifndef TALKBACK_JUDGE_CALLS_H
#define TALKBACK_JUDGE_CALLS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/textbuf.h"
#include "hub/worker.h"
#include "proto/ops.h"
#include "judge/opts.h"

/* Write a file in the chat's sandbox.  The reply, or NULL (out of memory). */
proto_msg_t *judge_put(worker_job_t *job, const char *path, const char *content, size_t len);

/* Run a bash line in the chat's sandbox.  output_limit > 0 asks the
 * sandbox to stop the command once it printed that many bytes. */
proto_msg_t *judge_exec(worker_job_t *job, const judge_opts_t *o, const char *command,
                        int timeout_s, bool separate_stderr, int64_t output_limit);

/* Run the model's program (a line of judge_exec's kind): the request says
 * so (ARG_PROGRAM), so the hub knows from here on that the program may
 * have run and never gives this run_code to another judge (hub/retry.h). */
proto_msg_t *judge_exec_program(worker_job_t *job, const judge_opts_t *o, const char *command,
                                int timeout_s, bool separate_stderr, int64_t output_limit);

/* Is this reply not a usable result (no exit code)? */
bool judge_failed(const proto_msg_t *r);

/* Append to t what went wrong with a failed call made before the program
 * ran (its file, its input, its compile), as the model reads it. */
void judge_failure_text(const proto_msg_t *r, textbuf_t *t);
/* The same for the call that ran the model's program: it may have run. */
void judge_program_failure_text(const proto_msg_t *r, textbuf_t *t);

/* Append the sandbox's resume notice to t, the first time one comes. */
void judge_take_notice(textbuf_t *t, const proto_msg_t *r, bool *noticed);

/* Append how much memory the sandbox has, as the sandbox manager read it
 * from the sandbox (the exec reply's memory), else the configured memory
 * (bytes). */
void judge_say_memory(textbuf_t *t, const ops_exec_t *x, int64_t memory);
#endif
