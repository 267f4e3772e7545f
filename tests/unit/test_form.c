/* test_form.c -- answers right in all but form (judge/form.c): rounding,
 * line breaks, the answer on stderr, code that defines a function nothing
 * calls; and the look-alikes that are real wrong answers, which must stay
 * plain FAILs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "judge/form.h"

static form_t check(const char *e, const char *g)
{
    form_t f;
    form_check(e, strlen(e), g, strlen(g), &f);
    return f;
}

static char *said(const form_t *f)
{
    textbuf_t t;
    textbuf_init(&t);
    form_render(f, &t);
    if (!t.buf)
        textbuf_puts(&t, "");
    return textbuf_take(&t, NULL);
}

static void rounding(void **state)
{
    (void)state;
    form_t f = check("0.33\n", "0.3333333333\n");
    assert_int_equal(f.kind, FORM_ROUNDING);
    assert_int_equal(f.decimals, 2);
    char *s = said(&f);
    assert_string_equal(s,
                        "FAIL: the values agree to the expected precision (2 decimal places), so "
                        "only the rounding differs. Print them rounded to 2 decimal places, as "
                        "expected (Python: f\"{x:.2f}\"; C, C++: printf(\"%.2f\", x)).\n");
    free(s);
    /* Several values, some equal, on several lines; CRLF; fewer decimals. */
    assert_int_equal(check("area 3.14\n2 0.667\r\n", "area 3.14159\r\n2 0.6666667").kind,
                     FORM_ROUNDING);
    f = check("0.3333\n", "0.33\n");
    assert_int_equal(f.kind, FORM_ROUNDING);
    assert_int_equal(f.decimals, 4);
    f = check("2.5\n", "2.54\n");
    assert_int_equal(f.kind, FORM_ROUNDING);
    s = said(&f);
    assert_non_null(strstr(s, "(1 decimal place), so only the rounding differs. Print them "
                              "rounded to 1 decimal place,"));
    free(s);
    /* Wrong answers stay wrong: too far off, integers, other words,
     * another count of values or lines. */
    assert_int_equal(check("0.33\n", "0.34\n").kind, FORM_NONE);
    assert_int_equal(check("0.33\n", "0.3390\n").kind, FORM_NONE);
    assert_int_equal(check("3\n", "3.4\n").kind, FORM_NONE);
    assert_int_equal(check("3\n", "4\n").kind, FORM_NONE);
    assert_int_equal(check("yes 0.5\n", "no 0.5000001\n").kind, FORM_NONE);
    assert_int_equal(check("0.33 1\n", "0.333\n").kind, FORM_NONE);
    assert_int_equal(check("0.33\n0.5\n", "0.333\n").kind, FORM_NONE);
    assert_int_equal(check("1e-3\n", "0.0011\n").kind, FORM_NONE);
}

static void line_breaks(void **state)
{
    (void)state;
    form_t f = check("1 2 3\n", "1\n2\n3\n");
    assert_int_equal(f.kind, FORM_LINE_BREAKS);
    assert_int_equal(f.expected_lines, 1);
    assert_int_equal(f.got_lines, 3);
    char *s = said(&f);
    assert_string_equal(s, "FAIL: the values are right and only the line breaks differ: 1 line was "
                           "expected, the program printed 3. Print them all on one line, separated "
                           "by spaces (Python: print(*values)); C++: a space between values, one "
                           "newline at the end).\n");
    free(s);
    f = check("1\n2\n3\n", "1 2 3");
    assert_int_equal(f.kind, FORM_LINE_BREAKS);
    s = said(&f);
    assert_non_null(strstr(s, "3 lines were expected, the program printed 1. Print each expected "
                              "line on its own line"));
    free(s);
    f = check("1 2\n3 4\n", "1\n2 3\n4\n");
    assert_int_equal(f.kind, FORM_LINE_BREAKS);
    s = said(&f);
    assert_non_null(strstr(s, "Break the lines where the expected output does."));
    free(s);
    /* Numbers within 1e-6 count as the same values. */
    assert_int_equal(check("0.5 1\n", "0.5000001\n1\n").kind, FORM_LINE_BREAKS);
    /* Not the same values, or not in the same order. */
    assert_int_equal(check("1 2 3\n", "1\n3\n2\n").kind, FORM_NONE);
    assert_int_equal(check("1 2 3\n", "1\n2\n").kind, FORM_NONE);
    assert_int_equal(check("1 2 3\n", "1\n2\n3\n4\n").kind, FORM_NONE);
    assert_int_equal(check("1 2 3\n", "").kind, FORM_NONE);
    s = said(&(form_t){ .kind = FORM_NONE });
    assert_string_equal(s, "");
    free(s);
}

static void uncalled(void **state)
{
    (void)state;
    static const struct {
        const char *code, *name;
    } cases[] = {
        /* LeetCode's Python: a class nothing makes, its method named. */
        { "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n"
          "        return []\n",
          "twoSum" },
        { "from typing import List\n\nclass Solution:\n    def __init__(self):\n        pass\n\n"
          "    def maxProfit(self, prices: List[int]) -> int:\n        return 0\n",
          "maxProfit" },
        /* A function defined and never called. */
        { "def solve():\n    n = int(input())\n    print(n * 2)\n", "solve" },
        { "import sys\n\ndef helper(x):\n    return x + 1\n\ndef main():\n"
          "    print(helper(int(sys.stdin.read())))\n",
          "main" },
        /* JavaScript's forms. */
        { "var twoSum = function(nums, target) {\n  return [];\n};\n", "twoSum" },
        { "function solve(lines) {\n  console.log(lines.length);\n}\n", "solve" },
        { "const solve = (s) => {\n  console.log(s);\n};\n", "solve" },
        { "class Solution {\n  twoSum(nums, target) {\n    return [];\n  }\n}\n", "twoSum" },
        /* Called: nothing to say. */
        { "def solve():\n    print(2)\n\nsolve()\n", NULL },
        { "class Solution:\n    def f(self):\n        return 1\n\nprint(Solution().f())\n", NULL },
        { "def main():\n    print(1)\n\nif __name__ == '__main__':\n    main()\n", NULL },
        { "n = int(input())\nprint(n)\n", NULL },
        /* Languages that start at main by themselves. */
        { "#include <stdio.h>\nint main(void) { return 0; }\nint unused(void) { return 1; }\n",
          NULL },
        { "class Solution { public int[] twoSum(int[] n, int t) { return n; } }\n"
          "public class Main { public static void main(String[] a) { } }\n",
          NULL },
        { "package main\nfunc helper() {}\nfunc main() {}\n", NULL },
        { "", NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = form_uncalled(cases[i].code, strlen(cases[i].code));
        if (cases[i].name ? !got || strcmp(got, cases[i].name) != 0 : got != NULL)
            fail_msg("case %zu: want %s, got %s", i, cases[i].name ? cases[i].name : "NULL",
                     got ? got : "NULL");
        free(got);
    }
    assert_null(form_uncalled(NULL, 0));
}

static void texts(void **state)
{
    (void)state;
    textbuf_t t;
    textbuf_init(&t);
    form_render_uncalled("twoSum", &t);
    assert_string_equal(t.buf, "FAIL: the program printed nothing: the code defines `twoSum` but "
                               "never calls it. The program must read the input and print the "
                               "answer: add the lines that read stdin, call `twoSum` with it and "
                               "print the result (run_code runs the code as a whole program).\n");
    textbuf_free(&t);
    form_render_stderr(true, &t);
    assert_string_equal(t.buf,
                        "FAIL: stdout was empty, and the answer went to stderr: stderr is not "
                        "compared, and the answer must go to stdout (Python: print(x), not "
                        "print(x, file=sys.stderr); C++: cout, not cerr; Java: System.out, "
                        "not System.err).\n");
    textbuf_free(&t);
    form_render_stderr(false, &t);
    assert_string_equal(t.buf,
                        "FAIL: stdout differs, but stderr holds the expected answer: stderr is "
                        "not compared, and the answer must go to stdout (anything else to "
                        "stderr, or nowhere).\n");
    textbuf_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rounding),
        cmocka_unit_test(line_breaks),
        cmocka_unit_test(uncalled),
        cmocka_unit_test(texts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
