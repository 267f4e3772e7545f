/* test_jobs.c -- what results say about jobs (sandbox/jobs.h): the ends
 * the agent sends parsed strictly and cleaned, each kind of end's line,
 * the line of a call whose command went on as a job, and the quiet case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/jobs.h"

#define S "\x1f"

static char *lines_of(const char *items, size_t len)
{
    textbuf_t t;
    textbuf_init(&t);
    jobs_ended_lines(items, len, &t);
    size_t n;
    char *s = textbuf_take(&t, &n);
    return s ? s : strdup("");
}

/* Each kind of end, as the model reads it. */
static void ends_said(void **state)
{
    (void)state;
    static const char items[] = "3" S "0" S "0" S "0" S "125000" S "make all\0"
                                "4" S "137" S "9" S "0" S "5000" S "./srv\0"
                                "5" S "137" S "9" S "1" S "27400" S "sleep 100";
    char *s = lines_of(items, sizeof items - 1);
    assert_string_equal(
        s,
        "[Job 3 (`make all`), which went on after its call, finished with exit code 0 after 2 "
        "min 05 s. Its whole output is in /run/talkback/jobs/3/out (`talkback job 3` shows what "
        "was not shown yet).]\n"
        "[Job 4 (`./srv`), which went on after its call, was killed by signal 9 after 5 s (exit "
        "code 137). Its whole output is in /run/talkback/jobs/4/out (`talkback job 4` shows what "
        "was not shown yet).]\n"
        "[Job 5 (`sleep 100`), which went on after its call, timed out after 27 s: it and "
        "everything it started were killed at its timeout. Its output is in "
        "/run/talkback/jobs/5/out (`talkback job 5` shows what was not shown yet). If it needs "
        "longer, run it again with a larger timeout.]\n");
    free(s);
}

/* Nothing to say: no bytes, or none that parse. */
static void quiet(void **state)
{
    (void)state;
    char *s = lines_of(NULL, 0);
    assert_string_equal(s, "");
    free(s);
    static const char *const bad[] = {
        "",
        "3",
        "3" S "0" S "0" S "0" S "10",                  /* no command field */
        "x" S "0" S "0" S "0" S "10" S "c",            /* number not a number */
        "0" S "0" S "0" S "0" S "10" S "c",            /* job 0 */
        "-1" S "0" S "0" S "0" S "10" S "c",           /* negative job */
        "3" S "256" S "0" S "0" S "10" S "c",          /* status past 255 */
        "3" S "0" S "65" S "0" S "10" S "c",           /* no such signal */
        "3" S "0" S "0" S "2" S "10" S "c",            /* timed out is 0 or 1 */
        "3" S "0" S "0" S "0" S "-" S "c",             /* a lone minus */
        "3" S "0" S "0" S "0" S "1234567890123" S "c", /* too many digits */
        "3" S "" S "0" S "0" S "10" S "c",             /* an empty field */
        "3 " S "0" S "0" S "0" S "10" S "c",           /* a space */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        s = lines_of(bad[i], strlen(bad[i]));
        assert_string_equal(s, "");
        free(s);
    }
}

/* A command from the sandbox: control bytes and backticks cleaned, cut
 * at JOBS_CMD_SHOWN bytes (not inside a UTF-8 sequence) with "...". */
static void command_cleaned(void **state)
{
    (void)state;
    const char item[] = "7" S "1" S "0" S "0" S "1000" S "echo `id`\t\r\n\x1b[31m\x7f";
    jobs_end_t e;
    assert_true(jobs_parse_item(item, sizeof item - 1, &e));
    assert_int_equal(e.no, 7);
    assert_int_equal(e.status, 1);
    assert_string_equal(e.cmd, "echo 'id'    [31m ");
    char longcmd[400];
    memset(longcmd, 'a', sizeof longcmd);
    memcpy(longcmd + JOBS_CMD_SHOWN - 1, "\xc3\xa9", 2); /* é across the cut */
    char buf[512];
    int n = snprintf(buf, sizeof buf, "8" S "0" S "0" S "0" S "1" S "%.*s", (int)sizeof longcmd,
                     longcmd);
    assert_true(jobs_parse_item(buf, (size_t)n, &e));
    assert_int_equal(strlen(e.cmd), JOBS_CMD_SHOWN - 1 + 3);
    assert_string_equal(e.cmd + JOBS_CMD_SHOWN - 1, "...");
    /* A NUL inside an item's command: not an item (items end at NUL). */
    const char nul[] = "9" S "0" S "0" S "0" S "1" S "a\0b";
    assert_false(jobs_parse_item(nul, sizeof nul - 1, &e));
}

/* At most JOBS_ITEMS_MAX ends in one result, whatever the agent sends. */
static void bounded(void **state)
{
    (void)state;
    textbuf_t in;
    textbuf_init(&in);
    for (int i = 1; i <= 40; i++) {
        textbuf_printf(&in, "%d" S "0" S "0" S "0" S "1000" S "c%d", i, i);
        textbuf_append(&in, "", 1);
    }
    char *s = lines_of(in.buf, in.len);
    size_t lines = 0;
    for (char *p = s; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, JOBS_ITEMS_MAX);
    free(s);
    textbuf_free(&in);
}

/* The line of a call whose command went on, and of one that could not. */
static void started_line(void **state)
{
    (void)state;
    textbuf_t t;
    textbuf_init(&t);
    jobs_started_line(2, 37400, 600, &t);
    assert_string_equal(
        t.buf, "[Still running after 37 s, so this call answers now: the command goes on in the "
               "background as job 2, and is stopped at its timeout of 600 s like any command. Its "
               "whole output goes to /run/talkback/jobs/2/out. Check on it with `talkback job 2` "
               "(it waits for the job up to a call's length, then shows the output not shown yet "
               "and, once the job ended, its exit code); `talkback jobs` lists the jobs. Its end "
               "is also said once in a later result. Do not run it again meanwhile.]\n");
    textbuf_free(&t);
    textbuf_init(&t);
    jobs_unkept_line(3723000, &t);
    assert_non_null(strstr(t.buf, "[Still running after 1 h 02 min, when this call had to answer"));
    textbuf_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ends_said),       cmocka_unit_test(quiet),
        cmocka_unit_test(command_cleaned), cmocka_unit_test(bounded),
        cmocka_unit_test(started_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
