/* test_talk.c -- the catalogue of talkback's own sentences (talk/texts.c):
 * every row keeps the rule of texts_check() (a failure names a next step
 * that is in its text; an inner reply names what the model reads instead;
 * a failing verdict names the failure text that follows it),
 * and the rule refuses a planted row of each kind of fault; every TX_
 * macro of talk/texts.h has exactly one row; and no source outside talk/
 * spells a [talkback ...] sentence of its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "talk/texts.h"

#ifndef TALK_SOURCE_DIR
#error "TALK_SOURCE_DIR: the source tree (tests/unit/CMakeLists.txt)"
#endif

/* Every row of the table keeps the rule. */
static void every_row(void **state)
{
    (void)state;
    size_t n = 0, fails = 0;
    char why[256];
    for (size_t i = 0; texts_at(i); i++, n++) {
        const text_row_t *r = texts_at(i);
        if (!texts_check(r, why, sizeof why))
            fail_msg("%s", why);
        assert_ptr_equal(texts_find(r->id), r); /* ids are unique */
        fails += r->kind == TK_FAIL;
    }
    assert_true(n >= 100);
    assert_true(fails >= 60);
    assert_null(texts_find("TX_NOTHING"));
    assert_string_equal(texts_who(TW_SANDBOX), "sandbox manager");
}

/* The rule refuses each kind of fault. */
static void rule_can_fail(void **state)
{
    (void)state;
    static const text_row_t bad[] = {
        /* a failure with no step, a step not in the text, a step that is
         * no imperative */
        { "TX_A", "[talkback: it failed. Nothing ran.]", TW_HUB, TK_FAIL, "x", NULL },
        { "TX_B", "[talkback: it failed. Nothing ran.]", TW_HUB, TK_FAIL, "x", "Try again" },
        { "TX_C", "[talkback: it failed. Nothing ran.]", TW_HUB, TK_FAIL, "x", "Nothing ran" },
        { "TX_D", "[talkback: it failed (%d).]", TW_HUB, TK_FAIL, "x", "%s: somewhere" },
        /* an inner reply naming nothing, an unknown id, a note with a step */
        { "TX_E", "[talkback: inner]", TW_HUB, TK_INNER, "x", NULL },
        { "TX_F", "[talkback: inner]", TW_HUB, TK_INNER, "x", "TX_NO_SUCH_TEXT" },
        { "TX_G", "[talkback: inner]", TW_HUB, TK_INNER, "x", "TX_GW_IGNORED_NONE" },
        { "TX_H", "[talkback: a note.]", TW_HUB, TK_NOTE, "x", "Try again" },
        /* a failing verdict followed by no failure text, an empty text,
         * no trigger */
        { "TX_I", "FAIL: no.\n", TW_JUDGE, TK_VERDICT, "x", "TX_JG_PASS" },
        { "TX_L", "", TW_HUB, TK_NOTE, "x", NULL },
        /* verdicts the reply proxy would misread */
        { "TX_M", "Failed: no.\n", TW_JUDGE, TK_VERDICT, "x", "TX_JG_DONT_ANSWER" },
        { "TX_N", "FAIL: no.\n", TW_JUDGE, TK_VERDICT, "x", NULL },
        { "TX_J", "[talkback: it failed. Try again.]", TW_HUB, TK_FAIL, "", "Try again" },
        /* "Trying" is not "Try" */
        { "TX_K", "[talkback: Trying again.]", TW_HUB, TK_FAIL, "x", "Trying again" },
    };
    char why[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (texts_check(&bad[i], why, sizeof why))
            fail_msg("%s passed the rule", bad[i].id);
    static const text_row_t good[] = {
        { "TX_A", "[talkback: it failed. Try again.]", TW_HUB, TK_FAIL, "x", "Try again" },
        { "TX_B", "%s$ %s\n[talkback: no. Call reset.]\n", TW_HUB, TK_FAIL, "x", "Call reset" },
        { "TX_C", "[talkback: inner]", TW_HUB, TK_INNER, "x", "TX_GW_FAILED" },
        { "TX_D", "[talkback: inner]", TW_HUB, TK_INNER, "x", "read by the operator" },
        { "TX_E", "[talkback: a note.]", TW_HUB, TK_NOTE, "x", NULL },
        { "TX_F", "FAIL: no.\n", TW_JUDGE, TK_VERDICT, "x", "TX_JG_DONT_ANSWER" },
        { "TX_G", "PASS: all 3 tests passed.\n", TW_JUDGE, TK_VERDICT, "x", NULL },
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!texts_check(&good[i], why, sizeof why))
            fail_msg("%s", why);
}

/* Every "#define TX_NAME" of talk/texts.h has exactly one row. */
static void every_macro_a_row(void **state)
{
    (void)state;
    FILE *f = fopen(TALK_SOURCE_DIR "/talk/texts.h", "r");
    assert_non_null(f);
    char line[1024];
    size_t macros = 0;
    while (fgets(line, sizeof line, f)) {
        char id[128];
        if (sscanf(line, "#define %127[A-Z0-9_]", id) != 1 || strncmp(id, "TX_", 3) != 0)
            continue;
        macros++;
        if (!texts_find(id))
            fail_msg("%s has no row in talk/texts.c", id);
    }
    fclose(f);
    size_t rows = 0;
    while (texts_at(rows))
        rows++;
    assert_int_equal(macros, rows);
}

/* ---- no [talkback sentence outside talk/ ------------------------------------ */

static char strays[4096];

/* The string literals of a C file, comments left out: one that starts a
 * [talkback sentence, or holds one after a newline, is a stray. */
static void scan_file(const char *path, const char *rel)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '/' && buf[i + 1] == '/') {
            while (i < n && buf[i] != '\n')
                i++;
        } else if (buf[i] == '/' && buf[i + 1] == '*') {
            char *e = strstr(buf + i + 2, "*/");
            i = e ? (size_t)(e - buf) + 1 : n;
        } else if (buf[i] == '\'') {
            for (i++; i < n && buf[i] != '\''; i++)
                i += buf[i] == '\\';
        } else if (buf[i] == '"') {
            size_t s = ++i;
            for (; i < n && buf[i] != '"'; i++)
                i += buf[i] == '\\';
            bool starts = strncmp(buf + s, "[talkback", 9) == 0;
            bool holds = memmem(buf + s, i - s, "\\n[talkback", 11) != NULL;
            /* The reply proxy looks for the word; it says nothing. */
            bool matcher = strcmp(rel, "proxy/verdict.c") == 0 && i - s == 9;
            if ((starts || holds) && !matcher) {
                size_t line = 1;
                for (size_t k = 0; k < s; k++)
                    line += buf[k] == '\n';
                size_t used = strlen(strays);
                snprintf(strays + used, sizeof strays - used, "%s:%zu\n", rel, line);
            }
        }
    }
}

static int visit(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    const char *rel = path + strlen(TALK_SOURCE_DIR) + 1;
    if (type == FTW_D && ftw->level == 1 &&
        (strcmp(rel, "tests") == 0 || strcmp(rel, "talk") == 0 || rel[0] == '.' ||
         strncmp(rel, "build", 5) == 0))
        return FTW_SKIP_SUBTREE;
    size_t l = strlen(rel);
    if (type == FTW_F && l > 2 &&
        (strcmp(rel + l - 2, ".c") == 0 || strcmp(rel + l - 2, ".h") == 0))
        scan_file(path, rel);
    return FTW_CONTINUE;
}

static void no_strays(void **state)
{
    (void)state;
    strays[0] = '\0';
    assert_int_equal(nftw(TALK_SOURCE_DIR, visit, 16, FTW_PHYS | FTW_ACTIONRETVAL), 0);
    if (strays[0])
        fail_msg("[talkback sentences outside talk/texts.h:\n%s", strays);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_row),
        cmocka_unit_test(rule_can_fail),
        cmocka_unit_test(every_macro_a_row),
        cmocka_unit_test(no_strays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
