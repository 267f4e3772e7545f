/* watchdog.h -- what one sandbox may take of the kernel's inotify, which
 * every sandbox shares with the others and with the host (agent/watchdog.c).
 *
 * Sandboxes run as the host's uid 0 with no user namespace, so their
 * inotify instances and watches count against the host root's
 * fs.inotify.max_user_instances and max_user_watches: one chat holding
 * them all leaves none for the other chats (their pictures), nor for the
 * host.  The agent, as the sandbox's main process, looks at the inotify
 * descriptors of every other process in the sandbox (/proc/PID/fd and
 * fdinfo) every WATCHDOG_BUSY_MS while a command runs and every
 * WATCHDOG_IDLE_MS otherwise, and past the caps the sandbox manager sent
 * in its HELLO (settings inotify_max_watches, inotify_max_instances)
 * SIGKILLs the biggest holder until the rest is under them.  The next
 * command's EXIT says which process it killed and why, so the model is
 * told (sandbox/manager.c).
 *
 * A check bounds how long a sandbox holds more than its caps (about one
 * period), not how many it can take within that period: only a runtime
 * with its own kernel (gVisor) or per-sandbox counts in the kernel can do
 * that (docs/security.md, "Kernel limits").
 */
#ifndef TALKBACK_AGENT_WATCHDOG_H
#define TALKBACK_AGENT_WATCHDOG_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/frame.h"

/* The caps from a HELLO (FN_INOTIFY_WATCHES, FN_INOTIFY_INSTANCES; absent
 * or 0: no cap, and no checks at all when neither is set). */
void watchdog_configure(const frame_msg_t *hello);

/* The poll timeout of the worker loop given its own (ms, -1: none), made
 * no longer than the time to the next check; busy: a command runs. */
int watchdog_poll_timeout(int timeout, bool busy);

/* Check now when a check is due. */
void watchdog_tick(bool busy);

/* A RUN starts a job: remember whether its EXIT may carry the report
 * (FN_WD_REPORT: the model reads its result, which a hint probe's is not). */
void watchdog_run(const frame_msg_t *run);

/* Put what was killed since the last report into m (an EXIT of a job whose
 * RUN asked for it): FN_WD_KILLED, and of the biggest, FN_WD_PID,
 * FN_WD_WATCHES, FN_WD_INSTANCES, FS_WD_COMM.  The report is then
 * cleared; other EXITs leave it for a later one. */
void watchdog_attach(frame_msg_t *m);

/* How many watches the agent's own image watcher may hold (images.c): the
 * watch cap when one is set, else max. */
size_t watchdog_own_watches(size_t max);

/* Pure parts, for tests: the number of lines of an inotify fdinfo text
 * that describe a watch ("inotify wd:..."), fed in pieces.  st starts at
 * 0; returns the count so far. */
typedef struct {
    int match;    /* characters of "inotify " matched at this line's start; -1: not one */
    size_t count; /* watch lines so far */
} watchdog_lines_t;
size_t watchdog_count_lines(watchdog_lines_t *st, const char *p, size_t n);

#endif
