/* plan.c -- which kept sandboxes to remove (see plan.h).
 *
 * Sort an index by last use, oldest first.  Anything unused too long goes.
 * Then, while what is left is over the count or the byte limit, the oldest
 * left goes -- strictly oldest first, even when one newer sandbox alone is
 * what makes the total too big: age is the only order an operator can
 * predict.
 */
#include "reaper/plan.h"

#include <stdlib.h>

static const plan_item_t *sort_base;

static int by_age(const void *a, const void *b)
{
    const plan_item_t *x = &sort_base[*(const size_t *)a], *y = &sort_base[*(const size_t *)b];
    if (x->last_used != y->last_used)
        return x->last_used < y->last_used ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

size_t plan_evictions(plan_item_t *items, size_t n, const plan_limits_t *lim)
{
    if (n == 0)
        return 0;
    size_t *idx = malloc(n * sizeof *idx);
    if (!idx)
        return 0; /* remove nothing rather than the wrong thing */
    for (size_t i = 0; i < n; i++) {
        idx[i] = i;
        items[i].reason = PLAN_KEEP;
    }
    sort_base = items;
    qsort(idx, n, sizeof *idx, by_age);
    size_t removed = 0;
    for (size_t k = 0; k < n; k++) {
        plan_item_t *it = &items[idx[k]];
        if (lim->max_age > 0 && lim->now - it->last_used > lim->max_age) {
            it->reason = PLAN_EVICT_AGE;
            removed++;
        }
    }
    int64_t count = 0, bytes = 0;
    for (size_t k = 0; k < n; k++)
        if (items[k].reason == PLAN_KEEP) {
            count++;
            bytes += items[k].bytes;
        }
    for (size_t k = 0; k < n; k++) {
        plan_item_t *it = &items[idx[k]];
        if (it->reason != PLAN_KEEP)
            continue;
        if (lim->max_count >= 0 && count > lim->max_count)
            it->reason = PLAN_EVICT_COUNT;
        else if (lim->max_bytes > 0 && bytes > lim->max_bytes)
            it->reason = PLAN_EVICT_BYTES;
        else
            break; /* under both limits: everything newer stays */
        count--;
        bytes -= it->bytes;
        removed++;
    }
    free(idx);
    return removed;
}
