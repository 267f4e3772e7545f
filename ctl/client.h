/* client.h -- talkbackctl's side of the hub: one DEALER socket that sends
 * requests and waits for their replies, as a judge does, but never says
 * HELLO (it is no worker).
 *
 * On a tcp:// hub the socket is a CURVE client: it checks the hub's key
 * (HUB_KEYS/hub.key) and presents a certificate of kind `ctl`
 * (HUB_KEYS/ctl.key_secret, or the file hub_cert names), whose `submit`
 * metadata lets it ask for hosts, lists, drain, undrain, stop, rm and
 * locate, and nothing else.  On an ipc:// hub the socket's folder is the
 * authentication: only the service's user can open it.
 *
 * ZeroMQ connects in the background and says nothing when the hub is not
 * there, so ctl_client_new watches the connection (a socket monitor) and
 * fails with a sentence that says what is wrong: no hub at that address,
 * the hub refused the key, no answer within ctl_connect_timeout.
 */
#ifndef TALKBACK_CTL_CLIENT_H
#define TALKBACK_CTL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/proto.h"

typedef struct ctl_client ctl_client_t;

/* Where the hub is and how to prove who we are (main.c fills it from
 * hub_endpoint, ctl_connect_timeout, hub_insecure, hub_keys, hub_cert). */
typedef struct {
    const char *endpoint;
    int connect_ms;        /* how long to wait for the handshake */
    bool insecure;         /* a tcp:// hub without CURVE */
    const char *keys_dir;  /* the hub's public key and ctl's secret */
    const char *cert_path; /* ctl's certificate elsewhere; "" = in keys_dir */
} ctl_client_opts_t;

/* Connect to the hub with those keys and wait up to connect_ms for the
 * handshake.  NULL with a sentence in err when it cannot. */
ctl_client_t *ctl_client_new(const ctl_client_opts_t *o, char *err, size_t errlen);
void ctl_client_destroy(ctl_client_t **self_p);

/* Send req (taken) and wait up to timeout_ms for its reply.  The reply is
 * the caller's; NULL with a sentence in err when none came. */
proto_msg_t *ctl_client_call(ctl_client_t *c, proto_msg_t *req, int timeout_ms, char *err,
                             size_t errlen);

#endif
