/* kept.h -- what a kept talkback sandbox looks like in Docker.
 *
 * Docker is talkback's record of which sandboxes exist; the two facts
 * root in a sandbox must not be able to change live beside it, on the
 * Docker host, in the folder state_dir (default /var/lib/talkback/state) that
 * the sandbox manager and the reaper share and no sandbox can see:
 *   labels      talkback.conversation / .user / .created on every sandbox;
 *   last call   the mtime of <state_dir>/<container id>.last-call, written
 *               by the sandbox manager: set to the call's deadline when a
 *               call starts (so a call in flight is never idle) and to
 *               "now" when the last call ends;
 *   stop reason <state_dir>/<container id>.stop-reason, written by the
 *               reaper right before it stops a sandbox ("idle 60"); it
 *               counts only when its mtime is close to the container's
 *               FinishedAt, so a later stop by a Docker or host restart is
 *               not blamed on idleness;
 *   claim       <state_dir>/<container id>.claim: the chat of a claimed
 *               spare sandbox (kept/claim.h);
 *   agent       <state_dir>/<container id>.agent: the version of the agent
 *               last copied into the sandbox, so a resume copies it only
 *               when it changed;
 *   paused      <state_dir>/<container id>.paused: written by the sandbox
 *               manager right before it pauses an idle sandbox ("idle 5":
 *               minutes without calls); its mtime is when, for the notice
 *               of the call that unpauses it;
 *   background  <state_dir>/<container id>.background: the programs it
 *               ran in the background after its last call that changed
 *               them, for the resume notice after a stop;
 *   orphan      <state_dir>/<container id>.orphan: its mtime is when the
 *               reaper first saw a claimed spare whose claim record is
 *               gone (claim.h), for the grace before it is removed;
 *   tombstones  a never-started container "talkback-gone-..." labelled
 *               talkback.tombstone=<conversation>, left when the reaper
 *               removes a sandbox, so the chat's next call can be told why
 *               its files are gone.
 */
#ifndef TALKBACK_KEPT_H
#define TALKBACK_KEPT_H

#include <stdbool.h>
#include <stdint.h>
#include "docker/docker.h"
#include "spec/sandbox.h" /* the labels, the names */

#define KEPT_STAMP_SUFFIX      ".last-call"
#define KEPT_REASON_SUFFIX     ".stop-reason"
#define KEPT_REASON_MAX        64
/* The stop reason the reaper leaves when it stops the least recently used
 * paused sandbox past max_paused, followed by the cap ("paused-max 20"). */
#define KEPT_REASON_PAUSED_MAX "paused-max"
#define KEPT_PAUSED_SUFFIX     ".paused"     /* when and why it was paused */
#define KEPT_CLAIM_SUFFIX      ".claim"      /* a claimed spare's chat (claim.h) */
#define KEPT_AGENT_SUFFIX      ".agent"      /* the agent version copied in (sandbox/pool.h) */
#define KEPT_ORPHAN_SUFFIX     ".orphan"     /* when it was first seen as an orphan (claim.h) */
#define KEPT_BACKGROUND_SUFFIX ".background" /* what ran in the background (sandbox/background.h) */
#define KEPT_BACKGROUND_MAX    4096

/* ---- records in state_dir (file names are the container id, checked to
 * be hex, so no id can name a path outside the folder) ---- */

/* The records of one state_dir: made by the process's main from the
 * state_dir config key (copied) and handed to what reads or writes them
 * (the sandbox manager's parts, the reaper).  NULL when out of memory. */
typedef struct kept kept_t;
kept_t *kept_new(const char *state_dir);
void kept_destroy(kept_t **self_p);
/* That folder, for messages. */
const char *kept_state_dir(const kept_t *k);
/* Make state_dir if missing (mode 0700; its parents 0755), tighten it to
 * 0700 and the records in it to 0600 when they are open to others (they
 * name chats and users), and check it can be written: 0, or -1 with errno
 * set.  Records are written 0600. */
int kept_state_init(const kept_t *k);
/* Set the last-call stamp of container id to mtime (unix s).  0 or -1. */
int kept_stamp_set(const kept_t *k, const char *id, int64_t mtime);
/* Set it only when the container has none yet (the reaper's "first seen"
 * for sandboxes made before records existed).  1 made, 0 there, -1. */
int kept_stamp_init(const kept_t *k, const char *id, int64_t mtime);
/* The last-call stamp, or 0 when the container has none. */
int64_t kept_stamp_get(const kept_t *k, const char *id);

/* Leave the reason of a stop about to happen ("idle 60"). 0 or -1. */
int kept_reason_set(const kept_t *k, const char *id, const char *reason);
/* The reason left for the stop that ended at finished_at, used up (the
 * file goes), or NULL when none was left for that stop.  Only short
 * printable text is returned.  malloc'ed. */
char *kept_reason_take(const kept_t *k, const char *id, int64_t finished_at);

/* Leave the reason of a pause about to happen ("idle 5"); its mtime is
 * now.  0 or -1.  And take it: the reason (malloc'ed, short printable
 * text) with *since the time it was left, the record used up; NULL when
 * there is none. */
int kept_paused_set(const kept_t *k, const char *id, const char *reason);
char *kept_paused_take(const kept_t *k, const char *id, int64_t *since);

/* The agent version last copied into container id: set (0 or -1), and
 * whether the record says version (a short printable string). */
int kept_agent_set(const kept_t *k, const char *id, const char *version);
bool kept_agent_is(const kept_t *k, const char *id, const char *version);

/* What container id last ran in the background (sandbox/background.h):
 * set to text (at most KEPT_BACKGROUND_MAX bytes; "" drops the record),
 * 0 or -1; and taken (malloc'ed, NUL-terminated; the record goes), NULL
 * when there is none. */
int kept_background_set(const kept_t *k, const char *id, const char *text);
char *kept_background_take(const kept_t *k, const char *id);

/* When container id was first seen as an orphan: that time from its
 * record, made now (with mtime now) when it has none; 0 when the record
 * cannot be made.  And the record dropped (it is somebody's again). */
int64_t kept_orphan_since(const kept_t *k, const char *id, int64_t now);
void kept_orphan_clear(const kept_t *k, const char *id);

/* Forget everything recorded of container id (it was removed). */
void kept_record_drop(const kept_t *k, const char *id);
/* The container ids that have records now: a NULL-terminated malloc'ed
 * array of malloc'ed strings (free with kept_record_ids_free), or NULL. */
char **kept_record_ids(const kept_t *k);
void kept_record_ids_free(char ***ids_p);
/* Whether s is usable as a container id in a record's name. */
bool kept_id_ok(const char *s);

/* The tombstone's container name for a sandbox's container name. */
void kept_tombstone_name(const char *sandbox_name, char *out, size_t outlen);
/* Leave a tombstone for conversation conv whose sandbox (named name) is
 * being removed; reason is the end of a sentence ("because it grew past the
 * 2 GiB disk cap").  Uses image for the never-started container. */
docker_err_t kept_tombstone_create(docker_t *d, const char *image, const char *conv,
                                   const char *name, const char *reason);
/* If conv has a tombstone: remove it, and return its reason (malloc'ed) and
 * removal time in *gone_at.  NULL when there is none. */
char *kept_tombstone_take(docker_t *d, const char *conv, const char *name, int64_t *gone_at);

/* Docker's RFC 3339 times ("2026-12-02T09:24:45.123Z") to unix seconds; 0
 * for absent or never-set ("0001-01-01T00:00:00Z"). */
int64_t kept_parse_time(const char *s);
/* "45 seconds", "3 minutes", "5 hours", "2 days" (singular for 1). */
void kept_human_age(int64_t seconds, char *out, size_t outlen);

#endif
