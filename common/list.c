/* list.c -- the intrusive list and the string-keyed map (see list.h).
 *
 * The map's buckets are singly chained through the entries and doubled
 * when the map holds twice as many entries as buckets; an allocation that
 * fails leaves the old buckets (or none: then lookups scan the list), so
 * nothing here can fail.
 */
#include "common/list.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STRMAP_FIRST_BUCKETS 16u

/* ---- the list ------------------------------------------------------------- */

void list_insert_after(list_t *l, list_node_t *at, list_node_t *n)
{
    n->prev = at;
    n->next = at ? at->next : l->head;
    if (n->next)
        n->next->prev = n;
    else
        l->tail = n;
    if (at)
        at->next = n;
    else
        l->head = n;
    l->len++;
}

void list_push_front(list_t *l, list_node_t *n)
{
    list_insert_after(l, NULL, n);
}

void list_push_back(list_t *l, list_node_t *n)
{
    list_insert_after(l, l->tail, n);
}

void list_remove(list_t *l, list_node_t *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        l->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        l->tail = n->prev;
    n->prev = n->next = NULL;
    l->len--;
}

list_node_t *list_pop_front(list_t *l)
{
    list_node_t *n = l->head;
    if (n)
        list_remove(l, n);
    return n;
}

/* ---- the map ---------------------------------------------------------------- */

/* FNV-1a over the key's bytes. */
static size_t strmap_hash(const char *key)
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (size_t)h;
}

/* Chain every entry into a bucket array of n buckets (a power of two);
 * on a failed allocation the old array stays. */
static void strmap_rehash(strmap_t *m, size_t n)
{
    strmap_node_t **b = calloc(n, sizeof *b);
    if (!b)
        return;
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = n;
    strmap_for_each(e, m) {
        size_t i = e->hash & (n - 1);
        e->chain = b[i];
        b[i] = e;
    }
}

strmap_node_t *strmap_get(const strmap_t *m, const char *key)
{
    if (!m->buckets) {
        strmap_for_each(e, m) {
            if (strcmp(e->key, key) == 0)
                return e;
        }
        return NULL;
    }
    size_t h = strmap_hash(key);
    for (strmap_node_t *e = m->buckets[h & (m->nbuckets - 1)]; e; e = e->chain)
        if (e->hash == h && strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

strmap_node_t *strmap_put(strmap_t *m, strmap_node_t *n, const char *key)
{
    strmap_node_t *old = strmap_get(m, key);
    if (old)
        strmap_del(m, old);
    n->key = key;
    n->hash = strmap_hash(key);
    n->chain = NULL;
    list_push_back(&m->all, &n->order);
    if (m->buckets) {
        size_t i = n->hash & (m->nbuckets - 1);
        n->chain = m->buckets[i];
        m->buckets[i] = n;
    }
    size_t want = m->nbuckets ? m->nbuckets : STRMAP_FIRST_BUCKETS;
    while (m->all.len > 2 * want && want < SIZE_MAX / 4)
        want *= 2;
    if (want != m->nbuckets)
        strmap_rehash(m, want); /* on failure n stays where it is chained */
    return old;
}

void strmap_del(strmap_t *m, strmap_node_t *n)
{
    if (m->buckets) {
        strmap_node_t **pp = &m->buckets[n->hash & (m->nbuckets - 1)];
        while (*pp && *pp != n)
            pp = &(*pp)->chain;
        if (*pp)
            *pp = n->chain;
    }
    n->chain = NULL;
    list_remove(&m->all, &n->order);
}

void strmap_touch(strmap_t *m, strmap_node_t *n)
{
    list_remove(&m->all, &n->order);
    list_push_back(&m->all, &n->order);
}

strmap_node_t *strmap_oldest(const strmap_t *m)
{
    return m->all.head ? LIST_ITEM(m->all.head, strmap_node_t, order) : NULL;
}

void strmap_free(strmap_t *m)
{
    free(m->buckets);
    memset(m, 0, sizeof *m);
}
