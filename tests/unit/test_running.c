/* test_running.c -- the sandbox manager's own bookkeeping (sandbox/running.c):
 * calls in flight move the last-call record forward and are forgotten
 * when the last one ends; the caps' refusal texts; and the disk cap's
 * size phrases and the line that says why a write failed (sandbox/disk.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kept/kept.h"
#include "sandbox/running.h"
#include "sandbox/disk.h"
#include "sandbox/notices.h"

static void calls_and_stamps(void **state)
{
    (void)state;
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/talkback-unit-XXXXXX");
    assert_non_null(mkdtemp(dir));
    kept_t *kept = kept_new(dir);
    assert_non_null(kept);
    running_opts_t ro = { .network = "talkback-sandboxes", .idle_stop = 3600, .kept = kept };
    running_t *c = running_new(NULL, &ro);
    assert_non_null(c);
    const char *id = "00112233445566778899aabb";
    /* A long call, then a short one beside it: the stamp is the later
     * deadline, and stays while either runs. */
    assert_true(running_call_begin(c, "chat-a", id, 4102444800));
    assert_int_equal(kept_stamp_get(kept, id), 4102444800);
    assert_true(running_call_begin(c, "chat-a", id, 4000000000));
    assert_int_equal(kept_stamp_get(kept, id), 4102444800);
    assert_int_equal(running_inflight(c, "chat-a"), 2);
    assert_int_equal(running_inflight(c, "chat-b"), 0);
    running_call_end(c, "chat-a", id);
    assert_int_equal(running_inflight(c, "chat-a"), 1);
    assert_int_equal(kept_stamp_get(kept, id), 4102444800);
    /* The last one ends: "now", and the chat is forgotten. */
    int64_t before = (int64_t)time(NULL);
    running_call_end(c, "chat-a", id);
    assert_int_equal(running_inflight(c, "chat-a"), 0);
    assert_in_range(kept_stamp_get(kept, id), before, before + 2);
    /* Without caps nothing is counted (and Docker is never asked). */
    textbuf_t err;
    textbuf_init(&err);
    assert_true(running_start_begin(c, "chat-a", "alice", NULL, &err));
    running_start_end(c, "chat-a", "alice", NULL, NULL);
    assert_int_equal(err.len, 0);
    textbuf_free(&err);
    running_destroy(&c);
    assert_null(c);
    kept_record_drop(kept, id);
    kept_destroy(&kept);
    assert_int_equal(rmdir(dir), 0);
}

/* A parked sandbox (being paused or stopped to make room) takes no call:
 * the call is told to find it again; a chat with a call in flight cannot
 * be parked; its own start or unpause brings it back. */
static void parks(void **state)
{
    (void)state;
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/talkback-unit-XXXXXX");
    assert_non_null(mkdtemp(dir));
    kept_t *kept = kept_new(dir);
    assert_non_null(kept);
    running_opts_t ro = { .network = "talkback-sandboxes", .idle_stop = 3600, .kept = kept };
    running_t *c = running_new(NULL, &ro);
    const char *id = "00112233445566778899aabb", *other = "ffeeddccbbaa998877665544";
    assert_true(running_call_begin(c, "chat-a", id, 4102444800));
    assert_false(running_park(c, "chat-a", id)); /* a call in flight */
    running_call_end(c, "chat-a", id);
    assert_true(running_park(c, "chat-a", id));
    assert_false(running_park(c, "chat-a", id)); /* parked already */
    running_park_end(c, id, true);
    assert_false(running_call_begin(c, "chat-a", id, 4102444800));
    assert_int_equal(running_inflight(c, "chat-a"), 0);
    assert_true(running_call_begin(c, "chat-b", other, 4102444800)); /* others go on */
    running_call_end(c, "chat-b", other);
    running_unpark(c, id); /* its call unpaused it */
    assert_true(running_call_begin(c, "chat-a", id, 4102444800));
    running_call_end(c, "chat-a", id);
    /* A pause that failed is undone at once. */
    assert_true(running_park(c, "chat-a", id));
    running_park_end(c, id, false);
    assert_true(running_call_begin(c, "chat-a", id, 4102444800));
    running_call_end(c, "chat-a", id);
    running_destroy(&c);
    kept_record_drop(kept, id);
    kept_record_drop(kept, other);
    kept_destroy(&kept);
    assert_int_equal(rmdir(dir), 0);
}

/* The notices of the tiers: a stop that made room (per user, in all), the
 * paused cap's stop, and an unpause -- each told once. */
static void tier_notices(void **state)
{
    (void)state;
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/talkback-unit-XXXXXX");
    assert_non_null(mkdtemp(dir));
    kept_t *kept = kept_new(dir);
    assert_non_null(kept);
    const char *id = "00112233445566778899aabb";
    static const struct {
        const char *reason, *words;
    } cases[] = {
        { RUNNING_REASON_USER " 20",
          "to make room for another chat of this user: one user may have 20 running at once, "
          "setting `max_running_per_user`, and this one was the least recently used" },
        { RUNNING_REASON_ALL " 100",
          "to make room for another chat: the sandbox host runs at most 100 at once, setting "
          "`max_running`, and this one was the least recently used" },
        { KEPT_REASON_PAUSED_MAX " 20",
          "idle and paused, then stopped as the least recently used of more than 20 paused "
          "sandboxes, setting `max_paused`" },
        { "room-user x", "not by talkback: most likely a restart of Docker or of the host" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t now = (int64_t)time(NULL);
        assert_int_equal(kept_reason_set(kept, id, cases[i].reason), 0);
        textbuf_t t, want;
        textbuf_init(&t);
        textbuf_init(&want);
        notice_resumed(kept, id, now, &t);
        /* (The age is "0 seconds", or "1 second" across a tick.) */
        textbuf_printf(&want,
                       " ago (%s): its files and installs are as they were, but nothing it ran is "
                       "running now. Start servers and background jobs again.]\n",
                       cases[i].words);
        assert_true(strncmp(t.buf, "[Resumed this chat's sandbox, stopped ", 38) == 0);
        assert_non_null(strstr(t.buf, want.buf));
        assert_int_equal(strlen(strstr(t.buf, want.buf)), want.len);
        textbuf_free(&t);
        textbuf_free(&want);
    }
    textbuf_t t;
    textbuf_init(&t);
    assert_int_equal(kept_paused_set(kept, id, "idle 5"), 0);
    notice_unpaused(kept, id, &t);
    static const char unpaused[] = " (no calls for over 5 minutes) and runs again: its files and "
                                   "the programs it left running (servers, background jobs) are "
                                   "as they were.]\n";
    assert_true(strncmp(t.buf, "[This chat's sandbox was paused for ", 36) == 0);
    assert_non_null(strstr(t.buf, unpaused));
    assert_int_equal(strlen(strstr(t.buf, unpaused)), strlen(unpaused));
    textbuf_free(&t);
    textbuf_init(&t);
    notice_unpaused(kept, id, &t); /* used up: paused by someone else now */
    assert_string_equal(t.buf, "[This chat's sandbox was paused (not by talkback) and runs again: "
                               "its files and the programs it left running (servers, background "
                               "jobs) are as they were.]\n");
    textbuf_free(&t);
    kept_record_drop(kept, id);
    kept_destroy(&kept);
    assert_int_equal(rmdir(dir), 0);
}

static void refusal_texts(void **state)
{
    (void)state;
    textbuf_t t;
    textbuf_init(&t);
    running_refusal_text(&t, true, 20, 60 * 60);
    assert_string_equal(
        t.buf,
        "[talkback: this user already has 20 sandboxes running, the most one user may have "
        "(setting `max_running_per_user`), so this chat's sandbox was not started and nothing ran. "
        "Tell the user: a chat's sandbox stops after 60 minutes without calls, and `reset` in a "
        "chat they no longer need frees one at once; then try again.]");
    textbuf_free(&t);
    textbuf_init(&t);
    running_refusal_text(&t, false, 100, 60 * 60);
    assert_string_equal(
        t.buf,
        "[talkback: the sandbox host already runs 100 sandboxes, its limit (setting "
        "`max_running`), so this chat's sandbox was not started and nothing ran. Try again in a "
        "few "
        "minutes, when idle sandboxes have stopped; if it keeps failing, tell the user the sandbox "
        "host is full.]");
    textbuf_free(&t);
}

static void disk_phrases(void **state)
{
    (void)state;
    char s[32];
    struct {
        int64_t bytes;
        const char *want;
    } cases[] = {
        { 2LL << 30, "2 GiB" },   { 64LL << 20, "64 MiB" }, { 3LL << 29, "1.5 GiB" },
        { 10LL << 20, "10 MiB" }, { 512, "512 bytes" },     { 4096, "4 KiB" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        disk_size_phrase(cases[i].bytes, s, sizeof s);
        assert_string_equal(s, cases[i].want);
    }
    /* The line comes only when the output says space ran out; where the
     * cap is not enforced at write time (no disk_t), it is the host's disk. */
    textbuf_t t;
    textbuf_init(&t);
    disk_hint(NULL, INT64_C(2) << 30, "all fine\n", 9, &t);
    assert_int_equal(t.len, 0);
    const char *out = "dd: error writing '/work/big': No space left on device\n";
    disk_hint(NULL, INT64_C(2) << 30, out, strlen(out), &t);
    assert_non_null(strstr(
        t.buf, "[No space left: the sandbox host's own disk is full (this sandbox may write up "
               "to 2 GiB"));
    textbuf_free(&t);
    textbuf_init(&t);
    out = "bash: line 1: /work/x: Disk quota exceeded";
    disk_hint(NULL, INT64_C(2) << 30, out, strlen(out), &t);
    assert_true(t.len > 0);
    textbuf_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(calls_and_stamps), cmocka_unit_test(parks),
        cmocka_unit_test(tier_notices),     cmocka_unit_test(refusal_texts),
        cmocka_unit_test(disk_phrases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
