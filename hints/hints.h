/* hints.h -- results that talk back: the hint table and the retry memory.
 *
 * Many error messages say nothing useful to a small model ("Connection
 * refused", "Unable to locate package", "Authentication token manipulation
 * error"), and some successes mislead it (free printing the host's memory).
 * After the output of the model's `run` and `write_file` calls the sandbox
 * manager adds one bracketed line per situation it recognises, saying what
 * happened and what to do next:
 *
 *     $ kotlinc TwoSum.kt -include-runtime -d t.jar
 *     error: source file or directory not found: TwoSum.kt
 *     [exit code 1]
 *     [TwoSum.kt does not exist (no file /work/TwoSum.kt), so there was nothing to
 *     compile or run. Write it first (write_file), then run this command again.]
 *
 * The hints are data: tables of entries (hints_table.h says what an entry
 * is; hints.c holds the first table and the engine, habits.c the
 * habits a model brings from a real machine).  An entry matches on the
 * command (for a write: the path), the output (for a write: the content)
 * and the exit code, may run a PROBE command in the same sandbox to check a
 * fact before it says anything (is the file really empty? does anything
 * listen on that port?), and renders a template.  Adding a hint is one
 * entry plus one unit test case; the engine is one loop over the table.
 * A run with nothing to add gets nothing added.
 *
 * Probes go through a callback, so this file needs no Docker and is unit
 * tested with a fake.  Probes must only read: they never change the
 * sandbox.
 *
 * Retry memory: when a command fails exactly as it did the last time it
 * ran in the same chat (same command, exit code and output), the result
 * says that running it again won't change it.  A write_file in the chat
 * clears the memory, because re-running a compile after fixing the file is
 * not a pointless retry.  The memory lives in the manager's process only:
 * a manager restart forgets it, and the worst that can cause is one
 * repeated failure that is not flagged (the next repeat is flagged again).
 * That is why it is not written to Docker or disk.
 */
#ifndef TALKBACK_HINTS_H
#define TALKBACK_HINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/textbuf.h"

/* Run command (bash source) in the sandbox the hint is for, with a short
 * timeout, appending its stdout+stderr to out.  Returns its exit code, or
 * -1 when it could not run or timed out (the hint then stays silent). */
typedef int (*hints_probe_fn)(void *ctx, const char *command, textbuf_t *out);

/* The limits a sandbox really has, as its cgroup says (read by its agent,
 * sandbox/agent_link.h), for the {memory} {cpus} {pids} {limits} phrases. */
typedef struct {
    int64_t memory;      /* bytes; 0: no limit */
    int64_t memory_swap; /* memory + the swap it can really use, bytes; -1: unlimited */
    int64_t nano_cpus;   /* billionths of a CPU; 0: no limit */
    int64_t pids;        /* 0: no limit */
    int64_t disk_cap;    /* bytes; 0: no cap.  Only the template's counts:
                             a sandbox cannot tell its own */
} hints_limits_t;

/* Fill out with the sandbox's limits; 0 when known, -1 when not (the
 * phrases then use the sandbox template's limits, `configured` below).
 *
 * `configured` is the sandbox template as the configuration sets it, in
 * Docker's terms (memory_swap 0: as much swap as memory; -1: unlimited),
 * read by the process's main.c; NULL: no limits known. */
typedef int (*hints_limits_fn)(void *ctx, hints_limits_t *out);

/* Hints for a finished `run`: appends zero or more lines "[...]\n" to out.
 * output is what the model sees (after the head+tail cap).  For a command
 * its timeout killed (pass timed_out) only the entries about timeouts
 * speak (a server run in the foreground); a cancelled command gets no
 * hints at all (do not call this).  probe may be NULL: entries that
 * need one stay silent.  limits may be NULL: the configured limits are
 * said.  Both get ctx. */
void hints_for_run(const char *command, const char *output, size_t output_len, int exit_code,
                   bool timed_out, hints_probe_fn probe, hints_limits_fn limits, void *ctx,
                   const hints_limits_t *configured, textbuf_t *out);

/* The sandbox's memory as a phrase ("256 MiB of memory and no swap"), as
 * {memory} says it: from limits(ctx) when it can tell, else from the
 * configured template.  For the judge's out-of-memory lines. */
void hints_memory_phrase(hints_limits_fn limits, void *ctx, const hints_limits_t *configured,
                         textbuf_t *out);

/* Hints for a successful write_file of abspath (content of len bytes):
 * ShellCheck's errors and warnings, and its notes on variables changed in
 * a pipeline's subshell, for a shell script (*.sh, *.bash, or a #! line
 * naming sh, bash, dash or ksh). */
void hints_for_write(const char *abspath, const char *content, size_t len, hints_probe_fn probe,
                     void *ctx, textbuf_t *out);

/* Check the table: every regex compiles, every template uses known
 * placeholders and is one bracketed text.  0, or -1 with a reason in err.
 * hints_for_run/hints_for_write compile the table on first use anyway. */
int hints_check(char *err, size_t errlen);
/* Free the compiled table (for leak checkers at exit; optional). */
void hints_shutdown(void);

/* Names of the table's entries, for tests: NULL past the end. */
const char *hints_entry_name(size_t i);
/* For the catalogue of texts (docs/talkback.md, tests/tools/texts-md.c):
 * entry i's text k (0..2; NULL when it has none), and what it looks at as
 * a phrase ("a run that failed", "a write_file", ...); NULL past the end. */
const char *hints_entry_say(size_t i, int k);
const char *hints_entry_on(size_t i);

/* ---- retry memory ---------------------------------------------------------- */

/* The line added when a failure repeats. */
#define HINTS_RETRY_LINE                                                                           \
    "[Same command, same failure as last time: running it again won't change it. "                 \
    "Change the code or the command first.]"

typedef struct hints_retry hints_retry_t;

/* A thread-safe store of recent failures per conversation, bounded in
 * size (least recently used chats are forgotten first). */
hints_retry_t *hints_retry_new(void);
void hints_retry_free(hints_retry_t **self_p);

/* Record how command ended in chat conv, and say whether it is a repeat:
 * true when the same command already failed in this chat with the same
 * exit code and the same output, and nothing was written since.  A success
 * forgets the command.  The manager notes only runs that ended by
 * themselves (not timed out, not cancelled). */
bool hints_retry_note(hints_retry_t *s, const char *conv, const char *command, int exit_code,
                      const char *output, size_t output_len);
/* Forget every failure of chat conv (called after each write_file). */
void hints_retry_clear(hints_retry_t *s, const char *conv);

#endif
