/* core.h -- what every part of the hub thread shares: the live workers,
 * the open requests, and the few acts on them (send a frame to a peer,
 * hand a request to a worker, end it, cancel it).
 *
 * queue.c is the hub: its thread, its socket, its public interface
 * (queue.h).  It calls the parts that decide -- route.c (which host holds
 * a chat), retry.c (a dead worker's requests), peers.c (what a peer may
 * do) -- and they act only through this file, never back through queue.c,
 * so the dependency runs one way: queue -> route, retry, peers -> core.
 * Where core.c must hand something to a part (the reply to one of the
 * hub's own locate questions), the caller passes a callback in
 * (core_t.on_locate).
 *
 * Only the hub thread touches these (the worker list also under wmu, for
 * queue_live_workers and queue_workers_each).  Nothing outside hub/ may
 * include this file: queue.h is the hub's interface.
 */
#ifndef TALKBACK_HUB_CORE_H
#define TALKBACK_HUB_CORE_H

#include <czmq.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/list.h"
#include "common/mailbox.h"
#include "hub/hubauth.h"
#include "hub/known.h"
#include "hub/record.h"
#include "hub/refusals.h"
#include "proto/proto.h"

/* A local caller's wait for its reply (queue_ticket_t of queue.h). */
struct queue_ticket {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;
    proto_msg_t *reply;
    mailbox_t *inbox; /* the hub's: where forgetting it is posted */
    uint64_t hub_id;
};

typedef struct worker_entry {
    zframe_t *identity;
    char *kind;
    char *name;
    char *host;        /* from its last HELLO's data ("" when none) */
    proto_map_t data;  /* its last HELLO's data */
    int64_t last_seen; /* monotonic ms */
    int inflight;
    bool dead;        /* unreachable: removed on the next tick */
    list_node_t node; /* on core_t.workers */
} worker_entry_t;

typedef struct pending {
    uint64_t hub_id;
    proto_msg_t *req;            /* id == hub_id */
    struct queue_ticket *ticket; /* local caller, or NULL */
    zframe_t *client;            /* remote caller identity, or NULL */
    uint64_t client_id;
    char *cancel_key;
    worker_entry_t *worker; /* assigned, or NULL while waiting */
    int64_t wait_until;     /* monotonic: give up waiting for a worker */
    int64_t deadline;       /* monotonic */
    int retries;
    char *host;       /* only a worker on this host serves it, or NULL */
    char *note;       /* put before the reply's text (route.c), or NULL */
    bool held;        /* route.c holds it: its chat's host is being found */
    bool locate;      /* the hub's own "locate" question (route.c) */
    bool started;     /* its program started: never sent again (retry.h) */
    list_node_t node; /* on core_t.pending */
} pending_t;

/* The reply to one of the hub's own locate questions (p->locate). */
typedef void (*core_locate_fn)(void *ctx, pending_t *p, const proto_msg_t *reply);

typedef struct core {
    zsock_t *router;
    pthread_mutex_t wmu; /* guards edits of workers, read elsewhere */
    list_t workers;      /* worker_entry_t, newest first */
    list_t pending;      /* pending_t, newest first */
    uint64_t next_id;
    int heartbeat_timeout_ms; /* silence after which a worker is dead */
    int worker_wait_ms;       /* how long a request waits for a worker */
    record_t *record;         /* NULL: no recording */
    hubauth_t *auth;          /* NULL: keyless or insecure hub */
    refusals_t *refusals;     /* refusal lines, per key (refusals.h) */
    known_t *known;           /* the hosts a worker was seen on (known.h) */
    core_locate_fn on_locate; /* route.c's, passed in by queue.c */
    void *on_locate_ctx;
} core_t;

/* Whether a worker counts as alive now (monotonic ms). */
bool core_worker_alive(const core_t *c, const worker_entry_t *w, int64_t now);
/* The worker behind identity, or NULL. */
worker_entry_t *core_worker_find(core_t *c, zframe_t *identity);
/* Send a message to a peer; 0 or -1. */
int core_send(core_t *c, zframe_t *identity, const proto_msg_t *m);
/* Hand a waiting request to the least busy live worker of its kind (of
 * its host when p->host); true when sent. */
bool core_dispatch(core_t *c, pending_t *p);
/* End a request with a reply of this status and text (frees p). */
void core_fail(core_t *c, pending_t *p, proto_status_t st, const char *text);
/* End a request with this reply (taken; frees p): to its local caller,
 * its remote one, or core_t.on_locate; a note (p->note) goes first. */
void core_finish(core_t *c, pending_t *p, proto_msg_t *reply);
/* Ask p's worker to stop it (CANCEL); one not given to a worker yet ends
 * at once, saying nothing ran. */
void core_cancel(core_t *c, pending_t *p);

/* Tickets: the reply handed over (the first one counts), and one side
 * letting go (the last frees it). */
void core_ticket_complete(struct queue_ticket *t, proto_msg_t *reply);
void core_ticket_release(struct queue_ticket *t);

#endif
