/* build.h -- run_code's compile step, with a compile cache per sandbox.
 *
 * The last successful build of a sandbox is kept in that sandbox, under
 * /var/lib/talkback/build/: a key (the SHA-256 of the compile line and the
 * source, computed in the sandbox) and a copy of what the compile made
 * (the language table's `build` glob).  A compile whose key matches copies
 * that build back into /work instead of compiling, and the result says the
 * build was reused.  The cache lives in the chat's own sandbox, so a chat
 * can never be served another chat's build, and `reset` empties it.  C and
 * C++ sources that include a file of their own (#include "x.h") are always
 * compiled, since the key does not cover that file.
 */
#ifndef TALKBACK_JUDGE_BUILD_H
#define TALKBACK_JUDGE_BUILD_H

#include <stdbool.h>

#include "common/textbuf.h"
#include "hub/worker.h"
#include "judge/opts.h"
#include "judge/languages.h"

typedef enum {
    JUDGE_BUILT,     /* compiled, or the last build reused */
    JUDGE_NOT_BUILT, /* did not compile: the COMPILE ERROR text is in t */
    JUDGE_BUILD_LOST /* the call failed: why is in t */
} judge_build_t;

/* Compile the saved file with the expanded compile line.  Appends the
 * "$ line", then the compiler messages or the reuse sentence, and on
 * JUDGE_NOT_BUILT the verdict line (without the closing sentence). */
judge_build_t judge_build(worker_job_t *job, const judge_opts_t *o, const language_t *lang,
                          const char *file, const char *compile, const char *code, textbuf_t *t,
                          bool *noticed);

/* May this source be served from the cache?  Pure. */
bool judge_build_cacheable(const language_t *lang, const char *code);

/* The bash script that compiles through the cache; on a hit it prints
 * exactly "talkback-build-reused <nonce>\n" and exits 0.  malloc'ed. */
char *judge_build_script(const language_t *lang, const char *file, const char *compile,
                         const char *nonce);

#endif
