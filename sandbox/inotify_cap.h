/* inotify_cap.h -- the sandbox manager's side of the agent's inotify
 * watchdog (agent/watchdog.h): the caps it sends in every HELLO, and the
 * line a result gains when the watchdog killed a process.
 *
 * inotify instances and watches are the host's, shared by every sandbox
 * (sandboxes run as the host's root, with no user namespace), so one
 * sandbox may hold at most inotify_max_watches and inotify_max_instances;
 * the agent kills what holds more, and the next result says so:
 *
 *   [talkback: processes of this sandbox held more inotify watches than
 *   the 16384 one sandbox may hold (setting `inotify_max_watches`), so
 *   process 1234 (`node`, 184296 watches) was killed. ...]
 */
#ifndef TALKBACK_SANDBOX_INOTIFY_CAP_H
#define TALKBACK_SANDBOX_INOTIFY_CAP_H

#include <stdbool.h>
#include <stdint.h>

#include "common/textbuf.h"
#include "proto/frame.h"

/* What one EXIT said the watchdog killed (killed 0: nothing). */
typedef struct {
    int64_t killed;
    int64_t pid, watches, instances;
    char comm[16]; /* printable, no backticks */
} icap_report_t;

/* The caps (main.c's configuration, once, before any link; 0: none). */
void icap_set(int64_t max_watches, int64_t max_instances);
/* Add them to a HELLO. */
void icap_hello(frame_msg_t *hello);
/* Mark a RUN whose EXIT may carry the watchdog's report (wants: the
 * model reads its result; a hint probe's EXIT must not take it). */
void icap_run(frame_msg_t *run, bool wants);
/* Take the watchdog's fields of an EXIT into r; numbers out of range (the
 * sandbox may write anything) leave r empty. */
void icap_take(icap_report_t *r, const frame_msg_t *exit);
/* The line for the result (nothing when nothing was killed). */
void icap_line(const icap_report_t *r, textbuf_t *t);

#endif
