/* client.c -- talkbackctl's connection to the hub (see client.h).
 *
 * One socket, one request at a time: talkbackctl asks, waits, prints.
 * Replies are matched by id, so a late reply to an earlier request that
 * timed out is dropped rather than taken for the next one's.
 */
#include "ctl/client.h"

#include <czmq.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hub/hubkeys.h"

struct ctl_client {
    zsock_t *dealer;
    zsock_t *monitor;
    char *endpoint;
    uint64_t next_id;
};

void ctl_client_destroy(ctl_client_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ctl_client_t *c = *self_p;
    zsock_destroy(&c->monitor);
    zsock_destroy(&c->dealer);
    free(c->endpoint);
    free(c);
    *self_p = NULL;
}

/* An ipc:// hub: its folder must be this user's and closed to others, and
 * the socket file must be there. */
static int ctl_check_ipc(const char *endpoint, char *err, size_t errlen)
{
    if (hubkeys_ipc_dir_check(endpoint, false, err, errlen) < 0)
        return -1;
    struct stat st;
    if (strncmp(endpoint, "ipc://", 6) == 0 && stat(endpoint + 6, &st) < 0) {
        if (errno == ENOENT)
            snprintf(err, errlen,
                     "no hub at %s (the socket is not there): is talkback-gateway "
                     "running, with this hub_endpoint?",
                     endpoint);
        else
            snprintf(err, errlen,
                     "cannot open the hub at %s: %s (run talkbackctl as the user "
                     "that runs talkback: the hub's folder is that user's alone)",
                     endpoint, strerror(errno));
        return -1;
    }
    return 0;
}

/* Load a certificate file; NULL with what to do in err. */
static zcert_t *ctl_cert(const char *path, const char *what, char *err, size_t errlen)
{
    zcert_t *c = access(path, R_OK) == 0 ? zcert_load(path) : NULL;
    if (!c)
        snprintf(err, errlen,
                 "cannot read %s %s (%s): `talkback-keys DIR` on the gateway's host "
                 "makes it (ctl is in its default set); copy %s and ctl%s into hub_keys here, or "
                 "name the certificate with --hub_cert",
                 what, path, access(path, R_OK) == 0 ? "not a certificate" : strerror(errno),
                 HUBKEYS_SERVER_PUBLIC, HUBKEYS_SECRET_SUFFIX);
    return c;
}

/* CURVE on a tcp:// hub, the folder check on an ipc:// one. */
static int ctl_secure(ctl_client_t *c, const ctl_client_opts_t *o, char *err, size_t errlen)
{
    if (hubkeys_keyless(c->endpoint))
        return ctl_check_ipc(c->endpoint, err, errlen);
    if (o->insecure)
        return 0;
    char server[4096], own[4096];
    const char *dir = o->keys_dir ? o->keys_dir : "";
    const char *path = o->cert_path ? o->cert_path : "";
    if (hubkeys_path(server, sizeof server, dir, HUBKEYS_SERVER_PUBLIC) < 0 ||
        hubkeys_path(own, sizeof own, dir, "ctl" HUBKEYS_SECRET_SUFFIX) < 0) {
        snprintf(err, errlen, "hub_keys %s is too long", dir);
        return -1;
    }
    zcert_t *hub = ctl_cert(server, "the hub's public key", err, errlen);
    zcert_t *mine = hub ? ctl_cert(*path ? path : own, "talkbackctl's certificate", err, errlen)
                        : NULL;
    if (!mine) {
        zcert_destroy(&hub);
        return -1;
    }
    zcert_apply(mine, c->dealer);
    zsock_set_curve_serverkey(c->dealer, zcert_public_txt(hub));
    zcert_destroy(&hub);
    zcert_destroy(&mine);
    return 0;
}

/* Wait for the handshake's outcome, up to ms.  0 when through. */
static int ctl_wait_handshake(ctl_client_t *c, int ms, char *err, size_t errlen)
{
    int64_t until = proto_mono_ms() + ms;
    bool retried = false;
    for (;;) {
        long left = (long)(until - proto_mono_ms());
        if (left <= 0)
            break;
        zmq_pollitem_t it = { zsock_resolve(c->monitor), 0, ZMQ_POLLIN, 0 };
        if (zmq_poll(&it, 1, left) <= 0)
            continue;
        zmsg_t *ev = zmsg_recv(c->monitor);
        zframe_t *f = ev ? zmsg_first(ev) : NULL;
        uint16_t event = 0;
        if (f && zframe_size(f) >= 6)
            memcpy(&event, zframe_data(f), sizeof event);
        zmsg_destroy(&ev);
        if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
            return 0;
        if (event == ZMQ_EVENT_CONNECT_RETRIED || event == ZMQ_EVENT_CLOSED) {
            /* Refused (nothing listens there) or closed before the
             * handshake: libzmq would try again forever, quietly. */
            retried = true;
            break;
        }
        if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
            snprintf(err, errlen,
                     "the hub at %s refused talkbackctl's key: its public certificate "
                     "is not in the gateway's allow list (HUB_KEYS/%s/ctl%s; `talkback-keys DIR` "
                     "makes it)",
                     c->endpoint, HUBKEYS_ALLOWED, HUBKEYS_PUBLIC_SUFFIX);
            return -1;
        }
        if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
            event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) {
            snprintf(err, errlen,
                     "no secure handshake with the hub at %s: check that hub_keys "
                     "holds this hub's %s (and that the hub has keys)",
                     c->endpoint, HUBKEYS_SERVER_PUBLIC);
            return -1;
        }
    }
    if (retried)
        snprintf(err, errlen,
                 "the hub at %s is not reachable (connection refused or closed): is "
                 "talkback-gateway running there, and is hub_endpoint right?",
                 c->endpoint);
    else
        snprintf(err, errlen,
                 "the hub at %s is not reachable: no connection within %d ms (is "
                 "talkback-gateway running there, and is hub_endpoint right?)",
                 c->endpoint, ms);
    return -1;
}

ctl_client_t *ctl_client_new(const ctl_client_opts_t *o, char *err, size_t errlen)
{
    const char *endpoint = o->endpoint;
    int connect_ms = o->connect_ms;
    static int serial;
    ctl_client_t *c = calloc(1, sizeof *c);
    if (!c || !(c->endpoint = strdup(endpoint)) || !(c->dealer = zsock_new(ZMQ_DEALER))) {
        snprintf(err, errlen, "out of memory");
        ctl_client_destroy(&c);
        return NULL;
    }
    zsock_set_linger(c->dealer, 0);
    zsock_set_sndtimeo(c->dealer, 1000);
    if (ctl_secure(c, o, err, errlen) < 0) {
        ctl_client_destroy(&c);
        return NULL;
    }
    char ep[96];
    snprintf(ep, sizeof ep, "inproc://talkbackctl-monitor-%d-%d", (int)getpid(), ++serial);
    int events = ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                 ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                 ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_CLOSED;
    if (zmq_socket_monitor(zsock_resolve(c->dealer), ep, events) < 0 ||
        !(c->monitor = zsock_new_pair(ep)) || zsock_connect(c->dealer, "%s", endpoint) < 0) {
        snprintf(err, errlen, "cannot connect to the hub at %s: %s", endpoint,
                 zmq_strerror(zmq_errno()));
        ctl_client_destroy(&c);
        return NULL;
    }
    if (ctl_wait_handshake(c, connect_ms, err, errlen) < 0) {
        ctl_client_destroy(&c);
        return NULL;
    }
    return c;
}

/* Read frames until the reply to id, or until the monotonic time until. */
static proto_msg_t *ctl_read_reply(ctl_client_t *c, uint64_t id, int64_t until)
{
    for (;;) {
        long left = (long)(until - proto_mono_ms());
        if (left <= 0)
            return NULL;
        zmq_pollitem_t it = { zsock_resolve(c->dealer), 0, ZMQ_POLLIN, 0 };
        if (zmq_poll(&it, 1, left) <= 0)
            continue;
        zframe_t *f = zframe_recv(c->dealer);
        proto_msg_t *m = NULL;
        if (f && proto_decode(zframe_data(f), zframe_size(f), &m) == PROTO_OK &&
            m->type == PROTO_REPLY && m->id == id) {
            zframe_destroy(&f);
            return m;
        }
        proto_msg_destroy(&m);
        zframe_destroy(&f);
    }
}

proto_msg_t *ctl_client_call(ctl_client_t *c, proto_msg_t *req, int timeout_ms, char *err,
                             size_t errlen)
{
    req->type = PROTO_REQUEST;
    req->id = ++c->next_id;
    req->deadline_ms = proto_now_ms() + timeout_ms;
    char *buf = NULL;
    size_t len = 0;
    proto_msg_t *r = NULL;
    if (proto_encode(req, &buf, &len) != PROTO_OK) {
        snprintf(err, errlen, "out of memory");
    } else {
        zframe_t *f = zframe_new(buf, len);
        if (!f || zframe_send(&f, c->dealer, 0) < 0) {
            zframe_destroy(&f);
            snprintf(err, errlen, "cannot send to the hub at %s", c->endpoint);
        } else if (!(r = ctl_read_reply(c, req->id, proto_mono_ms() + timeout_ms + 1000))) {
            snprintf(err, errlen, "no answer from the hub at %s within %d ms", c->endpoint,
                     timeout_ms);
        }
    }
    free(buf);
    proto_msg_destroy(&req);
    return r;
}
