/* cache.h -- which container each chat's sandbox is, remembered.
 *
 * The manager finds a chat's container by its deterministic name; this
 * cache saves the inspect that costs on every call.  It holds running
 * sandboxes, which the caps bound: past `bound` entries the oldest go
 * (those of sandboxes stopped behind talkback's back, after a Docker
 * restart), at the cost of one inspect should their chat come back.
 * Thread-safe: calls of many chats use it at once.
 */
#ifndef TALKBACK_SANDBOX_CACHE_H
#define TALKBACK_SANDBOX_CACHE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cache cache_t;

/* A cache of at most bound entries (bound <= 0: 1024).  NULL without
 * memory. */
cache_t *cache_new(int64_t bound);
void cache_destroy(cache_t **self_p);

/* The container id (72 bytes with its NUL) of chat conv, and when user is
 * not NULL a malloc'ed copy of the user it was made for.  false: not
 * known. */
bool cache_get(cache_t *c, const char *conv, char id[72], char **user);
/* Remember (or replace) chat conv's container id, made for user. */
void cache_put(cache_t *c, const char *conv, const char *id, const char *user);
/* Forget chat conv (its sandbox was removed or is not what we thought). */
void cache_drop(cache_t *c, const char *conv);

#endif
