/* queue_int.h -- the hub's own structures, shared by queue.c and route.c.
 *
 * Only the hub thread touches these (the worker list also under wmu, for
 * queue_live_workers and queue_workers_each).  Nothing outside hub/ may
 * include this file: queue.h is the hub's interface.
 */
#ifndef TALKBACK_QUEUE_INT_H
#define TALKBACK_QUEUE_INT_H

#include <czmq.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/mailbox.h"
#include "hub/hubauth.h"
#include "hub/known.h"
#include "hub/queue.h"
#include "hub/record.h"
#include "hub/refusals.h"
#include "hub/route.h"

struct queue_ticket {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;
    proto_msg_t *reply;
    queue_t *q;
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
    bool dead; /* unreachable: removed on the next tick */
    struct worker_entry *next;
} worker_entry_t;

typedef struct pending {
    uint64_t hub_id;
    proto_msg_t *req;       /* id == hub_id */
    queue_ticket_t *ticket; /* local caller, or NULL */
    zframe_t *client;       /* remote caller identity, or NULL */
    uint64_t client_id;
    char *cancel_key;
    worker_entry_t *worker; /* assigned, or NULL while waiting */
    int64_t wait_until;     /* monotonic: give up waiting for a worker */
    int64_t deadline;       /* monotonic */
    int retries;
    char *host;   /* only a worker on this host serves it, or NULL */
    char *note;   /* put before the reply's text (route.c), or NULL */
    bool held;    /* route.c holds it: its chat's host is being found */
    bool locate;  /* the hub's own "locate" question (route.c) */
    bool started; /* its program started: never sent again (retry.h) */
    struct pending *next;
} pending_t;

typedef enum { IN_SUBMIT, IN_CANCEL_KEY, IN_FORGET } inbox_kind_t;

typedef struct inbox_item {
    inbox_kind_t kind;
    proto_msg_t *req;
    queue_ticket_t *ticket;
    char *cancel_key;
    uint64_t hub_id;
} inbox_item_t;

struct queue {
    queue_opts_t opts;
    char *endpoint;
    zsock_t *router;
    hubauth_t *auth;      /* NULL: keyless or insecure hub */
    refusals_t *refusals; /* refusal lines, per key (refusals.h) */
    record_t *record;
    pthread_t thread;
    mailbox_t *inbox;    /* inbox_item_t from callers */
    pthread_mutex_t wmu; /* guards edits of workers, read elsewhere */
    atomic_bool stop;
    uint64_t next_id;
    /* Ids of local requests; they live in the low half of the id space the
     * hub thread never reaches from its time-based start (next_id). */
    atomic_uint_fast64_t local_ids;
    worker_entry_t *workers;
    pending_t *pending;
    route_t *route;        /* which host holds each chat (route.h) */
    known_t *known;        /* the hosts a worker was seen on (known.h) */
    int64_t open_requests; /* length of pending, recounted each turn (atomic: /metrics) */
};

/* Whether a worker counts as alive now (monotonic ms). */
bool queue_worker_alive(const queue_t *q, const worker_entry_t *w, int64_t now);
/* Send a message to a peer; 0 or -1. */
int queue_send_to(queue_t *q, zframe_t *identity, const proto_msg_t *m);
/* Hand a waiting request to a worker (of its host when p->host); true when
 * sent. */
bool queue_dispatch(queue_t *q, pending_t *p);
/* End a request with a reply of this status and text (frees p). */
void queue_fail(queue_t *q, pending_t *p, proto_status_t st, const char *text);
/* End a request with this reply (taken; frees p). */
void queue_finish(queue_t *q, pending_t *p, proto_msg_t *reply);
/* Ask p's worker to stop it (CANCEL); one not given to a worker yet ends
 * at once, saying nothing ran. */
void queue_cancel_pending(queue_t *q, pending_t *p);

#endif
