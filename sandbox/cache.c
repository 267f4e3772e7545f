/* cache.c -- chat -> container id, remembered (see cache.h).
 *
 * A linked list, newest first, under one mutex: a manager holds at most
 * max_running chats' worth, where a linear scan costs less than keeping a
 * hash table honest, and the lock is held only for the scan.
 */
#include "sandbox/cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cache_entry {
    char *conv;
    char *user;
    char id[72];
    struct cache_entry *next;
} cache_entry_t;

struct cache {
    pthread_mutex_t mu;     /* guards entries */
    cache_entry_t *entries; /* newest first */
    int64_t bound;
};

static void entry_free(cache_entry_t *e)
{
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
    while (c->entries) {
        cache_entry_t *e = c->entries;
        c->entries = e->next;
        entry_free(e);
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
    *self_p = NULL;
}

bool cache_get(cache_t *c, const char *conv, char id[72], char **user)
{
    bool hit = false;
    pthread_mutex_lock(&c->mu);
    for (cache_entry_t *e = c->entries; e; e = e->next)
        if (strcmp(e->conv, conv) == 0) {
            memcpy(id, e->id, 72);
            if (user)
                *user = strdup(e->user);
            hit = true;
            break;
        }
    pthread_mutex_unlock(&c->mu);
    return hit;
}

void cache_put(cache_t *c, const char *conv, const char *id, const char *user)
{
    cache_entry_t *e = calloc(1, sizeof *e);
    if (!e || !(e->conv = strdup(conv)) || !(e->user = strdup(user ? user : ""))) {
        if (e) {
            free(e->conv);
            free(e);
        }
        return;
    }
    snprintf(e->id, sizeof e->id, "%s", id);
    int64_t n = 0;
    pthread_mutex_lock(&c->mu);
    for (cache_entry_t **pp = &c->entries; *pp;) {
        cache_entry_t *old = *pp;
        if (strcmp(old->conv, conv) == 0 || ++n >= c->bound) {
            *pp = old->next;
            entry_free(old);
            continue;
        }
        pp = &old->next;
    }
    e->next = c->entries;
    c->entries = e;
    pthread_mutex_unlock(&c->mu);
}

void cache_drop(cache_t *c, const char *conv)
{
    pthread_mutex_lock(&c->mu);
    for (cache_entry_t **pp = &c->entries; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->conv, conv) == 0) {
            cache_entry_t *old = *pp;
            *pp = old->next;
            entry_free(old);
            break;
        }
    pthread_mutex_unlock(&c->mu);
}
