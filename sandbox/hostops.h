/* hostops.h -- the sandbox manager's operations on its host as a whole,
 * for the gateway's routing and for the operator (talkbackctl):
 *
 *   op       args    reply
 *   locate   conv    data {found, state}: whether this host's Docker holds
 *                      the chat's container (by its name, and its label or
 *                      a claimed spare's record: kept/claim.h)
 *   list     -       one line per chat's sandbox (spares nobody claimed
 *                      are left out), tab-separated: conversation, user,
 *                      host, state, idle_seconds, disk_bytes; and one per
 *                      orphan (kept/claim.h): its container name, no
 *                      user, host, "orphan-" + its state, idle, disk
 *   drain    -       this host takes no new chats (flag kept in state_dir)
 *   undrain  -       it takes new chats again
 *   stop     conv    stops that chat's sandbox; its files stay
 *   rm       conv    removes it with its files (a tombstone tells the chat)
 *
 * Everything here asks Docker, as the rest of the manager does: Docker is
 * the record.
 */
#ifndef TALKBACK_SANDBOX_HOSTOPS_H
#define TALKBACK_SANDBOX_HOSTOPS_H

#include "docker/docker.h"
#include "kept/kept.h"
#include "hub/worker.h"
#include "sandbox/capacity.h"

typedef struct {
    docker_t *d;
    const char *image;                           /* for the tombstone rm leaves */
    const kept_t *kept;                          /* the records in state_dir */
    capacity_t *cap;                             /* NULL: drain is refused */
    void (*forget)(void *ctx, const char *conv); /* the manager drops what it keeps of conv */
    void *ctx;
} hostops_t;

/* The reply to each operation above.  The manager registers them with
 * its other operations (manager.c); the worker library has checked the
 * conversation id of those that carry one (proto/optable.h: OPS_CONV). */
proto_msg_t *hostops_locate(const hostops_t *h, worker_job_t *job);
proto_msg_t *hostops_list(const hostops_t *h, worker_job_t *job);
proto_msg_t *hostops_drain(const hostops_t *h, worker_job_t *job);
proto_msg_t *hostops_undrain(const hostops_t *h, worker_job_t *job);
proto_msg_t *hostops_stop(const hostops_t *h, worker_job_t *job);
proto_msg_t *hostops_rm(const hostops_t *h, worker_job_t *job);

#endif
