/* optable.h -- every operation as one row: what it is, who may send it,
 * and the rules the hub and the workers apply to it.
 *
 * ops.h names the strings and says what crosses the wire; this table is
 * the only place an operation's properties are written (Redis's command
 * table, nginx's ngx_command_t).  Everything that used to spell them
 * again reads them from here:
 *
 *   senders         the default `submit` of each kind's certificate
 *                   (hub/hubkeys.c, which talkback-keys writes)
 *   OPS_PLACES      whether the hub may make a sandbox for a chat it finds
 *                   on no host (hub/route.c): fail-closed, an operation
 *                   not in the table, or without the flag, places nothing
 *   OPS_RETRY_*     what becomes of a dead worker's request (hub/retry.c)
 *   OPS_CONV        the conversation (and user) id check, made once by
 *                   the worker library before any handler runs
 *                   (hub/worker.c)
 *   OPS_HOST        the request names its host (REQUEST host, or the
 *                   argument host of an operation the hub serves)
 *   OPS_HUB         the hub answers it itself (hub/queue.c)
 *
 * The worker kinds have a table of their own (ops_kind_t): which get a
 * certificate, which are made for one host, which one holds the chats'
 * sandboxes, how texts name them.
 *
 * A worker registers one handler per row of its kind ({op, handler}
 * arrays, hub/worker.h); tests/unit/test_ops.c checks that every row has
 * exactly one, and that the flags agree with each other.  A new operation
 * is one row here, its names in ops.h, and one handler.
 *
 * Pure, no allocation: every process and talkback-keys read it.
 */
#ifndef TALKBACK_PROTO_OPTABLE_H
#define TALKBACK_PROTO_OPTABLE_H

#include <stdbool.h>
#include <stddef.h>

/* ---- worker kinds ---- */

enum {
    OPS_KIND_WORKER = 1u << 0,   /* says HELLO and serves requests */
    OPS_KIND_KEY = 1u << 1,      /* talkback-keys makes it a certificate */
    OPS_KIND_PER_HOST = 1u << 2, /* its keys are made for one host; the hosts
                                   the hub remembers are where these run */
    OPS_KIND_MANAGER = 1u << 3,  /* holds the chats' sandboxes: one per host,
                                   routed by conversation, its HELLO carries
                                   the host's capacity */
    OPS_KIND_HUB = 1u << 4,      /* the hub itself serves it */
};

/* Senders: the certificate kinds that may send an operation, one OPS_BY_
 * bit each.  The gateway hosts the hub and submits the model's tools
 * itself, with no certificate: those operations have no sender. */
#define OPS_BY_SANDBOX (1u << 0)
#define OPS_BY_JUDGE   (1u << 1)
#define OPS_BY_REAPER  (1u << 2)
#define OPS_BY_CTL     (1u << 3)

typedef struct {
    const char *name;  /* KIND_ */
    unsigned flags;    /* OPS_KIND_ */
    unsigned by;       /* its OPS_BY_ bit (OPS_KIND_KEY kinds), else 0 */
    const char *label; /* how texts name a worker of it ("sandbox manager") */
} ops_kind_t;

/* ---- operations ---- */

enum {
    OPS_CONV = 1u << 0,                /* refused without a usable conversation id
                                 (and user id, when one is given) */
    OPS_PLACES = 1u << 1,              /* may make the chat's sandbox when it has none */
    OPS_RETRY = 1u << 2,               /* sent again when its worker dies: it only reads */
    OPS_RETRY_UNTIL_STARTED = 1u << 3, /* again while its program has not started
                                          (ARG_PROGRAM; hub/retry.h) */
    OPS_HOST = 1u << 4,                /* names a host */
    OPS_HUB = 1u << 5,                 /* answered by the hub itself */
};

typedef struct {
    const char *kind;    /* KIND_: who serves it */
    const char *name;    /* OP_ */
    unsigned flags;      /* OPS_ */
    unsigned senders;    /* OPS_BY_: certificate kinds that may send it */
    const char *summary; /* one line */
} ops_row_t;

/* The whole table and its length. */
const ops_row_t *ops_table(size_t *n);
/* The row of kind's operation name, or NULL (NULL arguments: NULL). */
const ops_row_t *ops_find(const char *kind, const char *name);
/* The row of an operation by its name alone (names are unique over the
 * kinds), or NULL: what the model's tools name. */
const ops_row_t *ops_named(const char *name);
/* Whether kind's operation name has every flag in flags; false for an
 * operation not in the table (fail-closed). */
bool ops_has(const char *kind, const char *name, unsigned flags);

/* The kinds table and its length; the row of a kind, or NULL. */
const ops_kind_t *ops_kinds(size_t *n);
const ops_kind_t *ops_kind(const char *name);
/* Whether kind has every flag in flags; false for an unknown kind. */
bool ops_kind_has(const char *kind, unsigned flags);
/* The OPS_BY_ bit of a certificate kind, or 0. */
unsigned ops_sender_bit(const char *kind);
/* How texts name a worker of kind ("worker" for an unknown one). */
const char *ops_kind_label(const char *kind);

#endif
