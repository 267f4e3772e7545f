/* test_known.c -- the hosts the hub remembers (hub/known.h): parsing the
 * file, keeping it across a new list read from it, forgetting a host, and
 * which remembered host has had no sandbox manager in this life. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hub/known.h"

static void parse_skips_junk(void **state)
{
    (void)state;
    known_t *k = known_new(NULL);
    const char text[] = "beta\n\n# a comment\nalpha\r\nbad name\nbeta\nx=y\ngamma";
    assert_int_equal(known_parse(k, text, sizeof text - 1), 3);
    assert_int_equal(known_count(k), 3);
    assert_string_equal(known_name(k, 0), "alpha");
    assert_string_equal(known_name(k, 1), "beta");
    assert_string_equal(known_name(k, 2), "gamma");
    assert_null(known_name(k, 3));
    /* A name too long is not kept. */
    char longname[KNOWN_NAME_MAX + 2];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_false(known_add(k, longname));
    assert_false(known_add(k, ""));
    assert_false(known_add(k, NULL));
    known_destroy(&k);
    assert_null(k);
}

static void unmanaged_until_hello(void **state)
{
    (void)state;
    known_t *k = known_new("");
    assert_null(known_unmanaged(k));
    assert_true(known_add(k, "beta"));
    assert_false(known_add(k, "beta"));
    assert_true(known_add(k, "alpha"));
    assert_string_equal(known_unmanaged(k), "alpha");
    known_managed(k, "alpha");
    assert_string_equal(known_unmanaged(k), "beta");
    known_managed(k, "nowhere");
    known_managed(k, "beta");
    assert_null(known_unmanaged(k));
    /* Inserting before a managed host keeps its flag with it. */
    assert_true(known_add(k, "aaa"));
    assert_string_equal(known_unmanaged(k), "aaa");
    assert_true(known_forget(k, "aaa"));
    assert_false(known_forget(k, "aaa"));
    assert_null(known_unmanaged(k));
    known_destroy(&k);
}

static void survives_a_new_life(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_known-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/sub/hub-hosts", dir);
    known_t *k = known_new(path);
    assert_int_equal(known_count(k), 0); /* no file yet */
    assert_true(known_add(k, "beta"));
    assert_true(known_add(k, "alpha"));
    known_managed(k, "alpha");
    known_managed(k, "beta");
    known_destroy(&k);

    k = known_new(path);
    assert_int_equal(known_count(k), 2);
    assert_true(known_has(k, "alpha"));
    assert_true(known_has(k, "beta"));
    /* Managers are counted per life: none has said HELLO yet. */
    assert_string_equal(known_unmanaged(k), "alpha");
    assert_true(known_forget(k, "alpha"));
    known_destroy(&k);

    k = known_new(path);
    assert_int_equal(known_count(k), 1);
    assert_false(known_has(k, "alpha"));
    assert_string_equal(known_unmanaged(k), "beta");
    known_destroy(&k);
    unlink(path);
    snprintf(path, sizeof path, "%s/sub", dir);
    rmdir(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_skips_junk),
        cmocka_unit_test(unmanaged_until_hello),
        cmocka_unit_test(survives_a_new_life),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
