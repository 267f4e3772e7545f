/* plan.h -- which kept sandboxes to remove, as a pure function.
 *
 * Stopped sandboxes are removed when unused for longer than max_age, when
 * more than max_count are kept, or when together they use more than
 * max_bytes -- oldest first, and never a running one (callers pass only
 * stopped sandboxes).  Unit-tested over a table of cases.
 */
#ifndef TALKBACK_PLAN_H
#define TALKBACK_PLAN_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    PLAN_KEEP = 0,
    PLAN_EVICT_AGE,   /* unused for longer than max_age */
    PLAN_EVICT_COUNT, /* more than max_count kept */
    PLAN_EVICT_BYTES  /* kept ones together past max_bytes */
} plan_reason_t;

typedef struct {
    int64_t last_used;    /* unix seconds */
    int64_t bytes;        /* writable layer size */
    plan_reason_t reason; /* out */
} plan_item_t;

typedef struct {
    int64_t now;
    int64_t max_age; /* seconds */
    int64_t max_count;
    int64_t max_bytes;
} plan_limits_t;

/* Decide for each item; returns how many are to be removed. Items are not
 * reordered. */
size_t plan_evictions(plan_item_t *items, size_t n, const plan_limits_t *lim);

#endif
