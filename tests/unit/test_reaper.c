/* test_reaper.c -- the eviction plan (oldest first, never wrong order) and
 * the tar reader the reaper and the manager read stamps with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "docker/docker.h"
#include "reaper/plan.h"

#define DAY 86400
#define GIB (1024LL * 1024 * 1024)

static void plan_table(void **state)
{
    (void)state;
    const int64_t now = 100 * DAY;
    plan_limits_t lim = { .now = now, .max_age = 14 * DAY, .max_count = 3, .max_bytes = 10 * GIB };
    /* by age: the 15- and 20-day-old go, the rest stay */
    plan_item_t a[] = {
        { now - 1 * DAY, 1 * GIB, 0 }, { now - 15 * DAY, 1, 0 }, { now - 20 * DAY, 1, 0 }, { now - 2 * DAY, 1, 0 },
    };
    assert_int_equal(plan_evictions(a, 4, &lim), 2);
    assert_int_equal(a[0].reason, PLAN_KEEP);
    assert_int_equal(a[1].reason, PLAN_EVICT_AGE);
    assert_int_equal(a[2].reason, PLAN_EVICT_AGE);
    assert_int_equal(a[3].reason, PLAN_KEEP);
    /* by count: 5 young ones, limit 3: the two oldest go */
    plan_item_t b[] = {
        { now - 5, 1, 0 }, { now - 1, 1, 0 }, { now - 4, 1, 0 }, { now - 2, 1, 0 }, { now - 3, 1, 0 },
    };
    assert_int_equal(plan_evictions(b, 5, &lim), 2);
    assert_int_equal(b[0].reason, PLAN_EVICT_COUNT);
    assert_int_equal(b[2].reason, PLAN_EVICT_COUNT);
    assert_int_equal(b[1].reason + b[3].reason + b[4].reason, PLAN_KEEP);
    /* by size: 4+4+4 GiB over 10: the oldest goes, even though it is not
     * the biggest */
    plan_item_t c[] = { { now - 3, 4 * GIB, 0 }, { now - 1, 4 * GIB, 0 }, { now - 9, 3 * GIB, 0 } };
    assert_int_equal(plan_evictions(c, 3, &lim), 1);
    assert_int_equal(c[2].reason, PLAN_EVICT_BYTES);
    assert_int_equal(c[0].reason, PLAN_KEEP);
    /* nothing over any limit: nothing goes */
    plan_item_t d[] = { { now, 1, 0 } };
    assert_int_equal(plan_evictions(d, 1, &lim), 0);
    assert_int_equal(plan_evictions(NULL, 0, &lim), 0);
    /* limit 0 kept: everything goes */
    plan_limits_t none = lim;
    none.max_count = 0;
    plan_item_t e[] = { { now, 1, 0 }, { now - 1, 1, 0 } };
    assert_int_equal(plan_evictions(e, 2, &none), 2);
}

static void tar_roundtrip(void **state)
{
    (void)state;
    size_t len;
    char *tar = docker_tar_file("var/lib/talkback/last-call", "xyz", 3, 0644, 1234567890, &len);
    assert_non_null(tar);
    const char *data;
    size_t size;
    int64_t mtime;
    assert_true(docker_tar_first(tar, len, &data, &size, &mtime));
    assert_int_equal(size, 3);
    assert_memory_equal(data, "xyz", 3);
    assert_int_equal(mtime, 1234567890);
    /* truncated archives are refused, never read past */
    for (size_t cut = 0; cut < 515; cut++)
        assert_false(docker_tar_first(tar, cut, &data, &size, &mtime) && size > cut);
    free(tar);
    /* a long name goes through a PAX header first */
    char name[300];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    tar = docker_tar_file(name, "", 0, 0644, 7, &len);
    assert_non_null(tar);
    assert_true(docker_tar_first(tar, len, &data, &size, &mtime));
    assert_int_equal(size, 0);
    assert_int_equal(mtime, 7);
    free(tar);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_table),
        cmocka_unit_test(tar_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
