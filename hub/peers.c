/* peers.c -- the hub's checks of each peer's host, managers and replies
 * (see peers.h).
 */
#include "hub/peers.h"
#include "hub/core.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "hub/hubkeys.h"
#include "hub/refusals.h"
#include "proto/ops.h"
#include "proto/optable.h"
#include "talk/texts.h"

void peers_refusal(core_t *c, const char *what, const hubauth_peer_t *peer, const char *fmt, ...)
{
    char key[128], line[640];
    snprintf(key, sizeof key, "%s:%s", what,
             peer->key && *peer->key ? peer->key
             : peer->name            ? peer->name
                                     : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (peer->address && *peer->address)
        refusals_log(c->refusals, key, "%s [from %.64s]", line, peer->address);
    else
        refusals_log(c->refusals, key, "%s", line);
}

/* Is the peer behind identity still connected?  A HELLO frame of the hub
 * (workers ignore it) is handed to its connection: with ROUTER_MANDATORY,
 * a connection that closed is EHOSTUNREACH at once; one that is there but
 * full (EAGAIN) counts as there. */
static bool peers_connected(core_t *c, zframe_t *identity)
{
    proto_msg_t *h = proto_msg_new(PROTO_HELLO);
    if (!h || proto_msg_set_kind(h, KIND_HUB) || proto_msg_set_name(h, KIND_HUB)) {
        proto_msg_destroy(&h);
        return true;
    }
    int rc = core_send(c, identity, h);
    int err = zmq_errno();
    proto_msg_destroy(&h);
    return rc == 0 || err != EHOSTUNREACH;
}

/* A new sandbox manager of host: another live one there is retired when
 * its connection is gone (an earlier run of the same manager), else the
 * new one is refused.  true when the new one may join. */
static bool peers_one_manager(core_t *c, zframe_t *identity, const proto_msg_t *m,
                              const hubauth_peer_t *peer, const char *host)
{
    int64_t now = proto_mono_ms();
    list_for_each_item(o, &c->workers, worker_entry_t, node) {
        if (!ops_kind_has(o->kind, OPS_KIND_MANAGER) || !o->host || strcmp(o->host, host) != 0 ||
            !core_worker_alive(c, o, now))
            continue;
        if (!peers_connected(c, o->identity)) {
            pthread_mutex_lock(&c->wmu);
            o->dead = true;
            pthread_mutex_unlock(&c->wmu);
            log_info("worker %s (sandbox) on host %s is replaced by %s: its connection is gone, "
                     "retired",
                     o->name, o->host, m->name ? m->name : "?");
            continue;
        }
        peers_refusal(c, "manager", peer,
                      "refused HELLO as sandbox for host %.64s from %.64s (key %s): host %.64s "
                      "already has a connected sandbox manager, %s, and one Docker host has "
                      "one manager; this one joins once that one is gone. Two machines with one "
                      "host_name? Give each its own host_name and key (talkback-keys DIR "
                      "sandbox HOST)",
                      host, m->name ? m->name : "?", peer->name ? peer->name : "?", host, o->name);
        return false;
    }
    (void)identity;
    return true;
}

bool peers_hello_ok(core_t *c, zframe_t *identity, const proto_msg_t *m, const hubauth_peer_t *peer,
                    worker_entry_t *w)
{
    const char *kind = m->kind ? m->kind : "";
    if (!hubauth_may_register(peer, kind)) {
        peers_refusal(c, "kind", peer,
                      "refused HELLO as %.40s from the key %s (it may register as: %s)",
                      *kind ? kind : "?", peer->name, peer->kinds ? peer->kinds : "nothing");
        return false;
    }
    const char *host = proto_map_str(&m->data, DATA_HOST, NULL);
    char why[400];
    if (!hubauth_host_ok(c->auth, peer, kind, host, why, sizeof why)) {
        peers_refusal(c, "host", peer,
                      "refused HELLO as %.40s for host %.64s from %.64s: %s; nothing is routed "
                      "to it",
                      kind, host && *host ? host : "(none)", m->name ? m->name : "?", why);
        return false;
    }
    if (w || !ops_kind_has(kind, OPS_KIND_MANAGER) || !host || !*host)
        return true;
    return peers_one_manager(c, identity, m, peer, host);
}

const char *peers_request_ok(core_t *c, proto_msg_t *m, const hubauth_peer_t *peer)
{
    if (peer->any)
        return NULL;
    bool per_host = peer->host && *peer->host;
    /* The kind whose hosts the key's are: one made for a host (a
     * manager's or a reaper's; the last of the table's that it holds). */
    const char *kind = "";
    size_t nk;
    const ops_kind_t *kinds = ops_kinds(&nk);
    for (size_t i = 0; i < nk; i++)
        if ((kinds[i].flags & OPS_KIND_PER_HOST) && hubkeys_list_has(peer->kinds, kinds[i].name))
            kind = kinds[i].name;
    char why[400];
    if (m->host && (per_host || *kind) &&
        !hubauth_host_ok(c->auth, peer, kind, m->host, why, sizeof why)) {
        peers_refusal(c, "request-host", peer,
                      "refused a request %.40s %.40s for host %.64s from the key %s: %s",
                      m->kind ? m->kind : "?", m->name ? m->name : "?", m->host, peer->name, why);
        return TX_HUB_KEY_HOST;
    }
    if (!m->host && per_host && proto_msg_set_host(m, peer->host) != 0)
        return TX_HUB_NO_MEMORY;
    return NULL;
}

void peers_stray_reply(core_t *c, zframe_t *identity, const proto_msg_t *m,
                       const hubauth_peer_t *peer)
{
    bool worker = core_worker_find(c, identity) != NULL;
    if (!worker) {
        peers_refusal(c, "reply", peer,
                      "dropped a reply from the key %s, which is not a worker on this hub (a "
                      "forged reply)",
                      peer->name && *peer->name ? peer->name : "(none)");
        return;
    }
    list_for_each_item(p, &c->pending, pending_t, node)
        if (p->hub_id == m->id) {
            peers_refusal(c, "reply", peer,
                          "dropped a reply to request %llu from the key %s: that request was "
                          "given to %s, not to it (a forged reply)",
                          (unsigned long long)m->id,
                          peer->name && *peer->name ? peer->name : "(none)",
                          p->worker ? p->worker->name : "no worker yet");
            return;
        }
    /* A late reply to a request that already ended: nothing to say. */
}
