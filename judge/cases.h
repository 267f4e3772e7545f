/* cases.h -- run_code's runs: one run of the built program on one input,
 * its time and memory line, what it printed, and its verdict.
 *
 * A run's text, in order:
 *   <label>: 0.01 s wall time, 0.00 s CPU time, 3.4 MiB peak memory.
 *   $ ./main < main.in
 *   input: / output: / stderr (not compared):
 *   the verdict lines (PASS, FAIL, CRASH, TIMEOUT, OUTPUT LIMIT; none
 *   when there is nothing to compare with)
 * In a `tests` call every verdict line of a case starts with "Test N: ",
 * so only the closing overall line starts with PASS or FAIL.
 */
#ifndef TALKBACK_JUDGE_CASES_H
#define TALKBACK_JUDGE_CASES_H

#include <stdbool.h>
#include <stdint.h>

#include "common/textbuf.h"
#include "hub/worker.h"
#include "judge/opts.h"

typedef struct {
    worker_job_t *job;
    const char *run; /* the expanded run line */
    int timeout_s;
    int64_t output_limit; /* bytes; 0 = none */
    textbuf_t *t;         /* the text the model reads */
    bool *noticed;        /* the resume notice was said */
    proto_msg_t *images;  /* holds the images a run drew, for the reply */
    const judge_opts_t *opts;
    const char *code; /* the program, to tell a function nothing calls */
    size_t code_len;
} judge_runner_t;

typedef struct {
    const char *input; /* NULL: none */
    size_t ilen;
    const char *expected; /* NULL: nothing to compare with */
    size_t elen;
    int number; /* 1-based in a tests call; 0 for a single run */
    int count;  /* cases in the call */
} judge_case_t;

/* Run one case.  Returns the verdict word ("pass", "fail", "crash",
 * "timeout", "output limit", "cancelled", "ran"), or NULL when a call to
 * the sandbox failed (why is in the text). */
const char *judge_case_run(const judge_runner_t *jr, const judge_case_t *c);

#endif
