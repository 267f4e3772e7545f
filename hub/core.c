/* core.c -- the workers, the open requests and the acts on them that
 * every part of the hub thread shares (see core.h).
 */
#include "hub/core.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "proto/ops.h"

/* ---- tickets ------------------------------------------------------------ */

void core_ticket_release(struct queue_ticket *t)
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

void core_ticket_complete(struct queue_ticket *t, proto_msg_t *reply)
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

/* ---- workers ------------------------------------------------------------- */

bool core_worker_alive(const core_t *c, const worker_entry_t *w, int64_t now)
{
    return !w->dead && now - w->last_seen <= c->heartbeat_timeout_ms;
}

worker_entry_t *core_worker_find(core_t *c, zframe_t *identity)
{
    list_for_each_item(w, &c->workers, worker_entry_t, node)
        if (zframe_eq(w->identity, identity))
            return w;
    return NULL;
}

int core_send(core_t *c, zframe_t *identity, const proto_msg_t *m)
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
    int rc = zmsg_send(&msg, c->router);
    zmsg_destroy(&msg);
    return rc;
}

/* The least busy live worker of a kind (on host, when not NULL). */
static worker_entry_t *worker_pick(core_t *c, const char *kind, const char *host)
{
    worker_entry_t *best = NULL;
    list_for_each_item(w, &c->workers, worker_entry_t, node)
        if (!w->dead && w->kind && strcmp(w->kind, kind) == 0 &&
            (!host || (w->host && strcmp(w->host, host) == 0)) &&
            (!best || w->inflight < best->inflight))
            best = w;
    return best;
}

/* ---- requests ------------------------------------------------------------- */

static void pending_free(pending_t *p)
{
    proto_msg_destroy(&p->req);
    zframe_destroy(&p->client);
    free(p->cancel_key);
    free(p->host);
    free(p->note);
    if (p->ticket)
        core_ticket_release(p->ticket);
    free(p);
}

/* Take p (which is on c->pending) off it. */
static void pending_unlink(core_t *c, pending_t *p)
{
    list_remove(&c->pending, &p->node);
}

/* Put p's note (route.c: the chat moved host) before the reply's text. */
static void note_reply(const pending_t *p, proto_msg_t *reply)
{
    if (!p->note || reply->status != PROTO_ST_OK)
        return;
    size_t nl = strlen(p->note), tl = reply->text ? reply->text_len : 0;
    char *t = malloc(nl + 1 + tl + 1);
    if (!t)
        return;
    memcpy(t, p->note, nl);
    t[nl] = '\n';
    if (tl)
        memcpy(t + nl + 1, reply->text, tl);
    t[nl + 1 + tl] = '\0';
    proto_msg_set_text(reply, t, nl + 1 + tl);
    free(t);
}

/* Deliver a reply to whoever asked, then forget the request. */
void core_finish(core_t *c, pending_t *p, proto_msg_t *reply)
{
    pending_unlink(c, p);
    if (p->worker)
        p->worker->inflight--;
    if (p->locate) {
        if (c->on_locate)
            c->on_locate(c->on_locate_ctx, p, reply);
        proto_msg_destroy(&reply);
        pending_free(p);
        return;
    }
    note_reply(p, reply);
    reply->id = p->hub_id;
    if (p->ticket) {
        if (c->record)
            record_write(c->record, "rep", reply);
        core_ticket_complete(p->ticket, reply);
    } else if (p->client) {
        reply->id = p->client_id;
        core_send(c, p->client, reply);
        proto_msg_destroy(&reply);
    } else {
        proto_msg_destroy(&reply);
    }
    pending_free(p);
}

void core_fail(core_t *c, pending_t *p, proto_status_t st, const char *text)
{
    proto_msg_t *r = proto_reply_new(p->req, st, true, text);
    if (!r) {
        log_error("out of memory failing request %llu", (unsigned long long)p->hub_id);
        return;
    }
    proto_map_set_cstr(&r->data, DATA_KIND, p->req->kind ? p->req->kind : "");
    core_finish(c, p, r);
}

bool core_dispatch(core_t *c, pending_t *p)
{
    if (p->held)
        return false;
    for (;;) {
        worker_entry_t *w = worker_pick(c, p->req->kind ? p->req->kind : "", p->host);
        if (!w)
            return false;
        if (core_send(c, w->identity, p->req) == 0) {
            p->worker = w;
            w->inflight++;
            return true;
        }
        /* ROUTER_MANDATORY: the peer is gone; the tick removes it. */
        log_warn("worker %s (%s) unreachable, dropping it", w->name, w->kind);
        w->dead = true;
    }
}

void core_cancel(core_t *c, pending_t *p)
{
    if (!p->worker) {
        core_fail(c, p, PROTO_ST_OK, "[Cancelled before it started: nothing ran.]");
        return;
    }
    proto_msg_t *m = proto_msg_new(PROTO_CANCEL);
    if (!m)
        return;
    m->id = p->hub_id;
    core_send(c, p->worker->identity, m);
    proto_msg_destroy(&m);
}
