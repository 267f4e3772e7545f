/* route.h -- which Docker host holds each chat: the hub's routing and
 * placement of sandbox requests.
 *
 * A gateway may have several sandbox managers, one per Docker host (the
 * "host" of their HELLO data).  A request of kind "sandbox" for a chat
 * must reach the manager holding that chat's container.  Docker is the
 * only record: the hub keeps a cache conversation -> host, and on a miss
 * asks every live manager "locate" (by the container's deterministic name
 * and label), all at once, each answer a reply on the hub's one socket,
 * bounded by locate_wait_ms.  Found: cached, sent there.  Found nowhere:
 * placed on the live, non-draining host with the most room under its caps
 * (fewest running relative to max_running, then most free memory), the
 * cache written before the request goes.  Requests of a chat that is being
 * located or placed wait behind the first one, so two racing first calls
 * make one sandbox.
 *
 * A chat whose cached host has no live manager gets a clear text
 * (on_host_lost = refuse), or starts over elsewhere (place) with a line
 * saying its files stayed behind.  A request naming a host (the reaper's)
 * goes to that host only.  With one live host there is nowhere else to
 * look or place: a chat's first call goes straight there, as with no
 * routing at all.
 *
 * queue.c calls the hub-side functions on its thread; they act on the
 * hub's requests through core.h only.  The pure parts (placement choice,
 * the cache, the texts) are unit-tested.
 */
#ifndef TALKBACK_ROUTE_H
#define TALKBACK_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "proto/proto.h"

typedef struct route route_t;
struct core;
struct pending;

/* ---- pure parts ---- */

/* One candidate host for a new chat, from its manager's HELLO data. */
typedef struct {
    const char *host;
    int64_t running;     /* running sandboxes, placements just made included */
    int64_t max_running; /* its cap; 0 = none */
    int64_t mem_free_kb; /* -1 unknown */
    bool draining;
} route_host_t;

typedef enum {
    ROUTE_PICKED = 0,
    ROUTE_FULL,   /* every host is at its cap or draining */
    ROUTE_NO_HOST /* no host at all */
} route_pick_t;

/* The index of the host with the most room, or -1 with *why set. */
int route_place_pick(const route_host_t *hosts, size_t n, route_pick_t *why);

/* The cache conversation -> host.  Past max entries it starts again
 * empty: it is only a cache, and each chat is found again on its next
 * call. */
typedef struct route_cache route_cache_t;
route_cache_t *route_cache_new(size_t max);
void route_cache_destroy(route_cache_t **self_p);
/* The host of conv, or NULL; valid until the next put or drop. */
const char *route_cache_get(const route_cache_t *c, const char *conv);
int route_cache_put(route_cache_t *c, const char *conv, const char *host);
void route_cache_drop(route_cache_t *c, const char *conv);
size_t route_cache_size(const route_cache_t *c);

/* The texts a call gets (exact sentences; tests match their starts). */
void route_text_lost(char *out, size_t len, const char *host);
void route_text_moved(char *out, size_t len, const char *old_host, const char *new_host);
/* A chat found on no live host while host (remembered, known.h) has had
 * no manager since the hub started: refused (on_host_lost = refuse)... */
void route_text_unknown(char *out, size_t len, const char *host);
/* ... or placed elsewhere (place): the note before its reply. */
void route_text_maybe_moved(char *out, size_t len, const char *old_host, const char *new_host);
void route_text_full(char *out, size_t len, size_t n_full, size_t n_draining);
void route_text_unanswered(char *out, size_t len, const char *host);

/* ---- the hub's side (its thread only) ---- */

/* NULL when out of memory.  For grace_ms from its start (the heartbeat
 * timeout: by then every live manager has said HELLO) the hub places no
 * new chat, so a chat whose host has not joined yet is not given a new
 * sandbox elsewhere. */
route_t *route_new(struct core *core, int locate_wait_ms, int grace_ms, bool place_on_lost,
                   size_t cache_max);
void route_destroy(route_t **self_p);
/* A new request: false when it may be dispatched now (p->host set when it
 * must go to one host); true when route.c holds it (p->held) or ended it.
 * Only an operation whose row says so (OPS_PLACES, proto/optable.h) may
 * make a sandbox for a chat found on no host: fail-closed. */
bool route_admit(route_t *r, struct pending *p);
/* The reply to one of the hub's own locate questions (p->locate): a
 * core_locate_fn (core.h) with the route_t as ctx. */
void route_locate_done(void *route, struct pending *p, const proto_msg_t *reply);
/* Release or end the requests whose chat's host is now known; called on
 * every turn of the hub thread, after the socket and the clock. */
void route_tick(route_t *r);

#endif
