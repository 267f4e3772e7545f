/* kept.h -- what a kept talkback sandbox looks like in Docker.
 *
 * Docker is talkback's only record, so everything the sandbox manager and
 * the reaper must agree on lives on the containers themselves, and this
 * file names it:
 *   labels      talkback.conversation / .user / .created on every sandbox;
 *   last call   the mtime of /var/lib/talkback/last-call inside the sandbox:
 *               set to the call's deadline when a call starts (so a call in
 *               flight is never idle) and to "now" when the last call ends;
 *   stop reason /var/lib/talkback/stop-reason, written by the reaper right
 *               before it stops a sandbox ("idle 60"); it counts only when
 *               its mtime is close to the container's FinishedAt, so a later
 *               stop by a Docker or host restart is not blamed on idleness;
 *   tombstones  a never-started container "talkback-gone-..." labelled
 *               talkback.tombstone=<conversation>, left when the reaper
 *               removes a sandbox, so the chat's next call can be told why
 *               its files are gone.
 */
#ifndef TALKBACK_KEPT_H
#define TALKBACK_KEPT_H

#include <stdint.h>
#include "docker/docker.h"

#define KEPT_LABEL_CONV    "talkback.conversation"
#define KEPT_LABEL_USER    "talkback.user"
#define KEPT_LABEL_CREATED "talkback.created"
#define KEPT_LABEL_TOMB    "talkback.tombstone"
#define KEPT_LABEL_REASON  "talkback.gone.reason"
#define KEPT_LABEL_GONE_AT "talkback.gone.at"
#define KEPT_STAMP_PATH    "/var/lib/talkback/last-call"
#define KEPT_REASON_PATH   "/var/lib/talkback/stop-reason"

/* (The sandbox manager writes the stamp: sandbox/manager.c, through the
 * sandbox's agent when it has one.) */
/* The last-call stamp; *mtime = 0 when the sandbox has none. */
docker_err_t kept_last_used(docker_t *d, const char *id, int64_t *mtime);

/* Leave the reason of a stop about to happen ("idle 60"). */
docker_err_t kept_write_stop_reason(docker_t *d, const char *id, const char *reason);
/* The reason left for the stop that ended at finished_at, or NULL when none
 * was left for that stop.  malloc'ed. */
char *kept_stop_reason(docker_t *d, const char *id, int64_t finished_at);

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
