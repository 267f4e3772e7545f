/* test_contain.c -- what one sandbox may take of what the host shares:
 * the agent's inotify watchdog (its fdinfo line count, and the manager's
 * reading of what it reports), the image watcher's fallback walk, the
 * memory floor's refusal, the disk cap's stop line, and which containers
 * are orphans (a claimed spare whose claim record is gone). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/imagescan.h"
#include "agent/watchdog.h"
#include "common/convid.h"
#include "kept/claim.h"
#include "kept/kept.h"
#include "sandbox/capacity.h"
#include "sandbox/disk.h"
#include "sandbox/inotify_cap.h"

/* ---- the watchdog's count of watches in an fdinfo -------------------------- */

static const char fdinfo[] = "pos:\t0\nflags:\t02004000\nmnt_id:\t15\nino:\t1057\n"
                             "inotify wd:3 ino:2 sdev:800001 mask:fce ignored_mask:0 "
                             "fhandle-bytes:8 fhandle-type:1 f_handle:0200000000000000\n"
                             "inotify wd:2 ino:3 sdev:800001 mask:fce ignored_mask:0\n"
                             "inotify wd:1 ino:4 sdev:800001 mask:fce ignored_mask:0\n";

static void fdinfo_lines(void **state)
{
    (void)state;
    watchdog_lines_t st = { 0 };
    assert_int_equal(watchdog_count_lines(&st, fdinfo, strlen(fdinfo)), 3);
    /* the same text fed a byte at a time, split anywhere */
    watchdog_lines_t one = { 0 };
    for (size_t i = 0; i < strlen(fdinfo); i++)
        watchdog_count_lines(&one, fdinfo + i, 1);
    assert_int_equal(one.count, 3);
    /* "ino:" at a line's start and "inotify" inside a line are no watch */
    watchdog_lines_t other = { 0 };
    const char *t = "ino:\t7\nx inotify wd:1\ninotif\ninotify wd:9 ino:1\n";
    assert_int_equal(watchdog_count_lines(&other, t, strlen(t)), 1);
}

/* ---- what the manager takes of the watchdog's report --------------------------- */

static void report_taken(void **state)
{
    (void)state;
    icap_set(16384, 32);
    frame_msg_t m = { .type = FRAME_EXIT };
    frame_set_num(&m, FN_WD_KILLED, 1);
    frame_set_num(&m, FN_WD_PID, 1234);
    frame_set_num(&m, FN_WD_WATCHES, 184296);
    frame_set_num(&m, FN_WD_INSTANCES, 1);
    frame_set_str(&m, FS_WD_COMM, "no`de\n\x01", 7);
    icap_report_t r;
    icap_take(&r, &m);
    assert_int_equal(r.killed, 1);
    assert_string_equal(r.comm, "no?de??");
    textbuf_t t;
    textbuf_init(&t);
    icap_line(&r, &t);
    assert_non_null(strstr(t.buf, "[talkback: processes of this sandbox held more inotify watches "
                                  "than the 16384 one sandbox may hold (setting "
                                  "`inotify_max_watches`), so process 1234 (`no?de??`, over 16384 "
                                  "watches in 1 instance) was killed: "));
    textbuf_free(&t);
    /* past the instances cap rather: that cap is named */
    frame_set_num(&m, FN_WD_WATCHES, 40);
    frame_set_num(&m, FN_WD_INSTANCES, 40);
    frame_set_num(&m, FN_WD_KILLED, 3);
    icap_take(&r, &m);
    textbuf_init(&t);
    icap_line(&r, &t);
    assert_non_null(strstr(t.buf, "inotify instances than the 32 one sandbox may hold (setting "
                                  "`inotify_max_instances`)"));
    assert_non_null(strstr(t.buf, "was killed, and 2 more processes:"));
    textbuf_free(&t);
    /* nonsense numbers from a sandbox: nothing said */
    frame_set_num(&m, FN_WD_PID, -5);
    icap_take(&r, &m);
    assert_int_equal(r.killed, 0);
    textbuf_init(&t);
    icap_line(&r, &t);
    assert_int_equal(t.len, 0);
    textbuf_free(&t);
    /* and a HELLO carries the caps */
    frame_msg_t h = { .type = FRAME_HELLO };
    icap_hello(&h);
    assert_int_equal(frame_num(&h, FN_INOTIFY_WATCHES, 0), 16384);
    assert_int_equal(frame_num(&h, FN_INOTIFY_INSTANCES, 0), 32);
    icap_set(0, 0);
    frame_msg_t h0 = { .type = FRAME_HELLO };
    icap_hello(&h0);
    assert_false(frame_has_num(&h0, FN_INOTIFY_WATCHES));
}

/* ---- the image watcher's fallback walk ------------------------------------ */

static char tmpdir[64];

static void put(const char *rel)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", tmpdir, rel);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "x", 1), 1);
    close(fd);
}

static void collect(const char *path, void *ctx)
{
    char *out = ctx;
    strcat(out, strrchr(path, '/') + 1);
    strcat(out, " ");
}

static void scan_walk(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_contain.XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    char p[256];
    snprintf(p, sizeof p, "%s/a", tmpdir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/a/b", tmpdir);
    mkdir(p, 0755);
    put("old.png");
    struct timespec since;
    usleep(20000);
    clock_gettime(CLOCK_REALTIME_COARSE, &since);
    usleep(20000);
    put("one.png");
    usleep(20000);
    put("a/two.png");
    usleep(20000);
    put("a/b/three.png");
    snprintf(p, sizeof p, "%s/link.png", tmpdir);
    assert_int_equal(symlink("/etc/passwd", p), 0);

    /* the newest files since, oldest first; old.png and the link are not */
    char got[512] = "";
    imagescan_t *s = imagescan_new(1000, 10);
    imagescan_walk(s, tmpdir, 5, &since);
    imagescan_each(s, collect, got);
    assert_string_equal(got, "one.png two.png three.png ");
    imagescan_free(&s);
    assert_null(s);

    /* depth: the root's own files and one level */
    got[0] = '\0';
    s = imagescan_new(1000, 10);
    imagescan_walk(s, tmpdir, 1, &since);
    imagescan_each(s, collect, got);
    assert_string_equal(got, "one.png two.png ");
    imagescan_free(&s);

    /* the newest max_found only */
    got[0] = '\0';
    s = imagescan_new(1000, 2);
    imagescan_walk(s, tmpdir, 5, &since);
    imagescan_each(s, collect, got);
    assert_string_equal(got, "two.png three.png ");
    imagescan_free(&s);

    /* no more entries than asked are looked at */
    s = imagescan_new(2, 10);
    imagescan_walk(s, tmpdir, 5, &since);
    assert_int_equal(imagescan_entries(s), 2);
    imagescan_free(&s);

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    assert_int_equal(system(cmd), 0);
}

/* ---- the memory floor and the disk cap's stop line ------------------------- */

static void refusals(void **state)
{
    (void)state;
    textbuf_t t;
    textbuf_init(&t);
    capacity_mem_refusal(400 * 1024, 512LL << 20, &t);
    assert_string_equal(
        t.buf, "[talkback: the sandbox host has only 400 MiB of memory available, below the 512 "
               "MiB it keeps free (setting `mem_floor`), so this chat's sandbox was not started "
               "and nothing ran. Try again in a few minutes, when idle sandboxes have stopped; if "
               "it keeps failing, tell the user the sandbox host is out of memory.]");
    textbuf_free(&t);
    /* a floor of 0 is no floor, and no host has a petabyte free */
    assert_true(capacity_start_room(0, NULL));
    textbuf_init(&t);
    assert_false(capacity_start_room(1LL << 50, &t));
    assert_non_null(strstr(t.buf, "(setting `mem_floor`), so this chat's sandbox was not started"));
    textbuf_free(&t);

    textbuf_init(&t);
    disk_capped_line(64LL << 20, 300LL << 20, &t);
    assert_non_null(strstr(t.buf, "[No space left: this sandbox had written 300 MiB, past its "
                                  "disk cap of 64 MiB (setting `disk_cap`), so the command and "
                                  "everything it started were stopped, and the sandbox is removed "
                                  "with all its files: the next call starts a clean one."));
    textbuf_free(&t);
}

/* ---- orphans: claimed spares whose claim record is gone --------------------- */

static void orphans(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_contain_state.XXXXXX";
    assert_non_null(mkdtemp(dir));
    kept_t *kept = kept_new(dir);
    assert_non_null(kept);
    char scope[17], other[17];
    claim_scope_hash(dir, scope);
    claim_scope_hash("/somewhere/else", other);
    assert_string_not_equal(scope, other);
    const char *id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    char name[CONVID_NAME_MAX + 1];
    name[0] = '/';
    convid_container_name("chat-1", name + 1);
    json_t *labels =
        json_pack("{s:s, s:s}", SPEC_LABEL_SPARE, "00112233445566aa", SPEC_LABEL_POOL, scope);
    /* claimed (a chat's name) with no record: an orphan of this pool only */
    assert_true(claim_is_orphan(kept, labels, id, name, scope));
    assert_false(claim_is_orphan(kept, labels, id, name, other));
    /* with its record it is the chat's */
    assert_int_equal(claim_record_set(kept, id, "chat-1", "u1"), 0);
    assert_false(claim_is_orphan(kept, labels, id, name, scope));
    /* a record naming another chat is no record of this one */
    claim_record_drop(kept, id);
    assert_int_equal(claim_record_set(kept, id, "chat-2", "u1"), 0);
    assert_true(claim_is_orphan(kept, labels, id, name, scope));
    claim_record_drop(kept, id);
    /* a spare nobody claimed (a spare's name) is the pool's, no orphan */
    assert_false(
        claim_is_orphan(kept, labels, id, "/talkback-spare-0123456789abcdef01234567", scope));
    /* a labelled chat sandbox is never one */
    json_object_set_new(labels, SPEC_LABEL_CONV, json_string("chat-1"));
    assert_false(claim_is_orphan(kept, labels, id, name, scope));
    json_decref(labels);

    /* the first-seen mark: made once, kept, cleared */
    assert_int_equal(kept_orphan_since(kept, id, 1000), 1000);
    assert_int_equal(kept_orphan_since(kept, id, 5000), 1000);
    kept_orphan_clear(kept, id);
    assert_int_equal(kept_orphan_since(kept, id, 5000), 5000);
    char **ids = kept_record_ids(kept);
    assert_non_null(ids);
    assert_string_equal(ids[0], id);
    kept_record_ids_free(&ids);
    kept_record_drop(kept, id);
    ids = kept_record_ids(kept);
    assert_null(ids[0]);
    kept_record_ids_free(&ids);
    kept_destroy(&kept);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fdinfo_lines), cmocka_unit_test(report_taken), cmocka_unit_test(scan_walk),
        cmocka_unit_test(refusals),     cmocka_unit_test(orphans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
