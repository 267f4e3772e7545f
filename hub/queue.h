/* queue.h -- the hub: the gateway's side of ZeroMQ.
 *
 * The hub binds one ROUTER endpoint (config hub_endpoint, ipc:// by
 * default, tcp:// works the same) that every worker connects to: the
 * sandbox manager, judges, the reaper.  Workers announce themselves with
 * HELLO{kind} every heartbeat; a worker not heard from for
 * heartbeat_timeout is dead, and the requests it held end at once with
 * PROTO_ST_WORKER_LOST (or are retried on another worker of the kind when
 * doing them again repeats nothing: retry.h).  Requests are spread over the live workers of a
 * kind, least busy first.  A request for a kind with no live worker waits
 * up to worker_wait for one to appear, then ends with PROTO_ST_NO_WORKER.
 * Every request ends by its deadline: PROTO_ST_DEADLINE.
 *
 * Two kinds of client use the hub: threads of this process (the HTTP
 * front) through queue_submit/queue_wait, and remote clients (judges)
 * that send REQUEST frames over the same ROUTER socket.
 *
 * When recording is on (queue_record), every request submitted through
 * queue_submit and its reply are appended to a file (see record.h).
 *
 * One thread owns every ZeroMQ socket; callers talk to it through a
 * mailbox (common/mailbox.h), so any number of HTTP threads may wait at
 * once: chats are never serialised.
 */
#ifndef TALKBACK_QUEUE_H
#define TALKBACK_QUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include "proto/proto.h"

typedef struct queue queue_t;
typedef struct queue_ticket queue_ticket_t;

typedef struct {
    const char *endpoint;     /* ROUTER bind address */
    int heartbeat_ms;         /* how often workers say HELLO */
    int heartbeat_timeout_ms; /* silence after which a worker is dead */
    int worker_wait_ms;       /* how long a request waits for a worker */
    const char *record_path;  /* NULL: no recording */
    bool insecure;            /* hub_insecure: tcp:// without CURVE */
    const char *keys_dir;     /* hub_keys (hubauth.h) */
    int hwm;                  /* hub_hwm: messages queued per peer; 0: no bound */
    int64_t max_message;      /* hub_max_message: bytes; 0: no bound */
    int peer_requests;        /* hub_peer_requests: open requests per
                                      remote peer; 0: no bound */
    const char *on_host_lost; /* "refuse" or "place"; NULL: refuse (route.h) */
    int locate_wait_ms;       /* locate_wait_ms; 0: 3000 */
    int64_t route_cache_max;  /* route_cache_max; 0: 100000 */
    const char *hosts_file;   /* hub_hosts_file: the hosts seen (known.h);
                                      NULL or "": kept in memory only */
    int64_t refusal_log_ms;   /* hub_refusal_log_ms: a refusal line per
                                      key at most this often (refusals.h) */
} queue_opts_t;

/* Bind and start the hub thread.  NULL (and a log line) on failure. */
queue_t *queue_new(const queue_opts_t *opts);
/* Stop the thread, end every open ticket with PROTO_ST_NO_WORKER, free. */
void queue_destroy(queue_t **self_p);

/* Submit a request; the queue takes ownership of req (req->id is
 * assigned here).  cancel_key, when not NULL, names the request for
 * queue_cancel (the gateway uses "<conversation>\n<json-rpc id>"). */
queue_ticket_t *queue_submit(queue_t *q, proto_msg_t *req, const char *cancel_key);
/* Wait up to timeout_ms for the reply.  Returns the reply (owned by the
 * ticket, valid until queue_ticket_destroy) or NULL on timeout. */
const proto_msg_t *queue_wait(queue_ticket_t *t, int timeout_ms);
/* Forget a ticket: if no reply came yet, the request is cancelled. */
void queue_ticket_destroy(queue_ticket_t **self_p);
/* Cancel the open request submitted with this cancel key, if any: its
 * worker gets CANCEL and the ticket ends with the worker's reply.  The hub
 * looks the key up on its own thread, so this returns true when the cancel
 * was handed to it (false only when out of memory), not whether a request
 * was found. */
bool queue_cancel(queue_t *q, const char *cancel_key);

/* Live workers of a kind right now. */
int queue_live_workers(queue_t *q, const char *kind);

/* Requests the hub holds open right now (waiting for a worker or being
 * served).  Lock-free. */
int64_t queue_open_requests(queue_t *q);
/* Each live worker with its last HELLO data: kind, name, host (the data's
 * "host", "" when it sent none) and the whole data map (a sandbox
 * manager's capacity: see proto.h).  The callback runs under the hub's
 * worker lock: it must copy what it keeps and not call back into the
 * queue. */
typedef void (*queue_worker_fn)(const char *kind, const char *name, const char *host,
                                const proto_map_t *data, void *ctx);
void queue_workers_each(queue_t *q, queue_worker_fn cb, void *ctx);

/* The operations of kind hub (proto/optable.h: OPS_HUB), which the hub
 * answers itself on its thread, one handler each; ends with { NULL, NULL }.
 * Exposed for tests/unit/test_ops.c. */
struct pending;
typedef struct {
    const char *op;
    void (*fn)(queue_t *q, struct pending *p);
} queue_op_t;
extern const queue_op_t queue_ops[];

#endif
