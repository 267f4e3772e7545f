/* list.h -- the one intrusive list and the one small string-keyed map
 * (curl's llist and hash are the model).
 *
 * list_t is a doubly linked list of list_node_t members embedded in the
 * caller's structs: no allocation, O(1) insert and remove anywhere, a
 * zeroed list_t is empty.  LIST_ITEM turns a node back into its struct.
 *
 * strmap_t maps strings (a chat's conversation id, a container id) to
 * entries that embed a strmap_node_t and own their key.  Every entry is
 * also on one list, oldest put (or touched) first, so a bounded map drops
 * its oldest and an LRU map touches what it uses.  Lookups hash into
 * buckets that grow with the map; should a bucket array fail to allocate,
 * lookups scan the list instead: a put never fails.  A zeroed strmap_t is
 * empty; strmap_free releases the buckets, never the entries.
 *
 * Neither locks: the caller's mutex guards them.  Pure code, unit-tested
 * (tests/unit/test_list.c).
 */
#ifndef TALKBACK_LIST_H
#define TALKBACK_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct list_node {
    struct list_node *prev, *next;
} list_node_t;

typedef struct {
    list_node_t *head, *tail;
    size_t len;
} list_t;

/* The struct of type `type` whose member `member` is the node p. */
#define LIST_ITEM(p, type, member) ((type *)(void *)((char *)(p)-offsetof(type, member)))

/* Every node n of l, first to last (n must not be removed on the way). */
#define list_for_each(n, l) for (list_node_t *n = (l)->head; n; n = n->next)
/* The same, where the body may remove (and free) n. */
#define list_for_each_safe(n, l)                                                                   \
    for (list_node_t *n = (l)->head, *n##_next_ = n ? n->next : NULL; n;                           \
         n = n##_next_, n##_next_ = n ? n->next : NULL)

/* p's item at offset off before it, or NULL for NULL (p evaluated once). */
static inline void *list_item_or_null(const void *p, size_t off)
{
    return p ? (void *)((char *)(uintptr_t)p - off) : NULL;
}
/* The item after e (of type `type`, on a list through `member`), or NULL. */
#define LIST_NEXT(e, type, member)                                                                 \
    ((type *)list_item_or_null((e)->member.next, offsetof(type, member)))
/* The first item of l, or NULL. */
#define LIST_FIRST(l, type, member) ((type *)list_item_or_null((l)->head, offsetof(type, member)))
/* Every item e (a type *) of l, first to last, the body may not remove e. */
#define list_for_each_item(e, l, type, member)                                                     \
    for (type *e = LIST_FIRST(l, type, member); e; e = LIST_NEXT(e, type, member))
/* The same, where the body may remove (and free) e. */
#define list_for_each_item_safe(e, l, type, member)                                                \
    for (type *e = LIST_FIRST(l, type, member),                                                    \
              *e##_next_ = e ? LIST_NEXT(e, type, member) : NULL;                                  \
         e; e = e##_next_, e##_next_ = e ? LIST_NEXT(e, type, member) : NULL)

void list_push_front(list_t *l, list_node_t *n);
void list_push_back(list_t *l, list_node_t *n);
/* Put n right after `at` (at NULL: at the front). */
void list_insert_after(list_t *l, list_node_t *at, list_node_t *n);
/* Take n (which is on l) off l. */
void list_remove(list_t *l, list_node_t *n);
/* Take the first node off l; NULL when l is empty. */
list_node_t *list_pop_front(list_t *l);
static inline bool list_empty(const list_t *l)
{
    return l->head == NULL;
}

typedef struct strmap_node {
    list_node_t order;         /* on the map's list, oldest first */
    struct strmap_node *chain; /* the next entry of its bucket */
    const char *key;           /* the entry's own key; it must outlive the entry's stay */
    size_t hash;
} strmap_node_t;

typedef struct {
    list_t all;              /* every entry, oldest first */
    strmap_node_t **buckets; /* NULL: lookups scan all */
    size_t nbuckets;
} strmap_t;

/* The struct of type `type` whose strmap_node_t member `member` is p
 * (NULL stays NULL). */
#define STRMAP_ITEM(p, type, member) ((type *)list_item_or_null((p), offsetof(type, member)))

/* The entry of key, or NULL. */
strmap_node_t *strmap_get(const strmap_t *m, const char *key);
/* Add n under key as the newest entry.  An entry already under key is
 * taken out and returned (the caller frees it), else NULL. */
strmap_node_t *strmap_put(strmap_t *m, strmap_node_t *n, const char *key);
/* Take n (which is in m) out. */
void strmap_del(strmap_t *m, strmap_node_t *n);
/* Make n (which is in m) the newest. */
void strmap_touch(strmap_t *m, strmap_node_t *n);
/* The oldest entry, or NULL when m is empty. */
strmap_node_t *strmap_oldest(const strmap_t *m);
static inline size_t strmap_len(const strmap_t *m)
{
    return m->all.len;
}
/* The entry put after n, or NULL when n is the newest. */
static inline strmap_node_t *strmap_next(const strmap_node_t *n)
{
    return n->order.next ? LIST_ITEM(n->order.next, strmap_node_t, order) : NULL;
}
/* Every entry e of m, oldest first (e must not be taken out on the way). */
#define strmap_for_each(e, m) for (strmap_node_t *e = strmap_oldest(m); e; e = strmap_next(e))
/* The same, where the body may take e out (and free it). */
#define strmap_for_each_safe(e, m)                                                                 \
    for (strmap_node_t *e = strmap_oldest(m), *e##_next_ = e ? strmap_next(e) : NULL; e;           \
         e = e##_next_, e##_next_ = e ? strmap_next(e) : NULL)
/* Release the buckets; entries still in m are the caller's (take them out
 * first).  m is empty and usable again. */
void strmap_free(strmap_t *m);

#endif
