/* cache.c -- chat -> container id, remembered (see cache.h).
 *
 * A string-keyed map (common/list.h) under one mutex, bounded: past its
 * bound the entry put longest ago goes.  A manager holds at most
 * max_running chats' worth, and the lock is held only for the lookup.
 */
#include "sandbox/cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/list.h"

typedef struct cache_entry {
    strmap_node_t node; /* keyed by conv */
    char *conv;
    char *user;
    char id[72];
} cache_entry_t;

struct cache {
    pthread_mutex_t mu; /* guards entries */
    strmap_t entries;   /* oldest put first */
    int64_t bound;
};

static void entry_free(cache_entry_t *e)
{
    if (!e)
        return;
    free(e->conv);
    free(e->user);
    free(e);
}

cache_t *cache_new(int64_t bound)
{
    cache_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    c->bound = bound > 0 ? bound : 1024;
    return c;
}

void cache_destroy(cache_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    cache_t *c = *self_p;
    strmap_for_each_safe(n, &c->entries) {
        strmap_del(&c->entries, n);
        entry_free(STRMAP_ITEM(n, cache_entry_t, node));
    }
    strmap_free(&c->entries);
    pthread_mutex_destroy(&c->mu);
    free(c);
    *self_p = NULL;
}

bool cache_get(cache_t *c, const char *conv, char id[72], char **user)
{
    pthread_mutex_lock(&c->mu);
    cache_entry_t *e = STRMAP_ITEM(strmap_get(&c->entries, conv), cache_entry_t, node);
    if (e) {
        memcpy(id, e->id, 72);
        if (user)
            *user = strdup(e->user);
    }
    pthread_mutex_unlock(&c->mu);
    return e != NULL;
}

void cache_put(cache_t *c, const char *conv, const char *id, const char *user)
{
    cache_entry_t *e = calloc(1, sizeof *e);
    if (!e || !(e->conv = strdup(conv)) || !(e->user = strdup(user ? user : ""))) {
        entry_free(e);
        return;
    }
    snprintf(e->id, sizeof e->id, "%s", id);
    pthread_mutex_lock(&c->mu);
    entry_free(STRMAP_ITEM(strmap_put(&c->entries, &e->node, e->conv), cache_entry_t, node));
    while ((int64_t)strmap_len(&c->entries) > c->bound) {
        strmap_node_t *old = strmap_oldest(&c->entries);
        strmap_del(&c->entries, old);
        entry_free(STRMAP_ITEM(old, cache_entry_t, node));
    }
    pthread_mutex_unlock(&c->mu);
}

void cache_drop(cache_t *c, const char *conv)
{
    pthread_mutex_lock(&c->mu);
    strmap_node_t *n = strmap_get(&c->entries, conv);
    if (n)
        strmap_del(&c->entries, n);
    pthread_mutex_unlock(&c->mu);
    entry_free(STRMAP_ITEM(n, cache_entry_t, node));
}
