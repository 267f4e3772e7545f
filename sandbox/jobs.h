/* jobs.h -- a `run` still running when its call must answer goes on as
 * job N (agent/jobs.h), and what its results say about it: the line of
 * the call that left it, and, once, the line of the chat's first result
 * after it ended.  Every text of it is the table in jobs.c.
 *
 *   [Still running after 37 s, so this call answers now: the command goes
 *   on in the background as job 3 ...  Check on it with `talkback job 3`
 *   ...]
 *   [Job 3 (`make all`), which went on after its call, finished with exit
 *   code 0 after 2 min 05 s. Its whole output is in
 *   /run/talkback/jobs/3/out ...]
 *
 * The ends come from the sandbox (FS_JOBS items, agent/jobs.h): each
 * field is bounded and checked, the command cleaned of control bytes and
 * backticks and shortened, and an item that does not parse is dropped
 * (fuzzed: tests/fuzz/fuzz_jobs.c).
 */
#ifndef TALKBACK_SANDBOX_JOBS_H
#define TALKBACK_SANDBOX_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/textbuf.h"
#include "proto/frame.h"

#define JOBS_ITEMS_MAX 16    /* ends said in one result, at most */
#define JOBS_BYTES_MAX 16384 /* FS_JOBS bytes taken from an EXIT, at most */
#define JOBS_CMD_SHOWN 80    /* bytes of a command a line shows */

/* One parsed end. */
typedef struct {
    int no;
    int status, sig;
    bool timed_out;
    int64_t elapsed_ms;
    char cmd[JOBS_CMD_SHOWN + 4];
} jobs_end_t;

/* A copy of m's FS_JOBS (NULL when absent or too long: then nothing is
 * said), with its length. */
char *jobs_take(const frame_msg_t *m, size_t *len);
/* Parse one item (len bytes, no NUL needed): true when it is well-formed. */
bool jobs_parse_item(const char *item, size_t len, jobs_end_t *out);
/* The lines of the ends in items (FS_JOBS bytes), at most JOBS_ITEMS_MAX. */
void jobs_ended_lines(const char *items, size_t len, textbuf_t *t);
/* The line of a result whose command went on as job no: after after_ms,
 * with its timeout of timeout_s. */
void jobs_started_line(int no, int64_t after_ms, int timeout_s, textbuf_t *t);
/* The line of a result whose command could not go on as a job (the agent
 * could not keep it) and was stopped at the call's end. */
void jobs_unkept_line(int64_t after_ms, textbuf_t *t);
/* The path of job no's output, as the agent keeps it. */
void jobs_out_path(int no, char *out, size_t cap);
/* "42 s", "3 min 05 s", "1 h 02 min". */
void jobs_span(int64_t ms, char *out, size_t cap);

#endif
