/* record.h -- append-only recordings of queued requests and replies.
 *
 * A recording is a plain sequence of msgpack arrays, one per event:
 *   [unix_ms, "req" | "rep", <proto frame as bin>]
 * so it can be appended by a running gateway (--record FILE), read while
 * it grows, and replayed against workers by talkback-replay.
 */
#ifndef TALKBACK_RECORD_H
#define TALKBACK_RECORD_H

#include <stdint.h>
#include "proto/proto.h"

typedef struct record record_t;

/* Open for appending (created 0600 if missing).  NULL on failure. */
record_t *record_open(const char *path);
/* Append one event; dir is "req" or "rep".  0 or -1. */
int record_write(record_t *r, const char *dir, const proto_msg_t *m);
void record_close(record_t **self_p);

/* Called for each event in order; m is owned by the callee.  Return 0 to
 * go on. */
typedef int (*record_fn)(void *ctx, int64_t ts_ms, const char *dir, proto_msg_t *m);
/* Read a recording.  Returns events read, or -1 when the file cannot be
 * read or holds something that is not a recording (a torn last event, as
 * left by a crash mid-write, is ignored). */
int record_read(const char *path, record_fn fn, void *ctx);

#endif
