/* peers.h -- what the hub checks of each peer beyond its key's kinds and
 * requests: the host it acts for, one sandbox manager per host, replies
 * it had no request for.  Every refusal is logged through the hub's
 * per-key limiter (refusals.h), so one noisy peer hides no other.
 *
 *   - A HELLO naming a host the key may not act for (hubauth_host_ok)
 *     makes no worker and refreshes none.
 *   - A second sandbox manager for a host that has a live one: the older
 *     is asked whether it is still there (a frame it ignores, sent to its
 *     connection).  Gone (its connection closed: it was the same manager,
 *     restarted): it is retired and the newer joins at once.  Still
 *     connected: the newer is refused -- one manager per Docker host --
 *     and joins once the older has gone silent.  No flapping.
 *   - A request that names a host its key may not act for is refused; one
 *     from a key made for a host that names none is served on that host.
 *   - A reply from a peer that is no worker, or to a request given to
 *     another worker, is dropped and logged (forged); a late reply to a
 *     request that already ended is dropped quietly.
 *
 * Hub thread only; acts through core.h, never back through queue.c.
 */
#ifndef TALKBACK_PEERS_H
#define TALKBACK_PEERS_H

#include <stdbool.h>
#include <stddef.h>

#include "hub/hubauth.h"
#include "proto/proto.h"

struct core;
struct worker_entry;

/* May this HELLO count?  w: the peer's worker entry, NULL when it is not
 * one yet (then a manager of the same host may be retired, or the HELLO
 * refused).  Logs what it refuses. */
bool peers_hello_ok(struct core *c, zframe_t *identity, const proto_msg_t *m,
                    const hubauth_peer_t *peer, struct worker_entry *w);

/* May this request go on?  NULL when yes (m->host may have been set to
 * the key's host); otherwise the text to refuse it with (logged). */
const char *peers_request_ok(struct core *c, proto_msg_t *m, const hubauth_peer_t *peer);

/* A reply that matched no request given to its sender: log it when it is
 * forged rather than late. */
void peers_stray_reply(struct core *c, zframe_t *identity, const proto_msg_t *m,
                       const hubauth_peer_t *peer);

/* Log a refusal at most once per refusal_log_ms for (what, peer's key). */
void peers_refusal(struct core *c, const char *what, const hubauth_peer_t *peer, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));

#endif
