/* claim.h -- spare sandboxes, and whose a claimed spare is.
 *
 * The sandbox manager keeps a few spare sandboxes ready (sandbox/pool.h).
 * A spare is made before anyone's chat exists, so it carries no
 * talkback.conversation label, and Docker labels never change; when a new
 * chat claims it, two things make it that chat's sandbox:
 *   the name     it is renamed to the chat's deterministic name
 *                (convid_container_name), which no other container can
 *                hold at the same time;
 *   the record   <state_dir>/<container id>.claim, written by the sandbox
 *                manager before the rename, holds the conversation and
 *                user ids: a record on the Docker host that nothing in a
 *                sandbox can write (like the last-call records, kept.h).
 * A spare counts as a chat's sandbox only when both agree: the record names
 * a conversation whose container name is the spare's name now.  A spare
 * with no record, or whose record does not match its name, is nobody's: no
 * chat, cap or eviction counts it; one that was renamed (claimed) but lost
 * its record is an orphan, which the reaper stops and removes.
 *
 * Labels of a spare:
 *   talkback.spare    16 hex digits: a hash of the sandbox template it was
 *                     made from (configuration and agent); a spare of
 *                     another hash is never handed out;
 *   talkback.pool     16 hex digits: a hash of the state_dir of the
 *                     manager that made it (several managers with their own
 *                     state_dir may share one Docker; each keeps to its own);
 *   talkback.created  when it was made.
 * Its name is "talkback-spare-" + 24 hex digits, which no chat's name can
 * be (a chat's name has a '-' 17 characters from its end).
 */
#ifndef TALKBACK_CLAIM_H
#define TALKBACK_CLAIM_H

#include <stdbool.h>
#include <jansson.h>

#include "common/convid.h"
#include "kept/kept.h"
#include "docker/docker.h"

#define CLAIM_USER_MAX 128

/* Whether name (with or without Docker's leading '/') is a spare's name. */
bool claim_spare_name_ok(const char *name);

/* Write the claim record of container id: conv and user (may be "").
 * Exclusive: -1 with errno EEXIST when the spare has a record already (it
 * was claimed by someone else).  0 or -1. */
int claim_record_set(const kept_t *k, const char *id, const char *conv, const char *user);
/* Read it: 0 with conv (CONVID_MAX + 1 bytes) and user (CLAIM_USER_MAX + 1
 * bytes) filled and checked (convid_check, convid_user_ok), or -1. */
int claim_record_get(const kept_t *k, const char *id, char *conv, char *user);
void claim_record_drop(const kept_t *k, const char *id);

/* Whose sandbox a container is, from its labels, id and name (inspect's
 * Config.Labels and Name, or a list entry's Labels and Names[0]): the
 * talkback.conversation/.user labels, or for a claimed spare its record.
 * True with conv and user filled (sizes as claim_record_get); false for
 * an unclaimed spare or anything else. */
bool claim_identity(const kept_t *k, const json_t *labels, const char *id, const char *name,
                    char *conv, char *user);

/* Whether a container with these labels and name is a spare nobody has
 * claimed (a spare's label, and a spare's name). */
bool claim_is_unclaimed(const json_t *labels, const char *name);

/* The talkback.pool hash of a state_dir (16 hex digits): the spares, and
 * the orphans, of the managers and reapers that share that state_dir. */
void claim_scope_hash(const char *state_dir, char out[17]);

/* Whether a container is an orphan: a spare of pool scope (its
 * talkback.pool label) that was claimed -- it carries a chat's name, not a
 * spare's -- but whose claim record is gone or names another chat.  It is
 * nobody's sandbox: no chat reaches it, no cap or idle stop counts it, and
 * its chat's next call meets its name as something else's.  The reaper
 * stops it and removes it after orphan_grace; `list` shows it. */
bool claim_is_orphan(const kept_t *k, const json_t *labels, const char *id, const char *name,
                     const char *scope);

/* The orphans of pool scope Docker has, as GET /containers/json lists them
 * (all=1, with sizes when size).  NULL when Docker cannot say. */
json_t *claim_list_orphans(docker_t *d, const kept_t *k, const char *scope, bool size);

/* The chats' sandboxes Docker has, as GET /containers/json lists them
 * (all=1, with sizes when size): the containers labelled
 * talkback.conversation and the claimed spares, whose Labels are filled in
 * from their records (talkback.conversation, talkback.user), so callers
 * read every chat the same way.  filters: more Docker list filters
 * (e.g. {"status":["running"]}; may be NULL; not taken).  NULL when Docker
 * cannot say. */
json_t *claim_list_chats(docker_t *d, const kept_t *k, const json_t *filters, bool size);

/* GET /containers/json?all=1&filters=<filters> (URL-encoded here). */
json_t *claim_list(docker_t *d, const json_t *filters, bool size);

#endif
