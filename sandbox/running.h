/* running.h -- the sandbox manager's own bookkeeping per chat: calls in
 * flight, the last-call records, and the caps on running sandboxes.
 *
 *   calls     how many calls of each chat are running (the reaper asks
 *             before it stops a sandbox); an entry lives only while a call
 *             of that chat runs, so nothing grows with the number of chats;
 *   stamps    the last-call record of each sandbox (kept/kept.h): the
 *             call's deadline while it runs, "now" when the last one ends;
 *             written in state_dir on the Docker host, where nothing in a
 *             sandbox can reach it;
 *   caps      max_running sandboxes running at once on this sandbox
 *             network, and max_running_per_user of one user, counted by
 *             chat (a chat whose sandbox is being made, claimed or started
 *             counts once).  At a cap a start makes room: the least
 *             recently used sandbox of that user (of anyone, for
 *             max_running) with no call in flight is stopped -- kept, as
 *             an idle stop would, with the stop reason "room-user N" or
 *             "room-all N" for its chat's next call -- and the start goes
 *             on.  Only when every one is busy is the sandbox not created
 *             or started, and the call told which cap it met;
 *   parks     a sandbox being stopped to make room, or paused (the reaper
 *             asks the manager, sandbox/manager.c): a call of its chat
 *             waits until that is done and finds its sandbox again.
 */
#ifndef TALKBACK_SANDBOX_RUNNING_H
#define TALKBACK_SANDBOX_RUNNING_H

#include <stdbool.h>
#include <stdint.h>

#include "common/textbuf.h"
#include "docker/docker.h"
#include "kept/kept.h"

typedef struct running running_t;

/* The caps, read by the process's main.c (common/config.c says what each
 * key means). */
typedef struct {
    const char *network;          /* the sandbox network */
    int64_t max_running;          /* 0: no cap */
    int64_t max_running_per_user; /* 0: no cap */
    int64_t idle_stop;            /* s, for the refusal's advice */
    const kept_t *kept;           /* the last-call and stop-reason records */
    /* A sandbox was stopped to make room: forget what is kept of its chat
     * (its cached container), so its next call finds it stopped. */
    void (*forget)(void *ctx, const char *conv);
    void *ctx;
} running_opts_t;

/* The stop reasons (kept/kept.h) of a sandbox stopped to make room, each
 * followed by the cap ("room-user 20"): sandbox/notices.c words them. */
#define RUNNING_REASON_USER "room-user"
#define RUNNING_REASON_ALL  "room-all"
/* Seconds Docker waits for a sandbox stopped to make room before it kills
 * it (its init ends the agent at once). */
#define RUNNING_STOP_WAIT_S 3
/* Most sandboxes one start stops to make room (more only when a cap was
 * lowered under what runs). */
#define RUNNING_ROOM_MAX    8

/* o is copied; its strings must outlive the object. */
running_t *running_new(docker_t *d, const running_opts_t *o);
void running_destroy(running_t **self_p);

/* A call of chat conv starts in container id, to end by deadline_s (unix
 * s); and ends.  Every begin that returns true has one end.  False: the
 * sandbox was parked (stopped to make room, or paused) -- this waited
 * until that was done, nothing began: find the chat's sandbox again. */
bool running_call_begin(running_t *c, const char *conv, const char *id, int64_t deadline_s);
void running_call_end(running_t *c, const char *conv, const char *id);
/* Calls of conv running now. */
int running_inflight(running_t *c, const char *conv);
/* Chat conv's sandbox id runs a job (jobs.h) that may last until until_s
 * (its timeout): till then its last-call stamp stays there and it counts
 * as a call in flight, so it is neither paused nor stopped under the job. */
void running_job_until(running_t *c, const char *conv, const char *id, int64_t until_s);

/* Before a sandbox of chat conv of user (may be "" or NULL: no per-user
 * cap) is created or claimed (id NULL) or started (id: its container; the
 * chat is not counted against itself): true when the caps allow it, after
 * making room if needed -- then a place is held for it until
 * running_start_end -- else false, with the text for the call in err. */
bool running_start_begin(running_t *c, const char *conv, const char *user, const char *id,
                         textbuf_t *err);
/* The create or start begun for (conv, user, id) is over: made is the
 * container it made or started, or NULL when it failed. */
void running_start_end(running_t *c, const char *conv, const char *user, const char *id,
                       const char *made);

/* Park chat conv's sandbox id to pause it: false when a call of the chat
 * is in flight, a start of it is under way, or it is parked already.
 * Then running_park_end: done when it was paused (its chat's calls that
 * waited find it again), else the park is undone.  running_unpark: the
 * sandbox runs again (its call started or unpaused it). */
bool running_park(running_t *c, const char *conv, const char *id);
void running_park_end(running_t *c, const char *id, bool done);
void running_unpark(running_t *c, const char *id);

/* The refusal texts (exact sentences; tests match them). */
void running_refusal_text(textbuf_t *err, bool per_user, int64_t cap, int64_t idle_stop_s);

#endif
