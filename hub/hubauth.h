/* hubauth.h -- the hub's door: CURVE on a tcp:// hub, the folder check of
 * an ipc:// hub, and who sent each message.
 *
 * On a tcp:// endpoint the hub is a CURVE server with the key in
 * HUB_KEYS/hub.key_secret, and a ZAP handler (czmq's zauth) admits only the
 * client keys in HUB_KEYS/allowed/: a peer with no key or another key
 * never completes its handshake, so none of its messages arrive.  Each
 * message that does arrive carries the sender's public key (the ZAP
 * User-Id); the hub looks it up in its own copy of the allow list, so a
 * certificate removed from allowed/ stops counting at its next message.
 *
 * A sandbox manager's or reaper's certificate may name the one host it is
 * for (hubkeys.h): hubauth_host_ok says whether a key may act for a host,
 * from its own `host`, or for a key that names none, from the hosts the
 * other certificates of its kinds name.
 *
 * With hub_insecure, or on ipc:// and inproc:// (keyless: the folder of
 * the socket is the boundary, checked here), every peer may do anything,
 * as talkback always did on a private socket.
 */
#ifndef TALKBACK_HUBAUTH_H
#define TALKBACK_HUBAUTH_H

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct hubauth hubauth_t;

/* What a peer's certificate allows.  The strings belong to the allow list
 * and are valid until the next hubauth_peer call. */
typedef struct {
    bool any;            /* keyless or insecure hub: everything */
    const char *name;    /* the certificate's name, for logs */
    const char *kinds;   /* kinds it may register as */
    const char *submit;  /* KIND:NAME requests it may send */
    const char *host;    /* the one host it may act for, or NULL */
    const char *key;     /* its public key (Z85), or "" */
    const char *address; /* where it connects from (logs), or NULL */
} hubauth_peer_t;

/* Set up router (not yet bound) for endpoint, with the keys in keys_dir
 * (hub_keys), or none when insecure (hub_insecure).  0 with *out NULL for
 * a keyless or insecure hub, 0 with *out set for a CURVE hub, -1 (and a
 * log line that says what to do) when the hub must not start.  One CURVE
 * hub per process at a time: the ZAP handler's endpoint is process-wide.
 * refusal_log_ms: a refused handshake is logged at most once per key in
 * that time (zap.h). */
int hubauth_new(zsock_t *router, const char *endpoint, bool insecure, const char *keys_dir,
                int64_t refusal_log_ms, hubauth_t **out);
/* Stop the ZAP handler; after the socket is closed. */
void hubauth_destroy(hubauth_t **self_p);

/* Who sent frame (any frame of a received message).  false: an unknown
 * sender, whose message is to be dropped. */
bool hubauth_peer(hubauth_t *a, zframe_t *frame, hubauth_peer_t *peer);
/* May this peer register as kind / send a request to kind named name? */
bool hubauth_may_register(const hubauth_peer_t *peer, const char *kind);
bool hubauth_may_submit(const hubauth_peer_t *peer, const char *kind, const char *name);
/* May this peer act for host as kind (a HELLO as kind naming host, or a
 * request naming host)?  A key made for a host: only that one.  A sandbox
 * or reaper key that names none: any host no other certificate of that
 * kind in the allow list names.  Judges' and talkbackctl's keys: any.
 * false with a sentence in why (for the log) when not. */
bool hubauth_host_ok(hubauth_t *a, const hubauth_peer_t *peer, const char *kind, const char *host,
                     char *why, size_t whylen);

#endif
