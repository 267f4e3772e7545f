/* netcheck.h -- the sandbox network, checked against what the egress rule
 * covers before any sandbox is made or started on it.
 *
 * deploy/egress-rule writes a record when its rules are in (by default
 * /run/talkback-egress/NETWORK: the network's name, Docker id and
 * subnets).  Before every create, claim or start the manager inspects the
 * network by name and compares: the same id (not re-made since), only
 * recorded subnets, a bridge, inter-container traffic off, no IPv6.  A
 * mismatch, or no record, fails closed: the call's text says the sandbox
 * cannot start and what the operator must do, and a loud log line says
 * the same.  The verdict is kept per network id and record file (device,
 * inode, size, mtime), so a call pays one network inspect and a stat.
 */
#ifndef TALKBACK_SANDBOX_NETCHECK_H
#define TALKBACK_SANDBOX_NETCHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/textbuf.h"
#include "docker/docker.h"

#define NETCHECK_RECORD_DIR "/run/talkback-egress" /* deploy/egress-rule's */
#define NETCHECK_RECORD_MAX 16384

typedef struct {
    const char *network; /* the sandbox network's name */
    const char *record;  /* egress_record; "" = NETCHECK_RECORD_DIR/NETWORK */
    const char *check;   /* egress_check: "require" or "off" */
} netcheck_opts_t;

/* Why a network is not the one the egress rule protects. */
typedef enum {
    NC_OK,
    NC_NO_RECORD,  /* no record: the rule is not installed (or not since boot) */
    NC_BAD_RECORD, /* a record that cannot be trusted or read */
    NC_MISSING,    /* Docker has no network of that name */
    NC_OTHER_ID,   /* re-made since the rule was installed */
    NC_DRIVER,     /* not a bridge */
    NC_IPV6,       /* IPv6 on: the rule is IPv4 only */
    NC_ICC,        /* inter-container traffic on */
    NC_SUBNET,     /* a subnet the rule does not cover */
} netcheck_why_t;

typedef struct netcheck netcheck_t;

/* NULL (logged) when o->check is neither "require" nor "off". */
netcheck_t *netcheck_new(docker_t *d, const netcheck_opts_t *o);
void netcheck_destroy(netcheck_t **self_p);

/* Whether a sandbox may be made or started on the sandbox network now.
 * False with the call's text in err (NULL: only logged, for the warm
 * pool).  Always true with egress_check = off. */
bool netcheck_ok(netcheck_t *nc, textbuf_t *err);

/* The verdict on network (Docker's inspect of it, NULL when it has none)
 * against the record text rec[0..len): NC_OK, or why not with the
 * particulars in detail.  Pure. */
netcheck_why_t netcheck_judge(const char *network, const json_t *inspect, const char *rec,
                              size_t len, char *detail, size_t dlen);

#endif
