/* test_route.c -- the pure parts of the hub's routing (hub/route.h): which
 * host a new chat is placed on, the conversation -> host cache, and the
 * texts a call gets when its host is gone or the cluster is full. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "hub/route.h"

static void pick_most_room(void **state)
{
    (void)state;
    route_pick_t why;
    /* The lowest share of its cap wins, not the lowest count. */
    route_host_t h[] = {
        { .host = "alpha", .running = 5, .max_running = 10, .mem_free_kb = 1000 },
        { .host = "beta", .running = 8, .max_running = 100, .mem_free_kb = 10 },
    };
    assert_int_equal(route_place_pick(h, 2, &why), 1);
    assert_int_equal(why, ROUTE_PICKED);
    /* Equal shares: more free memory wins. */
    h[1].running = 50;
    assert_int_equal(route_place_pick(h, 2, &why), 0);
    h[0].mem_free_kb = 5;
    assert_int_equal(route_place_pick(h, 2, &why), 1);
    /* A draining host is never picked, however empty. */
    route_host_t d[] = {
        { .host = "alpha", .running = 0, .max_running = 10, .draining = true },
        { .host = "beta", .running = 9, .max_running = 10 },
    };
    assert_int_equal(route_place_pick(d, 2, &why), 1);
    /* A host at its cap is full; no cap (0) counts against 1000. */
    d[1].running = 10;
    assert_int_equal(route_place_pick(d, 2, &why), -1);
    assert_int_equal(why, ROUTE_FULL);
    d[1].max_running = 0;
    assert_int_equal(route_place_pick(d, 2, &why), 1);
    assert_int_equal(route_place_pick(NULL, 0, &why), -1);
    assert_int_equal(why, ROUTE_NO_HOST);
}

/* Two hosts with equal caps and memory: new chats alternate as their
 * running counts grow, as the hub counts its own placements. */
static void pick_spreads(void **state)
{
    (void)state;
    route_host_t h[] = {
        { .host = "alpha", .max_running = 100, .mem_free_kb = 1000 },
        { .host = "beta", .max_running = 100, .mem_free_kb = 1000 },
    };
    route_pick_t why;
    int on[2] = { 0, 0 };
    for (int i = 0; i < 40; i++) {
        int k = route_place_pick(h, 2, &why);
        assert_true(k == 0 || k == 1);
        h[k].running++;
        on[k]++;
    }
    assert_int_equal(on[0], 20);
    assert_int_equal(on[1], 20);
}

static void cache(void **state)
{
    (void)state;
    route_cache_t *c = route_cache_new(3);
    assert_null(route_cache_get(c, "c1"));
    assert_int_equal(route_cache_put(c, "c1", "alpha"), 0);
    assert_int_equal(route_cache_put(c, "c2", "beta"), 0);
    assert_string_equal(route_cache_get(c, "c1"), "alpha");
    assert_int_equal(route_cache_put(c, "c1", "beta"), 0);
    assert_string_equal(route_cache_get(c, "c1"), "beta");
    assert_int_equal(route_cache_size(c), 2);
    route_cache_drop(c, "c1");
    assert_null(route_cache_get(c, "c1"));
    route_cache_drop(c, "absent");
    assert_int_equal(route_cache_size(c), 1);
    /* Past max it starts again empty, then keeps the new entry. */
    route_cache_put(c, "c3", "alpha");
    route_cache_put(c, "c4", "alpha");
    assert_int_equal(route_cache_size(c), 3);
    route_cache_put(c, "c5", "beta");
    assert_int_equal(route_cache_size(c), 1);
    assert_null(route_cache_get(c, "c2"));
    assert_string_equal(route_cache_get(c, "c5"), "beta");
    route_cache_destroy(&c);
    assert_null(c);
}

/* The family of bounds: for each max, 2*max+1 distinct chats put one by
 * one; the cache holds exactly those since it last started again, each
 * with its host, and putting a chat it holds (full or not) changes its
 * host without starting again; dropping them all leaves it empty. */
static void cache_bounds(void **state)
{
    (void)state;
    static const size_t maxes[] = { 1, 2, 3, 7, 64, 1000, 5000 };
    char conv[32], host[32];
    for (size_t m = 0; m < sizeof maxes / sizeof maxes[0]; m++) {
        size_t max = maxes[m], total = 2 * max + 1;
        route_cache_t *c = route_cache_new(max);
        assert_non_null(c);
        for (size_t i = 0; i < total; i++) {
            snprintf(conv, sizeof conv, "chat-%zu", i);
            snprintf(host, sizeof host, "host-%zu", i % 5);
            assert_int_equal(route_cache_put(c, conv, host), 0);
            assert_int_equal(route_cache_size(c), i % max + 1);
        }
        size_t first = total - 1 - (total - 1) % max; /* put since the last start */
        for (size_t i = 0; i < total; i++) {
            snprintf(conv, sizeof conv, "chat-%zu", i);
            snprintf(host, sizeof host, "host-%zu", i % 5);
            const char *got = route_cache_get(c, conv);
            if (i < first) {
                assert_null(got);
                continue;
            }
            assert_non_null(got);
            assert_string_equal(got, host);
            assert_int_equal(route_cache_put(c, conv, "moved"), 0);
            assert_string_equal(route_cache_get(c, conv), "moved");
        }
        assert_int_equal(route_cache_size(c), total - first);
        for (size_t i = first; i < total; i++) {
            snprintf(conv, sizeof conv, "chat-%zu", i);
            route_cache_drop(c, conv);
            route_cache_drop(c, conv); /* twice: the second is a no-op */
            assert_null(route_cache_get(c, conv));
            assert_int_equal(route_cache_size(c), total - 1 - i);
        }
        route_cache_destroy(&c);
    }
}

static void texts(void **state)
{
    (void)state;
    char t[1024];
    route_text_lost(t, sizeof t, "beta");
    const char *lost =
        "[talkback: this chat's machine is on host beta, which is not reachable now.";
    assert_memory_equal(t, lost, strlen(lost));
    assert_non_null(strstr(t, "files are kept there"));
    route_text_full(t, sizeof t, 2, 0);
    assert_non_null(strstr(t, "`max_running`"));
    assert_null(strstr(t, "draining"));
    route_text_full(t, sizeof t, 1, 1);
    assert_non_null(strstr(t, "`max_running`"));
    assert_non_null(strstr(t, "draining"));
    route_text_full(t, sizeof t, 0, 2);
    assert_non_null(strstr(t, "every sandbox host is draining"));
    route_text_moved(t, sizeof t, "beta", "alpha");
    assert_non_null(strstr(t, "starts over on host alpha"));
    /* A host the hub remembers but has not heard from since it started. */
    route_text_unknown(t, sizeof t, "beta");
    const char *maybe =
        "[talkback: this chat's machine may be on host beta, which is not reachable now.";
    assert_memory_equal(t, maybe, strlen(maybe));
    assert_non_null(strstr(t, "Nothing ran"));
    assert_non_null(strstr(t, "files are kept there"));
    assert_non_null(strstr(t, "`talkbackctl forget beta`"));
    route_text_maybe_moved(t, sizeof t, "beta", "alpha");
    assert_non_null(strstr(t, "starts on host alpha"));
    assert_non_null(strstr(t, "`on_host_lost` = place"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pick_most_room), cmocka_unit_test(pick_spreads), cmocka_unit_test(cache),
        cmocka_unit_test(cache_bounds),   cmocka_unit_test(texts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
