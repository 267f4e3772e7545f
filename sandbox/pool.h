/* pool.h -- the warm pool: spare sandboxes, ready for new chats.
 *
 * The sandbox manager keeps `warm_pool` spare sandboxes created, started,
 * with the agent copied in and its link attached.  A new chat whose
 * container does not exist claims one instead of creating a container: it
 * writes the claim record (kept/claim.h) and renames the spare to the
 * chat's deterministic name; a thread makes the next spare in the
 * background.  A spare has never run anything of anyone: it is made from
 * the image, nothing but its agent runs in it, and it leaves the pool only
 * to become one chat's sandbox, or to be removed.
 *
 * A spare is handed out only when it was made from the template this
 * manager would use now (its talkback.spare hash: configuration and agent
 * version) and from the image the `image` name points at now; the others
 * are removed and made again (checked at each claim and every
 * `warm_pool_check`).  When the pool is empty, or a claim fails, the chat
 * gets a container made the usual way.
 */
#ifndef TALKBACK_SANDBOX_POOL_H
#define TALKBACK_SANDBOX_POOL_H

#include <jansson.h>

#include "docker/docker.h"
#include "kept/kept.h"
#include "sandbox/agent_link.h"
#include "sandbox/disk.h"
#include "spec/sandbox.h"

typedef struct pool pool_t;
struct netcheck;

/* What the pool makes spares from and how many (main.c reads them into
 * the manager's options, which pass them here). */
typedef struct {
    spec_template_t tmpl;      /* what every spare is made from */
    int64_t warm_pool;         /* spares kept ready */
    int64_t warm_pool_check;   /* s between checks of the spares */
    int64_t mem_floor;         /* capacity.h: no spare made below it */
    struct netcheck *netcheck; /* netcheck.h: none made off the rule */
    const kept_t *kept;        /* the claim records, the pool's scope */
} pool_opts_t;

typedef enum {
    POOL_CLAIMED, /* the spare is the chat's container now: *id */
    POOL_EMPTY,   /* no spare to hand out: make the container */
    POOL_RACED    /* the chat's name was taken meanwhile: look it up */
} pool_claim_t;

/* Start the pool (its thread makes the spares from o->tmpl,
 * o->warm_pool of them, checked every o->warm_pool_check seconds; o is
 * copied, its strings must outlive the pool); NULL when o->warm_pool is 0
 * or the pool cannot start (then every chat is made the usual way). */
pool_t *pool_new(docker_t *d, const pool_opts_t *o, agent_pool_t *agents, disk_t *disk);
/* Stop it and remove the spares it holds. */
void pool_destroy(pool_t **self_p);

/* Claim a spare for chat conv of user, renaming it to name (the chat's
 * container name). */
pool_claim_t pool_claim(pool_t *p, const char *conv, const char *user, const char *name,
                        char id[72]);

/* Spares ready now (for the manager's HELLO). */
int pool_spares(pool_t *p);

/* The talkback.spare hash of a sandbox template (its Labels left out) and
 * an agent version, and the talkback.pool hash of a state_dir: 16 hex
 * digits each.  Pure, unit-tested. */
void pool_template_hash(const json_t *tmpl, const char *agent_version, char out[17]);
void pool_scope_hash(const char *state_dir, char out[17]);

#endif
