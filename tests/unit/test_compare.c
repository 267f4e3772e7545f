/* test_compare.c -- run_code's output comparison and verdict texts: a table
 * of cases (most from real runs), then buffers a table cannot hold (NUL
 * bytes, invalid UTF-8, long and huge outputs) and the prompt finder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/textbuf.h"
#include "judge/compare.h"
#include "judge/languages.h"
#include "judge/stats.h"
#include "judge/build.h"

#define PASS_TEXT "PASS: the output matches the expected output.\n"
#define SPACING_TEXT                                                                               \
    "PASS: the output matches the expected output (only spacing differs: "                         \
    "extra or missing spaces between values were ignored).\n"
#define FLOAT_TEXT                                                                                 \
    "PASS: the output matches the expected output (numbers differ by at most "                     \
    "1e-6, which counts as equal).\n"
#define PROMPT_TAIL                                                                                \
    ". Nobody types here: the input comes from stdin, all at once. Remove every "                  \
    "prompt and print only what the task asks for.\n"

typedef struct {
    const char *name;
    const char *expected, *got, *input;
    compare_verdict_t want;
    size_t line;
    const char *has[4];   /* substrings the rendered text must hold */
    const char *hasnt[2]; /* substrings it must not hold */
} compare_case_t;

static const compare_case_t cases[] = {
    /* Normalising: all exact PASS. */
    { "same", "6\n", "6\n", "", COMPARE_PASS, 0, { PASS_TEXT }, { "spacing", "FAIL" } },
    { "no final newline", "1\n2\n", "1\n2", "", COMPARE_PASS, 0, { PASS_TEXT }, { 0 } },
    { "crlf output", "1 2\n3\n", "1 2\r\n3\r\n", "", COMPARE_PASS, 0, { PASS_TEXT }, { 0 } },
    { "crlf expected", "1 2\r\n3\r\n", "1 2\n3\n", "", COMPARE_PASS, 0, { PASS_TEXT }, { 0 } },
    { "lone cr", "a\nb\n", "a\rb\r", "", COMPARE_PASS, 0, { PASS_TEXT }, { 0 } },
    { "trailing spaces", "1 2\n3\n", "1 2   \n3\t\n", "", COMPARE_PASS, 0, { PASS_TEXT }, { 0 } },
    { "trailing blank lines", "5\n", "5\n\n\n  \n\r\n", "", COMPARE_PASS, 0, { PASS_TEXT }, { 0 } },
    { "expected has blank tail", "5\n\n\n", "5", "", COMPARE_PASS, 0, { PASS_TEXT }, { 0 } },
    { "both empty", "", "", "", COMPARE_PASS, 0, { PASS_TEXT }, { 0 } },
    { "blank middle line with spaces",
      "1\n\n2\n",
      "1\n   \n2\n",
      "",
      COMPARE_PASS,
      0,
      { PASS_TEXT },
      { 0 } },

    /* Spacing: PASS, and it says so. */
    { "double space", "1 2\n", "1  2\n", "", COMPARE_PASS_SPACING, 0, { SPACING_TEXT }, { 0 } },
    { "leading space", "1 2\n", " 1 2\n", "", COMPARE_PASS_SPACING, 0, { SPACING_TEXT }, { 0 } },
    { "tab between",
      "1 2 3\n",
      "1\t2 \t 3\n",
      "",
      COMPARE_PASS_SPACING,
      0,
      { SPACING_TEXT },
      { 0 } },
    { "missing space kept apart",
      "1 2\n",
      "12\n",
      "",
      COMPARE_FAIL_LINE,
      1,
      { "FAIL: line 1 differs.\n  expected: 1 2\n  got:      12\n" },
      { 0 } },

    /* A newline is not a space (DMOJ). */
    { "newline vs space",
      "1 2\n",
      "1\n2\n",
      "",
      COMPARE_FAIL_LINE,
      1,
      { "FAIL: line 1 differs.\n  expected: 1 2\n  got:      1\n" },
      { "PASS" } },
    { "space vs newline",
      "1\n2\n",
      "1 2\n",
      "",
      COMPARE_FAIL_LINE,
      1,
      { "FAIL: line 1 differs.\n  expected: 1\n  got:      1 2\n" },
      { 0 } },
    { "blank line in the middle",
      "1\n2\n",
      "1\n\n2\n",
      "",
      COMPARE_FAIL_LINE,
      2,
      { "FAIL: line 2 differs.\n  expected: 2\n  got:      (empty line)\n" },
      { 0 } },
    { "missing blank line",
      "1\n\n3\n",
      "1\nx\n3\n",
      "",
      COMPARE_FAIL_LINE,
      2,
      { "  expected: (empty line)\n  got:      x\n" },
      { 0 } },

    /* Numbers. */
    { "0.1+0.2",
      "0.3\n",
      "0.30000000000000004\n",
      "",
      COMPARE_PASS_FLOAT,
      0,
      { FLOAT_TEXT },
      { 0 } },
    { "10 vs 10.0", "10\n", "10.0\n", "", COMPARE_PASS_FLOAT, 0, { FLOAT_TEXT }, { 0 } },
    { "3 vs 3.0000001", "3\n", "3.0000001\n", "", COMPARE_PASS_FLOAT, 0, { FLOAT_TEXT }, { 0 } },
    { "exponent", "0\n", "1e-7\n", "", COMPARE_PASS_FLOAT, 0, { FLOAT_TEXT }, { 0 } },
    { "exactly 1e-6 apart", "1\n", "1.000001\n", "", COMPARE_PASS_FLOAT, 0, { FLOAT_TEXT }, { 0 } },
    { "just over 1e-6",
      "1\n",
      "1.0000011\n",
      "",
      COMPARE_FAIL_LINE,
      1,
      { "  expected: 1\n  got:      1.0000011\n" },
      { 0 } },
    { "relative for big values",
      "1000000000.0\n",
      "1000000000.5\n",
      "",
      COMPARE_PASS_FLOAT,
      0,
      { FLOAT_TEXT },
      { 0 } },
    { "float and spacing",
      "0.3 1\n",
      "0.30000000000000004   1\n",
      "",
      COMPARE_PASS_FLOAT,
      0,
      { FLOAT_TEXT },
      { 0 } },
    { "float off",
      "0.5\n",
      "0.50001\n",
      "",
      COMPARE_FAIL_LINE,
      1,
      { "  expected: 0.5\n  got:      0.50001\n" },
      { 0 } },
    { "3 vs 4",
      "3\n",
      "4\n",
      "",
      COMPARE_FAIL_LINE,
      1,
      { "FAIL: line 1 differs.\n  expected: 3\n  got:      4\n" },
      { "PASS", "prompt" } },
    { "integers exact",
      "1000000000\n",
      "1000000001\n",
      "",
      COMPARE_FAIL_LINE,
      1,
      { "line 1 differs" },
      { 0 } },
    { "hex is not a number",
      "16\n",
      "0x10\n",
      "",
      COMPARE_FAIL_LINE,
      1,
      { "got:      0x10\n" },
      { 0 } },
    { "inf is not a number",
      "1e400\n",
      "inf\n",
      "",
      COMPARE_FAIL_LINE,
      1,
      { "got:      inf\n" },
      { 0 } },

    /* Case matters. */
    { "case",
      "Hello\n",
      "hello\n",
      "",
      COMPARE_FAIL_LINE,
      1,
      { "FAIL: line 1 differs.\n  expected: Hello\n  got:      hello\n" },
      { 0 } },

    /* The pointer skips lines that are equal as tokens or numbers. */
    { "spacing then wrong",
      "1 2\n3\n",
      "1   2\n4\n",
      "",
      COMPARE_FAIL_LINE,
      2,
      { "FAIL: line 2 differs.\n  expected: 3\n  got:      4\n" },
      { 0 } },
    { "float then wrong",
      "0.3\n5\n",
      "0.30000000000000004\n6\n",
      "",
      COMPARE_FAIL_LINE,
      2,
      { "FAIL: line 2 differs.\n" },
      { 0 } },

    /* Missing, extra, empty. */
    { "missing last line",
      "1\n2\n3\n",
      "1\n2\n",
      "",
      COMPARE_FAIL_MISSING,
      3,
      { "FAIL: the output stops after line 2, but 3 lines were expected. The first missing line "
        "is:\n"
        "  expected: 3\n" },
      { "got:" } },
    { "extra lines",
      "1\n2\n",
      "1\n2\n3\n4\n",
      "",
      COMPARE_FAIL_EXTRA,
      3,
      { "FAIL: all 2 expected lines match, but the output goes on with 2 more line(s), starting "
        "with:\n"
        "  got:      3\n" },
      { "expected:" } },
    { "extra after one line",
      "4\n",
      "4\ndebug: done\n",
      "",
      COMPARE_FAIL_EXTRA,
      2,
      { "FAIL: the expected line matches, but the output goes on with 1 more line(s), starting "
        "with:\n"
        "  got:      debug: done\n" },
      { 0 } },
    { "nothing expected",
      "",
      "x\n",
      "",
      COMPARE_FAIL_EXTRA,
      1,
      { "FAIL: no output was expected, but the program printed 1 line(s), starting with:\n  got:   "
        "   x\n" },
      { 0 } },
    { "empty output",
      "42\n7\n",
      "",
      "",
      COMPARE_FAIL_EMPTY,
      1,
      { "FAIL: the program printed nothing, but output was expected. The first expected line is:\n"
        "  expected: 42\n" },
      { 0 } },
    { "blank output", "42\n", " \n\n", "", COMPARE_FAIL_EMPTY, 1, { "printed nothing" }, { 0 } },

    /* Prompts. */
    { "kadane prompts",
      "6\n",
      "Enter the number of elements (N): Element 1: Element 2: Element 3: Element 4: Element 5: "
      "Element 6: Element 7: Element 8: Element 9: Maximum subarray sum: 6\n",
      "9\n-2 1 -3 4 -1 2 1 -5 4\n",
      COMPARE_FAIL_PROMPT,
      1,
      { "FAIL: the program prints an input prompt (`Enter the number of elements "
        "(N):`)" PROMPT_TAIL,
        "  expected: 6\n  got:      Enter the number of elements (N): Element 1:" },
      { 0 } },
    { "leetcode 128 label",
      "4\n",
      "Input: [100, 4, 200, 1, 3, 2]\n4\n",
      "100 4 200 1 3 2\n",
      COMPARE_FAIL_LINE,
      1,
      { "FAIL: line 1 differs.\n  expected: 4\n  got:      Input: [100, 4, 200, 1, 3, 2]\n" },
      { "prompt", "Nobody" } },
    { "leetcode 128 label, counted input",
      "4\n",
      "Input: [100, 4, 200, 1, 3, 2]\n4\n",
      "6\n100 4 200 1 3 2\n",
      COMPARE_FAIL_LINE,
      1,
      { "line 1 differs" },
      { "prompt" } },
    { "leetcode named label",
      "4\n",
      "Input: nums = [100,4,200,1,3,2]\nOutput: 4\n",
      "100 4 200 1 3 2\n",
      COMPARE_FAIL_LINE,
      1,
      { "got:      Input: nums = [100,4,200,1,3,2]\n" },
      { "prompt" } },
    { "label heading, values below",
      "4\n",
      "Input:\n100 4 200 1 3 2\nOutput:\n4\n",
      "100 4 200 1 3 2\n",
      COMPARE_FAIL_LINE,
      1,
      { "got:      Input:\n" },
      { "prompt" } },
    { "hard-coded sample is no prompt",
      "4\n",
      "Input: [2, 7, 11, 15]\n4\n",
      "100 4 200 1 3 2\n",
      COMPARE_FAIL_LINE,
      1,
      { "  expected: 4\n  got:      Input: [2, 7, 11, 15]\n" },
      { "prompt" } },
    { "prompt in the expected output",
      "Enter a number: 5\n",
      "Enter a number: 6\n",
      "5\n",
      COMPARE_FAIL_LINE,
      1,
      { "  expected: Enter a number: 5\n  got:      Enter a number: 6\n" },
      { "prompt" } },
    { "prompt on its own line",
      "120\n",
      "Enter n: \n120\n",
      "5\n",
      COMPARE_FAIL_PROMPT,
      1,
      { "(`Enter n:`)", "  expected: 120\n  got:      Enter n:\n" },
      { 0 } },
    { "please enter",
      "15\n",
      "Please enter 5 numbers separated by spaces: 15\n",
      "1 2 3 4 5\n",
      COMPARE_FAIL_PROMPT,
      1,
      { "(`Please enter 5 numbers separated by spaces:`)" },
      { 0 } },
    { "python question",
      "15\n",
      "How many numbers? 15\n",
      "5\n1 2 3 4 5\n",
      COMPARE_FAIL_PROMPT,
      1,
      { "(`How many numbers?`)" },
      { 0 } },
    { "value of x",
      "9\n",
      "Value of x? 9\n",
      "3\n",
      COMPARE_FAIL_PROMPT,
      1,
      { "(`Value of x?`)" },
      { 0 } },
    { "prompt then extra line",
      "6\n",
      "6\nEnter another number? \n",
      "5\n",
      COMPARE_FAIL_PROMPT,
      2,
      { "(`Enter another number?`)", "  got:      Enter another number?\n" },
      { "expected:" } },
    { "prompt after a label",
      "6\n",
      "> Type a number: 6\n",
      "5\n",
      COMPARE_FAIL_PROMPT,
      1,
      { "(`Type a number:`)" },
      { 0 } },
    { "noun label of the answer",
      "3\n",
      "Number of islands: 3\n",
      "4 5\n11000\n11000\n00100\n00011\n",
      COMPARE_FAIL_LINE,
      1,
      { "  expected: 3\n  got:      Number of islands: 3\n" },
      { "prompt" } },
    { "noun prompts chained",
      "15\n",
      "Size of array: Element 1: Element 2: 15\n",
      "2\n7 8\n",
      COMPARE_FAIL_PROMPT,
      1,
      { "(`Size of array:`)" },
      { 0 } },
    { "type of",
      "Scalene\n",
      "Type of triangle: Scalene\n",
      "3 4 5\n",
      COMPARE_FAIL_LINE,
      1,
      { "line 1 differs" },
      { "prompt" } },
    { "input inside a sentence",
      "7\n",
      "Invalid input: expected a number\n",
      "x\n",
      COMPARE_FAIL_LINE,
      1,
      { "got:      Invalid input: expected a number\n" },
      { "prompt" } },
    { "entered is no keyword",
      "7\n",
      "Entered: 5\n",
      "5\n",
      COMPARE_FAIL_LINE,
      1,
      { "line 1 differs" },
      { "prompt" } },
    { "what is your name",
      "Hello, Bob\n",
      "What is your name? Hello, Bob\n",
      "Bob\n",
      COMPARE_FAIL_PROMPT,
      1,
      { "(`What is your name?`)" },
      { 0 } },
};

/* Whether s[0..n) is valid UTF-8 (the rendered text goes into JSON). */
static int valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            k = 1;
            cp = c & 0x1F;
            min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            k = 2;
            cp = c & 0x0F;
            min = 0x800;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            cp = c & 0x07;
            min = 0x10000;
        } else
            return 0;
        if (i + k >= n)
            return 0;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += k + 1;
    }
    return 1;
}

/* Compare and render; the text is valid UTF-8 without NUL bytes. */
static char *run(const char *e, size_t elen, const char *g, size_t glen, const char *in,
                 size_t ilen, compare_result_t *res)
{
    compare_outputs(e, elen, g, glen, in, ilen, res);
    textbuf_t t;
    textbuf_init(&t);
    compare_render(res, &t);
    size_t len;
    char *text = textbuf_take(&t, &len);
    assert_non_null(text);
    assert_int_equal(strlen(text), len);
    assert_true(valid_utf8((const unsigned char *)text, len));
    assert_true(len > 0);
    assert_int_equal(text[len - 1], '\n');
    return text;
}

static void compare_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const compare_case_t *c = &cases[i];
        compare_result_t res;
        char *text = run(c->expected, strlen(c->expected), c->got, strlen(c->got), c->input,
                         strlen(c->input), &res);
        if (res.verdict != c->want || res.line != c->line)
            print_error("case \"%s\": verdict %d line %zu, want %d line %zu\n%s", c->name,
                        (int)res.verdict, res.line, (int)c->want, c->line, text);
        assert_int_equal(res.verdict, c->want);
        assert_int_equal(res.line, c->line);
        assert_int_equal(compare_passed(res.verdict), c->want <= COMPARE_PASS_FLOAT);
        assert_int_equal(res.prompt != NULL, c->want == COMPARE_FAIL_PROMPT);
        for (size_t k = 0; k < 4 && c->has[k]; k++) {
            if (!strstr(text, c->has[k]))
                print_error("case \"%s\": text lacks \"%s\":\n%s", c->name, c->has[k], text);
            assert_non_null(strstr(text, c->has[k]));
        }
        for (size_t k = 0; k < 2 && c->hasnt[k]; k++) {
            if (strstr(text, c->hasnt[k]))
                print_error("case \"%s\": text holds \"%s\":\n%s", c->name, c->hasnt[k], text);
            assert_null(strstr(text, c->hasnt[k]));
        }
        free(text);
        compare_result_free(&res);
    }
}

static void line_counts(void **state)
{
    (void)state;
    compare_result_t res;
    char *text = run("1\n2\n3\n4\n", 8, "1\n2\r\n", 5, "", 0, &res);
    assert_int_equal(res.verdict, COMPARE_FAIL_MISSING);
    assert_int_equal(res.expected_lines, 4);
    assert_int_equal(res.got_lines, 2);
    assert_string_equal(res.expected_line, "3");
    assert_null(res.got_line);
    assert_string_equal(text, "FAIL: the output stops after line 2, but 4 lines were expected. "
                              "The first missing line is:\n  expected: 3\n");
    free(text);
    compare_result_free(&res);

    text = run("a\n", 2, "a\n\nb\nc\n", 7, "", 0, &res);
    assert_int_equal(res.verdict, COMPARE_FAIL_EXTRA);
    assert_int_equal(res.got_lines, 4);
    assert_null(res.expected_line);
    assert_string_equal(res.got_line, ""); /* shown as "(empty line)" */
    assert_non_null(strstr(text, "3 more line(s), starting with:\n  got:      (empty line)\n"));
    free(text);
    compare_result_free(&res);
}

static void null_buffers(void **state)
{
    (void)state;
    compare_result_t res;
    compare_outputs(NULL, 0, NULL, 0, NULL, 0, &res);
    assert_int_equal(res.verdict, COMPARE_PASS);
    compare_result_free(&res);
    compare_outputs("x", 1, NULL, 5, NULL, 3, &res);
    assert_int_equal(res.verdict, COMPARE_FAIL_EMPTY);
    compare_result_free(&res);
    compare_outputs(NULL, 0, "Enter n:", 8, NULL, 0, &res);
    assert_int_equal(res.verdict, COMPARE_FAIL_PROMPT);
    assert_string_equal(res.prompt, "Enter n:");
    compare_result_free(&res);
    compare_result_free(&res); /* twice is harmless */
    assert_null(compare_find_prompt(NULL, 0, NULL, 0, NULL, 0));
}

static void nul_bytes(void **state)
{
    (void)state;
    compare_result_t res;
    char *text = run("a\0b\n", 4, "a\0b\n", 4, "", 0, &res);
    assert_int_equal(res.verdict, COMPARE_PASS);
    free(text);
    compare_result_free(&res);

    text = run("a\0b\n", 4, "a\0c\n", 4, "", 0, &res);
    assert_int_equal(res.verdict, COMPARE_FAIL_LINE);
    assert_string_equal(text, "FAIL: line 1 differs.\n  expected: a\\x00b\n  got:      a\\x00c\n");
    free(text);
    compare_result_free(&res);

    /* A NUL is no prompt-set character. */
    assert_null(compare_find_prompt("\0Enter", 6, NULL, 0, NULL, 0));
    char *p = compare_find_prompt("x\0 Enter n:", 11, NULL, 0, NULL, 0);
    assert_null(p);
}

static void invalid_utf8(void **state)
{
    (void)state;
    compare_result_t res;
    char *text = run("x\n", 2, "\xff\xfe \xc3\xa9 \xc3 \xed\xa0\x80 \xe2\x82\n", 16, "", 0, &res);
    assert_int_equal(res.verdict, COMPARE_FAIL_LINE);
    assert_string_equal(res.got_line, "\\xff\\xfe \xc3\xa9 \\xc3 \\xed\\xa0\\x80 \\xe2\\x82");
    free(text);
    compare_result_free(&res);

    text = run("\x1b[31mred\n", 9, "red\n", 4, "", 0, &res);
    assert_string_equal(res.expected_line, "\\x1b[31mred");
    free(text);
    compare_result_free(&res);
}

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void long_lines(void **state)
{
    (void)state;
    compare_result_t res;
    char line[301];
    memset(line, 'a', 300);
    line[300] = '\0';

    /* A 300-character line is cut at 200 bytes, and says so. */
    char *text = run("x\n", 2, line, 300, "", 0, &res);
    assert_int_equal(res.verdict, COMPARE_FAIL_LINE);
    assert_int_equal(strlen(res.got_line), 200 + 3);
    assert_memory_equal(res.got_line, line, 200);
    assert_string_equal(res.got_line + 200, "\xe2\x80\xa6");
    assert_non_null(strstr(text, "  got:      aaaa"));
    assert_null(strstr(text, line));
    free(text);
    compare_result_free(&res);

    /* Two long lines that differ near their end: the window shows where. */
    char e[400], g[400];
    memset(e, '7', 350);
    memcpy(e + 340, " 1 2 3 4 5", 10);
    memcpy(g, e, 350);
    g[349] = '6';
    text = run(e, 350, g, 350, "", 0, &res);
    assert_int_equal(res.verdict, COMPARE_FAIL_LINE);
    assert_memory_equal(res.expected_line, "\xe2\x80\xa6", 3);
    assert_memory_equal(res.got_line, "\xe2\x80\xa6", 3);
    size_t el = strlen(res.expected_line), gl = strlen(res.got_line);
    assert_string_equal(res.expected_line + el - 9, "1 2 3 4 5");
    assert_string_equal(res.got_line + gl - 9, "1 2 3 4 6");
    assert_true(el <= 3 + 200);
    free(text);
    compare_result_free(&res);

    /* Multi-byte characters are never split, at either end of the window. */
    char u[1 + 2 * 300 + 1];
    u[0] = 'x';
    for (int i = 0; i < 300; i++)
        memcpy(u + 1 + 2 * i, "\xc3\xa9", 2);
    u[601] = '\0';
    text = run("y\n", 2, u, 601, "", 0, &res);
    assert_true(valid_utf8((const unsigned char *)res.got_line, strlen(res.got_line)));
    assert_int_equal(utf8_chars(res.got_line), 1 + 99 + 1);
    free(text);
    compare_result_free(&res);

    char ue[700], ug[700];
    for (int i = 0; i < 300; i++)
        memcpy(ue + 2 * i, "\xc3\xa9", 2);
    memcpy(ue + 600,
           " \xe2\x82\xac"
           "1",
           5); /* " €1" */
    memcpy(ug, ue, 605);
    ug[604] = '2';
    text = run(ue, 605, ug, 605, "", 0, &res);
    assert_int_equal(res.verdict, COMPARE_FAIL_LINE);
    assert_true(valid_utf8((const unsigned char *)res.expected_line, strlen(res.expected_line)));
    assert_non_null(strstr(res.got_line, "\xe2\x82\xac"
                                         "2"));
    free(text);
    compare_result_free(&res);
}

/* Outputs of megabytes: linear time, no copies kept. */
static void huge_outputs(void **state)
{
    (void)state;
    const size_t lines = 200000;
    textbuf_t e, g, in;
    textbuf_init(&e);
    textbuf_init(&g);
    textbuf_init(&in);
    for (size_t i = 0; i < lines; i++) {
        textbuf_printf(&e, "%zu %zu\n", i, i * 7);
        textbuf_printf(&g, "%zu %zu\r\n", i, i * 7);
        textbuf_printf(&in, "%zu ", i);
    }
    assert_true(e.len > (1u << 20));
    compare_result_t res;
    char *text = run(e.buf, e.len, g.buf, g.len, in.buf, in.len, &res);
    assert_int_equal(res.verdict, COMPARE_PASS);
    assert_int_equal(res.expected_lines, lines);
    free(text);
    compare_result_free(&res);

    /* One wrong value near the end. */
    g.buf[g.len - 3] = g.buf[g.len - 3] == '1' ? '2' : '1';
    text = run(e.buf, e.len, g.buf, g.len, in.buf, in.len, &res);
    assert_int_equal(res.verdict, COMPARE_FAIL_LINE);
    assert_int_equal(res.line, lines);
    free(text);
    compare_result_free(&res);

    /* One 2 MiB line, wrong at its end, against a huge input. */
    textbuf_t one, two;
    textbuf_init(&one);
    textbuf_init(&two);
    while (one.len < (2u << 20))
        textbuf_puts(&one, "12345 ");
    textbuf_append(&two, one.buf, one.len);
    textbuf_puts(&one, "1");
    textbuf_puts(&two, "2");
    text = run(one.buf, one.len, two.buf, two.len, in.buf, in.len, &res);
    assert_int_equal(res.verdict, COMPARE_FAIL_LINE);
    assert_true(strlen(res.got_line) <= 206);
    assert_int_equal(res.got_line[strlen(res.got_line) - 1], '2');
    free(text);
    compare_result_free(&res);

    /* Many label lines that echo the (huge) input: checked a bounded
     * number of times, and never called a prompt. */
    textbuf_t labels;
    textbuf_init(&labels);
    for (size_t i = 0; i < 20000; i++)
        textbuf_printf(&labels, "Input: %zu\n", i);
    text = run("x\n", 2, labels.buf, labels.len, in.buf, in.len, &res);
    assert_int_equal(res.verdict, COMPARE_FAIL_LINE);
    assert_null(res.prompt);
    free(text);
    compare_result_free(&res);

    /* A huge run of blanks and newlines is no output at all. */
    textbuf_t blank;
    textbuf_init(&blank);
    for (size_t i = 0; i < (1u << 20); i++)
        textbuf_append(&blank, i % 3 ? " " : "\r\n", i % 3 ? 1 : 2);
    text = run("1\n", 2, blank.buf, blank.len, "", 0, &res);
    assert_int_equal(res.verdict, COMPARE_FAIL_EMPTY);
    free(text);
    compare_result_free(&res);

    textbuf_free(&blank);
    textbuf_free(&labels);
    textbuf_free(&one);
    textbuf_free(&two);
    textbuf_free(&e);
    textbuf_free(&g);
    textbuf_free(&in);
}

static void find_prompt(void **state)
{
    (void)state;
    static const struct {
        const char *got, *expected, *input, *want; /* want NULL: no prompt */
    } p[] = {
        { "Enter the number of elements (N): Element 1: 6", "6", "1\n6",
          "Enter the number of elements (N):" },
        { "Enter n: ", NULL, NULL, "Enter n:" },
        { "  ENTER N:", "", "", "ENTER N:" },
        { "Element 1: Element 2: 3", "3", "2\n1 2", "Element 1:" },
        { "Element 1: 5", "5", "1\n5", NULL },
        { "element #2: ", "", "", "element #2:" },
        { "Input a number: 7", "7", "3", "Input a number:" },
        { "Please enter n:", "", "", "Please enter n:" },
        { "How many elements?", "", "", "How many elements?" },
        { "Type your name: Bob", "Bob", "Bob", NULL }, /* echoes the input */
        { "Type your name: Hi Bob", "Hi Bob", "Bob", "Type your name:" },
        { "Type: Scalene", "Scalene", "3 4 5", NULL },
        { "Give the value of n: 1", "1", "5", "Give the value of n:" },
        { "Provide n? 1", "1", "5", "Provide n?" },
        { "Choose an option: 2", "2", "1", "Choose an option:" },
        { "Number of elements:", "", "", "Number of elements:" },
        { "Number of elements: 3", "3", "9", NULL },
        { "Value of x? ", "", "", "Value of x?" },
        { "What is n? 4", "4", "2", "What is n?" },
        { "Result: 5. Enter another: ", "", "", "Enter another:" },
        { "e.g.enter: 3", "", "", NULL },
        { "Press Enter to continue: ", "", "", NULL },
        { "Input: [1, 2, 3]", "", "[1,2,3]", NULL },
        { "Input: \"abc\"", "", "abc", NULL },
        { "Input: s = \"abc\", k = 2", "", "abc\n2", NULL },
        { "Input: 2 3", "", "1 2 3 4", NULL },
        { "Input: 3 2", "", "1 2 3 4", NULL },       /* a label, if not of the input */
        { "Input: Output: 3", "", "1 2 3 4", NULL }, /* "Output:" is no prompt */
        { "Input: Element 1: 3", "", "1 2 3 4", "Input:" },
        { "Input:", "", "", "Input:" },
        { "Input: []", "", "0", NULL },
        { "Enter a number: 5", "Enter a number: 5", "5", NULL },
        { "Enter a number: 6", "Enter a number: 5", "", NULL },
        { "enteric: 5", "", "", NULL },
        { "Answer 12", "12", "", NULL },
    };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        char *got = compare_find_prompt(p[i].got, strlen(p[i].got), p[i].expected,
                                        p[i].expected ? strlen(p[i].expected) : 0, p[i].input,
                                        p[i].input ? strlen(p[i].input) : 0);
        if (!p[i].want && got)
            print_error("\"%s\": found prompt \"%s\"\n", p[i].got, got);
        if (p[i].want && (!got || strcmp(got, p[i].want) != 0))
            print_error("\"%s\": found %s%s%s, want \"%s\"\n", p[i].got, got ? "\"" : "",
                        got ? got : "none", got ? "\"" : "", p[i].want);
        if (p[i].want) {
            assert_non_null(got);
            assert_string_equal(got, p[i].want);
        } else
            assert_null(got);
        free(got);
    }
}

/* A Java class name reaches the compile and run lines: `$` never does. */
static void java_class_names(void **state)
{
    (void)state;
    static const struct {
        const char *code, *want;
    } c[] = {
        { "public class Solution { public static void main(String[] a) {} }", "Solution" },
        { "class A$HOME { public static void main(String[] a) {} }", "A" },
        { "public class $x {}", "Main" },
        { "class B_2 { static void main(String[] a) {} }", "B_2" },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char out[64];
        languages_java_class(c[i].code, out, sizeof out);
        assert_string_equal(out, c[i].want);
        const language_t *java = languages_find("java");
        char *line = languages_expand(java, java->compile, c[i].code);
        assert_non_null(line);
        assert_null(strchr(line, '$'));
        free(line);
    }
}

/* The time and memory line: figures, limits, computing or waiting. */
static void stats_lines(void **state)
{
    (void)state;
    static const struct {
        judge_stats_t s;
        bool timed_out, oom;
        const char *want;
    } c[] = {
        { { 12, 4, 3481 },
          false,
          false,
          "Run: 0.012 s wall time, 0.004 s CPU time, 3.3 MiB peak memory.\n" },
        { { 12, -1, -1 }, false, false, "Run: 0.012 s wall time.\n" },
        { { -1, -1, -1 }, false, false, "Run: time and memory unknown.\n" },
        { { 3020, 2990, 9000 },
          true,
          false,
          "Run: 3.02 s wall time, 2.99 s CPU time, 8.7 MiB peak memory. Over the 3 s time limit: "
          "stopped after "
          "3.02 s, so it needed more than that. It was computing the whole time (CPU time close to "
          "wall time): an "
          "endless loop, or an algorithm too slow for this input.\n" },
        { { 3060, 22, 9000 },
          true,
          false,
          "Run: 3.06 s wall time, 0.022 s CPU time, 8.7 MiB peak memory. Over the 3 s time limit: "
          "stopped after "
          "3.06 s, so it needed more than that. It was waiting, not computing (little CPU time): a "
          "sleep, a read "
          "of more input than was given, a lock, or the network (which the sandbox may not "
          "reach).\n" },
        { { 3090, 389, 38400 },
          true,
          false,
          "Run: 3.09 s wall time, 0.389 s CPU time, 37.5 MiB peak memory. Over the 3 s time limit: "
          "stopped after "
          "3.09 s, so it needed more than that. It was computing, with less CPU time than wall "
          "time (the machine "
          "was busy, or part of the time went to waiting): most likely an endless loop, or an "
          "algorithm too slow "
          "for this input.\n" },
        { { 3000, -1, -1 },
          true,
          false,
          "Run: 3.00 s wall time. Over the 3 s time limit: stopped after 3.00 s, so it needed more "
          "than that.\n" },
        { { 900, 850, 250000 },
          false,
          true,
          "Run: 0.900 s wall time, 0.850 s CPU time, 244.1 MiB peak memory. Over the memory limit: "
          "the sandbox "
          "has 256.0 MiB in all and the program alone had reached 244.1 MiB when it was killed, so "
          "it needed more "
          "than that.\n" },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        textbuf_t t;
        textbuf_init(&t);
        judge_stats_line("Run", &c[i].s, c[i].timed_out, 3, c[i].oom, 256 << 20, &t);
        assert_string_equal(t.buf, c[i].want);
        textbuf_free(&t);
    }
    judge_stats_t w = { 100, 4, 1 };
    assert_int_equal(judge_stats_kind(&w), JUDGE_TIME_WAITING);
    w.cpu_ms = 5;
    assert_int_equal(judge_stats_kind(&w), JUDGE_TIME_MIXED);
    w.cpu_ms = 70;
    assert_int_equal(judge_stats_kind(&w), JUDGE_TIME_COMPUTING);
    w.wall_ms = 0;
    assert_int_equal(judge_stats_kind(&w), JUDGE_TIME_UNKNOWN);
}

/* The compile cache: what may be cached, and the script's hit marker. */
static void build_cache(void **state)
{
    (void)state;
    const language_t *cpp = languages_find("cpp"), *py = languages_find("python"),
                     *kt = languages_find("kotlin");
    assert_true(judge_build_cacheable(cpp, "int main(){}"));
    assert_false(judge_build_cacheable(cpp, "#include \"x.h\"\nint main(){}"));
    assert_false(judge_build_cacheable(py, "print(1)"));
    assert_true(judge_build_cacheable(kt, "fun main() {}"));
    char *s = judge_build_script(kt, "main.kt",
                                 "JAVA_OPTS=-Xmx160m kotlinc main.kt -include-runtime -d main.jar",
                                 "0123456789abcdef");
    assert_non_null(s);
    assert_non_null(strstr(s, "echo 'talkback-build-reused 0123456789abcdef'; exit 0"));
    assert_non_null(strstr(s, "cp -p main.jar \"$__d/art/\""));
    assert_non_null(
        strstr(s, "__l='JAVA_OPTS=-Xmx160m kotlinc main.kt -include-runtime -d main.jar'"));
    free(s);
    s = judge_build_script(cpp, "it's.cpp", "g++ it's.cpp", "n");
    assert_non_null(strstr(s, "__f='it'\\''s.cpp'"));
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compare_table),    cmocka_unit_test(line_counts),
        cmocka_unit_test(null_buffers),     cmocka_unit_test(nul_bytes),
        cmocka_unit_test(invalid_utf8),     cmocka_unit_test(long_lines),
        cmocka_unit_test(huge_outputs),     cmocka_unit_test(find_prompt),
        cmocka_unit_test(java_class_names), cmocka_unit_test(stats_lines),
        cmocka_unit_test(build_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
