/* opts.h -- the judge's options: what judge/main.c reads from the
 * configuration and every part of run_code (judge.c, build.c, cases.c,
 * calls.c, install.c) is handed, so none of them calls back into judge.c
 * for it.
 */
#ifndef TALKBACK_JUDGE_OPTS_H
#define TALKBACK_JUDGE_OPTS_H

#include <stdint.h>

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

#endif
