/* hubkeys.h -- who may act as talkback on the hub: the key files, what a
 * certificate allows, and the checks on a keyless (ipc://) hub's folder.
 *
 * A tcp:// hub speaks ZeroMQ CURVE.  `talkback-keys DIR` writes the files
 * named below: the hub's certificate (public part for every worker, secret
 * part for the gateway only), and per worker kind a secret certificate
 * for the worker plus its public part in DIR/allowed/, the allow list the
 * gateway reads.  A client certificate's metadata says what its holder may
 * do:
 *
 *   kinds  = "judge"                      kinds it may register as (HELLO)
 *   submit = "sandbox:put,sandbox:exec"   requests it may send: KIND:NAME
 *   name   = "judge"                      shown in the logs
 *   host   = "beta"                       the one host it may act for
 *                                         (sandbox and reaper keys made
 *                                         for a host; none in the others)
 *
 * Both lists are comma-separated; an empty `submit` allows no request.
 * The hub reads these from its own copy of the allow list, found by the
 * peer's public key (the ZAP User-Id of each message), never from what
 * the peer says about itself.
 *
 * An ipc:// hub has no keys: its socket lives in a folder that only the
 * service's user may open (mode 0700, owned by that user), and that is
 * checked at start.
 */
#ifndef TALKBACK_HUBKEYS_H
#define TALKBACK_HUBKEYS_H

#include <stdbool.h>
#include <stddef.h>

#define HUBKEYS_SERVER_PUBLIC "hub.key"        /* every worker reads it */
#define HUBKEYS_SERVER_SECRET "hub.key_secret" /* the gateway only */
#define HUBKEYS_ALLOWED       "allowed"        /* the allow list folder */
#define HUBKEYS_SECRET_SUFFIX ".key_secret"    /* KIND.key_secret */
#define HUBKEYS_PUBLIC_SUFFIX ".key"           /* allowed/KIND.key */

#define HUBKEYS_META_KINDS  "kinds"
#define HUBKEYS_META_SUBMIT "submit"
#define HUBKEYS_META_NAME   "name"
#define HUBKEYS_META_HOST   "host"

/* Largest metadata value talkback-keys writes and the hub accepts: the ZAP
 * handler copies a certificate's metadata into a fixed 512-byte buffer. */
#define HUBKEYS_META_MAX 160

/* A kind with a certificate and the requests its key may submit by
 * default: every operation whose row names it a sender (proto/optable.h). */
typedef struct {
    const char *kind;
    char submit[HUBKEYS_META_MAX + 1];
} hubkeys_role_t;

/* The kinds talkback-keys makes certificates for (OPS_KIND_KEY), in the
 * table's order; ends with { NULL }. */
const hubkeys_role_t *hubkeys_roles(void);
/* The row of a kind, or NULL. */
const hubkeys_role_t *hubkeys_role(const char *kind);

/* True for endpoints that never cross a network (ipc://, inproc://): they
 * need no keys.  Every other transport needs CURVE. */
bool hubkeys_keyless(const char *endpoint);

/* Check the folder of an ipc:// endpoint: it must be a directory owned by
 * this process's user with no access for group or others.  create: make
 * it (mode 0700, parents too) when missing; otherwise a missing folder is
 * fine (the hub is not up yet).  Other endpoints pass.  0, or -1 with a
 * sentence in err that says what is wrong and how to fix it. */
int hubkeys_ipc_dir_check(const char *endpoint, bool create, char *err, size_t errlen);

/* True when the comma-separated list holds item exactly (spaces around
 * items are ignored).  NULL list or item: false. */
bool hubkeys_list_has(const char *list, const char *item);
/* May a key whose `kinds` metadata is kinds register as kind? */
bool hubkeys_may_register(const char *kinds, const char *kind);
/* May a key whose `submit` metadata is submit send a request to kind
 * named name? */
bool hubkeys_may_submit(const char *submit, const char *kind, const char *name);
/* Is this metadata well formed: kinds a non-empty list of names, submit a
 * list (maybe empty) of KIND:NAME items, both at most HUBKEYS_META_MAX
 * bytes?  Names are [a-z0-9_-]+. */
bool hubkeys_meta_valid(const char *kinds, const char *submit);

/* ---- host-bound keys ----
 *
 * A sandbox manager's or a reaper's key made for one host
 * (`talkback-keys DIR sandbox beta`) names that host (metadata `host`):
 * the hub takes its HELLO only for that host, and its requests only for
 * that host.  A key of those kinds that names no host (the default set's
 * `sandbox` and `reaper`, and every key made before hosts were named) may
 * act for any host no other key of its kind names.  Judges and talkbackctl
 * serve or ask every host: their keys name none. */

/* Kinds whose keys are made for one host. */
bool hubkeys_kind_per_host(const char *kind);
/* The host a key NAME of kind is made for, when none is given: NAME
 * without a leading "KIND-" (sandbox-beta -> beta; beta -> beta).  0, or -1
 * when it does not fit in out. */
int hubkeys_host_for(const char *kind, const char *name, char *out, size_t n);
/* Is this a host name a key may name: 1-HUBKEYS_META_MAX bytes of
 * [A-Za-z0-9._-]? */
bool hubkeys_host_valid(const char *host);

/* dir + "/" + file into out; -1 when it does not fit. */
int hubkeys_path(char *out, size_t n, const char *dir, const char *file);

#endif
