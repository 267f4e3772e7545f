/* list.h -- the container list (GET /containers/json) through the Docker
 * guard: only talkback's own containers.
 *
 * Two steps.  The query is rebuilt from what was parsed (all, size, limit
 * and filters only, each once): the caller's filters are kept, and when
 * their `label` list names none of talkback's labels the guard adds
 * `talkback.created` (every sandbox and spare carries it).  Docker ANDs
 * label filters, so an added one can only narrow a list, never widen it.
 * Then, in the answer, every entry that is not talkback's by the guard's
 * own rule (rules.h: grules_owner on its name and labels, the rule of the
 * per-container calls) is dropped.  Pure functions, unit-tested and fuzzed.
 */
#ifndef TALKBACK_GUARD_LIST_H
#define TALKBACK_GUARD_LIST_H

#include <stddef.h>

#define GLIST_QUERY_MAX  8192       /* the rebuilt query */
#define GLIST_ANSWER_MAX (64 << 20) /* the largest list the guard filters */

/* Rebuild the query of a container list into out (GLIST_QUERY_MAX bytes):
 * 0, or -1 with a sentence in why. */
int glist_query(const char *query, char *out, char *why, size_t whylen);

/* The answer body[0..len) (a JSON array) with only talkback's containers:
 * a new compact JSON text (malloc'ed, *out_len its length), or NULL when
 * it is not such an array. */
char *glist_filter(const char *body, size_t len, size_t *out_len);

#endif
