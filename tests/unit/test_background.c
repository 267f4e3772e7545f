/* test_background.c -- what the result says of programs left in the
 * background (sandbox/background.h): the items parsed strictly and
 * cleaned, each fate's line, the quiet cases, who holds a taken port, and
 * the record in state_dir that the resume names (bounded, used up). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kept/kept.h"
#include "sandbox/background.h"

#define S "\x1f"

/* A list of items (each NUL-terminated) as bgr_t's left. */
static bgr_t left_of(const char *items, size_t len)
{
    bgr_t r = { 0 };
    r.left = malloc(len);
    memcpy(r.left, items, len);
    r.left_len = len;
    return r;
}

static const char *listeners_out =
    "0.0.0.0:8124 (python3, pid 14); 127.0.0.1:5432 (postgres, pid 9)";

static int fake_probe(void *ctx, const char *command, textbuf_t *out)
{
    (void)command;
    int *calls = ctx;
    (*calls)++;
    textbuf_puts(out, listeners_out);
    textbuf_puts(out, "\n");
    return 0;
}

static char *lines(const char *items, size_t len, const char *output, int *probes)
{
    bgr_t r = left_of(items, len);
    textbuf_t t;
    textbuf_init(&t);
    bg_left_lines(&r, output, output ? strlen(output) : 0, fake_probe, probes, &t);
    bgr_free(&r);
    char *s = textbuf_take(&t, NULL);
    textbuf_free(&t);
    return s ? s : strdup("");
}

static void exited_at_once(void **state)
{
    (void)state;
    static const char items[] = "21" S "x" S "3" S S "python3 crash.py" S "/work/bg/crash.log" S
                                "Traceback (most recent call last):\nValueError: boom";
    int probes = 0;
    char *s = lines(items, sizeof items, "", &probes);
    assert_string_equal(s, "[`python3 crash.py` (pid 21), started in the background, exited at "
                           "once with status 3: it is not running. Its last lines, in "
                           "/work/bg/crash.log:\nTraceback (most recent call last):\nValueError: "
                           "boom\nFix what they say, then start it again.]\n");
    assert_int_equal(probes, 0);
    free(s);
    /* Its output in the call's own: said to be above. */
    static const char above[] = "22" S "x" S "1" S S "node x.js" S S;
    s = lines(above, sizeof above, "Error: x\n", &probes);
    assert_string_equal(s, "[`node x.js` (pid 22), started in the background, exited at once with "
                           "status 1: it is not running. Its output is above.]\n");
    free(s);
    static const char sig[] = "23" S "k" S "9" S S "big" S "/work/b.log" S;
    s = lines(sig, sizeof sig, "", &probes);
    assert_string_equal(s,
                        "[`big` (pid 23), started in the background, was killed at once by "
                        "signal 9 (KILL): it is not running. It wrote nothing to /work/b.log.]\n");
    free(s);
}

static void port_taken_names_the_holder(void **state)
{
    (void)state;
    static const char items[] = "31" S "x" S "1" S S "python3 -m http.server 8124" S
                                "/work/s2.log" S "OSError: [Errno 98] Address already in use";
    int probes = 0;
    char *s = lines(items, sizeof items, "", &probes);
    assert_string_equal(s, "[`python3 -m http.server 8124` (pid 31), started in the background, "
                           "failed: its port was taken (address already in use), so it exited "
                           "with status 1 and is not running. Port 8124 is held by python3 (pid "
                           "14), started earlier: that server still runs, so use it, or stop it "
                           "first (kill 14) and start this one again.]\n");
    assert_int_equal(probes, 1);
    free(s);
    /* No port in its words: every listener is named. */
    static const char other[] = "32" S "x" S "1" S S "node app.js" S S;
    s = lines(other, sizeof other, "Error: listen EADDRINUSE: address already in use :::3000\n",
              &probes);
    assert_non_null(strstr(s, "is not running. Listening now: 0.0.0.0:8124 (python3, pid 14); "
                              "127.0.0.1:5432 (postgres, pid 9). Use the server"));
    free(s);
}

static void listening_and_quiet(void **state)
{
    (void)state;
    static const char items[] = "41" S "r" S "0" S "0.0.0.0:8124 (python3, pid 41)" S
                                "python3 -m http.server 8124" S "/work/s.log" S "\0"
                                "42" S "r" S "0" S S "sleep 30" S S "\0"
                                "43" S "x" S "0" S S "nginx" S S;
    int probes = 0;
    char *s = lines(items, sizeof items, "", &probes);
    assert_string_equal(s, "[Listening now, in the background: 0.0.0.0:8124 (python3, pid 41). It "
                           "keeps running after this call: use it in later runs and do not start "
                           "it again (kill PID stops it). Only this sandbox reaches it, not the "
                           "user's browser: test it here with curl.]\n");
    free(s);
    /* Running without a port, ended with 0, nothing at all: nothing said. */
    static const char quiet[] = "42" S "r" S "0" S S "sleep 30" S S "\0"
                                "43" S "x" S "0" S S "nginx" S S;
    s = lines(quiet, sizeof quiet, "", &probes);
    assert_string_equal(s, "");
    free(s);
    bgr_t none = { 0 };
    textbuf_t t;
    textbuf_init(&t);
    bg_left_lines(&none, "", 0, fake_probe, &probes, &t);
    bg_died_lines(&none, false, &t);
    bg_died_lines(&none, true, &t);
    assert_int_equal(t.len, 0);
    textbuf_free(&t);
    assert_int_equal(probes, 0);
}

static void hostile_items(void **state)
{
    (void)state;
    bgi_t x[BGI_MAX];
    /* Bad pid, bad state, bad signal, a field short, no final NUL. */
    static const char bad[] = "0" S "x" S "1" S S "a" S S "\0"
                              "5" S "q" S "1" S S "a" S S "\0"
                              "5" S "k" S "99" S S "a" S S "\0"
                              "5" S "x" S "1" S S "a" S "\0"
                              "5" S "x" S "1" S S "a" S S;
    assert_int_equal(bgi_parse(bad, sizeof bad - 1, x, BGI_MAX), 0);
    /* Control bytes and backticks cleaned, the label cut, the tail's
     * last lines kept. */
    char item[4096];
    char label[400];
    memset(label, 'a', sizeof label - 1);
    label[sizeof label - 1] = '\0';
    int n = snprintf(
        item, sizeof item,
        "7" S "x" S "2" S S "`rm`\x1b[31m%s" S "/l" S "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\x07", label);
    assert_int_equal(bgi_parse(item, (size_t)n + 1, x, BGI_MAX), 1);
    assert_int_equal(strlen(x[0].label), BGI_LABEL_MAX - 1);
    assert_memory_equal(x[0].label, "'rm' [31maaa", 12);
    assert_string_equal(x[0].tail, "3\n4\n5\n6\n7\n8\n9\n10 ");
}

static void died_between_calls(void **state)
{
    (void)state;
    static const char items[] = "51" S "x" S "1" S S "node app.js" S "/work/app.log" S "Error: boom"
                                "\0"
                                "52" S "x" S "0" S S "make" S "/work/build.log" S "done"
                                "\0"
                                "53" S "K" S "15" S S "python3 -m http.server 8000" S S "\0"
                                "54" S "X" S "1" S S "node api.js" S "/work/api.log" S "boom";
    bgr_t r = { 0 };
    r.died = malloc(sizeof items);
    memcpy(r.died, items, sizeof items);
    r.died_len = sizeof items;
    textbuf_t t;
    textbuf_init(&t);
    bg_died_lines(&r, false, &t);
    assert_string_equal(t.buf, "[Since the last call, `node app.js` (pid 51), which ran in the "
                               "background, exited with status 1: it is not running now. Its "
                               "last lines, in /work/app.log:\nError: boom\nFix what they say, "
                               "then start it again.]\n"
                               "[Since the last call, `make` (pid 52), which ran in the "
                               "background, finished with exit code 0. Its last lines, in "
                               "/work/build.log:\ndone]\n");
    textbuf_free(&t);
    /* Ended while this call's command ran (capital states): said apart,
     * after the output, and never as "since the last call". */
    textbuf_init(&t);
    bg_died_lines(&r, true, &t);
    assert_string_equal(t.buf, "[`python3 -m http.server 8000` (pid 53), which ran in the "
                               "background, was stopped by signal 15 (TERM) while this command "
                               "ran: it is not running now.]\n"
                               "[`node api.js` (pid 54), which ran in the background, exited "
                               "with status 1 while this command ran: it is not running now. "
                               "Its last lines, in /work/api.log:\nboom]\n");
    textbuf_free(&t);
    bgr_free(&r);
}

static void record_and_resume(void **state)
{
    (void)state;
    char dir[] = "/tmp/talkback-bgrec-XXXXXX";
    assert_non_null(mkdtemp(dir));
    kept_t *kept = kept_new(dir);
    assert_non_null(kept);
    const char *id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    static const char alive[] = "61" S "r" S "0" S "0.0.0.0:8000 (python3, pid 61); [::]:8000 "
                                "(python3, pid 61)" S "python3 -m http.server 8000" S S "\0"
                                "62" S "r" S "0" S S "sleep 300" S S;
    bgr_t r = { .alive = malloc(sizeof alive), .alive_len = sizeof alive, .has_alive = true };
    memcpy(r.alive, alive, sizeof alive);
    bg_record(kept, id, &r);
    textbuf_t t;
    textbuf_init(&t);
    bg_resume_words(kept, id, &t);
    assert_string_equal(t.buf, "Running before the stop, in the background: `python3 -m "
                               "http.server 8000` (listening on 0.0.0.0:8000, [::]:8000); `sleep "
                               "300`. Start them again if they are still needed (CMD > server.log "
                               "2>&1 &).");
    textbuf_free(&t);
    /* Used up: said once. */
    textbuf_init(&t);
    bg_resume_words(kept, id, &t);
    assert_int_equal(t.len, 0);
    /* An empty set drops the record; an EXIT without the set keeps it. */
    bg_record(kept, id, &r);
    bgr_t same = { 0 };
    bg_record(kept, id, &same);
    bgr_free(&r);
    bgr_t empty = { .has_alive = true };
    bg_record(kept, id, &empty);
    bg_resume_words(kept, id, &t);
    assert_int_equal(t.len, 0);
    textbuf_free(&t);
    kept_destroy(&kept);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exited_at_once),      cmocka_unit_test(port_taken_names_the_holder),
        cmocka_unit_test(listening_and_quiet), cmocka_unit_test(hostile_items),
        cmocka_unit_test(died_between_calls),  cmocka_unit_test(record_and_resume),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
