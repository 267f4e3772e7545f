/* queue.c -- the hub: routes requests to live workers and replies back
 * (see queue.h for the contract).
 *
 * One thread owns the ROUTER socket.  Everything else reaches it through
 * `inbox`, a mailbox (common/mailbox.h) the thread drains whenever its
 * descriptor is readable: new local requests, cancels, forgotten tickets.
 * The thread sleeps in zmq_poll on the socket and the mailbox with a
 * 100 ms tick, on which
 * it expires silent workers and overdue requests.  Lists are plain linked
 * lists: a hub sees tens of workers and hundreds of open requests, where a
 * linear scan costs less than keeping a hash table honest.
 *
 * A ticket is shared by the waiting caller and the hub thread, so it is
 * reference-counted under its own mutex; whichever side lets go last frees
 * it.
 *
 * Every message from the socket is checked against what its sender's key
 * allows (hubauth.h) before it counts: a HELLO as a kind the key may not
 * register as makes no worker, and a REQUEST the key may not send is
 * answered with a refusal.  One peer can make the hub hold at most
 * hub_hwm messages of hub_max_message bytes and hub_peer_requests open
 * requests.
 */
#include "hub/queue.h"
#include "hub/queue_int.h"

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
#include "hub/hosts.h"
#include "hub/hubauth.h"
#include "hub/record.h"
#include "hub/peers.h"
#include "hub/refusals.h"
#include "hub/retry.h"
#include "proto/ops.h"
#include "hub/route.h"
#include "talk/texts.h"

#define QUEUE_TICK_MS             100
#define QUEUE_DEFAULT_DEADLINE_MS (30 * 60 * 1000)

/* ---- tickets ------------------------------------------------------------ */

static void ticket_release(queue_ticket_t *t)
{
    pthread_mutex_lock(&t->mu);
    int left = --t->refs;
    pthread_mutex_unlock(&t->mu);
    if (left == 0) {
        proto_msg_destroy(&t->reply);
        pthread_mutex_destroy(&t->mu);
        pthread_cond_destroy(&t->cv);
        free(t);
    }
}

static void ticket_complete(queue_ticket_t *t, proto_msg_t *reply)
{
    pthread_mutex_lock(&t->mu);
    if (!t->reply) {
        t->reply = reply;
        reply = NULL;
    }
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    proto_msg_destroy(&reply);
}

/* ---- hub-thread helpers ----------------------------------------------------- */

static int send_to(queue_t *q, zframe_t *identity, const proto_msg_t *m)
{
    char *buf;
    size_t len;
    if (proto_encode(m, &buf, &len) != PROTO_OK)
        return -1;
    zmsg_t *msg = zmsg_new();
    zmsg_append(msg, &(zframe_t *){ zframe_dup(identity) });
    zframe_t *body = zframe_new(buf, len);
    free(buf);
    zmsg_append(msg, &body);
    int rc = zmsg_send(&msg, q->router);
    zmsg_destroy(&msg);
    return rc;
}

static worker_entry_t *worker_find(queue_t *q, zframe_t *identity)
{
    for (worker_entry_t *w = q->workers; w; w = w->next)
        if (zframe_eq(w->identity, identity))
            return w;
    return NULL;
}

/* The least busy live worker of a kind (on host, when not NULL). */
static worker_entry_t *worker_pick(queue_t *q, const char *kind, const char *host)
{
    worker_entry_t *best = NULL;
    for (worker_entry_t *w = q->workers; w; w = w->next)
        if (!w->dead && w->kind && strcmp(w->kind, kind) == 0 &&
            (!host || (w->host && strcmp(w->host, host) == 0)) &&
            (!best || w->inflight < best->inflight))
            best = w;
    return best;
}

static void pending_free(pending_t *p)
{
    proto_msg_destroy(&p->req);
    zframe_destroy(&p->client);
    free(p->cancel_key);
    free(p->host);
    free(p->note);
    if (p->ticket)
        ticket_release(p->ticket);
    free(p);
}

static void pending_unlink(queue_t *q, pending_t *p)
{
    for (pending_t **pp = &q->pending; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            return;
        }
}

/* Deliver a reply to whoever asked, then forget the request. */
static void pending_finish(queue_t *q, pending_t *p, proto_msg_t *reply)
{
    pending_unlink(q, p);
    if (p->worker)
        p->worker->inflight--;
    if (p->locate) {
        route_locate_done(q, p, reply);
        proto_msg_destroy(&reply);
        pending_free(p);
        return;
    }
    route_note_reply(p, reply);
    reply->id = p->hub_id;
    if (p->ticket) {
        if (q->record)
            record_write(q->record, "rep", reply);
        ticket_complete(p->ticket, reply);
    } else if (p->client) {
        reply->id = p->client_id;
        send_to(q, p->client, reply);
        proto_msg_destroy(&reply);
    } else {
        proto_msg_destroy(&reply);
    }
    pending_free(p);
}

static void pending_fail(queue_t *q, pending_t *p, proto_status_t st, const char *text)
{
    proto_msg_t *r = proto_reply_new(p->req, st, true, text);
    if (!r) {
        log_error("out of memory failing request %llu", (unsigned long long)p->hub_id);
        return;
    }
    proto_map_set_cstr(&r->data, DATA_KIND, p->req->kind ? p->req->kind : "");
    pending_finish(q, p, r);
}

/* Try to hand a waiting request to a worker.  Returns true when sent. */
static bool pending_dispatch(queue_t *q, pending_t *p)
{
    if (p->held)
        return false;
    for (;;) {
        worker_entry_t *w = worker_pick(q, p->req->kind ? p->req->kind : "", p->host);
        if (!w)
            return false;
        if (send_to(q, w->identity, p->req) == 0) {
            p->worker = w;
            w->inflight++;
            return true;
        }
        /* ROUTER_MANDATORY: the peer is gone; the tick removes it. */
        log_warn("worker %s (%s) unreachable, dropping it", w->name, w->kind);
        w->dead = true;
    }
}

static void queue_answer_hub(queue_t *q, pending_t *p);

static void pending_add(queue_t *q, pending_t *p)
{
    int64_t now = proto_mono_ms();
    int64_t left = p->req->deadline_ms ? p->req->deadline_ms - proto_now_ms()
                                       : QUEUE_DEFAULT_DEADLINE_MS;
    p->deadline = now + (left > 0 ? left : 0);
    p->wait_until = now + q->opts.worker_wait_ms;
    p->next = q->pending;
    q->pending = p;
    if (q->record && p->ticket)
        record_write(q->record, "req", p->req);
    if (p->req->kind && strcmp(p->req->kind, KIND_HUB) == 0)
        queue_answer_hub(q, p);
    else if (!route_admit(q, p))
        pending_dispatch(q, p);
}

/* forget_host: drop a host from the hosts the hub remembers (an operator
 * retired it for good), so its absence no longer stops new chats. */
static void queue_forget_host(queue_t *q, pending_t *p)
{
    const char *host = proto_map_str(&p->req->args, ARG_HOST, NULL);
    char text[256];
    if (!host || !*host) {
        pending_fail(q, p, PROTO_ST_OK, TX_HUB_FORGET_NO_HOST);
        return;
    }
    if (!known_forget(q->known, host)) {
        snprintf(text, sizeof text, TX_HUB_FORGET_UNKNOWN, host);
        pending_fail(q, p, PROTO_ST_OK, text);
        return;
    }
    log_info("host %s forgotten by the operator", host);
    snprintf(text, sizeof text,
             "Forgot host %.64s: chats found on no live host are no longer "
             "refused for it.",
             host);
    proto_msg_t *r = proto_reply_new(p->req, PROTO_ST_OK, false, text);
    if (!r) {
        pending_fail(q, p, PROTO_ST_INTERNAL, TX_HUB_NO_MEMORY);
        return;
    }
    pending_finish(q, p, r);
}

/* A request of kind `hub`: the hub answers it itself, at once, from what
 * its workers said in their HELLOs (never waits on a worker). */
static void queue_answer_hub(queue_t *q, pending_t *p)
{
    if (p->req->name && strcmp(p->req->name, OP_FORGET_HOST) == 0) {
        queue_forget_host(q, p);
        return;
    }
    hosts_t h = { 0 };
    queue_workers_each(q, hosts_add_worker, &h);
    proto_msg_t *r = h.oom ? NULL : hosts_answer(p->req, &h);
    hosts_clear(&h);
    if (r)
        pending_finish(q, p, r);
    else
        pending_fail(q, p, PROTO_ST_INTERNAL, TX_HUB_NO_MEMORY);
}

static void send_cancel(queue_t *q, pending_t *p)
{
    if (!p->worker) {
        pending_fail(q, p, PROTO_ST_OK, "[Cancelled before it started: nothing ran.]");
        return;
    }
    proto_msg_t *c = proto_msg_new(PROTO_CANCEL);
    if (!c)
        return;
    c->id = p->hub_id;
    send_to(q, p->worker->identity, c);
    proto_msg_destroy(&c);
}

/* ---- what route.c uses (queue_int.h) ---------------------------------------------- */

bool queue_worker_alive(const queue_t *q, const worker_entry_t *w, int64_t now)
{
    return !w->dead && now - w->last_seen <= q->opts.heartbeat_timeout_ms;
}

int queue_send_to(queue_t *q, zframe_t *identity, const proto_msg_t *m)
{
    return send_to(q, identity, m);
}
bool queue_dispatch(queue_t *q, pending_t *p)
{
    return pending_dispatch(q, p);
}
void queue_fail(queue_t *q, pending_t *p, proto_status_t st, const char *text)
{
    pending_fail(q, p, st, text);
}
void queue_finish(queue_t *q, pending_t *p, proto_msg_t *reply)
{
    pending_finish(q, p, reply);
}
void queue_cancel_pending(queue_t *q, pending_t *p)
{
    send_cancel(q, p);
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
    worker_entry_t *w = worker_find(q, identity);
    /* Its key's kinds and host; one manager per host (peers.h). */
    if (!peers_hello_ok(q, identity, m, peer, w))
        return;
    if (!w) {
        w = calloc(1, sizeof *w);
        if (!w)
            return;
        w->identity = zframe_dup(identity);
        w->kind = strdup(m->kind ? m->kind : "");
        w->name = strdup(m->name ? m->name : "");
        pthread_mutex_lock(&q->wmu);
        w->next = q->workers;
        q->workers = w;
        w->last_seen = proto_mono_ms();
        worker_keep_data(w, m);
        pthread_mutex_unlock(&q->wmu);
        log_info("worker %s (%s) joined (host %s)", w->name, w->kind, *w->host ? w->host : "?");
        if (*w->host && (strcmp(w->kind, KIND_SANDBOX) == 0 || strcmp(w->kind, KIND_REAPER) == 0) &&
            known_add(q->known, w->host))
            log_info("host %s is new to the hub: remembered", w->host);
        if (*w->host && strcmp(w->kind, KIND_SANDBOX) == 0)
            known_managed(q->known, w->host);
        /* Requests that were waiting for this kind go now. */
        for (pending_t *p = q->pending; p; p = p->next)
            if (!p->worker && p->req->kind && strcmp(p->req->kind, w->kind) == 0)
                pending_dispatch(q, p);
    }
    pthread_mutex_lock(&q->wmu);
    w->last_seen = proto_mono_ms();
    worker_keep_data(w, m);
    pthread_mutex_unlock(&q->wmu);
}

/* Answer a remote request the hub will not queue. */
static void refuse_request(queue_t *q, zframe_t *identity, proto_msg_t *m, const char *why)
{
    proto_msg_t *r = proto_reply_new(m, PROTO_ST_BAD_REQUEST, true, why);
    if (r) {
        r->id = m->id;
        send_to(q, identity, r);
        proto_msg_destroy(&r);
    }
    proto_msg_destroy(&m);
}

/* Requests of this remote peer still open. */
static int peer_open_requests(queue_t *q, zframe_t *identity)
{
    int n = 0;
    for (pending_t *p = q->pending; p; p = p->next)
        if (p->client && zframe_eq(p->client, identity))
            n++;
    return n;
}

static void on_request(queue_t *q, zframe_t *identity, proto_msg_t *m, const hubauth_peer_t *peer)
{
    if (!hubauth_may_submit(peer, m->kind ? m->kind : "", m->name ? m->name : "")) {
        peers_refusal(q, "submit", peer,
                      "refused a request %.40s %.40s from the key %s (it may send: %s)",
                      m->kind ? m->kind : "?", m->name ? m->name : "?", peer->name,
                      peer->submit && *peer->submit ? peer->submit : "nothing");
        refuse_request(q, identity, m, TX_HUB_KEY_MAY_NOT);
        return;
    }
    const char *why = peers_request_ok(q, m, peer);
    if (why) {
        refuse_request(q, identity, m, why);
        return;
    }
    if (q->opts.peer_requests > 0 && peer_open_requests(q, identity) >= q->opts.peer_requests) {
        peers_refusal(
            q, "open", peer,
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
    retry_note_started(q, identity, m);
    p->client = zframe_dup(identity);
    p->client_id = m->id;
    p->hub_id = ++q->next_id;
    m->id = p->hub_id;
    p->req = m;
    pending_add(q, p);
}

static void on_reply(queue_t *q, zframe_t *identity, proto_msg_t *m, const hubauth_peer_t *peer)
{
    worker_entry_t *w = worker_find(q, identity);
    if (w) {
        pthread_mutex_lock(&q->wmu);
        w->last_seen = proto_mono_ms();
        pthread_mutex_unlock(&q->wmu);
    }
    for (pending_t *p = q->pending; p; p = p->next)
        if (p->hub_id == m->id && p->worker && zframe_eq(p->worker->identity, identity)) {
            pending_finish(q, p, m);
            return;
        }
    peers_stray_reply(q, identity, m, peer); /* late, or forged */
    proto_msg_destroy(&m);
}

static void on_remote_cancel(queue_t *q, zframe_t *identity, const proto_msg_t *m)
{
    for (pending_t *p = q->pending; p; p = p->next)
        if (p->client && zframe_eq(p->client, identity) && p->client_id == m->id) {
            send_cancel(q, p);
            return;
        }
}

static void on_socket(queue_t *q)
{
    zmsg_t *msg = zmsg_recv(q->router);
    if (!msg)
        return;
    zframe_t *identity = zmsg_pop(msg);
    zframe_t *body = zmsg_pop(msg);
    proto_msg_t *m = NULL;
    hubauth_peer_t peer;
    if (body && !hubauth_peer(q->auth, body, &peer)) {
        /* ZAP let it in, but its certificate is gone from the allow list. */
        const char *key = zframe_meta(body, "User-Id");
        hubauth_peer_t gone = { .name = "?", .key = key ? key : "?" };
        peers_refusal(q, "gone", &gone,
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
        ticket_complete(it->ticket,
                        proto_reply_new(it->req, PROTO_ST_NO_WORKER, true, TX_HUB_STOPPING));
        ticket_release(it->ticket);
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
            ticket_complete(it->ticket,
                            proto_reply_new(it->req, PROTO_ST_INTERNAL, true, TX_HUB_OOM));
            ticket_release(it->ticket);
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
        for (pending_t *p = q->pending; p; p = p->next) {
            bool match = it->kind == IN_FORGET ? p->hub_id == it->hub_id
                                               : (p->cancel_key && it->cancel_key &&
                                                  strcmp(p->cancel_key, it->cancel_key) == 0);
            if (match)
                hit = p;
        }
        if (hit)
            send_cancel(q, hit);
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
    for (worker_entry_t **pw = &q->workers; *pw;) {
        worker_entry_t *w = *pw;
        if (!w->dead && now - w->last_seen <= q->opts.heartbeat_timeout_ms) {
            pw = &w->next;
            continue;
        }
        pthread_mutex_lock(&q->wmu);
        *pw = w->next;
        pthread_mutex_unlock(&q->wmu);
        log_warn("worker %s (%s) %s: counted dead", w->name, w->kind,
                 w->dead ? "unreachable" : "went silent");
        retry_worker_lost(q, w, now);
        worker_entry_free(w);
    }
    /* Requests waiting for a worker too long, or past their deadline. */
    for (pending_t *p = q->pending, *nx; p; p = nx) {
        nx = p->next;
        if (!p->worker && !p->held && !pending_dispatch(q, p) && now >= p->wait_until)
            pending_fail(q, p, PROTO_ST_NO_WORKER, TX_HUB_NO_WORKER);
        else if (now >= p->deadline) {
            if (p->worker)
                send_cancel(q, p);
            pending_fail(q, p, PROTO_ST_DEADLINE, TX_HUB_DEADLINE);
        }
    }
}

/* Count the open requests for queue_open_requests (/metrics): recounted
 * after every turn of the loop rather than kept by every path that links
 * or unlinks one. */
static void queue_count_open(queue_t *q)
{
    int64_t n = 0;
    for (pending_t *p = q->pending; p; p = p->next)
        n++;
    __atomic_store_n(&q->open_requests, n, __ATOMIC_RELAXED);
}

static void *queue_thread(void *arg)
{
    queue_t *q = arg;
    void *sock = zsock_resolve(q->router);
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
            for (int i = 0; i < 256 && (zsock_events(q->router) & ZMQ_POLLIN); i++)
                on_socket(q);
        }
        if (items[1].revents & ZMQ_POLLIN)
            on_inbox(q);
        on_tick(q);
        queue_count_open(q);
        route_tick(q);
    }
    /* Shutting down: every open request ends now. */
    on_inbox(q);
    while (q->pending)
        pending_fail(q, q->pending, PROTO_ST_NO_WORKER, TX_HUB_STOPPING);
    return NULL;
}

/* ---- public API -------------------------------------------------------------------- */

/* The ROUTER socket, secured and bounded, bound to q->endpoint. */
static int queue_socket(queue_t *q)
{
    q->router = zsock_new(ZMQ_ROUTER);
    if (!q->router)
        return -1;
    if (hubauth_new(q->router, q->endpoint, q->opts.insecure, q->opts.keys_dir,
                    q->opts.refusal_log_ms, &q->auth) < 0)
        return -1;
    int hwm = q->opts.hwm;
    zsock_set_router_mandatory(q->router, 1);
    zsock_set_linger(q->router, 0);
    /* A peer that stops reading gets EAGAIN, never a hub thread that waits. */
    zsock_set_sndtimeo(q->router, 0);
    zsock_set_sndhwm(q->router, hwm > 0 ? hwm : 0);
    zsock_set_rcvhwm(q->router, hwm > 0 ? hwm : 0);
    int64_t maxmsg = q->opts.max_message;
    zsock_set_maxmsgsize(q->router, maxmsg > 0 && maxmsg <= INT_MAX ? (int)maxmsg : -1);
    if (zsock_bind(q->router, "%s", q->endpoint) < 0) {
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
    q->route = route_new(wait_ms, q->opts.heartbeat_timeout_ms, strcmp(lost, "place") == 0,
                         (size_t)cache_max);
    q->known = known_new(q->opts.hosts_file);
    return q->route && q->known ? 0 : -1;
}

queue_t *queue_new(const queue_opts_t *opts)
{
    queue_t *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->opts = *opts;
    pthread_mutex_init(&q->wmu, NULL);
    q->endpoint = strdup(opts->endpoint);
    if (!q->endpoint)
        goto err;
    q->opts.endpoint = q->endpoint;
    if (opts->record_path && *opts->record_path) {
        q->record = record_open(opts->record_path);
        if (!q->record) {
            log_error("cannot open recording %s: %s", opts->record_path, strerror(errno));
            goto err;
        }
    }
    q->refusals = refusals_new(opts->refusal_log_ms);
    if (!q->refusals || queue_route(q) < 0)
        goto err;
    if (queue_socket(q) < 0)
        goto err;
    q->inbox = mailbox_new(inbox_item_free);
    if (!q->inbox)
        goto err;
    /* The thread's random start id keeps ids of two gateway lives apart in
     * one recording. */
    q->next_id = ((uint64_t)proto_now_ms() & 0xffffffffu) << 20;
    if (pthread_create(&q->thread, NULL, queue_thread, q) != 0)
        goto err;
    log_info("hub listening on %s", q->endpoint);
    return q;
err:
    refusals_destroy(&q->refusals);
    route_destroy(&q->route);
    known_destroy(&q->known);
    zsock_destroy(&q->router);
    hubauth_destroy(&q->auth);
    record_close(&q->record);
    mailbox_destroy(&q->inbox);
    free(q->endpoint);
    pthread_mutex_destroy(&q->wmu);
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
    while (q->workers) {
        worker_entry_t *w = q->workers;
        q->workers = w->next;
        worker_entry_free(w);
    }
    zsock_destroy(&q->router);
    hubauth_destroy(&q->auth);
    record_close(&q->record);
    route_destroy(&q->route);
    known_destroy(&q->known);
    refusals_destroy(&q->refusals);
    mailbox_destroy(&q->inbox);
    free(q->endpoint);
    pthread_mutex_destroy(&q->wmu);
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
    t->q = q;
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
            if (mailbox_post(t->q->inbox, it) < 0)
                free(it);
        }
    }
    ticket_release(t);
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
    pthread_mutex_lock(&q->wmu);
    int n = 0;
    int64_t now = proto_mono_ms();
    for (worker_entry_t *w = q->workers; w; w = w->next)
        if (!w->dead && w->kind && strcmp(w->kind, kind) == 0 &&
            now - w->last_seen <= q->opts.heartbeat_timeout_ms)
            n++;
    pthread_mutex_unlock(&q->wmu);
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
    pthread_mutex_lock(&q->wmu);
    int64_t now = proto_mono_ms();
    for (worker_entry_t *w = q->workers; w; w = w->next)
        if (!w->dead && now - w->last_seen <= q->opts.heartbeat_timeout_ms)
            cb(w->kind ? w->kind : "", w->name ? w->name : "", w->host ? w->host : "", &w->data,
               ctx);
    pthread_mutex_unlock(&q->wmu);
}
