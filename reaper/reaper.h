/* reaper.h -- idle stop, disk cap and eviction of kept sandboxes.
 *
 *   idle     a running sandbox whose last call ended more than idle_pause
 *            ago is paused -- by the sandbox manager, which the reaper
 *            asks, since only it knows that no call is on its way -- and
 *            one (paused or not) idle more than idle_stop is stopped, not
 *            removed (its files and installs stay); the reason is left in
 *            state_dir for the resume notice;
 *   paused   past max_paused paused sandboxes, the least recently used
 *            paused ones are stopped (a paused sandbox keeps its memory);
 *   disk     a running sandbox whose writable layer is over disk_cap is
 *            removed (Docker cannot cap overlay2 on ext4), with a
 *            tombstone so the chat's next call is told why;
 *   evict    stopped sandboxes unused for keep_max_age, or past
 *            keep_max_count, or past keep_max_bytes together, are removed,
 *            oldest first, with tombstones (reaper/plan.c decides);
 *   orphans  a claimed spare whose claim record is gone (kept/claim.h:
 *            nobody's sandbox, no chat reaches it) is stopped when seen
 *            running, and removed once it has been an orphan for
 *            orphan_grace (no tombstone: nobody knows its chat).
 * Only chats' sandboxes are ever touched -- containers labelled
 * talkback.conversation, and spares claimed by a chat (kept/claim.h);
 * spares nobody has claimed belong to the sandbox manager's pool -- and
 * removal never touches a running sandbox except for the disk cap.
 */
#ifndef TALKBACK_REAPER_H
#define TALKBACK_REAPER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "common/textbuf.h"
#include "hub/worker.h"
#include "docker/docker.h"
#include "kept/kept.h"

/* The reaper's policy, read by main.c (common/config.c has what each key
 * means). */
typedef struct {
    int64_t idle_stop;    /* s */
    int64_t idle_pause;   /* s; 0: never paused */
    int64_t max_paused;   /* 0: no cap */
    int64_t disk_cap;     /* bytes; 0: none */
    int64_t keep_max_age; /* s */
    int64_t keep_max_count;
    int64_t keep_max_bytes;
    int64_t orphan_grace; /* s */
    int64_t clock_offset; /* reaper_clock_offset, s added to the clock */
    const char *prefix;   /* reaper_prefix: only chats named so; "": all */
    const char *image;    /* for tombstones */
    const kept_t *kept;   /* state_dir's records (kept/kept.h); not owned */
} reaper_opts_t;

typedef struct {
    const reaper_opts_t *o;
    docker_t *d;
    worker_t *hub;   /* to ask the sandbox manager what is busy; or NULL */
    bool hub_silent; /* the manager did not answer this sweep */
    bool dry_run;    /* report, change nothing */
    textbuf_t *out;  /* when set, every decision is appended here too */
    int calls;       /* Docker API calls made (figures) */
    int stopped, removed, paused;
} reaper_t;

int reaper_sweep_idle(reaper_t *r);
/* Stop the least recently used paused sandboxes past max_paused. */
int reaper_sweep_paused(reaper_t *r);
int reaper_sweep_disk(reaper_t *r);
int reaper_sweep_evict(reaper_t *r);
/* Stop the orphans of this state_dir's pool, and remove those past
 * orphan_grace (kept/claim.h). */
int reaper_sweep_orphans(reaper_t *r);
/* Drop records in state_dir (kept/kept.h) of containers that are gone. */
int reaper_sweep_records(reaper_t *r);
/* All six, idle, paused, disk, evict, orphans, records, in that order.  0, or -1 when Docker could not be asked. */
int reaper_sweep(reaper_t *r);

/* What the reaper's worker serves its operations with (their ctx). */
typedef struct {
    const reaper_opts_t *o;
    docker_t *d;
    pthread_mutex_t *mu; /* one sweep at a time, with the clock's */
} reaper_serve_t;

/* The operations of kind "reaper" (proto/optable.h), one handler each,
 * for the worker (worker_opts_t.ops, with a reaper_serve_t as ctx). */
extern const worker_op_t reaper_ops[];

#endif
