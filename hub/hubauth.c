/* hubauth.c -- the hub's door (see hubauth.h).
 *
 * zauth must run before the socket binds: with no ZAP handler, libzmq lets
 * every CURVE client in, whatever its key.  The handler and the hub each
 * hold their own zcertstore over HUB_KEYS/allowed/ (a store is not shared
 * between threads); both reload it when the folder changes.
 */
#include "hub/hubauth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hub/hubkeys.h"
#include "common/log.h"

struct hubauth {
    zactor_t *zap;       /* czmq's ZAP handler, CURVE with allowed/ */
    zcertstore_t *store; /* the hub thread's copy of allowed/ */
};

/* The loud lines of a tcp:// hub that runs without keys. */
static void hubauth_warn_insecure(const char *endpoint)
{
    log_error("HUB WITHOUT AUTHENTICATION: hub_insecure is set, so the hub on %s takes any peer "
              "that reaches it as any worker: it can read every chat's commands, answer them, and "
              "run commands in every sandbox",
              endpoint);
    log_error("HUB WITHOUT AUTHENTICATION: make keys once with `talkback-keys DIR`, set hub_keys "
              "to DIR and unset hub_insecure (docs/security.md)");
}

/* Load the hub's own certificate; NULL (logged) when it cannot. */
static zcert_t *hubauth_server_cert(const char *endpoint, const char *dir)
{
    char path[4096];
    if (hubkeys_path(path, sizeof path, dir, HUBKEYS_SERVER_SECRET) < 0)
        return NULL;
    zcert_t *cert = access(path, R_OK) == 0 ? zcert_load(path) : NULL;
    if (!cert)
        log_error("the hub on %s needs keys, and %s cannot be read (%s): make them once with "
                  "`talkback-keys %s` (docs/security.md), or set hub_insecure to let any "
                  "peer act as any worker",
                  endpoint, path, access(path, R_OK) == 0 ? "not a certificate" : strerror(errno),
                  dir);
    return cert;
}

/* Start the ZAP handler on dir/allowed and the hub's copy of it. */
static hubauth_t *hubauth_start(const char *dir)
{
    char allowed[4096];
    struct stat st;
    if (hubkeys_path(allowed, sizeof allowed, dir, HUBKEYS_ALLOWED) < 0)
        return NULL;
    if (stat(allowed, &st) < 0 || !S_ISDIR(st.st_mode)) {
        log_error("the hub's allow list %s is missing: make it with `talkback-keys %s`", allowed,
                  dir);
        return NULL;
    }
    hubauth_t *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->zap = zactor_new(zauth, NULL);
    a->store = zcertstore_new(allowed);
    if (!a->zap || !a->store) {
        hubauth_destroy(&a);
        return NULL;
    }
    zstr_sendx(a->zap, "CURVE", allowed, NULL);
    zsock_wait(a->zap);
    return a;
}

int hubauth_new(zsock_t *router, const char *endpoint, bool insecure, const char *keys_dir,
                hubauth_t **out)
{
    char err[1024];
    *out = NULL;
    if (hubkeys_keyless(endpoint)) {
        if (hubkeys_ipc_dir_check(endpoint, true, err, sizeof err) < 0) {
            log_error("%s", err);
            return -1;
        }
        return 0;
    }
    if (insecure) {
        hubauth_warn_insecure(endpoint);
        return 0;
    }
    if (!zsys_has_curve()) {
        log_error("the hub on %s needs CURVE, and this libzmq was built without it", endpoint);
        return -1;
    }
    const char *dir = keys_dir ? keys_dir : "";
    zcert_t *cert = hubauth_server_cert(endpoint, dir);
    if (!cert)
        return -1;
    hubauth_t *a = hubauth_start(dir);
    if (!a) {
        zcert_destroy(&cert);
        return -1;
    }
    zcert_apply(cert, router);
    zsock_set_curve_server(router, 1);
    zcert_destroy(&cert);
    log_info("hub keys from %s: only the workers in %s/%s may connect", dir, dir, HUBKEYS_ALLOWED);
    *out = a;
    return 0;
}

void hubauth_destroy(hubauth_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    hubauth_t *a = *self_p;
    zactor_destroy(&a->zap);
    zcertstore_destroy(&a->store);
    free(a);
    *self_p = NULL;
}

bool hubauth_peer(hubauth_t *a, zframe_t *frame, hubauth_peer_t *peer)
{
    memset(peer, 0, sizeof *peer);
    if (!a) {
        peer->any = true;
        peer->name = "";
        return true;
    }
    const char *key = frame ? zframe_meta(frame, "User-Id") : NULL;
    if (!key || strlen(key) != 40)
        return false;
    zcert_t *cert = zcertstore_lookup(a->store, key);
    if (!cert)
        return false;
    peer->kinds = zcert_meta(cert, HUBKEYS_META_KINDS);
    peer->submit = zcert_meta(cert, HUBKEYS_META_SUBMIT);
    peer->name = zcert_meta(cert, HUBKEYS_META_NAME);
    if (!peer->name)
        peer->name = key;
    return true;
}

bool hubauth_may_register(const hubauth_peer_t *peer, const char *kind)
{
    return peer->any || hubkeys_may_register(peer->kinds, kind);
}

bool hubauth_may_submit(const hubauth_peer_t *peer, const char *kind, const char *name)
{
    return peer->any || hubkeys_may_submit(peer->submit, kind, name);
}
