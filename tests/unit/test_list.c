/* test_list.c -- the intrusive list and the string-keyed map
 * (common/list.h), each driven by long random sequences of operations
 * and checked after every step against a plain array that does the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/list.h"

static uint64_t rng = 88172645463325252ull;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* ---- the list ------------------------------------------------------------- */

#define ITEMS 64

typedef struct {
    int id;
    list_node_t link;
} item_t;

/* l holds exactly model[0..n), in order, forward and backward. */
static void list_matches(const list_t *l, item_t *const *model, size_t n)
{
    assert_int_equal(l->len, n);
    assert_int_equal(list_empty(l), n == 0);
    size_t i = 0;
    list_for_each_item(e, l, item_t, link) {
        assert_true(i < n);
        assert_ptr_equal(e, model[i]);
        i++;
    }
    assert_int_equal(i, n);
    for (list_node_t *p = l->tail; p; p = p->prev)
        assert_ptr_equal(LIST_ITEM(p, item_t, link), model[--i]);
    assert_int_equal(i, 0);
}

static void list_random_ops(void **state)
{
    (void)state;
    item_t items[ITEMS];
    item_t *model[ITEMS];
    bool on[ITEMS] = { false };
    size_t n = 0;
    list_t l = { 0 };
    for (int i = 0; i < ITEMS; i++)
        items[i].id = i;
    for (int step = 0; step < 20000; step++) {
        item_t *it = &items[rnd(ITEMS)];
        unsigned op = rnd(5);
        if (!on[it->id]) {
            size_t at = op == 0 ? 0 : op == 1 ? n : rnd((unsigned)n + 1);
            if (at == 0 && op != 1)
                list_push_front(&l, &it->link);
            else if (at == n)
                list_push_back(&l, &it->link);
            else
                list_insert_after(&l, &model[at - 1]->link, &it->link);
            memmove(model + at + 1, model + at, (n - at) * sizeof *model);
            model[at] = it;
            n++;
            on[it->id] = true;
        } else if (op == 4 && n) {
            list_node_t *p = list_pop_front(&l);
            assert_ptr_equal(LIST_ITEM(p, item_t, link), model[0]);
            on[model[0]->id] = false;
            memmove(model, model + 1, --n * sizeof *model);
        } else {
            size_t at = 0;
            while (model[at] != it)
                at++;
            list_remove(&l, &it->link);
            assert_null(it->link.prev);
            assert_null(it->link.next);
            memmove(model + at, model + at + 1, (n - at - 1) * sizeof *model);
            n--;
            on[it->id] = false;
        }
        list_matches(&l, model, n);
    }
    /* Removing every other item while walking (the _safe form). */
    list_for_each_item_safe(e, &l, item_t, link) {
        if (e->id % 2)
            list_remove(&l, &e->link);
    }
    list_for_each(p, &l)
        assert_int_equal(LIST_ITEM(p, item_t, link)->id % 2, 0);
    list_for_each_safe(p, &l)
        list_remove(&l, p);
    assert_true(list_empty(&l));
    assert_null(l.tail);
    assert_null(list_pop_front(&l));
}

/* ---- the map ------------------------------------------------------------------ */

#define KEYS 600

typedef struct {
    char key[16];
    strmap_node_t node;
} entry_t;

/* m holds exactly model[0..n) (oldest first), each found under its key,
 * and no key of keys[] that is not in the model. */
static void map_matches(const strmap_t *m, entry_t *const *model, size_t n, bool *in)
{
    assert_int_equal(strmap_len(m), n);
    size_t i = 0;
    strmap_for_each(e, m) {
        assert_true(i < n);
        assert_ptr_equal(STRMAP_ITEM(e, entry_t, node), model[i]);
        i++;
    }
    assert_int_equal(i, n);
    for (int k = 0; k < KEYS; k += 7) {
        char key[16];
        snprintf(key, sizeof key, "conv-%d", k);
        entry_t *e = STRMAP_ITEM(strmap_get(m, key), entry_t, node);
        assert_int_equal(e != NULL, in[k]);
        if (e)
            assert_string_equal(e->key, key);
    }
}

static size_t model_find(entry_t *const *model, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(model[i]->key, key) == 0)
            return i;
    return n;
}

/* One random step: put (a fresh entry, replacing any of its key), delete,
 * touch or get; every few thousand steps the buckets are dropped, as an
 * allocation failure would leave them, and lookups must still work. */
static size_t map_step(strmap_t *m, entry_t **model, size_t n, bool *in)
{
    int k = (int)rnd(KEYS);
    char key[16];
    snprintf(key, sizeof key, "conv-%d", k);
    size_t at = model_find(model, n, key);
    strmap_node_t *got = strmap_get(m, key);
    assert_int_equal(got != NULL, at < n);
    switch (rnd(6)) {
    case 0:
    case 1:
    case 2: {
        entry_t *e = calloc(1, sizeof *e);
        assert_non_null(e);
        snprintf(e->key, sizeof e->key, "%s", key);
        entry_t *old = STRMAP_ITEM(strmap_put(m, &e->node, e->key), entry_t, node);
        assert_ptr_equal(old, at < n ? model[at] : NULL);
        if (old) {
            memmove(model + at, model + at + 1, (n - at - 1) * sizeof *model);
            n--;
            free(old);
        }
        model[n++] = e;
        in[k] = true;
        break;
    }
    case 3:
        if (got) {
            strmap_del(m, got);
            free(model[at]);
            memmove(model + at, model + at + 1, (n - at - 1) * sizeof *model);
            n--;
            in[k] = false;
        }
        break;
    case 4:
        if (got) {
            strmap_touch(m, got);
            entry_t *e = model[at];
            memmove(model + at, model + at + 1, (n - at - 1) * sizeof *model);
            model[n - 1] = e;
        }
        break;
    default:
        if (rnd(1000) == 0) {
            free(m->buckets);
            m->buckets = NULL;
            m->nbuckets = 0;
        }
    }
    return n;
}

static void map_random_ops(void **state)
{
    (void)state;
    static entry_t *model[KEYS];
    bool in[KEYS] = { false };
    size_t n = 0;
    strmap_t m = { 0 };
    size_t most_buckets = 0;
    for (int step = 0; step < 30000; step++) {
        n = map_step(&m, model, n, in);
        if (m.nbuckets > most_buckets)
            most_buckets = m.nbuckets;
        if (m.buckets)
            assert_true(strmap_len(&m) <= 2 * m.nbuckets);
        map_matches(&m, model, n, in);
    }
    assert_true(most_buckets >= 128); /* it grew, more than once */
    /* Bounded use: drop the oldest until 10 are left. */
    while (strmap_len(&m) > 10) {
        strmap_node_t *o = strmap_oldest(&m);
        assert_ptr_equal(STRMAP_ITEM(o, entry_t, node), model[0]);
        strmap_del(&m, o);
        free(model[0]);
        memmove(model, model + 1, --n * sizeof *model);
    }
    strmap_for_each_safe(e, &m) {
        strmap_del(&m, e);
        free(STRMAP_ITEM(e, entry_t, node));
    }
    assert_int_equal(strmap_len(&m), 0);
    assert_null(strmap_oldest(&m));
    strmap_free(&m);
    assert_null(m.buckets);
}

/* Keys that differ in one byte, or are prefixes of one another, are
 * different keys; the empty string is a key. */
static void map_near_keys(void **state)
{
    (void)state;
    static const char *keys[] = { "", "a", "ab", "abc", "abd", "b", "ba", "A", "a ", " a" };
    enum { NK = sizeof keys / sizeof keys[0] };
    entry_t e[NK];
    strmap_t m = { 0 };
    for (int i = 0; i < NK; i++) {
        snprintf(e[i].key, sizeof e[i].key, "%s", keys[i]);
        assert_null(strmap_put(&m, &e[i].node, e[i].key));
    }
    for (int i = 0; i < NK; i++)
        assert_ptr_equal(strmap_get(&m, keys[i]), &e[i].node);
    assert_null(strmap_get(&m, "abcd"));
    for (int i = 0; i < NK; i++)
        strmap_del(&m, &e[i].node);
    strmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(list_random_ops),
        cmocka_unit_test(map_random_ops),
        cmocka_unit_test(map_near_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
