/* bgkeep.h -- the worker's side of the background watch (bgwatch.h).
 *
 * While a command's watch window runs, its shepherd's BG_LEFT items are
 * kept with its job and go into its EXIT (bgl).  A shepherd that stays on
 * as the keeper of programs still running is adopted here once its job is
 * reported: its record pipe joins the worker's poll, and each BG_DIED it
 * sends waits for the next EXIT of a RUN that asked for a watch (bgd),
 * which also carries the set of watched programs running now (bga) when
 * that changed.  Everything is bounded: at most BGK_DIED_MAX ends wait
 * (the oldest go first), at most BGK_ALIVE_MAX programs are known to run.
 * A restarted worker knows none of this: its keepers' ends go unsaid.
 */
#ifndef TALKBACK_AGENT_BGKEEP_H
#define TALKBACK_AGENT_BGKEEP_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/shepherd.h"
#include "proto/frame.h"

#define BGK_DIED_MAX  8
#define BGK_ALIVE_MAX 16

/* A job's share. */
typedef struct {
    bool watch;    /* its RUN asked for a watch */
    bool watched;  /* its window is over, or none opened: nothing to wait for */
    bool watcher;  /* BG_WATCHED came: its shepherd stays while they run */
    uint64_t seen; /* ends known when it started: later ones are its own */
    char *left;    /* BG_LEFT items, each NUL-terminated */
    size_t left_len;
} bgk_job_t;

/* A record r (with its item) from the shepherd of job b (NULL: of a
 * keeper): true when it was a background record, taken. */
bool bgk_rec(bgk_job_t *b, const shep_rec_t *r, const char *item);
/* Put the job's items, the ends waiting and (when changed) the running
 * set into its EXIT m; the views stay valid until bgk_sent. */
void bgk_attach(frame_msg_t *m, bgk_job_t *b);
/* The EXIT was sent: what it said is said. */
void bgk_sent(bgk_job_t *b);
/* The job starts (watch: its RUN asked for a watch): ends from now on
 * came while it ran. */
void bgk_job_start(bgk_job_t *b, bool watch);
/* Free the job's share. */
void bgk_job_free(bgk_job_t *b);

/* The job's shepherd lives on as a keeper: its record pipe ctl is ours. */
void bgk_adopt(pid_t pid, int ctl);
/* How many keepers there are (poll slots). */
size_t bgk_count(void);
/* Their pipes into pf (room for bgk_count()): how many were put. */
size_t bgk_pollset(struct pollfd *pf);
/* Read the records of the keeper whose pipe is fd. */
void bgk_read(int fd);

#endif
