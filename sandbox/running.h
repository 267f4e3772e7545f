/* running.h -- the sandbox manager's own bookkeeping per chat: calls in
 * flight, the last-call records, and the caps on running sandboxes.
 *
 *   calls     how many calls of each chat are running (the reaper asks
 *             before it stops a sandbox); an entry lives only while a call
 *             of that chat runs, so nothing grows with the number of chats;
 *   stamps    the last-call record of each sandbox (docker/kept.h): the
 *             call's deadline while it runs, "now" when the last one ends;
 *             written in state_dir on the Docker host, where nothing in a
 *             sandbox can reach it;
 *   caps      max_running sandboxes running at once on this sandbox
 *             network, and max_running_per_user of one user: past either,
 *             a sandbox is not created or started, and the call is told
 *             which cap it met and what to do.  Nothing running is ever
 *             stopped to make room: a sandbox of someone else, or one with
 *             a server the model left running, is not ours to end.
 */
#ifndef TALKBACK_SANDBOX_RUNNING_H
#define TALKBACK_SANDBOX_RUNNING_H

#include <stdbool.h>
#include <stdint.h>

#include "common/textbuf.h"
#include "docker/docker.h"

typedef struct running running_t;

/* The caps, read by the process's main.c (common/config.c says what each
 * key means). */
typedef struct {
    const char *network;          /* the sandbox network */
    int64_t max_running;          /* 0: no cap */
    int64_t max_running_per_user; /* 0: no cap */
    int64_t idle_stop;            /* s, for the refusal's advice */
} running_opts_t;

/* o is copied; its strings must outlive the object. */
running_t *running_new(docker_t *d, const running_opts_t *o);
void running_destroy(running_t **self_p);

/* A call of chat conv starts in container id, to end by deadline_s (unix
 * s); and ends.  Every begin has one end. */
void running_call_begin(running_t *c, const char *conv, const char *id, int64_t deadline_s);
void running_call_end(running_t *c, const char *conv, const char *id);
/* Calls of conv running now. */
int running_inflight(running_t *c, const char *conv);

/* Before a sandbox of user (may be "" or NULL: no per-user cap) is created
 * (id NULL) or started (id: its container, not counted against itself):
 * true when the caps allow it -- then a place is held for it until
 * running_start_end -- else false, with the text for the call in err. */
bool running_start_begin(running_t *c, const char *user, const char *id, textbuf_t *err);
/* The create or start begun for (user, id) is over: made is the container
 * it made or started, or NULL when it failed. */
void running_start_end(running_t *c, const char *user, const char *id, const char *made);

/* The refusal texts (exact sentences; tests match them). */
void running_refusal_text(textbuf_t *err, bool per_user, int64_t cap, int64_t idle_stop_s);

#endif
