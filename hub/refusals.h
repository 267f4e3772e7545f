/* refusals.h -- refusal log lines, rate-limited per key.
 *
 * The hub refuses handshakes, HELLOs, requests and replies, and says so in
 * its log; a peer that keeps trying must not fill the log, and one noisy
 * peer must not hide the others.  So each line has a key (the peer's
 * certificate, or the key it presented, with the kind of refusal) and is
 * written at most once per interval for that key; the next line of the
 * same key says how many were held back since.  Keys are kept in a table
 * of bounded size: past it, the key seen longest ago is forgotten.
 *
 * Not thread-safe: each thread that refuses (the hub, the ZAP handler)
 * keeps its own.  Pure apart from the clock the caller passes in.
 */
#ifndef TALKBACK_REFUSALS_H
#define TALKBACK_REFUSALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REFUSALS_KEYS 256 /* keys remembered at once */

typedef struct refusals refusals_t;

/* interval_ms <= 0: every line is written. */
refusals_t *refusals_new(int64_t interval_ms);
void refusals_destroy(refusals_t **self_p);

/* May a line of key be written at now_ms?  When true, *held is the number
 * of lines of that key held back since its last one. */
bool refusals_allow(refusals_t *r, const char *key, int64_t now_ms, unsigned *held);

/* Write a warning line through refusals_allow: the line, then " (N more
 * like it since the last one)" when some were held back. */
void refusals_log(refusals_t *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
