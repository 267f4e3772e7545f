/* zap.c -- the hub's ZAP handler (see zap.h).
 *
 * An actor (its own thread, as czmq's zauth): a REP socket on the ZAP
 * endpoint and the actor's pipe, polled together.  A request is the
 * frames version, request id, domain, address, routing id, mechanism and
 * the credentials (for CURVE, the client's 32-byte public key); the reply
 * is version, request id, status code, status text, user id, metadata.
 */
#include "hub/zap.h"

#include <string.h>

#include "common/log.h"
#include "hub/refusals.h"

#define ZAP_ENDPOINT "inproc://zeromq.zap.01"

typedef struct {
    zsock_t *rep;
    zcertstore_t *store;
    refusals_t *refusals;
    const char *allowed;
} zap_t;

/* Send the reply of one request. */
static void zap_reply(zap_t *z, const char *version, const char *seq, const char *code,
                      const char *text, const char *user)
{
    zmsg_t *r = zmsg_new();
    zmsg_addstr(r, version);
    zmsg_addstr(r, seq);
    zmsg_addstr(r, code);
    zmsg_addstr(r, text);
    zmsg_addstr(r, user);
    zmsg_addmem(r, "", 0);
    zmsg_send(&r, z->rep);
}

/* One request: the key is let in when its certificate is in allowed/. */
static void zap_handle(zap_t *z, zmsg_t *req)
{
    char *version = zmsg_popstr(req), *seq = zmsg_popstr(req), *domain = zmsg_popstr(req);
    char *address = zmsg_popstr(req), *routing = zmsg_popstr(req), *mech = zmsg_popstr(req);
    zframe_t *cred = zmsg_pop(req);
    char key[41] = "";
    bool curve = mech && strcmp(mech, "CURVE") == 0;
    if (curve && cred && zframe_size(cred) == 32)
        zmq_z85_encode(key, zframe_data(cred), 32);
    bool ok = *key && zcertstore_lookup(z->store, key);
    if (version && seq) {
        if (ok) {
            zap_reply(z, version, seq, "200", "OK", key);
        } else {
            zap_reply(z, version, seq, "400", "not in the allow list", "");
            char rkey[64];
            snprintf(rkey, sizeof rkey, "zap:%s", *key ? key : "?");
            refusals_log(z->refusals, rkey,
                         "refused a handshake from %.64s with the key %s: it is not in the hub's "
                         "allow list %s (a key made by another talkback-keys, or one removed "
                         "from it)",
                         address && *address ? address : "an unknown address",
                         *key    ? key
                         : curve ? "(malformed)"
                         : mech  ? mech
                                 : "?",
                         z->allowed);
        }
    }
    zstr_free(&version);
    zstr_free(&seq);
    zstr_free(&domain);
    zstr_free(&address);
    zstr_free(&routing);
    zstr_free(&mech);
    zframe_destroy(&cred);
}

static void zap_free(zap_t *z)
{
    zsock_destroy(&z->rep);
    zcertstore_destroy(&z->store);
    refusals_destroy(&z->refusals);
    free((char *)z->allowed);
    free(z);
}

/* The actor: bound, then two signals (zactor_new's handshake, then
 * whether it is bound), then requests until $TERM. */
static void zap_actor(zsock_t *pipe, void *args)
{
    zap_t *z = args;
    z->rep = zsock_new(ZMQ_REP);
    bool bound = z->rep && zsock_bind(z->rep, ZAP_ENDPOINT) == 0;
    if (!bound)
        log_error("cannot bind the hub's ZAP handler on " ZAP_ENDPOINT ": %s",
                  zmq_strerror(zmq_errno()));
    zsock_signal(pipe, 0);
    zsock_signal(pipe, bound ? 0 : 1);
    zpoller_t *p = bound ? zpoller_new(pipe, z->rep, NULL) : NULL;
    while (p) {
        void *which = zpoller_wait(p, -1);
        if (which == pipe) {
            zmsg_t *cmd = zmsg_recv(pipe);
            char *verb = cmd ? zmsg_popstr(cmd) : NULL;
            bool term = !verb || strcmp(verb, "$TERM") == 0;
            zstr_free(&verb);
            zmsg_destroy(&cmd);
            if (term)
                break;
        } else if (which == z->rep) {
            zmsg_t *req = zmsg_recv(z->rep);
            if (req)
                zap_handle(z, req);
            zmsg_destroy(&req);
        } else if (zpoller_terminated(p)) {
            break;
        }
    }
    zpoller_destroy(&p);
    zap_free(z);
}

zactor_t *zap_new(const char *allowed, int64_t refusal_log_ms)
{
    zap_t *z = calloc(1, sizeof *z);
    if (!z)
        return NULL;
    z->store = zcertstore_new(allowed);
    z->refusals = refusals_new(refusal_log_ms);
    z->allowed = strdup(allowed);
    if (!z->store || !z->refusals || !z->allowed) {
        zap_free(z);
        return NULL;
    }
    /* From here the actor owns z (czmq starts its thread or aborts). */
    zactor_t *a = zactor_new(zap_actor, z);
    if (a && zsock_wait(a) != 0)
        zactor_destroy(&a);
    return a;
}
