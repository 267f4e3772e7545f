/* queue.c -- the hub: routes requests to live workers and replies back
 * (see queue.h for the contract).
 *
 * One thread owns the ROUTER socket.  Everything else reaches it through
 * `inbox`, a mailbox (common/mailbox.h) the thread drains whenever its
 * descriptor is readable: new local requests, cancels, forgotten tickets.
 * The thread sleeps in zmq_poll on the socket and the mailbox with a
 * 100 ms tick, on which
 * it expires silent workers and overdue requests.  The workers and the
 * open requests are common/list.h lists, newest first: a hub sees tens of
 * workers and hundreds of open requests, where a linear scan costs less
 * than keeping a hash table honest.
 *
 * A ticket is shared by the waiting caller and the hub thread, so it is
 * reference-counted under its own mutex; whichever side lets go last frees
 * it (core.c).
 *
 * The workers, the open requests and the acts on them (send, dispatch,
 * finish, fail, cancel) are in core.c, which route.c, retry.c and peers.c
 * use too; this file calls them, they never call back here.  Requests of
 * kind hub are answered here, from queue_ops, one handler per row of the
 * operations table (proto/optable.h).
 *
 * Every message from the socket is checked against what its sender's key
 * allows (hubauth.h) before it counts: a HELLO as a kind the key may not
 * register as makes no worker, and a REQUEST the key may not send is
 * answered with a refusal.  One peer can make the hub hold at most
 * hub_hwm messages of hub_max_message bytes and hub_peer_requests open
 * requests.
 */
#include "hub/queue.h"

#include <czmq.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mailbox.h"
#include "hub/core.h"
#include "hub/hosts.h"
#include "hub/hubauth.h"
#include "hub/peers.h"
#include "hub/record.h"
#include "hub/refusals.h"
#include "hub/retry.h"
#include "hub/route.h"
#include "hub/worker.h"
#include "proto/ops.h"
#include "proto/optable.h"
#include "talk/texts.h"

#define QUEUE_TICK_MS             100
#define QUEUE_DEFAULT_DEADLINE_MS (30 * 60 * 1000)

/* The hub: the state its parts share (core.h), and what only queue.c uses. */
struct queue {
    core_t core; /* workers, open requests, the socket (route, retry, peers) */
    queue_opts_t opts;
    char *endpoint;
    pthread_t thread;
    mailbox_t *inbox; /* inbox_item_t from callers */
    atomic_bool stop;
    /* Ids of local requests; they live in the low half of the id space the
     * hub thread never reaches from its time-based start (core.next_id). */
    atomic_uint_fast64_t local_ids;
    route_t *route;        /* which host holds each chat (route.h) */
    int64_t open_requests; /* length of pending, recounted each turn (atomic: /metrics) */
};

typedef enum { IN_SUBMIT, IN_CANCEL_KEY, IN_FORGET } inbox_kind_t;

typedef struct inbox_item {
    inbox_kind_t kind;
    proto_msg_t *req;
    queue_ticket_t *ticket;
    char *cancel_key;
    uint64_t hub_id;
} inbox_item_t;

/* ---- the operations the hub serves itself (kind hub) ------------------------- */

/* forget_host: drop a host from the hosts the hub remembers (an operator
 * retired it for good), so its absence no longer stops new chats. */
static void queue_forget_host(queue_t *q, pending_t *p)
{
    const char *host = proto_map_str(&p->req->args, ARG_HOST, NULL);
    char text[256];
    if (!host || !*host) {
        core_fail(&q->core, p, PROTO_ST_OK, TX_HUB_FORGET_NO_HOST);
        return;
    }
    if (!known_forget(q->core.known, host)) {
        snprintf(text, sizeof text, TX_HUB_FORGET_UNKNOWN, host);
        core_fail(&q->core, p, PROTO_ST_OK, text);
        return;
    }
    log_info("host %s forgotten by the operator", host);
    snprintf(text, sizeof text,
             "Forgot host %.64s: chats found on no live host are no longer "
             "refused for it.",
             host);
    proto_msg_t *r = proto_reply_new(p->req, PROTO_ST_OK, false, text);
    if (!r) {
        core_fail(&q->core, p, PROTO_ST_INTERNAL, TX_HUB_NO_MEMORY);
        return;
    }
    core_finish(&q->core, p, r);
}

/* hosts: one line per host, from what its workers said in their HELLOs. */
static void queue_hosts(queue_t *q, pending_t *p)
{
    hosts_t h = { 0 };
    queue_workers_each(q, hosts_add_worker, &h);
    proto_msg_t *r = h.oom ? NULL : hosts_answer(p->req, &h);
    hosts_clear(&h);
    if (r)
        core_finish(&q->core, p, r);
    else
        core_fail(&q->core, p, PROTO_ST_INTERNAL, TX_HUB_NO_MEMORY);
}

const queue_op_t queue_ops[] = {
    { OP_HOSTS, queue_hosts },
    { OP_FORGET_HOST, queue_forget_host },
    { NULL, NULL },
};

/* A request of kind `hub`: the hub answers it itself, at once (never waits
 * on a worker); one it does not serve gets the workers' unknown answer. */
static void queue_answer_hub(queue_t *q, pending_t *p)
{
    for (const queue_op_t *o = queue_ops; o->op && p->req->name; o++)
        if (strcmp(o->op, p->req->name) == 0) {
            o->fn(q, p);
            return;
        }
    proto_msg_t *r = worker_unknown_op(p->req->kind, p->req);
    if (r)
        core_finish(&q->core, p, r);
    else
        core_fail(&q->core, p, PROTO_ST_INTERNAL, TX_HUB_NO_MEMORY);
}

/* A new request: answered by the hub, held by route.c, or sent on. */
static void pending_add(queue_t *q, pending_t *p)
{
    int64_t now = proto_mono_ms();
    int64_t left = p->req->deadline_ms ? p->req->deadline_ms - proto_now_ms()
                                       : QUEUE_DEFAULT_DEADLINE_MS;
    p->deadline = now + (left > 0 ? left : 0);
    p->wait_until = now + q->opts.worker_wait_ms;
    list_push_front(&q->core.pending, &p->node);
    if (q->core.record && p->ticket)
        record_write(q->core.record, "req", p->req);
    if (ops_kind_has(p->req->kind, OPS_KIND_HUB))
        queue_answer_hub(q, p);
    else if (!route_admit(q->route, p))
        core_dispatch(&q->core, p);
}

/* ---- events from the socket -------------------------------------------------- */

/* Keep a worker's last HELLO data (under wmu): its host and capacity. */
static void worker_keep_data(worker_entry_t *w, const proto_msg_t *m)
{
    proto_map_t fresh = { 0 };
    if (proto_map_copy(&fresh, &m->data) != 0) {
        proto_map_clear(&fresh);
        return;
    }
    const char *host = proto_map_str(&fresh, DATA_HOST, NULL);
    char *h = strdup(host ? host : "");
    if (!h) {
        proto_map_clear(&fresh);
        return;
    }
    proto_map_clear(&w->data);
    w->data = fresh;
    free(w->host);
    w->host = h;
}

static void worker_entry_free(worker_entry_t *w)
{
    zframe_destroy(&w->identity);
    free(w->kind);
    free(w->name);
    free(w->host);
    proto_map_clear(&w->data);
    free(w);
}

static void on_hello(queue_t *q, zframe_t *identity, const proto_msg_t *m,
                     const hubauth_peer_t *peer)
{
    worker_entry_t *w = core_worker_find(&q->core, identity);
    /* Its key's kinds and host; one manager per host (peers.h). */
    if (!peers_hello_ok(&q->core, identity, m, peer, w))
        return;
    if (!w) {
        w = calloc(1, sizeof *w);
        if (!w)
            return;
        w->identity = zframe_dup(identity);
        w->kind = strdup(m->kind ? m->kind : "");
        w->name = strdup(m->name ? m->name : "");
        pthread_mutex_lock(&q->core.wmu);
        list_push_front(&q->core.workers, &w->node);
        w->last_seen = proto_mono_ms();
        worker_keep_data(w, m);
        pthread_mutex_unlock(&q->core.wmu);
        log_info("worker %s (%s) joined (host %s)", w->name, w->kind, *w->host ? w->host : "?");
        if (*w->host && ops_kind_has(w->kind, OPS_KIND_PER_HOST) &&
            known_add(q->core.known, w->host))
            log_info("host %s is new to the hub: remembered", w->host);
        if (*w->host && ops_kind_has(w->kind, OPS_KIND_MANAGER))
            known_managed(q->core.known, w->host);
        /* Requests that were waiting for this kind go now. */
        list_for_each_item(p, &q->core.pending, pending_t, node)
            if (!p->worker && p->req->kind && strcmp(p->req->kind, w->kind) == 0)
                core_dispatch(&q->core, p);
    }
    pthread_mutex_lock(&q->core.wmu);
    w->last_seen = proto_mono_ms();
    worker_keep_data(w, m);
    pthread_mutex_unlock(&q->core.wmu);
}

/* Answer a remote request the hub will not queue. */
static void refuse_request(queue_t *q, zframe_t *identity, proto_msg_t *m, const char *why)
{
    proto_msg_t *r = proto_reply_new(m, PROTO_ST_BAD_REQUEST, true, why);
    if (r) {
        r->id = m->id;
        core_send(&q->core, identity, r);
        proto_msg_destroy(&r);
    }
    proto_msg_destroy(&m);
}

/* Requests of this remote peer still open. */
static int peer_open_requests(queue_t *q, zframe_t *identity)
{
    int n = 0;
    list_for_each_item(p, &q->core.pending, pending_t, node)
        if (p->client && zframe_eq(p->client, identity))
            n++;
    return n;
}

static void on_request(queue_t *q, zframe_t *identity, proto_msg_t *m, const hubauth_peer_t *peer)
{
    if (!hubauth_may_submit(peer, m->kind ? m->kind : "", m->name ? m->name : "")) {
        peers_refusal(&q->core, "submit", peer,
                      "refused a request %.40s %.40s from the key %s (it may send: %s)",
                      m->kind ? m->kind : "?", m->name ? m->name : "?", peer->name,
                      peer->submit && *peer->submit ? peer->submit : "nothing");
        refuse_request(q, identity, m, TX_HUB_KEY_MAY_NOT);
        return;
    }
    const char *why = peers_request_ok(&q->core, m, peer);
    if (why) {
        refuse_request(q, identity, m, why);
        return;
    }
    if (q->opts.peer_requests > 0 && peer_open_requests(q, identity) >= q->opts.peer_requests) {
        peers_refusal(
            &q->core, "open", peer,
            "refused a request from the key %s: it has %d open already (hub_peer_requests)",
            peer->name, q->opts.peer_requests);
        refuse_request(q, identity, m, TX_HUB_TOO_MANY_OPEN);
        return;
    }
    pending_t *p = calloc(1, sizeof *p);
    if (!p) {
        proto_msg_destroy(&m);
        return;
    }
    retry_note_started(&q->core, identity, m);
    p->client = zframe_dup(identity);
    p->client_id = m->id;
    p->hub_id = ++q->core.next_id;
    m->id = p->hub_id;
    p->req = m;
    pending_add(q, p);
}

static void on_reply(queue_t *q, zframe_t *identity, proto_msg_t *m, const hubauth_peer_t *peer)
{
    worker_entry_t *w = core_worker_find(&q->core, identity);
    if (w) {
        pthread_mutex_lock(&q->core.wmu);
        w->last_seen = proto_mono_ms();
        pthread_mutex_unlock(&q->core.wmu);
    }
    list_for_each_item(p, &q->core.pending, pending_t, node)
        if (p->hub_id == m->id && p->worker && zframe_eq(p->worker->identity, identity)) {
            core_finish(&q->core, p, m);
            return;
        }
    peers_stray_reply(&q->core, identity, m, peer); /* late, or forged */
    proto_msg_destroy(&m);
}

static void on_remote_cancel(queue_t *q, zframe_t *identity, const proto_msg_t *m)
{
    list_for_each_item(p, &q->core.pending, pending_t, node)
        if (p->client && zframe_eq(p->client, identity) && p->client_id == m->id) {
            core_cancel(&q->core, p);
            return;
        }
}

static void on_socket(queue_t *q)
{
    zmsg_t *msg = zmsg_recv(q->core.router);
    if (!msg)
        return;
    zframe_t *identity = zmsg_pop(msg);
    zframe_t *body = zmsg_pop(msg);
    proto_msg_t *m = NULL;
    hubauth_peer_t peer;
    if (body && !hubauth_peer(q->core.auth, body, &peer)) {
        /* ZAP let it in, but its certificate is gone from the allow list. */
        const char *key = zframe_meta(body, "User-Id");
        hubauth_peer_t gone = { .name = "?", .key = key ? key : "?" };
        peers_refusal(&q->core, "gone", &gone,
                      "dropped a message from the key %.40s: it is no longer in the allow list",
                      key ? key : "?");
        zframe_destroy(&body);
    }
    if (identity && body) {
        proto_err_t err = proto_decode(zframe_data(body), zframe_size(body), &m);
        if (err != PROTO_OK)
            log_warn("dropping a frame: %s", proto_strerror(err));
    }
    if (m) {
        switch (m->type) {
        case PROTO_HELLO:
            on_hello(q, identity, m, &peer);
            proto_msg_destroy(&m);
            break;
        case PROTO_REQUEST: on_request(q, identity, m, &peer); break;
        case PROTO_REPLY: on_reply(q, identity, m, &peer); break;
        case PROTO_CANCEL:
            on_remote_cancel(q, identity, m);
            proto_msg_destroy(&m);
            break;
        }
    }
    zframe_destroy(&identity);
    zframe_destroy(&body);
    zmsg_destroy(&msg);
}

/* ---- events from callers ------------------------------------------------------- */

/* An inbox item that was never handled (the hub stopped first). */
static void inbox_item_free(void *item)
{
    inbox_item_t *it = item;
    if (it->kind == IN_SUBMIT) {
        core_ticket_complete(it->ticket,
                             proto_reply_new(it->req, PROTO_ST_NO_WORKER, true, TX_HUB_STOPPING));
        core_ticket_release(it->ticket);
        proto_msg_destroy(&it->req);
    }
    free(it->cancel_key);
    free(it);
}

/* One item from the inbox: a new request, or a cancel of an open one. */
static void on_inbox_item(void *item, void *arg)
{
    queue_t *q = arg;
    inbox_item_t *it = item;
    if (it->kind == IN_SUBMIT) {
        pending_t *p = calloc(1, sizeof *p);
        if (!p) {
            core_ticket_complete(it->ticket,
                                 proto_reply_new(it->req, PROTO_ST_INTERNAL, true, TX_HUB_OOM));
            core_ticket_release(it->ticket);
            proto_msg_destroy(&it->req);
        } else {
            p->hub_id = it->req->id;
            p->req = it->req;
            p->ticket = it->ticket;
            p->cancel_key = it->cancel_key;
            it->cancel_key = NULL;
            pending_add(q, p);
        }
    } else {
        /* Two clients of one chat may both number from 0, so a key can
         * match twice: the oldest call is the one cancelled (the list
         * is newest first, so the last match). */
        pending_t *hit = NULL;
        list_for_each_item(p, &q->core.pending, pending_t, node) {
            bool match = it->kind == IN_FORGET ? p->hub_id == it->hub_id
                                               : (p->cancel_key && it->cancel_key &&
                                                  strcmp(p->cancel_key, it->cancel_key) == 0);
            if (match)
                hit = p;
        }
        if (hit)
            core_cancel(&q->core, hit);
    }
    free(it->cancel_key);
    free(it);
}

/* Everything callers posted since the last time, in order. */
static void on_inbox(queue_t *q)
{
    mailbox_drain(q->inbox, on_inbox_item, q);
}

/* ---- the clock ------------------------------------------------------------------ */

static void on_tick(queue_t *q)
{
    int64_t now = proto_mono_ms();
    /* Silent workers are dead: their requests are retried or ended. */
    list_for_each_item_safe(w, &q->core.workers, worker_entry_t, node) {
        if (!w->dead && now - w->last_seen <= q->opts.heartbeat_timeout_ms)
            continue;
        pthread_mutex_lock(&q->core.wmu);
        list_remove(&q->core.workers, &w->node);
        pthread_mutex_unlock(&q->core.wmu);
        log_warn("worker %s (%s) %s: counted dead", w->name, w->kind,
                 w->dead ? "unreachable" : "went silent");
        retry_worker_lost(&q->core, w, now);
        worker_entry_free(w);
    }
    /* Requests waiting for a worker too long, or past their deadline. */
    list_for_each_item_safe(p, &q->core.pending, pending_t, node) {
        if (!p->worker && !p->held && !core_dispatch(&q->core, p) && now >= p->wait_until)
            core_fail(&q->core, p, PROTO_ST_NO_WORKER, TX_HUB_NO_WORKER);
        else if (now >= p->deadline) {
            if (p->worker)
                core_cancel(&q->core, p);
            core_fail(&q->core, p, PROTO_ST_DEADLINE, TX_HUB_DEADLINE);
        }
    }
}

/* Publish the open requests for queue_open_requests (/metrics) after
 * every turn of the loop: the list's length, which only this thread
 * reads directly. */
static void queue_count_open(queue_t *q)
{
    int64_t n = (int64_t)q->core.pending.len;
    __atomic_store_n(&q->open_requests, n, __ATOMIC_RELAXED);
}

static void *queue_thread(void *arg)
{
    queue_t *q = arg;
    void *sock = zsock_resolve(q->core.router);
    for (;;) {
        if (atomic_load(&q->stop))
            break;
        zmq_pollitem_t items[2] = {
            { sock, 0, ZMQ_POLLIN, 0 },
            { NULL, mailbox_fd(q->inbox), ZMQ_POLLIN, 0 },
        };
        int rc = zmq_poll(items, 2, QUEUE_TICK_MS);
        if (rc < 0 && errno != EINTR)
            break;
        if (items[0].revents & ZMQ_POLLIN) {
            /* Drain what is ready, but bounded, so the clock still ticks. */
            for (int i = 0; i < 256 && (zsock_events(q->core.router) & ZMQ_POLLIN); i++)
                on_socket(q);
        }
        if (items[1].revents & ZMQ_POLLIN)
            on_inbox(q);
        on_tick(q);
        queue_count_open(q);
        route_tick(q->route);
    }
    /* Shutting down: every open request ends now. */
    on_inbox(q);
    while (!list_empty(&q->core.pending))
        core_fail(&q->core, LIST_FIRST(&q->core.pending, pending_t, node), PROTO_ST_NO_WORKER,
                  TX_HUB_STOPPING);
    return NULL;
}

/* ---- public API -------------------------------------------------------------------- */

/* The ROUTER socket, secured and bounded, bound to q->endpoint. */
static int queue_socket(queue_t *q)
{
    q->core.router = zsock_new(ZMQ_ROUTER);
    if (!q->core.router)
        return -1;
    if (hubauth_new(q->core.router, q->endpoint, q->opts.insecure, q->opts.keys_dir,
                    q->opts.refusal_log_ms, &q->core.auth) < 0)
        return -1;
    int hwm = q->opts.hwm;
    zsock_set_router_mandatory(q->core.router, 1);
    zsock_set_linger(q->core.router, 0);
    /* A peer that stops reading gets EAGAIN, never a hub thread that waits. */
    zsock_set_sndtimeo(q->core.router, 0);
    zsock_set_sndhwm(q->core.router, hwm > 0 ? hwm : 0);
    zsock_set_rcvhwm(q->core.router, hwm > 0 ? hwm : 0);
    int64_t maxmsg = q->opts.max_message;
    zsock_set_maxmsgsize(q->core.router, maxmsg > 0 && maxmsg <= INT_MAX ? (int)maxmsg : -1);
    if (zsock_bind(q->core.router, "%s", q->endpoint) < 0) {
        log_error("cannot bind the hub on %s: %s", q->endpoint, zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

/* The routing of sandbox requests over hosts (route.h), from the options. */
static int queue_route(queue_t *q)
{
    const char *lost = q->opts.on_host_lost ? q->opts.on_host_lost : "refuse";
    if (strcmp(lost, "refuse") != 0 && strcmp(lost, "place") != 0) {
        log_error("on_host_lost is \"%s\": it must be refuse or place", lost);
        return -1;
    }
    int wait_ms = q->opts.locate_wait_ms > 0 ? q->opts.locate_wait_ms : 3000;
    int64_t cache_max = q->opts.route_cache_max > 0 ? q->opts.route_cache_max : 100000;
    q->route = route_new(&q->core, wait_ms, q->opts.heartbeat_timeout_ms,
                         strcmp(lost, "place") == 0, (size_t)cache_max);
    q->core.on_locate = route_locate_done;
    q->core.on_locate_ctx = q->route;
    q->core.known = known_new(q->opts.hosts_file);
    return q->route && q->core.known ? 0 : -1;
}

queue_t *queue_new(const queue_opts_t *opts)
{
    queue_t *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->opts = *opts;
    q->core.heartbeat_timeout_ms = opts->heartbeat_timeout_ms;
    q->core.worker_wait_ms = opts->worker_wait_ms;
    pthread_mutex_init(&q->core.wmu, NULL);
    q->endpoint = strdup(opts->endpoint);
    if (!q->endpoint)
        goto err;
    q->opts.endpoint = q->endpoint;
    if (opts->record_path && *opts->record_path) {
        q->core.record = record_open(opts->record_path);
        if (!q->core.record) {
            log_error("cannot open recording %s: %s", opts->record_path, strerror(errno));
            goto err;
        }
    }
    q->core.refusals = refusals_new(opts->refusal_log_ms);
    if (!q->core.refusals || queue_route(q) < 0)
        goto err;
    if (queue_socket(q) < 0)
        goto err;
    q->inbox = mailbox_new(inbox_item_free);
    if (!q->inbox)
        goto err;
    /* The thread's random start id keeps ids of two gateway lives apart in
     * one recording. */
    q->core.next_id = ((uint64_t)proto_now_ms() & 0xffffffffu) << 20;
    if (pthread_create(&q->thread, NULL, queue_thread, q) != 0)
        goto err;
    log_info("hub listening on %s", q->endpoint);
    return q;
err:
    refusals_destroy(&q->core.refusals);
    route_destroy(&q->route);
    known_destroy(&q->core.known);
    zsock_destroy(&q->core.router);
    hubauth_destroy(&q->core.auth);
    record_close(&q->core.record);
    mailbox_destroy(&q->inbox);
    free(q->endpoint);
    pthread_mutex_destroy(&q->core.wmu);
    free(q);
    return NULL;
}

void queue_destroy(queue_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    queue_t *q = *self_p;
    atomic_store(&q->stop, true);
    mailbox_kick(q->inbox);
    pthread_join(q->thread, NULL);
    list_node_t *n;
    while ((n = list_pop_front(&q->core.workers)))
        worker_entry_free(LIST_ITEM(n, worker_entry_t, node));
    zsock_destroy(&q->core.router);
    hubauth_destroy(&q->core.auth);
    record_close(&q->core.record);
    route_destroy(&q->route);
    known_destroy(&q->core.known);
    refusals_destroy(&q->core.refusals);
    mailbox_destroy(&q->inbox);
    free(q->endpoint);
    pthread_mutex_destroy(&q->core.wmu);
    free(q);
    *self_p = NULL;
}

queue_ticket_t *queue_submit(queue_t *q, proto_msg_t *req, const char *cancel_key)
{
    queue_ticket_t *t = calloc(1, sizeof *t);
    inbox_item_t *it = calloc(1, sizeof *it);
    if (!t || !it) {
        free(t);
        free(it);
        proto_msg_destroy(&req);
        return NULL;
    }
    pthread_mutex_init(&t->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cv, &ca);
    pthread_condattr_destroy(&ca);
    t->refs = 2; /* the caller and the hub */
    t->inbox = q->inbox;
    req->id = atomic_fetch_add(&q->local_ids, 1) + 1;
    t->hub_id = req->id;
    it->kind = IN_SUBMIT;
    it->req = req;
    it->ticket = t;
    it->cancel_key = cancel_key ? strdup(cancel_key) : NULL;
    if (mailbox_post(q->inbox, it) < 0) {
        free(it->cancel_key);
        free(it);
        proto_msg_destroy(&req);
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
        free(t);
        return NULL;
    }
    return t;
}

const proto_msg_t *queue_wait(queue_ticket_t *t, int timeout_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&t->mu);
    while (!t->reply) {
        if (pthread_cond_timedwait(&t->cv, &t->mu, &ts) == ETIMEDOUT)
            break;
    }
    const proto_msg_t *r = t->reply;
    pthread_mutex_unlock(&t->mu);
    return r;
}

void queue_ticket_destroy(queue_ticket_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    queue_ticket_t *t = *self_p;
    pthread_mutex_lock(&t->mu);
    bool answered = t->reply != NULL;
    pthread_mutex_unlock(&t->mu);
    if (!answered) {
        inbox_item_t *it = calloc(1, sizeof *it);
        if (it) {
            it->kind = IN_FORGET;
            it->hub_id = t->hub_id;
            if (mailbox_post(t->inbox, it) < 0)
                free(it);
        }
    }
    core_ticket_release(t);
    *self_p = NULL;
}

bool queue_cancel(queue_t *q, const char *cancel_key)
{
    if (!cancel_key)
        return false;
    inbox_item_t *it = calloc(1, sizeof *it);
    if (!it || !(it->cancel_key = strdup(cancel_key))) {
        free(it);
        return false;
    }
    it->kind = IN_CANCEL_KEY;
    if (mailbox_post(q->inbox, it) < 0) {
        free(it->cancel_key);
        free(it);
        return false;
    }
    return true;
}

int queue_live_workers(queue_t *q, const char *kind)
{
    /* Only the hub thread edits the list, always under wmu. */
    pthread_mutex_lock(&q->core.wmu);
    int n = 0;
    int64_t now = proto_mono_ms();
    list_for_each_item(w, &q->core.workers, worker_entry_t, node)
        if (!w->dead && w->kind && strcmp(w->kind, kind) == 0 &&
            now - w->last_seen <= q->opts.heartbeat_timeout_ms)
            n++;
    pthread_mutex_unlock(&q->core.wmu);
    return n;
}

int64_t queue_open_requests(queue_t *q)
{
    return __atomic_load_n(&q->open_requests, __ATOMIC_RELAXED);
}

void queue_workers_each(queue_t *q, queue_worker_fn cb, void *ctx)
{
    /* Under wmu, as queue_live_workers: the hub thread edits the list and
     * each worker's data only while holding it. */
    pthread_mutex_lock(&q->core.wmu);
    int64_t now = proto_mono_ms();
    list_for_each_item(w, &q->core.workers, worker_entry_t, node)
        if (!w->dead && now - w->last_seen <= q->opts.heartbeat_timeout_ms)
            cb(w->kind ? w->kind : "", w->name ? w->name : "", w->host ? w->host : "", &w->data,
               ctx);
    pthread_mutex_unlock(&q->core.wmu);
}
