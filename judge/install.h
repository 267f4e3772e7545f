/* install.h -- a language's toolchain, installed on first use in the
 * chat's sandbox.
 *
 * The image holds the languages most asked for; a language whose table
 * entry names a Debian package (language_t.install) and the program it
 * needs (language_t.needs) is installed the first time run_code runs it in
 * a chat: the result says so and how long it took, and later runs in that
 * chat find it there.  A failed install says why, and nothing runs.  The
 * install runs within run_code's compile time (code_compile_timeout).
 */
#ifndef TALKBACK_JUDGE_INSTALL_H
#define TALKBACK_JUDGE_INSTALL_H

#include <stdbool.h>
#include "common/textbuf.h"
#include "hub/worker.h"
#include "judge/opts.h"
#include "judge/languages.h"

typedef enum {
    JUDGE_INSTALL_HAD,    /* it was there: nothing said */
    JUDGE_INSTALL_DONE,   /* installed now: said, with the time */
    JUDGE_INSTALL_FAILED, /* not installed: said why; nothing may run */
    JUDGE_INSTALL_LOST,   /* the sandbox could not be reached: said */
} judge_install_t;

/* Make sure lang's toolchain is in the chat's sandbox (nothing to do when
 * lang->install is NULL), appending what the model reads to t. */
judge_install_t judge_install(worker_job_t *job, const judge_opts_t *o, const language_t *lang,
                              textbuf_t *t, bool *noticed);

#endif
