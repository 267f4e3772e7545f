/* hubauth.c -- the hub's door (see hubauth.h).
 *
 * The ZAP handler (zap.h) must run before the socket binds: with none,
 * libzmq lets every CURVE client in, whatever its key.  The handler and
 * the hub each hold their own zcertstore over HUB_KEYS/allowed/ (a store
 * is not shared between threads); both reload it when the folder changes.
 * The hosts the certificates name (hubkeys.h) are read from the same
 * folder, again whenever it changes and at least every few seconds.
 */
#include "hub/hubauth.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "hub/hubkeys.h"
#include "hub/zap.h"
#include "proto/ops.h"

#define HUBAUTH_RESCAN_MS 5000 /* the hosts named, read again at least this often */
#define HUBAUTH_BOUND_MAX 256  /* certificates naming a host, at most */

/* A certificate in allowed/ that names a host. */
typedef struct {
    char host[HUBKEYS_META_MAX + 1];
    char kinds[HUBKEYS_META_MAX + 1];
    char name[HUBKEYS_META_MAX + 1];
} hubauth_bound_t;

struct hubauth {
    zactor_t *zap;       /* the ZAP handler (zap.h), CURVE with allowed/ */
    zcertstore_t *store; /* the hub thread's copy of allowed/ */
    char allowed[4096];  /* HUB_KEYS/allowed */
    hubauth_bound_t *bound;
    size_t n_bound;
    struct timespec bound_mtime; /* allowed/'s when bound was read */
    int64_t bound_at;            /* monotonic ms; 0 = never */
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
static hubauth_t *hubauth_start(const char *dir, int64_t refusal_log_ms)
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
    snprintf(a->allowed, sizeof a->allowed, "%s", allowed);
    a->zap = zap_new(allowed, refusal_log_ms);
    a->store = zcertstore_new(allowed);
    a->bound = calloc(HUBAUTH_BOUND_MAX, sizeof *a->bound);
    if (!a->zap || !a->store || !a->bound) {
        hubauth_destroy(&a);
        return NULL;
    }
    return a;
}

int hubauth_new(zsock_t *router, const char *endpoint, bool insecure, const char *keys_dir,
                int64_t refusal_log_ms, hubauth_t **out)
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
    hubauth_t *a = hubauth_start(dir, refusal_log_ms);
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
    free(a->bound);
    free(a);
    *self_p = NULL;
}

bool hubauth_peer(hubauth_t *a, zframe_t *frame, hubauth_peer_t *peer)
{
    memset(peer, 0, sizeof *peer);
    peer->address = frame ? zframe_meta(frame, "Peer-Address") : NULL;
    if (!a) {
        peer->any = true;
        peer->name = "";
        peer->key = "";
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
    peer->host = zcert_meta(cert, HUBKEYS_META_HOST);
    peer->key = zcert_public_txt(cert);
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

/* Read which hosts the certificates in allowed/ name, when the folder
 * changed or HUBAUTH_RESCAN_MS passed. */
static void hubauth_read_bound(hubauth_t *a)
{
    struct stat st;
    int64_t now = proto_mono_ms();
    bool same = stat(a->allowed, &st) == 0 && st.st_mtim.tv_sec == a->bound_mtime.tv_sec &&
                st.st_mtim.tv_nsec == a->bound_mtime.tv_nsec;
    if (a->bound_at && same && now - a->bound_at < HUBAUTH_RESCAN_MS)
        return;
    a->bound_mtime = st.st_mtim;
    a->bound_at = now;
    a->n_bound = 0;
    DIR *d = opendir(a->allowed);
    struct dirent *de;
    while (d && (de = readdir(d)) && a->n_bound < HUBAUTH_BOUND_MAX) {
        size_t n = strlen(de->d_name), sl = strlen(HUBKEYS_PUBLIC_SUFFIX);
        char path[4400];
        if (de->d_name[0] == '.' || n <= sl ||
            strcmp(de->d_name + n - sl, HUBKEYS_PUBLIC_SUFFIX) != 0 ||
            snprintf(path, sizeof path, "%s/%s", a->allowed, de->d_name) >= (int)sizeof path)
            continue;
        zcert_t *c = zcert_load(path);
        const char *host = c ? zcert_meta(c, HUBKEYS_META_HOST) : NULL;
        if (host && *host) {
            hubauth_bound_t *b = &a->bound[a->n_bound++];
            const char *kinds = zcert_meta(c, HUBKEYS_META_KINDS),
                       *name = zcert_meta(c, HUBKEYS_META_NAME);
            /* Cut at HUBKEYS_META_MAX, the longest talkback-keys writes. */
            snprintf(b->host, sizeof b->host, "%.*s", HUBKEYS_META_MAX, host);
            snprintf(b->kinds, sizeof b->kinds, "%.*s", HUBKEYS_META_MAX, kinds ? kinds : "");
            snprintf(b->name, sizeof b->name, "%.*s", HUBKEYS_META_MAX, name ? name : de->d_name);
        }
        zcert_destroy(&c);
    }
    if (d)
        closedir(d);
}

bool hubauth_host_ok(hubauth_t *a, const hubauth_peer_t *peer, const char *kind, const char *host,
                     char *why, size_t whylen)
{
    host = host ? host : "";
    if (peer->any || !a)
        return true;
    if (peer->host && *peer->host) {
        if (strcmp(peer->host, host) == 0)
            return true;
        snprintf(why, whylen, "the key %s is made for host %s only", peer->name, peer->host);
        return false;
    }
    if (!hubkeys_kind_per_host(kind))
        return true;
    hubauth_read_bound(a);
    for (size_t i = 0; i < a->n_bound; i++)
        if (strcmp(a->bound[i].host, host) == 0 && hubkeys_list_has(a->bound[i].kinds, kind)) {
            snprintf(why, whylen,
                     "host %s has a %s key of its own (%s), and the key %s names no host: it may "
                     "act only for hosts no other %s key names",
                     host, kind, a->bound[i].name, peer->name, kind);
            return false;
        }
    return true;
}
