/* test_reaper.c -- the eviction plan (oldest first, never wrong order),
 * the tar reader, and the records in state_dir the reaper decides by
 * (kept/kept.h): stamps, stop reasons, what a record name may be, and
 * that each state_dir (one kept_t) keeps its own records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "docker/docker.h"
#include "kept/kept.h"
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
        { now - 1 * DAY, 1 * GIB, 0 },
        { now - 15 * DAY, 1, 0 },
        { now - 20 * DAY, 1, 0 },
        { now - 2 * DAY, 1, 0 },
    };
    assert_int_equal(plan_evictions(a, 4, &lim), 2);
    assert_int_equal(a[0].reason, PLAN_KEEP);
    assert_int_equal(a[1].reason, PLAN_EVICT_AGE);
    assert_int_equal(a[2].reason, PLAN_EVICT_AGE);
    assert_int_equal(a[3].reason, PLAN_KEEP);
    /* by count: 5 young ones, limit 3: the two oldest go */
    plan_item_t b[] = {
        { now - 5, 1, 0 }, { now - 1, 1, 0 }, { now - 4, 1, 0 },
        { now - 2, 1, 0 }, { now - 3, 1, 0 },
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

/* The records of the state_dir of the test that runs now. */
static kept_t *kept;

/* A fresh state_dir under /tmp for one test. */
static void use_state_dir(char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/talkback-unit-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char sub[300];
    snprintf(sub, sizeof sub, "%s/state/sub", dir); /* made by kept_state_init */
    assert_int_equal(config_set("state_dir", sub), 0);
    kept_destroy(&kept);
    kept = kept_new(sub);
    assert_non_null(kept);
    assert_int_equal(kept_state_init(kept), 0);
}

/* Remove it again (the records are gone by then). */
static void drop_state_dir(const char *dir)
{
    kept_destroy(&kept);
    char p[300];
    snprintf(p, sizeof p, "%s/state/sub", dir);
    assert_int_equal(rmdir(p), 0);
    snprintf(p, sizeof p, "%s/state", dir);
    assert_int_equal(rmdir(p), 0);
    assert_int_equal(rmdir(dir), 0);
}

static void records_stamps(void **state)
{
    (void)state;
    char dir[64];
    use_state_dir(dir, sizeof dir);
    const char *id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    /* ids: hex, 12 to 64 characters; nothing that could leave the folder */
    assert_true(kept_id_ok(id));
    assert_true(kept_id_ok("0123456789ab"));
    assert_false(kept_id_ok("0123456789a"));
    assert_false(kept_id_ok("../../etc/passwd"));
    assert_false(kept_id_ok("0123456789AB"));
    assert_false(kept_id_ok(""));
    assert_int_equal(kept_stamp_set(kept, "../x", 5), -1);

    assert_int_equal(kept_stamp_get(kept, id), 0);
    assert_int_equal(kept_stamp_init(kept, id, 1000), 1);
    assert_int_equal(kept_stamp_init(kept, id, 2000), 0); /* there already: kept */
    assert_int_equal(kept_stamp_get(kept, id), 1000);
    assert_int_equal(kept_stamp_set(kept, id, 4102444800), 0); /* a deadline ahead */
    assert_int_equal(kept_stamp_get(kept, id), 4102444800);
    assert_int_equal(kept_stamp_set(kept, id, 1234), 0);
    assert_int_equal(kept_stamp_get(kept, id), 1234);

    char **ids = kept_record_ids(kept);
    assert_non_null(ids);
    assert_string_equal(ids[0], id);
    assert_null(ids[1]);
    kept_record_ids_free(&ids);
    assert_null(ids);
    kept_record_drop(kept, id);
    assert_int_equal(kept_stamp_get(kept, id), 0);
    ids = kept_record_ids(kept);
    assert_null(ids[0]);
    kept_record_ids_free(&ids);
    drop_state_dir(dir);
}

/* The mtime of the reason file, as the reaper's write left it. */
static void reason_at(const char *id, int64_t t)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s%s", config_str("state_dir"), id, KEPT_REASON_SUFFIX);
    struct timespec ts[2] = { { (time_t)t, 0 }, { (time_t)t, 0 } };
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void records_reasons(void **state)
{
    (void)state;
    char dir[64];
    use_state_dir(dir, sizeof dir);
    const char *id = "abcdef012345";
    const int64_t stop = 1700000000;
    /* Left right before the stop: told once, then used up. */
    assert_int_equal(kept_reason_set(kept, id, "idle 60"), 0);
    reason_at(id, stop - 2);
    char *r = kept_reason_take(kept, id, stop);
    assert_non_null(r);
    assert_string_equal(r, "idle 60");
    free(r);
    assert_null(kept_reason_take(kept, id, stop));
    /* Left long before the stop that happened (a later Docker restart), or
     * after it: not this stop's reason. */
    assert_int_equal(kept_reason_set(kept, id, "idle 60"), 0);
    reason_at(id, stop - 3600);
    assert_null(kept_reason_take(kept, id, stop));
    assert_int_equal(kept_reason_set(kept, id, "idle 60"), 0);
    reason_at(id, stop + 60);
    assert_null(kept_reason_take(kept, id, stop));
    /* Never a stopped-at of 0, never control bytes. */
    assert_int_equal(kept_reason_set(kept, id, "idle 60"), 0);
    assert_null(kept_reason_take(kept, id, 0));
    assert_int_equal(kept_reason_set(kept, id, "idle\n[forged]"), 0);
    reason_at(id, stop);
    assert_null(kept_reason_take(kept, id, stop));
    drop_state_dir(dir);
}

/* The mode bits of path (0 when it is not there). */
static unsigned mode_of(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0;
}

/* Two state_dirs side by side, each its own kept_t (as two managers with
 * their own state_dir on one Docker host): every kind of record written
 * through one is in its folder only, mode 0600, and the other sees none;
 * a folder made by kept_state_init is 0700, and one open to others (with
 * a record open to others) is tightened. */
static void records_per_folder(void **state)
{
    (void)state;
    char base[] = "/tmp/talkback-unit-two-XXXXXX";
    assert_non_null(mkdtemp(base));
    char da[300], db[300];
    snprintf(da, sizeof da, "%s/a/state", base);
    snprintf(db, sizeof db, "%s/b", base);
    /* b exists already, open to others, with a record open to others */
    assert_int_equal(mkdir(db, 0755), 0);
    assert_int_equal(chmod(db, 0755), 0);
    const char *id = "00112233445566778899aabbccddeeff";
    char p[600];
    snprintf(p, sizeof p, "%s/%s%s", db, id, KEPT_AGENT_SUFFIX);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(chmod(p, 0644), 0);
    kept_t *a = kept_new(da), *b = kept_new(db);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(kept_state_dir(a), da);
    assert_string_equal(kept_state_dir(b), db);
    assert_int_equal(kept_state_init(a), 0);
    assert_int_equal(kept_state_init(b), 0);
    assert_int_equal(mode_of(da), 0700);
    assert_int_equal(mode_of(db), 0700);
    assert_int_equal(mode_of(p), 0600);
    unlink(p);
    /* every record kind, written through a */
    assert_int_equal(kept_stamp_set(a, id, 1234), 0);
    assert_int_equal(kept_reason_set(a, id, "idle 60"), 0);
    assert_int_equal(kept_paused_set(a, id, "idle 5"), 0);
    assert_int_equal(kept_agent_set(a, id, "v1"), 0);
    assert_int_equal(kept_background_set(a, id, "sleep 300\t\n"), 0);
    static const char *const suffixes[] = { KEPT_STAMP_SUFFIX, KEPT_REASON_SUFFIX,
                                            KEPT_PAUSED_SUFFIX, KEPT_AGENT_SUFFIX,
                                            KEPT_BACKGROUND_SUFFIX };
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(p, sizeof p, "%s/%s%s", da, id, suffixes[i]);
        assert_int_equal(mode_of(p), 0600);
        snprintf(p, sizeof p, "%s/%s%s", db, id, suffixes[i]);
        assert_int_equal(mode_of(p), 0);
    }
    /* b sees none of them */
    char **ids = kept_record_ids(b);
    assert_non_null(ids);
    assert_null(ids[0]);
    kept_record_ids_free(&ids);
    assert_int_equal(kept_stamp_get(b, id), 0);
    assert_false(kept_agent_is(b, id, "v1"));
    assert_null(kept_background_take(b, id));
    int64_t since = 0;
    assert_null(kept_paused_take(b, id, &since));
    /* a sees them all, under the one id */
    assert_int_equal(kept_stamp_get(a, id), 1234);
    assert_true(kept_agent_is(a, id, "v1"));
    ids = kept_record_ids(a);
    assert_non_null(ids);
    for (char **q = ids; *q; q++)
        assert_string_equal(*q, id);
    assert_non_null(ids[0]);
    kept_record_ids_free(&ids);
    kept_record_drop(a, id);
    ids = kept_record_ids(a);
    assert_null(ids[0]);
    kept_record_ids_free(&ids);
    kept_destroy(&a);
    kept_destroy(&b);
    assert_null(a);
    kept_destroy(&a); /* twice: nothing */
    assert_int_equal(rmdir(da), 0);
    snprintf(p, sizeof p, "%s/a", base);
    assert_int_equal(rmdir(p), 0);
    assert_int_equal(rmdir(db), 0);
    assert_int_equal(rmdir(base), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_table),         cmocka_unit_test(tar_roundtrip),
        cmocka_unit_test(records_stamps),     cmocka_unit_test(records_reasons),
        cmocka_unit_test(records_per_folder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
