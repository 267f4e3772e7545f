/* retry.h -- what becomes of the requests a dead worker held.
 *
 * A request is sent again to another worker of its kind only when doing
 * it again cannot repeat what the first worker may have done.  The
 * operation's row says which (proto/optable.h):
 *
 *   OPS_RETRY                again: it only reads (judge history)
 *   OPS_RETRY_UNTIL_STARTED  again only while the model's program has not
 *                            started (judge run_code); the judge says when
 *                            it starts it (the exec that runs it carries
 *                            ARG_PROGRAM, the request's id), so a program
 *                            never runs twice unsaid
 *   neither, or no row       never: a command may have run (the result
 *                            says so)
 *
 * A request not sent again ends with PROTO_ST_WORKER_LOST; a run_code
 * one carries data `started` (true or false), which the gateway turns
 * into the text the model reads (it may or may not have run, or nothing
 * ran).  What the dead worker had asked of others (a judge's put and exec)
 * is cancelled: its answer would reach no one, and a program it started is
 * stopped rather than left running beside a second one.
 *
 * Hub thread only; acts through core.h, never back through queue.c.
 */
#ifndef TALKBACK_RETRY_H
#define TALKBACK_RETRY_H

#include <czmq.h>
#include <stdint.h>

#include "proto/proto.h"

struct core;
struct worker_entry;

typedef enum {
    RETRY_NEVER = 0,     /* it may have done what it does */
    RETRY_ALWAYS,        /* doing it again changes nothing */
    RETRY_UNTIL_STARTED, /* again until its program started (ARG_PROGRAM) */
} retry_rule_t;

/* The rule of a request of kind and op.  Pure. */
retry_rule_t retry_rule(const char *kind, const char *op);

/* A request from identity: an exec that runs a run_code request's program
 * marks that request started, when identity is the worker holding it. */
void retry_note_started(struct core *c, zframe_t *identity, const proto_msg_t *m);

/* Worker w is dead: send again, or end, every request it held, and cancel
 * what it had asked of others. */
void retry_worker_lost(struct core *c, struct worker_entry *w, int64_t now);

#endif
