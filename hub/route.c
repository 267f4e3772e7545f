/* route.c -- which Docker host holds each chat (see route.h).
 *
 * Everything here runs on the hub thread, so nothing is locked but the
 * worker list's data (read under wmu elsewhere, written only on this
 * thread).  A chat being found has one `locating` entry: the locate
 * questions out, what they said, and once all are in (or timed out), the
 * outcome -- a host, or a text that ends the chat's held requests.
 * Requests are never touched from inside a reply's handling: route_tick
 * releases them later on the same turn, so no list walk in queue.c ever
 * sees a request freed under it.
 */
#include "hub/route.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/list.h"
#include "common/log.h"
#include "hub/core.h"
#include "proto/optable.h"
#include "proto/ops.h"
#include "talk/texts.h"

#define ROUTE_PLACED_MS 3000 /* placements counted until HELLOs show them */
#define ROUTE_TEXT_MAX  768

/* ---- the cache ------------------------------------------------------------------ */

typedef struct cache_entry {
    char *conv;
    char *host;
    strmap_node_t node; /* keyed by conv */
} cache_entry_t;

struct route_cache {
    strmap_t map; /* conv -> cache_entry_t */
    size_t max;
};

route_cache_t *route_cache_new(size_t max)
{
    route_cache_t *c = calloc(1, sizeof *c);
    if (c)
        c->max = max ? max : 1;
    return c;
}

static void cache_entry_free(cache_entry_t *e)
{
    free(e->conv);
    free(e->host);
    free(e);
}

/* Start again empty (the map's buckets stay for the next entries). */
static void cache_clear(route_cache_t *c)
{
    strmap_for_each_safe(n, &c->map) {
        strmap_del(&c->map, n);
        cache_entry_free(STRMAP_ITEM(n, cache_entry_t, node));
    }
}

void route_cache_destroy(route_cache_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    cache_clear(*self_p);
    strmap_free(&(*self_p)->map);
    free(*self_p);
    *self_p = NULL;
}

const char *route_cache_get(const route_cache_t *c, const char *conv)
{
    cache_entry_t *e = STRMAP_ITEM(strmap_get(&c->map, conv), cache_entry_t, node);
    return e ? e->host : NULL;
}

int route_cache_put(route_cache_t *c, const char *conv, const char *host)
{
    cache_entry_t *e = STRMAP_ITEM(strmap_get(&c->map, conv), cache_entry_t, node);
    if (e) {
        char *nh = strdup(host);
        if (!nh)
            return -1;
        free(e->host);
        e->host = nh;
        return 0;
    }
    if (strmap_len(&c->map) >= c->max)
        cache_clear(c);
    e = calloc(1, sizeof *e);
    if (!e || !(e->conv = strdup(conv)) || !(e->host = strdup(host))) {
        if (e)
            free(e->conv);
        free(e);
        return -1;
    }
    strmap_put(&c->map, &e->node, e->conv); /* none was there */
    return 0;
}

void route_cache_drop(route_cache_t *c, const char *conv)
{
    cache_entry_t *e = STRMAP_ITEM(strmap_get(&c->map, conv), cache_entry_t, node);
    if (!e)
        return;
    strmap_del(&c->map, &e->node);
    cache_entry_free(e);
}

size_t route_cache_size(const route_cache_t *c)
{
    return strmap_len(&c->map);
}

/* ---- placement ------------------------------------------------------------------ */

/* Whether a has more room than b: a lower share of its cap running (a
 * host with no cap counts its running against 1000), then more free
 * memory, then fewer running. */
static bool more_room(const route_host_t *a, const route_host_t *b)
{
    int64_t ca = a->max_running > 0 ? a->max_running : 1000;
    int64_t cb = b->max_running > 0 ? b->max_running : 1000;
    /* a->running / ca < b->running / cb, without division */
    __int128 la = (__int128)a->running * cb, lb = (__int128)b->running * ca;
    if (la != lb)
        return la < lb;
    if (a->mem_free_kb != b->mem_free_kb)
        return a->mem_free_kb > b->mem_free_kb;
    return a->running < b->running;
}

int route_place_pick(const route_host_t *hosts, size_t n, route_pick_t *why)
{
    int best = -1;
    for (size_t i = 0; i < n; i++) {
        const route_host_t *h = &hosts[i];
        if (h->draining || (h->max_running > 0 && h->running >= h->max_running))
            continue;
        if (best < 0 || more_room(h, &hosts[best]))
            best = (int)i;
    }
    *why = best >= 0 ? ROUTE_PICKED : n ? ROUTE_FULL : ROUTE_NO_HOST;
    return best;
}

/* ---- texts ------------------------------------------------------------------------ */

void route_text_lost(char *out, size_t len, const char *host)
{
    snprintf(out, len, TX_HUB_HOST_GONE, host);
}

void route_text_moved(char *out, size_t len, const char *old_host, const char *new_host)
{
    snprintf(out, len, TX_HUB_HOST_GONE_PLACED, old_host, new_host);
}

void route_text_unknown(char *out, size_t len, const char *host)
{
    snprintf(out, len, TX_HUB_HOST_MAYBE, host, host, host);
}

void route_text_maybe_moved(char *out, size_t len, const char *old_host, const char *new_host)
{
    snprintf(out, len, TX_HUB_HOST_MAYBE_PLACED, old_host, new_host);
}

void route_text_full(char *out, size_t len, size_t n_full, size_t n_draining)
{
    if (n_full == 0)
        snprintf(out, len, TX_HUB_ALL_DRAINING);
    else
        snprintf(out, len, TX_HUB_NO_ROOM, n_full, n_full == 1 ? "s" : "",
                 n_draining ? " and the others are draining" : "");
}

void route_text_unanswered(char *out, size_t len, const char *host)
{
    snprintf(out, len, TX_HUB_LOCATE_SLOW, host);
}

/* ---- the hub's side ---------------------------------------------------------------- */

typedef struct locating {
    char *conv;
    int outstanding;  /* locate questions not yet answered */
    char *found;      /* a host that holds it */
    char *silent;     /* a host that did not answer */
    char *lost;       /* on_host_lost = place: the host it was on */
    bool maybe;       /* ... or may have been on (known.h) */
    bool placing;     /* the first request may make a sandbox */
    int64_t retry_at; /* found nowhere while young: ask again then */
    bool done;
    char *host;         /* outcome: where its requests go (NULL: anywhere) */
    char *text;         /* outcome: or the text that ends them */
    strmap_node_t node; /* on route_t.locating, keyed by conv */
} locating_t;

typedef struct placed {
    char *host;
    int64_t at;       /* monotonic ms */
    list_node_t node; /* on route_t.placed */
} placed_t;

struct route {
    core_t *core; /* the hub's workers and requests (core.h) */
    int locate_wait_ms;
    int grace_ms; /* no placement this young: hosts still joining */
    int64_t born; /* monotonic ms */
    bool place_on_lost;
    route_cache_t *cache;
    strmap_t locating; /* locating_t by conv, one per chat being found, oldest first */
    list_t placed;     /* placed_t, newest first */
};

route_t *route_new(core_t *core, int locate_wait_ms, int grace_ms, bool place_on_lost,
                   size_t cache_max)
{
    route_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->core = core;
    r->locate_wait_ms = locate_wait_ms > 0 ? locate_wait_ms : 3000;
    r->grace_ms = grace_ms > 0 ? grace_ms : 0;
    r->born = proto_mono_ms();
    r->place_on_lost = place_on_lost;
    r->cache = route_cache_new(cache_max);
    if (!r->cache) {
        free(r);
        return NULL;
    }
    return r;
}

static void locating_free(locating_t *l)
{
    free(l->conv);
    free(l->found);
    free(l->silent);
    free(l->lost);
    free(l->host);
    free(l->text);
    free(l);
}

void route_destroy(route_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    route_t *r = *self_p;
    strmap_for_each_safe(n, &r->locating) {
        strmap_del(&r->locating, n);
        locating_free(STRMAP_ITEM(n, locating_t, node));
    }
    strmap_free(&r->locating);
    list_for_each_item_safe(p, &r->placed, placed_t, node) {
        list_remove(&r->placed, &p->node);
        free(p->host);
        free(p);
    }
    route_cache_destroy(&r->cache);
    free(r);
    *self_p = NULL;
}

static locating_t *locating_find(route_t *r, const char *conv)
{
    return STRMAP_ITEM(strmap_get(&r->locating, conv), locating_t, node);
}

static bool is_sandbox(const worker_entry_t *w)
{
    return ops_kind_has(w->kind, OPS_KIND_MANAGER) && w->host && *w->host;
}

static bool host_live(route_t *r, const char *host, int64_t now)
{
    list_for_each_item(w, &r->core->workers, worker_entry_t, node)
        if (is_sandbox(w) && core_worker_alive(r->core, w, now) && strcmp(w->host, host) == 0)
            return true;
    return false;
}

/* The one host with live managers, or NULL when there are none or more. */
static const char *only_host(route_t *r, int64_t now)
{
    const char *one = NULL;
    list_for_each_item(w, &r->core->workers, worker_entry_t, node)
        if (is_sandbox(w) && core_worker_alive(r->core, w, now)) {
            if (one && strcmp(one, w->host) != 0)
                return NULL;
            one = w->host;
        }
    return one;
}

static int live_managers(route_t *r, int64_t now)
{
    int n = 0;
    list_for_each_item(w, &r->core->workers, worker_entry_t, node)
        if (is_sandbox(w) && core_worker_alive(r->core, w, now))
            n++;
    return n;
}

/* Ask one manager whether it holds conv: a request of the hub's own, sent
 * to that worker, bounded by locate_wait_ms. */
static bool locate_ask(route_t *r, worker_entry_t *w, const char *conv, int64_t now)
{
    pending_t *p = calloc(1, sizeof *p);
    proto_msg_t *m = proto_msg_new(PROTO_REQUEST);
    if (!p || !m || proto_msg_set_kind(m, KIND_SANDBOX) || proto_msg_set_name(m, OP_LOCATE) ||
        proto_msg_set_conv(m, conv) || proto_msg_set_user(m, "") || !(p->host = strdup(w->host))) {
        proto_msg_destroy(&m);
        if (p)
            free(p->host);
        free(p);
        return false;
    }
    p->hub_id = ++r->core->next_id;
    m->id = p->hub_id;
    m->deadline_ms = proto_now_ms() + r->locate_wait_ms;
    p->req = m;
    p->locate = true;
    p->deadline = now + r->locate_wait_ms;
    p->wait_until = p->deadline;
    if (core_send(r->core, w->identity, m) != 0) {
        w->dead = true;
        proto_msg_destroy(&p->req);
        free(p->host);
        free(p);
        return false;
    }
    p->worker = w;
    w->inflight++;
    list_push_front(&r->core->pending, &p->node);
    return true;
}

/* Ask every live manager where l's chat is. */
static void locate_fanout(route_t *r, locating_t *l, int64_t now)
{
    free(l->found);
    free(l->silent);
    l->found = l->silent = NULL;
    l->retry_at = 0;
    list_for_each_item(w, &r->core->workers, worker_entry_t, node)
        if (is_sandbox(w) && core_worker_alive(r->core, w, now)) {
            if (locate_ask(r, w, l->conv, now))
                l->outstanding++;
            else if (!l->silent)
                l->silent = strdup(w->host);
        }
    if (l->outstanding == 0) {
        l->done = true;
        l->text = strdup(TX_HUB_LOCATE_NONE);
    }
}

/* Ask every live manager where conv is; the request waits behind it. */
static void locate_start(route_t *r, pending_t *p, const char *lost, int64_t now)
{
    locating_t *l = calloc(1, sizeof *l);
    if (!l || !(l->conv = strdup(p->req->conv)) || (lost && !(l->lost = strdup(lost)))) {
        if (l)
            locating_free(l);
        core_fail(r->core, p, PROTO_ST_INTERNAL, TX_HUB_OOM);
        return;
    }
    /* Fail-closed: only an operation whose row says so makes a sandbox. */
    l->placing = ops_has(p->req->kind, p->req->name, OPS_PLACES);
    strmap_put(&r->locating, &l->node, l->conv); /* none was there (route_admit) */
    p->held = true;
    locate_fanout(r, l, now);
}

bool route_admit(route_t *r, pending_t *p)
{
    const proto_msg_t *req = p->req;
    if (req->host) {
        p->host = strdup(req->host);
        return false;
    }
    if (!ops_kind_has(req->kind, OPS_KIND_MANAGER) || !req->conv || !*req->conv)
        return false;
    if (locating_find(r, req->conv)) {
        p->held = true; /* behind the first request's locate */
        return true;
    }
    int64_t now = proto_mono_ms();
    const char *host = route_cache_get(r->cache, req->conv);
    char lost[256] = "";
    if (host && host_live(r, host, now)) {
        p->host = strdup(host);
        return false;
    }
    if (host && live_managers(r, now) == 0) {
        /* No sandbox manager anywhere (one host's manager restarting):
         * wait worker_wait for one on its host, as a call always did. */
        p->host = strdup(host);
        return false;
    }
    if (host && !r->place_on_lost) {
        char text[ROUTE_TEXT_MAX];
        route_text_lost(text, sizeof text, host);
        core_fail(r->core, p, PROTO_ST_OK, text);
        return true;
    }
    if (host) {
        snprintf(lost, sizeof lost, "%s", host);
        route_cache_drop(r->cache, req->conv);
    }
    const char *only = only_host(r, now);
    if (only && now - r->born >= r->grace_ms && !known_unmanaged(r->core->known)) {
        /* One host: nowhere else to look or to place. */
        if (route_cache_put(r->cache, req->conv, only) != 0)
            log_warn("cannot cache the host of chat %s (out of memory)", req->conv);
        if (*lost) {
            char text[ROUTE_TEXT_MAX];
            route_text_moved(text, sizeof text, lost, only);
            p->note = strdup(text);
        }
        p->host = strdup(only);
        return false;
    }
    if (live_managers(r, now) == 0) {
        p->held = true; /* route_tick asks once a manager is there */
        return true;
    }
    locate_start(r, p, *lost ? lost : NULL, now);
    return true;
}

/* Placements made in the last ROUTE_PLACED_MS on host (older ones go). */
static int64_t placed_recently(route_t *r, const char *host, int64_t now)
{
    int64_t n = 0;
    list_for_each_item_safe(p, &r->placed, placed_t, node) {
        if (now - p->at > ROUTE_PLACED_MS) {
            list_remove(&r->placed, &p->node);
            free(p->host);
            free(p);
            continue;
        }
        if (strcmp(p->host, host) == 0)
            n++;
    }
    return n;
}

/* Choose a host for a new chat from the live managers' HELLO data, or
 * write the full-cluster text into l. */
static void place(route_t *r, locating_t *l, int64_t now)
{
    route_host_t hosts[64] = { { 0 } };
    size_t n = 0, n_draining = 0;
    list_for_each_item(w, &r->core->workers, worker_entry_t, node) {
        if (n >= 64)
            break;
        if (!is_sandbox(w) || !core_worker_alive(r->core, w, now))
            continue;
        bool seen = false;
        for (size_t i = 0; i < n; i++)
            seen = seen || strcmp(hosts[i].host, w->host) == 0;
        if (seen)
            continue;
        route_host_t *h = &hosts[n++];
        h->host = w->host;
        h->running = proto_map_int(&w->data, DATA_RUNNING, 0) + placed_recently(r, w->host, now);
        h->max_running = proto_map_int(&w->data, DATA_MAX_RUNNING, 0);
        h->mem_free_kb = proto_map_int(&w->data, DATA_MEM_FREE_KB, -1);
        h->draining = proto_map_int(&w->data, DATA_DRAINING, 0) != 0;
        n_draining += h->draining;
    }
    route_pick_t why;
    int i = route_place_pick(hosts, n, &why);
    if (i < 0) {
        char text[ROUTE_TEXT_MAX];
        route_text_full(text, sizeof text, n - n_draining, n_draining);
        l->text = strdup(text);
        log_warn("no sandbox host has room for chat %s (%zu hosts, %zu draining)", l->conv, n,
                 n_draining);
        return;
    }
    l->host = strdup(hosts[i].host);
    placed_t *pl = calloc(1, sizeof *pl);
    if (pl && (pl->host = strdup(hosts[i].host))) {
        pl->at = now;
        list_push_front(&r->placed, &pl->node);
    } else {
        free(pl);
    }
    log_info("placed chat %s on host %s (%" PRId64 " of %" PRId64 " running)", l->conv,
             hosts[i].host, hosts[i].running, hosts[i].max_running);
}

/* Every answer is in: decide where the chat's requests go. */
static void locate_resolve(route_t *r, locating_t *l)
{
    int64_t now = proto_mono_ms();
    if (!l->found && !l->silent && l->placing && now - r->born < r->grace_ms) {
        /* Found nowhere, but a host that holds it may not have said HELLO
         * yet since this gateway started: ask again once they all have. */
        l->retry_at = r->born + r->grace_ms;
        return;
    }
    l->done = true;
    if (l->found) {
        l->host = strdup(l->found);
    } else if (l->silent) {
        char text[ROUTE_TEXT_MAX];
        route_text_unanswered(text, sizeof text, l->silent);
        l->text = strdup(text);
        return;
    } else if (l->placing && known_unmanaged(r->core->known) && !r->place_on_lost) {
        /* A host the hub remembers has had no manager since it started:
         * it may hold this chat. */
        char text[ROUTE_TEXT_MAX];
        route_text_unknown(text, sizeof text, known_unmanaged(r->core->known));
        l->text = strdup(text);
        log_warn("chat %s found on no live host while host %s is unreachable: refused", l->conv,
                 known_unmanaged(r->core->known));
        return;
    } else if (l->placing) {
        const char *gone = known_unmanaged(r->core->known);
        if (gone && !l->lost) {
            l->lost = strdup(gone);
            l->maybe = true;
        }
        place(r, l, now);
    }
    if (l->host && route_cache_put(r->cache, l->conv, l->host) != 0)
        log_warn("cannot cache the host of chat %s (out of memory)", l->conv);
}

void route_locate_done(void *route, pending_t *p, const proto_msg_t *reply)
{
    route_t *r = route;
    locating_t *l = p->req->conv ? locating_find(r, p->req->conv) : NULL;
    if (!l || l->done)
        return;
    l->outstanding--;
    bool answered = reply->status == PROTO_ST_OK && !reply->is_error;
    if (answered && proto_map_int(&reply->data, DATA_FOUND, 0)) {
        if (l->found && strcmp(l->found, p->host) != 0)
            log_warn("chat %s has a sandbox on hosts %s and %s: using %s", l->conv, l->found,
                     p->host, l->found);
        else if (!l->found)
            l->found = strdup(p->host);
    } else if (!answered && !l->silent) {
        l->silent = strdup(p->host);
    }
    if (l->outstanding <= 0)
        locate_resolve(r, l);
}

/* Release one held request of a located chat: send it where the chat is,
 * or end it with the outcome's text. */
static void release(route_t *r, pending_t *p, locating_t *l, int64_t now)
{
    p->held = false;
    p->wait_until = now + r->core->worker_wait_ms;
    if (l->text) {
        core_fail(r->core, p, PROTO_ST_OK, l->text);
        return;
    }
    if (l->host) {
        free(p->host);
        p->host = strdup(l->host);
        if (l->lost && !p->note) {
            char text[ROUTE_TEXT_MAX];
            if (l->maybe)
                route_text_maybe_moved(text, sizeof text, l->lost, l->host);
            else
                route_text_moved(text, sizeof text, l->lost, l->host);
            p->note = strdup(text);
            free(l->lost);
            l->lost = NULL; /* told once */
        }
    }
    core_dispatch(r->core, p);
}

/* The oldest held request matching: of a chat whose locate is done
 * (want_done), or of a chat no locate is under way for. */
static pending_t *oldest_held(route_t *r, bool want_done, locating_t **lp)
{
    pending_t *hit = NULL;
    locating_t *hl = NULL;
    list_for_each_item(p, &r->core->pending, pending_t, node) {
        if (!p->held)
            continue;
        locating_t *l = locating_find(r, p->req->conv);
        if (want_done ? (l && l->done) : !l) {
            hit = p; /* the list is newest first: the last match is oldest */
            hl = l;
        }
    }
    *lp = hl;
    return hit;
}

void route_tick(route_t *r)
{
    int64_t now = proto_mono_ms();
    locating_t *l;
    pending_t *p;
    /* Newest first, as the asks always went out. */
    for (list_node_t *n = r->locating.all.tail; n; n = n->prev) {
        l = STRMAP_ITEM(LIST_ITEM(n, strmap_node_t, order), locating_t, node);
        if (l->retry_at && now >= l->retry_at && l->outstanding <= 0)
            locate_fanout(r, l, now);
    }
    while ((p = oldest_held(r, true, &l)))
        release(r, p, l, now);
    strmap_for_each_safe(n, &r->locating) {
        l = STRMAP_ITEM(n, locating_t, node);
        if (l->done) {
            strmap_del(&r->locating, n);
            locating_free(l);
        }
    }
    /* Held with no manager to ask: ask once one is there, or give up as a
     * request with no worker does. */
    bool managers = live_managers(r, now) > 0;
    while ((p = oldest_held(r, false, &l))) {
        if (managers) {
            p->held = false;
            if (!route_admit(r, p))
                core_dispatch(r->core, p);
        } else if (now >= p->wait_until) {
            core_fail(r->core, p, PROTO_ST_NO_WORKER, TX_HUB_NO_WORKER);
        } else {
            break;
        }
    }
}
