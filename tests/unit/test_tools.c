/* test_tools.c -- what the tool table tells a model and how it answers
 * arguments under the wrong name: the descriptions carry the facts a small
 * model needs, every `timeout` stays below the client's own limit
 * (client_timeout), and a `stdin` or `cmd` talks back instead of being
 * dropped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/mcp.h"
#include "gateway/tools.h"
#include "proto/ops.h"
#include "proto/optable.h"

/* The shipped defaults: LibreChat's README timeout of 600 s. */
static const mcp_opts_t opts = {
    .conversation_header = "X-Conversation-Id",
    .user_header = "X-User-Id",
    .limits = { .run_timeout = 300,
                .run_timeout_max = 1800,
                .call_grace = 30,
                .write_file_max = 1 << 20,
                .code_run_timeout = 10,
                .code_timeout_max = 300,
                .code_compile_timeout = 120,
                .client_timeout = 600,
                .client_margin_ms = 2000 },
};

static const mcp_headers_t conv = { .conversation = "conv-1" };

#define CALL(args) "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":" args "}"

static void handle(const char *body, const mcp_opts_t *o, mcp_outcome_t *out)
{
    mcp_handle(body, strlen(body), &conv, o, out);
}

/* The text of a refused call (malloc'ed); fails when the call would run. */
static char *refusal(const char *body)
{
    mcp_outcome_t out;
    handle(body, &opts, &out);
    assert_int_equal(out.action, MCP_REPLY);
    json_t *j = json_loads(out.body, 0, NULL);
    assert_non_null(j);
    json_t *res = json_object_get(j, "result");
    assert_true(json_is_true(json_object_get(res, "isError")));
    char *text = strdup(json_string_value(
        json_object_get(json_array_get(json_object_get(res, "content"), 0), "text")));
    json_decref(j);
    mcp_outcome_clear(&out);
    return text;
}

static void expect_refusal(const char *body, const char *want)
{
    char *t = refusal(body);
    assert_string_equal(t, want);
    free(t);
}

/* A call that runs: its request and the note put before its result. */
static void expect_runs(const char *body, const char *note)
{
    mcp_outcome_t out;
    handle(body, &opts, &out);
    assert_int_equal(out.action, MCP_CALL);
    assert_non_null(out.req);
    assert_string_equal(out.call.note, note);
    mcp_outcome_clear(&out);
}

static const char *tool_description(json_t *tools, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(tools, i,
                       t) if (strcmp(json_string_value(json_object_get(t, "name")), name) ==
                              0) return json_string_value(json_object_get(t, "description"));
    fail_msg("no tool %s", name);
    return NULL;
}

/* The facts a model cannot learn elsewhere (LibreChat drops the server
 * instructions of a server like this) are in the descriptions. */
static void descriptions_carry_the_facts(void **state)
{
    (void)state;
    json_t *tools = tools_list_json(&opts.limits);
    assert_non_null(tools);
    const char *run = tool_description(tools, "run");
    assert_non_null(strstr(run, "new bash"));
    assert_non_null(strstr(run, "/work"));
    assert_non_null(strstr(run, "stdin is closed"));
    assert_non_null(strstr(run, "&&"));
    assert_non_null(strstr(run, "background"));
    const char *rc = tool_description(tools, "run_code");
    assert_non_null(strstr(rc, "PASS"));
    assert_non_null(strstr(rc, "call run_code again"));
    assert_non_null(strstr(rc, "`input` as its stdin"));
    assert_non_null(strstr(tool_description(tools, "write_file"), "whole file"));
    assert_non_null(strstr(tool_description(tools, "reset"), "lost"));
    /* Short: a 2B model's context is small. */
    size_t i;
    json_t *t;
    json_array_foreach(tools, i, t)
        assert_true(strlen(json_string_value(json_object_get(t, "description"))) < 520);
    json_decref(tools);
}

/* run_code's `tests` holds ARG_TESTS_MAX cases (proto/ops.h), the judge's
 * limit: one more is refused with the number, and the description says it. */
static void tests_limit_once(void)
{
    char body[4096], want[200];
    int o = snprintf(body, sizeof body,
                     "{\"name\":\"run_code\",\"arguments\":{\"language\":\"c\",\"code\":\"x\","
                     "\"tests\":[");
    for (int i = 0; i <= ARG_TESTS_MAX; i++)
        o += snprintf(body + o, sizeof body - (size_t)o, "%s{\"expected\":\"1\"}", i ? "," : "");
    snprintf(body + o, sizeof body - (size_t)o, "]}}");
    char *call = NULL;
    assert_true(asprintf(&call, CALL("%s"), body) > 0);
    snprintf(want, sizeof want,
             "[talkback: argument `tests` holds %d items; at most %d are allowed: send the rest "
             "in another call. Nothing ran.]",
             ARG_TESTS_MAX + 1, ARG_TESTS_MAX);
    expect_refusal(call, want);
    free(call);
    json_t *tools = tools_list_json(&opts.limits);
    const char *d = NULL;
    size_t i;
    json_t *t;
    json_array_foreach(tools, i, t)
    {
        json_t *props = json_object_get(json_object_get(t, "inputSchema"), "properties");
        if (strcmp(json_string_value(json_object_get(t, "name")), "run_code") == 0)
            d = json_string_value(json_object_get(json_object_get(props, "tests"), "description"));
    }
    snprintf(want, sizeof want, "at most %d.", ARG_TESTS_MAX);
    assert_non_null(d);
    assert_non_null(strstr(d, want));
    json_decref(tools);
}

/* What tools/list advertises has nothing a client would refuse a call on
 * (types, required, bounds): those are said in the descriptions, and
 * talkback's own checks refuse with words. */
static void schemas_let_clients_pass(void **state)
{
    (void)state;
    static const char *const checks[] = { "type",    "required", "minimum",
                                          "maximum", "minItems", "maxItems" };
    json_t *tools = tools_list_json(&opts.limits);
    size_t i;
    json_t *t;
    json_array_foreach(tools, i, t)
    {
        json_t *schema = json_object_get(t, "inputSchema");
        assert_string_equal(json_string_value(json_object_get(schema, "type")), "object");
        assert_null(json_object_get(schema, "required"));
        assert_true(json_is_true(json_object_get(schema, "additionalProperties")));
        const char *name;
        json_t *prop;
        json_object_foreach(json_object_get(schema, "properties"), name, prop)
        {
            for (size_t k = 0; k < sizeof checks / sizeof checks[0]; k++)
                if (json_object_get(prop, checks[k]))
                    fail_msg("%s.%s advertises %s", json_string_value(json_object_get(t, "name")),
                             name, checks[k]);
            const char *d = json_string_value(json_object_get(prop, "description"));
            assert_true(strstr(d, "Required, ") || strstr(d, "Optional, "));
            json_t *items = json_object_get(prop, "items");
            if (items) {
                assert_null(json_object_get(items, "required"));
                const char *iname;
                json_t *iprop;
                json_object_foreach(json_object_get(items, "properties"), iname, iprop)
                    assert_null(json_object_get(iprop, "type"));
            }
        }
    }
    const char *d = json_string_value(json_object_get(
        json_object_get(
            json_object_get(json_object_get(json_array_get(tools, 0), "inputSchema"), "properties"),
            "command"),
        "description"));
    assert_non_null(strstr(d, "python3 main.py\". Required, a string."));
    json_decref(tools);
    /* Talkback's own checks still hold, with the argument named. */
    expect_refusal(CALL("{\"name\":\"run\",\"arguments\":{}}"),
                   "[talkback: argument `command` is required and must be a string. Nothing ran.]");
    expect_refusal(CALL("{\"name\":\"run\",\"arguments\":{\"command\":[\"ls\"]}}"),
                   "[talkback: argument `command` must be a string, not an array. Nothing ran.]");
    expect_refusal(CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"ls\",\"timeout\":\"30\"}}"),
                   "[talkback: argument `timeout` must be an integer, not a string. Nothing ran.]");
    expect_refusal(CALL("{\"name\":\"run_code\",\"arguments\":{\"language\":\"python\",\"code\":"
                        "\"print(1)\",\"tests\":[{\"input\":\"1\"}]}}"),
                   "[talkback: item 1 of `tests` has no `expected`: add it. Nothing ran.]");
    tests_limit_once();
}

/* The largest timeout a timeout property's description states ("... at
 * most N."): the schema itself has no maximum a client would check. */
static json_int_t adv_max(const json_t *to)
{
    assert_null(json_object_get(to, "maximum"));
    const char *d = json_string_value(json_object_get(to, "description"));
    assert_non_null(d);
    const char *at = strstr(d, "at most ");
    assert_non_null(at);
    return (json_int_t)strtoll(at + 8, NULL, 10);
}

/* Every advertised maximum and default leaves room for set-up below the
 * client's limit. */
static void timeouts_fit_the_client(void **state)
{
    (void)state;
    json_t *tools = tools_list_json(&opts.limits);
    size_t i;
    json_t *t;
    int seen = 0;
    json_array_foreach(tools, i, t)
    {
        json_t *to = json_object_get(
            json_object_get(json_object_get(t, "inputSchema"), "properties"), "timeout");
        if (!to)
            continue;
        seen++;
        json_int_t max = adv_max(to);
        json_int_t dflt = json_integer_value(json_object_get(to, "default"));
        const char *name = json_string_value(json_object_get(t, "name"));
        bool code = strcmp(name, "run_code") == 0;
        int64_t setup = code ? opts.limits.call_grace + opts.limits.code_compile_timeout + 60 : 0;
        /* run_code's programs end before the ceiling; run's go on as jobs */
        if (code)
            assert_true(max >= 1 && max + setup < opts.limits.client_timeout);
        assert_true(dflt >= 1 && dflt <= max);
        if (!code) {
            assert_int_equal(max, 1800);
            assert_int_equal(dflt, 300);
        } else {
            assert_int_equal(max, 300);
        }
    }
    assert_int_equal(seen, 2);
    json_decref(tools);

    /* A run longer than the client allows is accepted: its call answers
     * before the client's ceiling, less the round trip's margin. */
    mcp_outcome_t out;
    handle(CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"sleep 9999\",\"timeout\":1800}}"),
           &opts, &out);
    assert_int_equal(out.action, MCP_CALL);
    assert_true(out.call.wait_s < opts.limits.client_timeout);
    assert_true(out.call.wait_s >= opts.limits.client_timeout - 3);
    mcp_outcome_clear(&out);

    expect_refusal(CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"ls\",\"timeout\":1801}}"),
                   "[talkback: argument `timeout` must be between 1 and 1800 seconds (default "
                   "300). Call run again with a timeout in that range: a command still running "
                   "when the call must answer goes on as a job. Nothing ran.]");

    /* A client that waits 40 s (issue 24): run takes a timeout of 30 s and
     * more, its default lowered below the ceiling; fixed waits fit. */
    mcp_opts_t o = opts;
    o.limits.client_timeout = 40;
    tools = tools_list_json(&o.limits);
    json_t *to = json_object_get(
        json_object_get(json_object_get(json_array_get(tools, 0), "inputSchema"), "properties"),
        "timeout");
    assert_int_equal(adv_max(to), 1800);
    assert_int_equal(json_integer_value(json_object_get(to, "default")), 38);
    json_decref(tools);
    for (int secs = 1; secs <= 60; secs += 29) {
        char body[256];
        snprintf(body, sizeof body,
                 CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"ls\",\"timeout\":%d}}"),
                 secs);
        handle(body, &o, &out);
        assert_int_equal(out.action, MCP_CALL);
        assert_true(out.call.wait_s <= 38);
        mcp_outcome_clear(&out);
    }
    handle(CALL("{\"name\":\"reset\"}"), &o, &out);
    assert_int_equal(out.action, MCP_CALL);
    assert_true(out.call.wait_s < 40);
    mcp_outcome_clear(&out);

    /* 0: no client limit, the configured ones stand. */
    o.limits.client_timeout = 0;
    tools = tools_list_json(&o.limits);
    to = json_object_get(
        json_object_get(json_object_get(json_array_get(tools, 0), "inputSchema"), "properties"),
        "timeout");
    assert_int_equal(adv_max(to), 1800);
    json_decref(tools);
}

/* Wrong names whose meaning would be lost: nothing runs, and the text
 * names the right argument. */
static void wrong_names_refused(void **state)
{
    (void)state;
    expect_refusal(CALL("{\"name\":\"run\",\"arguments\":{\"cmd\":\"ls\"}}"),
                   "[talkback: run has no argument `cmd`: it is called `command`. Nothing ran: "
                   "call run again with `command`.]");
    expect_refusal(CALL("{\"name\":\"run_code\",\"arguments\":{\"language\":\"python\","
                        "\"code\":\"print(input())\",\"stdin\":\"5\\n\"}}"),
                   "[talkback: run_code has no argument `stdin`: it is called `input`. Nothing "
                   "ran: call run_code again with `input`.]");
    /* stdin next to input: which one was meant cannot be told. */
    expect_refusal(CALL("{\"name\":\"run_code\",\"arguments\":{\"language\":\"python\","
                        "\"code\":\"x\",\"stdin\":\"5\",\"input\":\"6\"}}"),
                   "[talkback: run_code has no argument `stdin`; send only `input`. Nothing ran.]");
    expect_refusal(CALL("{\"name\":\"write_file\",\"arguments\":{\"filename\":\"a.py\","
                        "\"content\":\"x\"}}"),
                   "[talkback: write_file has no argument `filename`: it is called `path`. "
                   "Nothing ran: call write_file again with `path`.]");
    expect_refusal(CALL("{\"name\":\"run_code\",\"arguments\":{\"lang\":\"c\",\"code\":\"x\"}}"),
                   "[talkback: run_code has no argument `lang`: it is called `language`. Nothing "
                   "ran: call run_code again with `language`.]");
    expect_refusal(CALL("{\"name\":\"run_code\",\"arguments\":{\"language\":\"c\",\"code\":\"x\","
                        "\"expected_output\":\"3\"}}"),
                   "[talkback: run_code has no argument `expected_output`: it is called "
                   "`expected`. Nothing ran: call run_code again with `expected`.]");
    char *t =
        refusal(CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"cat\",\"stdin\":\"hi\"}}"));
    assert_non_null(strstr(t, "run has no argument `stdin`. stdin is closed: pipe the input"));
    assert_non_null(strstr(t, "Nothing ran.]"));
    free(t);
    t = refusal(CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"make\",\"cwd\":\"app\"}}"));
    assert_non_null(strstr(t, "cd DIR &&"));
    free(t);
    t = refusal(CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"x\",\"timeout_ms\":5000}}"));
    assert_non_null(strstr(t, "in seconds"));
    free(t);
}

/* Wrong names that change nothing: the call runs and the result says
 * what was ignored. */
static void wrong_names_noted(void **state)
{
    (void)state;
    expect_runs(CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"ls\",\"cmd\":\"ls\"}}"),
                "[talkback: argument `cmd` was ignored: run takes `command` instead.]\n");
    expect_runs(CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"ls\",\"why\":\"look\"}}"),
                "[talkback: argument `why` was ignored: run takes only `command`, `timeout`.]\n");
    expect_runs(CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"ls\"}}"), "");
    expect_runs(CALL("{\"name\":\"reset\",\"arguments\":{\"confirm\":true}}"),
                "[talkback: argument `confirm` was ignored: reset takes no arguments.]\n");
    /* The note comes first in the result. */
    mcp_call_t call = { .id = json_integer(1), .tool = tools_find("run"), .wait_s = 60 };
    json_t *args = json_pack("{s:s, s:s}", "command", "ls", "why", "x");
    tools_ignored_note(call.tool, args, call.note, sizeof call.note);
    json_decref(args);
    proto_msg_t *req = proto_msg_new(PROTO_REQUEST);
    proto_msg_t *rep = proto_reply_new(req, PROTO_ST_OK, false, "$ ls\nmain.c");
    char *body = mcp_call_reply(&call, rep);
    json_t *j = json_loads(body, 0, NULL);
    const char *text = json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(j, "result"), "content"), 0), "text"));
    assert_string_equal(text, "[talkback: argument `why` was ignored: run takes only `command`, "
                              "`timeout`.]\n$ ls\nmain.c");
    json_decref(j);
    free(body);
    proto_msg_destroy(&rep);
    proto_msg_destroy(&req);
    mcp_call_clear(&call);

    /* Many unknown arguments: whole lines only, never past the buffer. */
    char small[90];
    args = json_pack("{s:s, s:i, s:i, s:i}", "command", "ls", "a", 1, "b", 2, "c", 3);
    tools_ignored_note(tools_find("run"), args, small, sizeof small);
    json_decref(args);
    assert_true(strlen(small) < sizeof small);
    assert_true(small[0] == '\0' || small[strlen(small) - 1] == '\n');
}

/* The gateway copies a call's arguments into the request under their
 * schema names: every name a tool's schema gives must be a key its
 * operation reads (proto/ops.h), and the row must name that operation and
 * its kind.  run_code's `tests` items arrive as tests.I.input and
 * tests.I.expected. */
static void schemas_name_queue_keys(void **state)
{
    (void)state;
    static const struct {
        const char *tool, *op, *kind;
        const char *args[7];
    } want[] = {
        { "run", OP_RUN, KIND_SANDBOX, { ARG_COMMAND, ARG_TIMEOUT } },
        { "write_file", OP_WRITE_FILE, KIND_SANDBOX, { ARG_PATH, ARG_CONTENT } },
        { "reset", OP_RESET, KIND_SANDBOX, { NULL } },
        { "run_code",
          OP_RUN_CODE,
          KIND_JUDGE,
          { ARG_LANGUAGE, ARG_CODE, ARG_INPUT, ARG_EXPECTED, ARG_TESTS, ARG_TIMEOUT } },
    };
    size_t n;
    const tools_def_t *rows = tools_table(&n);
    assert_int_equal(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(rows[i].name, want[i].tool);
        assert_string_equal(rows[i].op, want[i].op);
        assert_non_null(ops_named(rows[i].op));
        assert_string_equal(ops_named(rows[i].op)->kind, want[i].kind);
        json_t *schema = json_loads(rows[i].input_schema, 0, NULL);
        assert_non_null(schema);
        const char *name;
        json_t *prop;
        json_object_foreach(json_object_get(schema, "properties"), name, prop)
        {
            bool known = false;
            for (size_t k = 0; want[i].args[k]; k++)
                known = known || strcmp(name, want[i].args[k]) == 0;
            if (!known)
                fail_msg("%s's argument `%s` is no key of %s in proto/ops.h", rows[i].name, name,
                         want[i].op);
        }
        json_decref(schema);
    }

    json_t *args = json_pack("{s:s, s:s, s:[{s:s, s:s}, {s:s}]}", "language", "c", "code", "x",
                             "tests", "input", "1", "expected", "2", "expected", "3");
    proto_msg_t *req = NULL;
    int64_t wait = 0;
    char *err = NULL;
    assert_int_equal(tools_build_request(tools_find("run_code"), args, "c1", "u", &opts.limits, 0,
                                         &req, &wait, &err),
                     TOOLS_OK);
    json_decref(args);
    assert_string_equal(req->kind, KIND_JUDGE);
    assert_string_equal(req->name, OP_RUN_CODE);
    assert_int_equal(proto_map_int(&req->args, ARG_TESTS, 0), 2);
    char key[40];
    ops_item_key(key, sizeof key, ARG_TESTS, 0, ARG_INPUT);
    assert_string_equal(key, "tests.0.input");
    assert_string_equal(proto_map_str(&req->args, key, NULL), "1");
    ops_item_key(key, sizeof key, ARG_TESTS, 1, ARG_EXPECTED);
    assert_string_equal(proto_map_str(&req->args, key, NULL), "3");
    ops_item_key(key, sizeof key, ARG_TESTS, 1, ARG_INPUT);
    assert_null(proto_map_str(&req->args, key, NULL));
    proto_msg_destroy(&req);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(descriptions_carry_the_facts),
        cmocka_unit_test(timeouts_fit_the_client),
        cmocka_unit_test(schemas_let_clients_pass),
        cmocka_unit_test(wrong_names_refused),
        cmocka_unit_test(wrong_names_noted),
        cmocka_unit_test(schemas_name_queue_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
