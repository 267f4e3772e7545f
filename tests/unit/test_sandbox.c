/* test_sandbox.c -- pure parts of the sandbox manager: write_file path
 * resolution and human ages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "docker/kept.h"
#include "sandbox/cache.h"
#include "sandbox/manager.h"

static void paths(void **state)
{
    (void)state;
    static const struct { const char *in; const char *want; } cases[] = {
        { "main.py", "/work/main.py" },
        { "src/app.js", "/work/src/app.js" },
        { "./a//b/./c.txt", "/work/a/b/c.txt" },
        { "../etc/hosts", "/etc/hosts" },
        { "../../../../x", "/x" },
        { "/tmp/x", "/tmp/x" },
        { "/a/b/../c", "/a/c" },
        { "//srv//shared/f", "/srv/shared/f" },
        { "/", NULL },
        { ".", NULL },
        { "..", NULL },
        { "", NULL },
        { "dir/", NULL },
        { "/..", NULL },
    };
    char out[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = manager_resolve_path(cases[i].in, strlen(cases[i].in), out, sizeof out);
        if (cases[i].want) {
            assert_int_equal(rc, 0);
            assert_string_equal(out, cases[i].want);
        } else {
            assert_int_equal(rc, -1);
        }
    }
    assert_int_equal(manager_resolve_path("a\0b", 3, out, sizeof out), -1);
    char tiny[8];
    assert_int_equal(manager_resolve_path("longer-than-eight", 17, tiny, sizeof tiny), -1);
    /* ".work" stays itself: ".." lookalikes are names. */
    assert_int_equal(manager_resolve_path("...", 3, out, sizeof out), 0);
    assert_string_equal(out, "/work/...");
}

static void ages(void **state)
{
    (void)state;
    char out[64];
    kept_human_age(1, out, sizeof out);
    assert_string_equal(out, "1 second");
    kept_human_age(59, out, sizeof out);
    assert_string_equal(out, "59 seconds");
    kept_human_age(180, out, sizeof out);
    assert_string_equal(out, "3 minutes");
    kept_human_age(3600, out, sizeof out);
    assert_string_equal(out, "1 hour");
    kept_human_age(5 * 3600 + 1000, out, sizeof out);
    assert_string_equal(out, "5 hours");
    kept_human_age(2 * 86400 + 50, out, sizeof out);
    assert_string_equal(out, "2 days");
    kept_human_age(-5, out, sizeof out);
    assert_string_equal(out, "0 seconds");
}

/* The chat -> container cache: replace, drop, and the bound (oldest out). */
static void cache(void **state)
{
    (void)state;
    cache_t *c = cache_new(3);
    assert_non_null(c);
    char id[72];
    char *user = NULL;
    assert_false(cache_get(c, "a", id, NULL));
    cache_put(c, "a", "id-a", "alice");
    assert_true(cache_get(c, "a", id, &user));
    assert_string_equal(id, "id-a");
    assert_string_equal(user, "alice");
    free(user);
    cache_put(c, "a", "id-a2", NULL);
    assert_true(cache_get(c, "a", id, &user));
    assert_string_equal(id, "id-a2");
    assert_string_equal(user, "");
    free(user);
    cache_put(c, "b", "id-b", "bob");
    cache_put(c, "c", "id-c", "carol");
    cache_put(c, "d", "id-d", "dave");
    assert_false(cache_get(c, "a", id, NULL));   /* the oldest went */
    assert_true(cache_get(c, "b", id, NULL));
    assert_true(cache_get(c, "d", id, NULL));
    cache_drop(c, "b");
    assert_false(cache_get(c, "b", id, NULL));
    cache_drop(c, "nobody");
    cache_destroy(&c);
    assert_null(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(paths),
        cmocka_unit_test(cache),
        cmocka_unit_test(ages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
