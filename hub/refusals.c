/* refusals.c -- refusal log lines, rate-limited per key (see refusals.h).
 *
 * A linear table: a hub sees a handful of keys, and a refusal is rare
 * next to the messages it guards.
 */
#include "hub/refusals.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "proto/proto.h"

#define REFUSALS_KEY_MAX 96 /* bytes of a key that count */

typedef struct {
    char key[REFUSALS_KEY_MAX];
    int64_t last;  /* when its last line was written */
    int64_t touch; /* when it was last refused */
    unsigned held; /* lines held back since */
    bool used;
} refusal_t;

struct refusals {
    int64_t interval_ms;
    refusal_t t[REFUSALS_KEYS];
};

refusals_t *refusals_new(int64_t interval_ms)
{
    refusals_t *r = calloc(1, sizeof *r);
    if (r)
        r->interval_ms = interval_ms;
    return r;
}

void refusals_destroy(refusals_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free(*self_p);
    *self_p = NULL;
}

/* The slot of key: its own, a free one, or the one refused longest ago. */
static refusal_t *refusals_slot(refusals_t *r, const char *key, bool *fresh)
{
    refusal_t *free_slot = NULL, *oldest = NULL;
    for (size_t i = 0; i < REFUSALS_KEYS; i++) {
        refusal_t *e = &r->t[i];
        if (!e->used) {
            if (!free_slot)
                free_slot = e;
            continue;
        }
        if (strncmp(e->key, key, REFUSALS_KEY_MAX - 1) == 0) {
            *fresh = false;
            return e;
        }
        if (!oldest || e->touch < oldest->touch)
            oldest = e;
    }
    refusal_t *e = free_slot ? free_slot : oldest;
    memset(e, 0, sizeof *e);
    snprintf(e->key, sizeof e->key, "%s", key);
    e->used = true;
    *fresh = true;
    return e;
}

bool refusals_allow(refusals_t *r, const char *key, int64_t now_ms, unsigned *held)
{
    *held = 0;
    if (!r)
        return true;
    bool fresh;
    refusal_t *e = refusals_slot(r, key ? key : "", &fresh);
    e->touch = now_ms;
    if (!fresh && r->interval_ms > 0 && now_ms - e->last < r->interval_ms) {
        e->held++;
        return false;
    }
    *held = e->held;
    e->held = 0;
    e->last = now_ms;
    return true;
}

void refusals_log(refusals_t *r, const char *key, const char *fmt, ...)
{
    unsigned held;
    if (!refusals_allow(r, key, proto_mono_ms(), &held))
        return;
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (held)
        log_warn("%s (%u more like it since the last one)", line, held);
    else
        log_warn("%s", line);
}
