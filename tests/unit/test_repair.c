/* test_repair.c -- talkback-proxy's reply repair (proxy/repair.c): tool
 * names, language tags, verdicts, fences, finding the turn's program,
 * rendering, the JSON repair and the SSE filter.
 *
 * JSON in the tables is written with ' for " (J() swaps them back) so
 * the cases stay readable; no case needs a real apostrophe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/textbuf.h"
#include "proxy/repair.h"

static const repair_tools_t tools = { "run_code", "write_file", "run" };

/* ' -> " (a static buffer per call site would do; tests free the copy). */
static char *J(const char *s)
{
    char *d = strdup(s);
    assert_non_null(d);
    for (char *p = d; *p; p++)
        if (*p == '\'')
            *p = '"';
    return d;
}

/* ---- names, tags, verdicts, fences ----------------------------------------------- */

static void tool_names(void **state)
{
    (void)state;
    static const struct {
        const char *names, *tool;
        bool want;
    } cases[] = {
        { "run_code", "run_code", true },
        { "run_code", "run_code_mcp_sandbox", true },
        { "run_code", "run_code_mcp_", false },
        { "run_code", "run_codex", false },
        { "run_code", "run", false },
        { "run", "run_code_mcp_sandbox", false },
        { "run", "run_mcp_sandbox", true },
        { "execute, run_code", "run_code_mcp_talkback", true },
        { " a , b ", "b", true },
        { "", "run", false },
        { "run", "", false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(repair_tool_matches(cases[i].names, cases[i].tool), cases[i].want);
}

static void language_tags(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } cases[] = {
        { "cpp", "cpp" },         { "C++", "cpp" },
        { "py", "python" },       { "python3", "python" },
        { "js", "javascript" },   { "node", "javascript" },
        { "sh", "bash" },         { "bash", "bash" },
        { "rs", "rust" },         { "golang", "go" },
        { "kt", "kotlin" },       { "cs", "csharp" },
        { "csharp", "csharp" },   { "C#", "csharp" },
        { "hs", "haskell" },      { "Lua", "lua" },
        { " c ", "c" },           { "Zig", "zig" },
        { "not a language", "" }, { "", "" },
    };
    char out[24];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        repair_lang_tag(cases[i].in, out, sizeof out);
        assert_string_equal(out, cases[i].want);
    }
    repair_lang_tag(NULL, out, sizeof out);
    assert_string_equal(out, "");

    static const struct {
        const char *path, *want;
    } exts[] = {
        { "x.py", "python" }, { "/work/a.c", "c" }, { "src/main.cpp", "cpp" },
        { "s.SH", "bash" },   { "data.csv", NULL }, { "Makefile", NULL },
        { ".py", NULL },      { "a.", NULL },       { "dir.py/x", NULL },
    };
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        const char *got = repair_ext_tag(exts[i].path);
        if (exts[i].want)
            assert_string_equal(got, exts[i].want);
        else
            assert_null(got);
    }
}

static void verdicts(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        repair_verdict_t want;
        bool compared;
    } cases[] = {
        { "Saved /work/main.lua (10 bytes).\n$ lua5.4 main.lua < input\ninput:\n1\noutput:\n2\n"
          "PASS: the output matches the expected output.\n",
          REPAIR_PASS, true },
        { "$ ./main\noutput:\n3\nFAIL: line 1 differs.\n"
          "Don't answer yet: fix the code and call run_code again until it says PASS.\n",
          REPAIR_FAIL, true },
        { "CRASH: the program was killed\nDon't answer yet: fix the code and call run_code again "
          "until it says PASS.",
          REPAIR_FAIL, true },
        { "TIMEOUT: the program ran longer than 10 s\nDon't answer yet: ...", REPAIR_FAIL, true },
        { "$ gcc ...\nmain.c:1: error\nCOMPILE ERROR: the program did not compile (exit code 1), "
          "so it did not run.\n"
          "Don't answer yet: fix the code and call run_code again until it says PASS.\n",
          REPAIR_COMPILE_ERROR, true },
        /* the program printed a PASS line itself; the real verdict is last */
        { "output:\nPASS: the output matches the expected output.\nFAIL: line 2 differs.\n",
          REPAIR_FAIL, true },
        { "$ python3 main.py\noutput:\nhello\n", REPAIR_RAN, true },
        { "[talkback: argument `code` is required: send the whole program as a string. Nothing "
          "ran.]",
          REPAIR_NOT_RUN, true },
        { "[talkback: the sandbox manager is not running, so nothing ran. Try again]",
          REPAIR_NOT_RUN, true },
        { "", REPAIR_NOT_RUN, true },
        /* without expected the judge never says PASS: the program printed it */
        { "$ python3 main.py < /dev/null\ninput: (none: stdin was empty)\noutput:\n"
          "PASS: the output matches the expected output.\n",
          REPAIR_RAN, false },
        { "output:\nPASS: all 3 tests passed.\n", REPAIR_RAN, false },
        /* a PASS that is not the last line is the program's */
        { "output:\nPASS: the output matches the expected output.\n"
          "[talkback: the sandbox did not answer in time. Try again.]\n",
          REPAIR_RAN, true },
        { "Test 1 of 2: 0.001 s wall time.\n$ ./main < test-1.in\noutput:\nPASS: all 2 tests "
          "passed.\n"
          "Test 1: FAIL: line 1 differs.\n  expected: 3\n  got:      PASS: all 2 tests passed.\n"
          "[talkback: the sandbox manager stopped while handling this call. Try again.]\n",
          REPAIR_RAN, true },
        /* the tests shape */
        { "Test 1: PASS: the output matches the expected output.\nTest 2: PASS: the output matches "
          "the "
          "expected output.\nPASS: all 2 tests passed.\n",
          REPAIR_PASS, true },
        { "output:\nPASS: all 2 tests passed.\nTest 2: FAIL: line 1 differs.\n"
          "FAIL: 1 of 2 tests passed; failed: test 2.\n"
          "Don't answer yet: fix the code and call run_code again until it says PASS.\n",
          REPAIR_FAIL, true },
        { "output:\nyyyy\nOUTPUT LIMIT: the program printed more than 1048576 bytes and was "
          "stopped at once.\n"
          "Don't answer yet: fix the code and call run_code again until it says PASS.\n",
          REPAIR_FAIL, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(repair_code_verdict(cases[i].text, cases[i].compared), cases[i].want);
}

static void fences(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool want;
    } cases[] = {
        { "Here it is:\n```lua\nprint(1)\n```\n", true },
        { "inline ```x``` too", true },
        { "~~~\ncode\n~~~", true },
        { "  ~~~python\nx\n", true },
        { "a ~~~ b", false },
        { "code shown in the previous step", false },
        { "`one` and ``two``", false },
        { "", false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(repair_has_fence(cases[i].text, strlen(cases[i].text)), cases[i].want);
}

static void command_names(void **state)
{
    (void)state;
    static const struct {
        const char *cmd, *base;
        bool want;
    } cases[] = {
        { "python3 x.py", "x.py", true },
        { "python3 /work/x.py < in.txt", "x.py", true },
        { "bash ./run.sh", "run.sh", true },
        { "gcc a.c -o a && ./a", "a.c", true },
        { "cat data.csv", "a.c", false },
        { "python3 xx.py", "x.py", false },
        { "python3 x.pyc", "x.py", false },
        { "python3 'x.py'", "x.py", true },
        { "ls", "x.py", false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(repair_command_names(cases[i].cmd, cases[i].base), cases[i].want);
}

/* ---- finding the turn's program ------------------------------------------------------- */

#define SYS     "{'role':'system','content':'You have tools.'}"
#define USER(t) "{'role':'user','content':'" t "'}"
#define CALL(id, name, args)                                                                       \
    "{'role':'assistant','content':'','tool_calls':[{'id':'" id                                    \
    "','type':'function','function':{'name':'" name "','arguments':" args "}}]}"
#define RESULT(id, text) "{'role':'tool','tool_call_id':'" id "','content':'" text "'}"
#define PASS_TEXT                                                                                  \
    "$ lua5.4 main.lua\\noutput:\\n3\\nPASS: the output matches the expected output.\\n"
#define FAIL_TEXT                                                                                  \
    "output:\\n4\\nFAIL: line 1 differs.\\nDon\\u0027t answer yet: fix the code and call "         \
    "run_code again until it says PASS.\\n"
#define RAN_TEXT "$ python3 main.py\\noutput:\\nhi\\n"

static void find_table(void **state)
{
    (void)state;
    /* The bodies are JSON built from macros, a message or two per line:
     * clang-format cannot lay them out (nor settle on one layout). */
    /* clang-format off */
    static const struct {
        const char *name, *body;
        int rc;
        repair_verdict_t verdict;
        const char *code, *tag, *path;
    } cases[] = {
        { "one pass",
          "{'messages':[" SYS "," USER("sum") ","
          CALL("c1", "run_code_mcp_sandbox", "'{\\'language\\':\\'lua\\',\\'code\\':\\'print(1+2)\\',\\'expected\\':\\'3\\'}'") ","
          RESULT("c1", PASS_TEXT) "]}",
          1, REPAIR_PASS, "print(1+2)", "lua", NULL },
        { "fail only: the last that ran",
          "{'messages':[" USER("x") ","
          CALL("a", "run_code", "'{\\'language\\':\\'py\\',\\'code\\':\\'print(3)\\',\\'expected\\':\\'3\\'}'") "," RESULT("a", FAIL_TEXT) ","
          CALL("b", "run_code", "'{\\'language\\':\\'py\\',\\'code\\':\\'print(4)\\',\\'expected\\':\\'3\\'}'") "," RESULT("b", FAIL_TEXT) "]}",
          1, REPAIR_FAIL, "print(4)", "python", NULL },
        { "several: the last passing one",
          "{'messages':[" USER("x") ","
          CALL("a", "run_code", "'{\\'language\\':\\'c++\\',\\'code\\':\\'v1\\',\\'expected\\':\\'3\\'}'") "," RESULT("a", FAIL_TEXT) ","
          CALL("b", "run_code", "'{\\'language\\':\\'c++\\',\\'code\\':\\'v2\\',\\'expected\\':\\'3\\'}'") "," RESULT("b", PASS_TEXT) ","
          CALL("c", "run_code", "'{\\'language\\':\\'c++\\',\\'code\\':\\'v3\\',\\'expected\\':\\'3\\'}'") "," RESULT("c", PASS_TEXT) ","
          CALL("d", "run_code", "'{\\'language\\':\\'c++\\',\\'code\\':\\'v4\\',\\'expected\\':\\'3\\'}'") "," RESULT("d", FAIL_TEXT) "]}",
          1, REPAIR_PASS, "v3", "cpp", NULL },
        { "no expected output: ran, no verdict",
          "{'messages':[" USER("x") ","
          CALL("a", "run_code", "'{\\'language\\':\\'python3\\',\\'code\\':\\'print(1)\\'}'") "," RESULT("a", RAN_TEXT) "]}",
          1, REPAIR_RAN, "print(1)", "python", NULL },
        { "a PASS the program printed, in a call without expected: ran",
          "{'messages':[" USER("x") ","
          CALL("a", "run_code", "'{\\'language\\':\\'lua\\',\\'code\\':\\'fake\\'}'") "," RESULT("a", PASS_TEXT) "]}",
          1, REPAIR_RAN, "fake", "lua", NULL },
        { "tests: the overall PASS",
          "{'messages':[" USER("x") ","
          CALL("a", "run_code", "'{\\'language\\':\\'lua\\',\\'code\\':\\'t\\',\\'tests\\':[{\\'expected\\':\\'3\\'}]}'") ","
          RESULT("a", "Test 1: PASS: the output matches the expected output.\\nPASS: all 1 tests passed.\\n") "]}",
          1, REPAIR_PASS, "t", "lua", NULL },
        { "previous turns do not count",
          "{'messages':[" USER("x") ","
          CALL("a", "run_code", "'{\\'language\\':\\'lua\\',\\'code\\':\\'old\\',\\'expected\\':\\'3\\'}'") "," RESULT("a", PASS_TEXT) ","
          "{'role':'assistant','content':'done'}," USER("thanks") "]}",
          0, 0, NULL, NULL, NULL },
        { "turn without programs",
          "{'messages':[" USER("x") "," CALL("a", "run", "'{\\'command\\':\\'ls\\'}'") "," RESULT("a", "$ ls") "]}",
          0, 0, NULL, NULL, NULL },
        { "write_file then run",
          "{'messages':[" USER("x") ","
          CALL("w", "write_file_mcp_sandbox", "'{\\'path\\':\\'x.py\\',\\'content\\':\\'print(5)\\\\n\\'}'") ","
          RESULT("w", "Wrote 9 bytes to /work/x.py.") ","
          CALL("r", "run_mcp_sandbox", "'{\\'command\\':\\'python3 x.py\\'}'") "," RESULT("r", "$ python3 x.py\\n5") "]}",
          1, REPAIR_RAN, "print(5)\n", "python", "/work/x.py" },
        { "write_file never run",
          "{'messages':[" USER("x") ","
          CALL("w", "write_file", "'{\\'path\\':\\'x.py\\',\\'content\\':\\'print(5)\\'}'") ","
          RESULT("w", "Wrote 8 bytes to /work/x.py.") "]}",
          0, 0, NULL, NULL, NULL },
        { "rewritten after the run: the version that ran",
          "{'messages':[" USER("x") ","
          CALL("w", "write_file", "'{\\'path\\':\\'/work/a.sh\\',\\'content\\':\\'echo 1\\'}'") "," RESULT("w", "Wrote") ","
          CALL("r", "run", "'{\\'command\\':\\'bash a.sh\\'}'") "," RESULT("r", "$ bash a.sh\\n1") ","
          CALL("v", "write_file", "'{\\'path\\':\\'/work/a.sh\\',\\'content\\':\\'echo 2\\'}'") "," RESULT("v", "Wrote") "]}",
          1, REPAIR_RAN, "echo 1", "bash", "/work/a.sh" },
        { "a data file is not a program",
          "{'messages':[" USER("x") ","
          CALL("w", "write_file", "'{\\'path\\':\\'in.txt\\',\\'content\\':\\'1 2\\'}'") "," RESULT("w", "Wrote") ","
          CALL("r", "run", "'{\\'command\\':\\'cat in.txt\\'}'") "," RESULT("r", "$ cat in.txt") "]}",
          0, 0, NULL, NULL, NULL },
        { "run with a failing exit code",
          "{'messages':[" USER("x") ","
          CALL("w", "write_file", "'{\\'path\\':\\'m.go\\',\\'content\\':\\'package main\\'}'") "," RESULT("w", "Wrote") ","
          CALL("r", "run", "'{\\'command\\':\\'go run m.go\\'}'") "," RESULT("r", "$ go run m.go\\n[exit code 1]") "]}",
          1, REPAIR_FAIL, "package main", "go", "/work/m.go" },
        { "a run_code pass beats a later file run",
          "{'messages':[" USER("x") ","
          CALL("a", "run_code", "'{\\'language\\':\\'lua\\',\\'code\\':\\'ok\\',\\'expected\\':\\'3\\'}'") "," RESULT("a", PASS_TEXT) ","
          CALL("w", "write_file", "'{\\'path\\':\\'x.py\\',\\'content\\':\\'p\\'}'") "," RESULT("w", "Wrote") ","
          CALL("r", "run", "'{\\'command\\':\\'python3 x.py\\'}'") "," RESULT("r", "$ python3 x.py") "]}",
          1, REPAIR_PASS, "ok", "lua", NULL },
        { "refused calls did not run",
          "{'messages':[" USER("x") ","
          CALL("a", "run_code", "'{\\'language\\':\\'lua\\',\\'code\\':\\'x\\',\\'expected\\':\\'3\\'}'") ","
          RESULT("a", "[talkback: argument `language` must be one of: C, Lua. Nothing ran.]") "]}",
          0, 0, NULL, NULL, NULL },
        { "a call without a result did not run",
          "{'messages':[" USER("x") "," CALL("a", "run_code", "'{\\'language\\':\\'lua\\',\\'code\\':\\'x\\',\\'expected\\':\\'3\\'}'") "]}",
          0, 0, NULL, NULL, NULL },
        { "content as text parts, unknown tool ignored",
          "{'messages':[" USER("x") ","
          CALL("z", "search", "'{\\'q\\':\\'lua\\'}'") "," RESULT("z", "found") ","
          CALL("a", "run_code", "'{\\'language\\':\\'lua\\',\\'code\\':\\'x\\',\\'expected\\':\\'3\\'}'") ","
          "{'role':'tool','tool_call_id':'a','content':[{'type':'text','text':'" PASS_TEXT "'}]}]}",
          1, REPAIR_PASS, "x", "lua", NULL },
        { "arguments that are not JSON",
          "{'messages':[" USER("x") "," CALL("a", "run_code", "'{not json'") "," RESULT("a", PASS_TEXT) "]}",
          0, 0, NULL, NULL, NULL },
        { "not a chat request", "{'model':'m'}", -1, 0, NULL, NULL, NULL },
        { "not JSON", "data: x", -1, 0, NULL, NULL, NULL },
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *body = J(cases[i].body);
        repair_program_t p;
        int rc = repair_find(body, strlen(body), &tools, &p);
        if (rc != cases[i].rc)
            fail_msg("case \"%s\": rc %d, want %d", cases[i].name, rc, cases[i].rc);
        if (rc == 1) {
            if (p.verdict != cases[i].verdict)
                fail_msg("case \"%s\": verdict %d, want %d", cases[i].name, p.verdict,
                         cases[i].verdict);
            assert_string_equal(p.code, cases[i].code);
            assert_string_equal(p.tag, cases[i].tag);
            if (cases[i].path)
                assert_string_equal(p.path, cases[i].path);
            else
                assert_null(p.path);
        }
        repair_program_free(&p);
        free(body);
    }
}

/* ---- rendering ---------------------------------------------------------------------- */

static void render(void **state)
{
    (void)state;
    repair_program_t p = { .verdict = REPAIR_PASS, .tag = "lua", .code = "print(1)" };
    char *s = repair_render(&p, "", 0);
    assert_string_equal(s, "**The program that passed its test:**\n\n```lua\nprint(1)\n```\n");
    free(s);
    s = repair_render(&p, "Done.", 5);
    assert_memory_equal(s, "\n\n**The program", 15);
    free(s);
    s = repair_render(&p, "Done.\n", 6);
    assert_memory_equal(s, "\n**The program", 14);
    free(s);
    s = repair_render(&p, "Done.\n\n", 7);
    assert_memory_equal(s, "**The program", 13);
    free(s);

    repair_program_t f = { .verdict = REPAIR_FAIL, .tag = "python", .code = "print('```')\n" };
    s = repair_render(&f, "x", 1);
    assert_non_null(strstr(s, "did not pass its test"));
    assert_non_null(strstr(s, "\n````python\nprint('```')\n````\n"));
    free(s);

    repair_program_t c = { .verdict = REPAIR_COMPILE_ERROR, .tag = "", .code = "x" };
    s = repair_render(&c, "", 0);
    assert_non_null(strstr(s, "did not compile"));
    assert_non_null(strstr(s, "```\nx\n```"));
    free(s);

    repair_program_t w = { .verdict = REPAIR_RAN,
                           .tag = "python",
                           .code = "p",
                           .path = "/work/x.py",
                           .command = "python3 x.py" };
    s = repair_render(&w, "", 0);
    assert_string_equal(
        s, "**The last program that ran, `/work/x.py` (run with `python3 x.py`; not tested "
           "against an expected output):**\n\n```python\np\n```\n");
    free(s);
    w.command = "echo `date`";
    s = repair_render(&w, "", 0);
    assert_null(strstr(s, "date"));
    free(s);
}

/* ---- the JSON repair ------------------------------------------------------------------ */

static void json_table(void **state)
{
    (void)state;
    repair_program_t p = { .verdict = REPAIR_PASS, .tag = "lua", .code = "print(3)" };
    static const struct {
        const char *name, *answer;
        bool changed;
        const char *want_content;
    } cases[] = {
        { "no code: appended",
          "{'id':'x','choices':[{'index':0,'message':{'role':'assistant','content':'code shown in "
          "the previous step'},"
          "'finish_reason':'stop'}]}",
          true,
          "code shown in the previous step\n\n**The program that passed its "
          "test:**\n\n```lua\nprint(3)\n```\n" },
        { "empty reply: the block alone",
          "{'choices':[{'index':0,'message':{'role':'assistant','content':null},'finish_reason':'"
          "stop'}]}",
          true, "**The program that passed its test:**\n\n```lua\nprint(3)\n```\n" },
        { "has code: untouched",
          "{'choices':[{'message':{'content':'```lua\\nprint(3)\\n```'},'finish_reason':'stop'}]}",
          false, NULL },
        { "tool calls: untouched",
          "{'choices':[{'message':{'content':null,'tool_calls':[{'id':'a','type':'function',"
          "'function':{'name':'run_code','arguments':'{}'}}]},'finish_reason':'tool_calls'}]}",
          false, NULL },
        { "an error: untouched", "{'error':{'message':'boom'}}", false, NULL },
        { "not JSON: untouched", "<html>", false, NULL },
        { "no choices: untouched", "{'object':'list','data':[]}", false, NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *answer = J(cases[i].answer);
        char *out = NULL;
        size_t outlen = 0;
        int rc = repair_json(answer, strlen(answer), &p, &out, &outlen);
        if (rc != (cases[i].changed ? 1 : 0))
            fail_msg("case \"%s\": rc %d", cases[i].name, rc);
        if (rc == 1) {
            json_t *j = json_loadb(out, outlen, 0, NULL);
            assert_non_null(j);
            const char *content = json_string_value(json_object_get(
                json_object_get(json_array_get(json_object_get(j, "choices"), 0), "message"),
                "content"));
            assert_string_equal(content, cases[i].want_content);
            json_decref(j);
        } else {
            assert_null(out);
        }
        free(out);
        free(answer);
    }
}

/* ---- the SSE filter ----------------------------------------------------------------------- */

#define CHUNK(delta, finish)                                                                       \
    "data: "                                                                                       \
    "{'id':'c1','object':'chat.completion.chunk','created':7,'model':'m','choices':[{'index':0,'"  \
    "delta':" delta ",'finish_reason':" finish "}]}\n\n"

/* Run a stream through the filter in pieces of `step` bytes. */
static char *sse_run(const repair_program_t *p, const char *stream, size_t step, bool *repaired)
{
    repair_sse_t *s = repair_sse_new(p);
    assert_non_null(s);
    textbuf_t out;
    textbuf_init(&out);
    size_t n = strlen(stream);
    for (size_t i = 0; i < n; i += step)
        repair_sse_feed(s, stream + i, n - i < step ? n - i : step, &out);
    repair_sse_end(s, &out);
    *repaired = repair_sse_repaired(s);
    repair_sse_free(&s);
    return textbuf_take(&out, NULL);
}

/* The content of every chunk joined, and whether the block came before the
 * finish chunk. */
static char *sse_content(const char *stream, bool *finish_last)
{
    textbuf_t t;
    textbuf_init(&t);
    bool finished = false;
    *finish_last = true;
    for (const char *l = strstr(stream, "data: "); l; l = strstr(l + 1, "\ndata: ")) {
        if (*l == '\n')
            l++;
        l += 6;
        size_t ll = strcspn(l, "\r\n");
        json_t *j = json_loadb(l, ll, 0, NULL);
        json_t *c = json_array_get(json_object_get(j, "choices"), 0);
        const char *s = json_string_value(json_object_get(json_object_get(c, "delta"), "content"));
        if (s && *s) {
            if (finished)
                *finish_last = false;
            textbuf_puts(&t, s);
        }
        if (json_is_string(json_object_get(c, "finish_reason")))
            finished = true;
        json_decref(j);
    }
    return textbuf_take(&t, NULL);
}

static void sse_table(void **state)
{
    (void)state;
    repair_program_t p = { .verdict = REPAIR_PASS, .tag = "lua", .code = "print(3)" };
    static const char block[] =
        "\n\n**The program that passed its test:**\n\n```lua\nprint(3)\n```\n";
    static const struct {
        const char *name, *stream;
        bool repaired;
        const char *content; /* wanted joined content when repaired */
    } cases[] = {
        { "no code: the block before the finish chunk",
          CHUNK("{'role':'assistant','content':''}", "null")
              CHUNK("{'content':'code shown in'}", "null")
                  CHUNK("{'content':' the previous step'}", "null")
                      CHUNK("{}", "'stop'") "data: [DONE]\n\n",
          true, "code shown in the previous step" },
        { "finish chunk with content: split around the block",
          CHUNK("{'content':'Done'}", "null") CHUNK("{'content':'.'}", "'stop'") "data: [DONE]\n\n",
          true, "Done." },
        { "no finish chunk: before [DONE]", CHUNK("{'content':'ok'}", "null") "data: [DONE]\n\n",
          true, "ok" },
        { "CRLF events",
          "data: {'choices':[{'index':0,'delta':{'content':'ok'},'finish_reason':null}]}\r\n\r\n"
          "data: {'choices':[{'index':0,'delta':{},'finish_reason':'stop'}]}\r\n\r\ndata: "
          "[DONE]\r\n\r\n",
          true, "ok" },
        { "comments and pings pass",
          ": ping\n\n" CHUNK("{'content':'ok'}", "null") CHUNK("{}", "'stop'"), true, "ok" },
        { "a fence split over chunks: untouched",
          CHUNK("{'content':'Here:\\n`'}", "null") CHUNK("{'content':'``lua\\nx\\n'}", "null")
              CHUNK("{'content':'```'}", "null") CHUNK("{}", "'stop'") "data: [DONE]\n\n",
          false, NULL },
        { "tool calls: untouched",
          CHUNK("{'tool_calls':[{'index':0,'id':'a','type':'function','function':{'name':'run_code'"
                ",'arguments':''}}]}",
                "null") CHUNK("{}", "'tool_calls'") "data: [DONE]\n\n",
          false, NULL },
        { "malformed data: untouched",
          CHUNK("{'content':'a'}", "null") "data: {not json\n\n" CHUNK("{}",
                                                                       "'stop'") "data: [DONE]\n\n",
          false, NULL },
        { "an error event: untouched", "data: {'error':{'message':'overloaded'}}\n\n", false,
          NULL },
        { "cut off mid-event: untouched", CHUNK("{'content':'a'}", "null") "data: {'choi", false,
          NULL },
        { "no trailing blank line", CHUNK("{'content':'a'}", "null") "data: [DONE]\n", false,
          NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *stream = J(cases[i].stream);
        size_t steps[] = { 1, 7, 100000 };
        for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
            bool repaired;
            char *out = sse_run(&p, stream, steps[k], &repaired);
            if (repaired != cases[i].repaired)
                fail_msg("case \"%s\" (step %zu): repaired %d", cases[i].name, steps[k], repaired);
            if (!repaired) {
                assert_string_equal(out, stream);
            } else {
                bool finish_last;
                char *content = sse_content(out, &finish_last);
                char want[512];
                snprintf(want, sizeof want, "%s%s", cases[i].content, block);
                assert_string_equal(content, want);
                assert_true(finish_last);
                /* the upstream's own events are all still there, [DONE] last */
                if (strstr(stream, "[DONE]"))
                    assert_non_null(strstr(out, "[DONE]"));
                free(content);
            }
            free(out);
        }
        free(stream);
    }
}

static void sse_keeps_ids(void **state)
{
    (void)state;
    repair_program_t p = { .verdict = REPAIR_FAIL, .tag = "c", .code = "int main(){}" };
    char *stream = J(CHUNK("{'content':'hi'}", "null") CHUNK("{}", "'stop'") "data: [DONE]\n\n");
    bool repaired;
    char *out = sse_run(&p, stream, 3, &repaired);
    assert_true(repaired);
    /* events: hi, the block, finish, [DONE] */
    const char *second = strstr(strstr(out, "\n\n") + 2, "data: ");
    assert_non_null(second);
    size_t ll = strcspn(second + 6, "\n");
    json_t *j = json_loadb(second + 6, ll, 0, NULL);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "id")), "c1");
    assert_string_equal(json_string_value(json_object_get(j, "model")), "m");
    assert_int_equal(json_integer_value(json_object_get(j, "created")), 7);
    assert_string_equal(json_string_value(json_object_get(j, "object")), "chat.completion.chunk");
    json_t *c = json_array_get(json_object_get(j, "choices"), 0);
    assert_true(json_is_null(json_object_get(c, "finish_reason")));
    assert_non_null(
        strstr(json_string_value(json_object_get(json_object_get(c, "delta"), "content")),
               "did not pass its test"));
    json_decref(j);
    free(out);
    free(stream);

    /* No program: everything passes as it is. */
    stream = J(CHUNK("{'content':'hi'}", "null") CHUNK("{}", "'stop'") "data: [DONE]\n\n");
    out = sse_run(NULL, stream, 5, &repaired);
    assert_false(repaired);
    assert_string_equal(out, stream);
    free(out);
    free(stream);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tool_names),    cmocka_unit_test(language_tags),
        cmocka_unit_test(verdicts),      cmocka_unit_test(fences),
        cmocka_unit_test(command_names), cmocka_unit_test(find_table),
        cmocka_unit_test(render),        cmocka_unit_test(json_table),
        cmocka_unit_test(sse_table),     cmocka_unit_test(sse_keeps_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
