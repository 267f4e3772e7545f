/* test_others.c -- languages run_code does not run itself (judge/others.c):
 * each says how to run it with the run tool here, or that Debian 13 has no
 * package; no name is both run_code's and another's; the old text stays
 * for a name nobody knows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "judge/languages.h"
#include "judge/others.h"
#include "talk/langs.h"

/* The one table of names (talk/langs.c): every row is run_code's or
 * another's, never both and never neither; every row of those two has its
 * names; no alias is in two rows; each alias finds its own row. */
static void names(void **state)
{
    (void)state;
    for (size_t i = 0; languages_at(i); i++)
        if (!langs_by_tag(languages_at(i)->tag))
            fail_msg("run_code's %s has no names in talk/langs.c", languages_at(i)->tag);
    size_t rows = 0;
    for (size_t i = 0; langs_at(i); i++, rows++) {
        const lang_name_t *ln = langs_at(i);
        const language_t *l = languages_find(ln->tag);
        const other_lang_t *o = others_find(ln->tag);
        if (!l == !o)
            fail_msg("%s is %s", ln->name, l ? "run_code's and another's" : "nobody's");
        if (l && strcmp(l->tag, ln->tag) != 0)
            fail_msg("%s finds %s", ln->tag, l->tag);
        for (const char *a = ln->aliases; *a;) {
            char name[40];
            size_t al = strcspn(a, " ");
            snprintf(name, sizeof name, "%.*s", (int)al, a);
            if (langs_find(name) != ln)
                fail_msg("alias %s of %s finds another row", name, ln->name);
            a += al + strspn(a + al, " ");
        }
    }
    assert_true(rows >= 41);
    assert_string_equal(languages_title(languages_find(" CXX ")), "C++");
    assert_null(langs_find("brainfuck"));
}

static void table(void **state)
{
    (void)state;
    char known[1024];
    languages_list(known, sizeof known);
    size_t n = 0;
    for (size_t i = 0; others_at(i); i++, n++) {
        const other_lang_t *o = others_at(i);
        /* Every alias finds this entry, and none is run_code's own. */
        const lang_name_t *ln = langs_by_tag(o->tag);
        assert_non_null(ln);
        for (const char *a = ln->aliases; *a;) {
            char name[40];
            size_t al = strcspn(a, " ");
            snprintf(name, sizeof name, "%.*s", (int)al, a);
            assert_ptr_equal(others_find(name), o);
            if (languages_find(name))
                fail_msg("%s is run_code's own language too", name);
            a += al + strspn(a + al, " ");
        }
        char text[2048];
        others_say(o, known, text, sizeof text);
        size_t len = strlen(text);
        assert_true(len < sizeof text - 1);
        assert_true(text[0] == '[' && len > 13 && strcmp(text + len - 13, "Nothing ran.]") == 0);
        assert_null(strchr(text, '\n'));
        if (o->install) {
            assert_non_null(strstr(text, o->install));
            assert_non_null(strstr(text, o->file));
            assert_non_null(strstr(text, o->run));
        } else {
            assert_non_null(strstr(text, "Debian 13 has no package for it"));
            assert_non_null(strstr(text, known));
        }
    }
    assert_true(n >= 11); /* with run_code's 30: 41 languages answered */
    assert_null(others_find("brainfuck"));
    assert_null(others_find("cobol")); /* run_code runs it */
    assert_null(others_find(NULL));
    assert_null(others_find(""));
    assert_non_null(others_find("  Scala "));
    assert_null(others_find("ruby")); /* run_code runs it: installed on first use */
    char text[2048];
    others_say(others_find("scala"), known, text, sizeof text);
    assert_string_equal(text,
                        "[talkback: run_code does not run Scala itself, but this sandbox can, "
                        "with the run tool. Write the program to main.scala with write_file "
                        "(its input to input.txt), then run: apt-get update && apt-get "
                        "install -y scala && scala -J-Xmx160m main.scala < input.txt (the "
                        "install is needed once per chat; after it: scala -J-Xmx160m "
                        "main.scala < input.txt). Nothing ran.]");
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(names), cmocka_unit_test(table) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
