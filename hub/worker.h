/* worker.h -- the worker side of the hub: what makes a process a worker.
 *
 * A worker connects a DEALER socket to the hub, says HELLO{kind,name}
 * every heartbeat, and runs each REQUEST it gets on a thread of its own
 * (so a `sleep 60` in one chat never holds up another), with the handler
 * its ops array names for the request's operation; an operation it does
 * not serve gets the one "unknown operation" answer, one that needs a
 * conversation id and has no usable one is refused before any handler
 * runs (proto/optable.h says which).  The handler returns the reply; CANCEL sets the request's cancel flag, which the
 * handler polls.  The same socket carries the worker's own requests to
 * other kinds (worker_call: a judge asking the sandbox manager to exec).
 *
 * If the hub restarts, ZeroMQ reconnects and the next HELLO registers the
 * worker again: nothing to do here.
 */
#ifndef TALKBACK_WORKER_H
#define TALKBACK_WORKER_H

#include <stdatomic.h>
#include <stdbool.h>
#include "proto/proto.h"

typedef struct worker worker_t;

/* What a handler gets: the request (read-only, owned by the worker) and a
 * cancel flag set by CANCEL or by the deadline passing. */
typedef struct {
    const proto_msg_t *req;
    atomic_bool cancelled;
    worker_t *worker;
} worker_job_t;

/* Handle one request and return a reply made with proto_reply_new (or
 * NULL: the worker then replies PROTO_ST_INTERNAL).  Runs on its own
 * thread. */
typedef proto_msg_t *(*worker_handler_fn)(worker_job_t *job, void *ctx);

/* One operation a worker serves: its name (OP_, a row of its kind in
 * proto/optable.h) and its handler.  A worker's array ends with
 * { NULL, NULL }; tests/unit/test_ops.c checks that it has exactly one
 * entry per row of its kind. */
typedef struct {
    const char *op;
    worker_handler_fn fn;
} worker_op_t;

/* Fill the data of the next HELLO (data already holds "host"): a sandbox
 * manager adds its capacity here.  Runs on the worker's main thread before
 * each HELLO, so it must not block: copy what another thread measured. */
typedef void (*worker_hello_fn)(proto_map_t *data, void *ctx);

typedef struct {
    const char *endpoint; /* hub endpoint to connect to */
    const char *kind;     /* KIND_SANDBOX, KIND_JUDGE, ... (proto/ops.h) */
    const char *name;     /* for logs; NULL: kind-pid */
    int heartbeat_ms;
    int max_jobs; /* concurrent requests at most; more wait */
    /* A tcp:// hub's keys (hubkeys.h); unused for ipc://. */
    bool insecure;          /* hub_insecure: no CURVE, with a warning */
    const char *keys_dir;   /* hub_keys: holds the hub's public key */
    const char *cert_path;  /* hub_cert: this worker's certificate;
                               NULL or "": keys_dir/<kind>.key_secret */
    const worker_op_t *ops; /* what it serves; ends with { NULL, NULL } */
    void *ctx;              /* given to every handler */
    const char *host;       /* HELLO's "host"; NULL: host_name, or the machine's */
    worker_hello_fn hello;  /* NULL: HELLO carries only the host */
    void *hello_ctx;
} worker_opts_t;

worker_t *worker_new(const worker_opts_t *opts);
/* Run until worker_stop (or SIGINT/SIGTERM when install_signals).  Returns
 * 0 on a clean stop. */
int worker_run(worker_t *w);
void worker_stop(worker_t *w);
void worker_destroy(worker_t **self_p);

/* From a handler thread: send a request to another kind through the hub
 * and wait for its reply until req->deadline_ms (or until the job is
 * cancelled).  Takes ownership of req.  Returns the reply, or a reply with
 * PROTO_ST_DEADLINE / PROTO_ST_NO_WORKER made locally. */
proto_msg_t *worker_call(worker_t *w, proto_msg_t *req, worker_job_t *job);

/* The host this worker says it runs on (its HELLO's "host"). */
const char *worker_host(const worker_t *w);

/* The host name of this process: configured (config host_name), or when
 * that is NULL or empty the machine's (gethostname), into out (len bytes). */
void worker_host_name(const char *configured, char *out, size_t len);

/* The reply to a request a worker of kind does not serve: the one
 * "unknown operation" answer of every worker, and of the hub's own
 * operations.  NULL when out of memory. */
proto_msg_t *worker_unknown_op(const char *kind, const proto_msg_t *req);

/* The reply a worker gives, before any handler runs, to a request whose
 * operation needs a usable conversation id (OPS_CONV, proto/optable.h)
 * and has none (or has an unusable user id); NULL when it may run.  The
 * one place that check is made, for the operations of kind. */
proto_msg_t *worker_check_ids(const char *kind, const proto_msg_t *req);

/* The handler ops has for op, or NULL. */
worker_handler_fn worker_op_find(const worker_op_t *ops, const char *op);

/* True when the job should stop (cancel or deadline). */
bool worker_job_cancelled(worker_job_t *job);

#endif
