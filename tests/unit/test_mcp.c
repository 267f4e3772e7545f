/* test_mcp.c -- the MCP dispatch and the tool table: version negotiation,
 * JSON-RPC error codes, header rules, argument checking, the tools/list
 * shape, reply texts and the UTF-8 repair. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/mcp.h"
#include "gateway/mcptext.h"
#include "gateway/tools.h"
#include "proto/optable.h"

static const mcp_opts_t opts = {
    .conversation_header = "X-Conversation-Id",
    .user_header = "X-User-Id",
    .limits = { .run_timeout = 300,
                .run_timeout_max = 1800,
                .call_grace = 30,
                .write_file_max = 16 },
};

static const mcp_headers_t with_conv = { .conversation = "conv-1", .user = "user-1" };
static const mcp_headers_t no_headers = { 0 };

/* Run mcp_handle on a C string body. */
static void handle(const char *body, const mcp_headers_t *h, mcp_outcome_t *out)
{
    mcp_handle(body, strlen(body), h, &opts, out);
}

/* Parse an outcome's body; the caller decrefs. */
static json_t *body_json(const mcp_outcome_t *out)
{
    assert_non_null(out->body);
    json_error_t e;
    json_t *j = json_loads(out->body, 0, &e);
    assert_non_null(j);
    assert_null(strchr(out->body, '\n')); /* one line, as SSE data needs */
    return j;
}

/* Expect a JSON-RPC error with this HTTP status and code. */
static void expect_error(const char *body, const mcp_headers_t *h, int status, int code)
{
    mcp_outcome_t out;
    handle(body, h, &out);
    assert_int_equal(out.action, MCP_REPLY);
    assert_int_equal(out.http_status, status);
    json_t *j = body_json(&out);
    assert_string_equal(json_string_value(json_object_get(j, "jsonrpc")), "2.0");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "error"), "code")),
                     code);
    assert_non_null(json_object_get(j, "id"));
    json_decref(j);
    mcp_outcome_clear(&out);
}

/* Expect an isError tools/call result and return its text (malloc'ed). */
static char *expect_refusal(const char *body, const mcp_headers_t *h)
{
    mcp_outcome_t out;
    handle(body, h, &out);
    assert_int_equal(out.action, MCP_REPLY);
    assert_int_equal(out.http_status, 200);
    json_t *j = body_json(&out);
    json_t *res = json_object_get(j, "result");
    assert_true(json_is_true(json_object_get(res, "isError")));
    json_t *c0 = json_array_get(json_object_get(res, "content"), 0);
    assert_string_equal(json_string_value(json_object_get(c0, "type")), "text");
    char *text = strdup(json_string_value(json_object_get(c0, "text")));
    json_decref(j);
    mcp_outcome_clear(&out);
    return text;
}

static void expect_refusal_text(const char *body, const mcp_headers_t *h, const char *want)
{
    char *text = expect_refusal(body, h);
    assert_string_equal(text, want);
    free(text);
}

/* ---- versions and header rules -------------------------------------------------- */

static void versions(void **state)
{
    (void)state;
    assert_true(mcp_version_supported("2025-11-25"));
    assert_true(mcp_version_supported("2025-06-18"));
    assert_true(mcp_version_supported("2025-03-26"));
    assert_true(mcp_version_supported("2024-11-05"));
    assert_false(mcp_version_supported("2026-07-28"));
    assert_false(mcp_version_supported(""));
    assert_false(mcp_version_supported(NULL));
    assert_string_equal(mcp_version_negotiate("2025-06-18"), "2025-06-18");
    assert_string_equal(mcp_version_negotiate("2099-01-01"), "2025-11-25");
    assert_string_equal(mcp_version_negotiate(NULL), "2025-11-25");
}

static void origins(void **state)
{
    (void)state;
    assert_true(mcp_origin_allowed(NULL, NULL));
    assert_true(mcp_origin_allowed("http://localhost", NULL));
    assert_true(mcp_origin_allowed("http://localhost:3080", ""));
    assert_true(mcp_origin_allowed("https://localhost:443", NULL));
    assert_true(mcp_origin_allowed("http://127.0.0.1:8080", NULL));
    assert_true(mcp_origin_allowed("HTTP://LOCALHOST", NULL));
    assert_true(mcp_origin_allowed("http://[::1]:8080", NULL));
    assert_false(mcp_origin_allowed("http://evil.example.com", NULL));
    assert_false(mcp_origin_allowed("http://localhost.evil.com", NULL));
    assert_false(mcp_origin_allowed("http://localhost:80x", NULL));
    assert_false(mcp_origin_allowed("http://localhost:", NULL));
    assert_false(mcp_origin_allowed("http://127.0.0.10", NULL));
    assert_false(mcp_origin_allowed("null", NULL));
    assert_false(mcp_origin_allowed("", NULL));
    const char *extra = "https://chat.example.org, http://librechat:3080/";
    assert_true(mcp_origin_allowed("https://chat.example.org", extra));
    assert_true(mcp_origin_allowed("http://librechat:3080", extra));
    assert_false(mcp_origin_allowed("https://chat.example", extra));
    assert_false(mcp_origin_allowed("https://chat.example.org.evil", extra));
}

static void hosts(void **state)
{
    (void)state;
    assert_true(mcp_host_allowed(NULL));
    assert_true(mcp_host_allowed("localhost"));
    assert_true(mcp_host_allowed("localhost:8080"));
    assert_true(mcp_host_allowed("127.0.0.1:8080"));
    assert_true(mcp_host_allowed("[::1]:8080"));
    assert_false(mcp_host_allowed("evil.example.com"));
    assert_false(mcp_host_allowed("evil.example.com:8080"));
    assert_false(mcp_host_allowed("localhost.evil.com"));
    assert_false(mcp_host_allowed(""));
}

static void media_types(void **state)
{
    (void)state;
    assert_true(mcp_content_type_json("application/json"));
    assert_true(mcp_content_type_json("Application/JSON; charset=utf-8"));
    assert_false(mcp_content_type_json("text/plain"));
    assert_false(mcp_content_type_json("application/jsonx"));
    assert_false(mcp_content_type_json(NULL));

    assert_true(mcp_accept_ok(NULL));
    assert_true(mcp_accept_ok("application/json, text/event-stream"));
    assert_true(mcp_accept_ok("text/event-stream"));
    assert_true(mcp_accept_ok("*/*"));
    assert_true(mcp_accept_ok("text/html, application/json;q=0.9"));
    assert_false(mcp_accept_ok("text/html"));
    assert_true(mcp_accept_sse("application/json, text/event-stream"));
    assert_false(mcp_accept_sse("application/json"));
    assert_false(mcp_accept_sse("*/*"));
    assert_false(mcp_accept_sse(NULL));
}

/* ---- JSON-RPC framing -------------------------------------------------------------- */

static void jsonrpc_errors(void **state)
{
    (void)state;
    expect_error("{\"jsonrpc\":", &no_headers, 400, MCP_PARSE_ERROR);
    expect_error("", &no_headers, 400, MCP_PARSE_ERROR);
    expect_error("{} trailing", &no_headers, 400, MCP_PARSE_ERROR);
    expect_error("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", &no_headers, 400,
                 MCP_INVALID_REQUEST);
    expect_error("42", &no_headers, 400, MCP_INVALID_REQUEST);
    expect_error("\"ping\"", &no_headers, 400, MCP_INVALID_REQUEST);
    expect_error("{\"id\":1,\"method\":\"ping\"}", &no_headers, 400, MCP_INVALID_REQUEST);
    expect_error("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", &no_headers, 400,
                 MCP_INVALID_REQUEST);
    expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", &no_headers, 400,
                 MCP_INVALID_REQUEST);
    expect_error("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", &no_headers, 400,
                 MCP_INVALID_REQUEST);
    expect_error("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", &no_headers, 400,
                 MCP_INVALID_REQUEST);
    expect_error("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", &no_headers, 400,
                 MCP_INVALID_REQUEST);
    expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[]}", &no_headers,
                 400, MCP_INVALID_REQUEST);
    expect_error("{\"jsonrpc\":\"2.0\",\"id\":1}", &no_headers, 400, MCP_INVALID_REQUEST);
    expect_error("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/list\"}", &no_headers, 200,
                 MCP_METHOD_NOT_FOUND);

    /* The id of a well-formed request comes back with its error. */
    mcp_outcome_t out;
    handle("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"nope\"}", &no_headers, &out);
    json_t *j = body_json(&out);
    assert_string_equal(json_string_value(json_object_get(j, "id")), "abc");
    json_decref(j);
    mcp_outcome_clear(&out);

    /* A parse error answers id null. */
    handle("{", &no_headers, &out);
    j = body_json(&out);
    assert_true(json_is_null(json_object_get(j, "id")));
    json_decref(j);
    mcp_outcome_clear(&out);
}

static void protocol_header(void **state)
{
    (void)state;
    /* A version no era speaks: refused as it always was. */
    mcp_headers_t h = { .protocol_version = "2099-01-01" };
    expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &h, 400, MCP_SERVER_ERROR);
    expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", &h, 400,
                 MCP_SERVER_ERROR);
    /* The modern one without its _meta: a malformed modern request. */
    h.protocol_version = "2026-07-28";
    expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", &h, 400,
                 MCP_INVALID_PARAMS);
    h.protocol_version = "2024-11-05";
    mcp_outcome_t out;
    handle("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &h, &out);
    assert_int_equal(out.http_status, 200);
    mcp_outcome_clear(&out);
}

static void notifications(void **state)
{
    (void)state;
    mcp_outcome_t out;
    handle("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &no_headers, &out);
    assert_int_equal(out.action, MCP_ACCEPTED);
    assert_int_equal(out.http_status, 202);
    assert_null(out.body);
    mcp_outcome_clear(&out);

    /* A response to nothing: accepted. */
    handle("{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}", &no_headers, &out);
    assert_int_equal(out.action, MCP_ACCEPTED);
    mcp_outcome_clear(&out);

    /* Cancel: keyed on conversation + compact JSON id. */
    handle("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
           "\"params\":{\"requestId\":3,\"reason\":\"user stop\"}}",
           &with_conv, &out);
    assert_int_equal(out.action, MCP_CANCEL);
    assert_string_equal(out.cancel_key, "conv-1\n3");
    mcp_outcome_clear(&out);
    handle("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
           "\"params\":{\"requestId\":\"r-1\"}}",
           &with_conv, &out);
    assert_int_equal(out.action, MCP_CANCEL);
    assert_string_equal(out.cancel_key, "conv-1\n\"r-1\"");
    mcp_outcome_clear(&out);
    /* Without a usable conversation there is nothing to cancel. */
    handle("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
           "\"params\":{\"requestId\":3}}",
           &no_headers, &out);
    assert_int_equal(out.action, MCP_ACCEPTED);
    mcp_outcome_clear(&out);
}

/* ---- initialize, ping, tools/list ------------------------------------------------------ */

static void initialize(void **state)
{
    (void)state;
    mcp_outcome_t out;
    handle("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
           "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
           "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
           &no_headers, &out);
    assert_int_equal(out.http_status, 200);
    json_t *j = body_json(&out);
    assert_int_equal(json_integer_value(json_object_get(j, "id")), 0);
    json_t *r = json_object_get(j, "result");
    assert_string_equal(json_string_value(json_object_get(r, "protocolVersion")), "2025-06-18");
    assert_true(json_is_false(json_object_get(
        json_object_get(json_object_get(r, "capabilities"), "tools"), "listChanged")));
    json_t *si = json_object_get(r, "serverInfo");
    assert_string_equal(json_string_value(json_object_get(si, "name")), "talkback");
    assert_string_equal(json_string_value(json_object_get(si, "version")), "0.1.0");
    const char *ins = json_string_value(json_object_get(r, "instructions"));
    assert_non_null(ins);
    assert_non_null(strstr(ins, "run"));
    assert_non_null(strstr(ins, "write_file"));
    assert_non_null(strstr(ins, "run_code"));
    assert_null(json_object_get(r, "sessionId"));
    json_decref(j);
    mcp_outcome_clear(&out);

    handle("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
           "\"protocolVersion\":\"2030-01-01\"}}",
           &no_headers, &out);
    j = body_json(&out);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(j, "result"), "protocolVersion")),
        "2025-11-25");
    json_decref(j);
    mcp_outcome_clear(&out);
}

static void ping(void **state)
{
    (void)state;
    mcp_outcome_t out;
    handle("{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}", &no_headers, &out);
    assert_int_equal(out.http_status, 200);
    assert_string_equal(out.body, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"result\":{}}");
    mcp_outcome_clear(&out);
}

static void tools_list_shape(void **state)
{
    (void)state;
    mcp_outcome_t out;
    handle("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", &no_headers, &out);
    assert_int_equal(out.http_status, 200);
    json_t *j = body_json(&out);
    json_t *tools = json_object_get(json_object_get(j, "result"), "tools");
    assert_int_equal(json_array_size(tools), 4);
    const char *want[] = { "run", "write_file", "reset", "run_code" };
    for (size_t i = 0; i < 4; i++) {
        json_t *t = json_array_get(tools, i);
        const char *name = json_string_value(json_object_get(t, "name"));
        assert_string_equal(name, want[i]);
        assert_true(strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                 "0123456789_./-") == strlen(name));
        assert_non_null(json_string_value(json_object_get(t, "description")));
        json_t *schema = json_object_get(t, "inputSchema");
        assert_string_equal(json_string_value(json_object_get(schema, "type")), "object");
        assert_true(json_is_object(json_object_get(schema, "properties")));
        /* Nothing a client would refuse a call on (issue 25, test_tools.c). */
        assert_true(json_is_true(json_object_get(schema, "additionalProperties")));
        assert_null(json_object_get(schema, "required"));
        assert_null(json_object_get(t, "outputSchema"));
        json_t *a = json_object_get(t, "annotations");
        assert_true(json_is_boolean(json_object_get(a, "readOnlyHint")));
        assert_true(json_is_true(json_object_get(a, "destructiveHint")));
    }
    json_t *run = json_array_get(tools, 0);
    json_t *ra = json_object_get(run, "annotations");
    assert_string_equal(json_string_value(json_object_get(ra, "title")), "Run a command");
    assert_true(json_is_false(json_object_get(ra, "idempotentHint")));
    assert_true(json_is_true(json_object_get(ra, "openWorldHint")));
    json_t *props = json_object_get(json_object_get(run, "inputSchema"), "properties");
    const char *cd =
        json_string_value(json_object_get(json_object_get(props, "command"), "description"));
    assert_non_null(strstr(cd, "Required, a string."));
    json_t *timeout = json_object_get(props, "timeout");
    assert_null(json_object_get(timeout, "maximum"));
    assert_non_null(strstr(json_string_value(json_object_get(timeout, "description")),
                           "Default 300, at most 1800. Optional, an integer."));
    assert_int_equal(json_integer_value(json_object_get(timeout, "default")), 300);
    json_t *wa = json_object_get(json_array_get(tools, 1), "annotations");
    assert_true(json_is_true(json_object_get(wa, "idempotentHint")));
    assert_true(json_is_false(json_object_get(wa, "openWorldHint")));
    json_decref(j);
    mcp_outcome_clear(&out);
}

static void table_is_sound(void **state)
{
    (void)state;
    size_t n;
    const tools_def_t *t = tools_table(&n);
    assert_true(n >= 4);
    bool saw_run_code = false;
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_loads(t[i].input_schema, 0, NULL);
        assert_non_null(s);
        assert_string_equal(json_string_value(json_object_get(s, "type")), "object");
        /* every required argument is a declared property */
        size_t k;
        json_t *r;
        json_array_foreach(json_object_get(s, "required"), k, r) assert_non_null(
            json_object_get(json_object_get(s, "properties"), json_string_value(r)));
        json_decref(s);
        assert_non_null(ops_named(t[i].op));
        if (strcmp(t[i].name, "run_code") == 0) {
            saw_run_code = true;
            assert_true(t[i].enabled);
            assert_true(t[i].code_timeouts);
            assert_string_equal(ops_named(t[i].op)->kind, "judge");
            assert_non_null(tools_find("run_code"));
        }
    }
    assert_true(saw_run_code);
}

/* ---- tools/call ---------------------------------------------------------------------------- */

#define CALL(args) "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":" args "}"

static void call_refusals(void **state)
{
    (void)state;
    expect_error(CALL("{\"name\":\"nope\",\"arguments\":{}}"), &with_conv, 200, MCP_INVALID_PARAMS);
    expect_error(CALL("{\"arguments\":{}}"), &with_conv, 200, MCP_INVALID_PARAMS);

    expect_refusal_text(
        CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"ls\"}}"), &no_headers,
        "[talkback refused this call: the X-Conversation-Id header is missing or empty, so "
        "talkback cannot tell which chat's sandbox to use and will not guess. Fix the MCP server "
        "entry in librechat.yaml so every request carries the chat id:\n"
        "    headers:\n"
        "      X-Conversation-Id: \"{{LIBRECHAT_BODY_CONVERSATIONID}}\"\n"
        "Nothing ran.]");

    /* The configured header name is the one quoted. */
    mcp_opts_t o2 = opts;
    o2.conversation_header = "X-Chat";
    mcp_outcome_t out;
    const char *body = CALL("{\"name\":\"reset\"}");
    mcp_headers_t ph = { .conversation = "{{LIBRECHAT_BODY_CONVERSATIONID}}" };
    mcp_handle(body, strlen(body), &ph, &o2, &out);
    json_t *j = body_json(&out);
    const char *text = json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(j, "result"), "content"), 0), "text"));
    assert_non_null(strstr(text, "the X-Chat header is an unreplaced placeholder"));
    assert_non_null(strstr(text, "      X-Chat: \"{{LIBRECHAT_BODY_CONVERSATIONID}}\"\n"));
    json_decref(j);
    mcp_outcome_clear(&out);

    mcp_headers_t reserved = { .conversation = "new" };
    char *t = expect_refusal(CALL("{\"name\":\"reset\"}"), &reserved);
    assert_non_null(strstr(t, "Nothing ran.]"));
    free(t);

    mcp_headers_t bad_user = { .conversation = "conv-1", .user = "{{LIBRECHAT_USER_ID}}" };
    t = expect_refusal(CALL("{\"name\":\"reset\"}"), &bad_user);
    assert_non_null(strstr(t, "X-User-Id header is unusable"));
    free(t);
}

static void call_arguments(void **state)
{
    (void)state;
    expect_refusal_text(CALL("{\"name\":\"run\",\"arguments\":{}}"), &with_conv,
                        "[talkback: argument `command` is required and must be a string. "
                        "Nothing ran.]");
    expect_refusal_text(CALL("{\"name\":\"run\"}"), &with_conv,
                        "[talkback: argument `command` is required and must be a string. "
                        "Nothing ran.]");
    expect_refusal_text(CALL("{\"name\":\"run\",\"arguments\":{\"command\":null}}"), &with_conv,
                        "[talkback: argument `command` is required and must be a string. "
                        "Nothing ran.]");
    expect_refusal_text(CALL("{\"name\":\"run\",\"arguments\":{\"command\":[\"ls\"]}}"), &with_conv,
                        "[talkback: argument `command` must be a string, not an array. "
                        "Nothing ran.]");
    expect_refusal_text(
        CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"ls\",\"timeout\":\"5\"}}"), &with_conv,
        "[talkback: argument `timeout` must be an integer, not a string. "
        "Nothing ran.]");
    expect_refusal_text(
        CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"ls\",\"timeout\":2.5}}"), &with_conv,
        "[talkback: argument `timeout` must be an integer, not a number with a "
        "fraction. Nothing ran.]");
    expect_refusal_text(
        CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"ls\",\"timeout\":0}}"), &with_conv,
        "[talkback: argument `timeout` must be between 1 and 1800 seconds "
        "(default 300). Call run again with a timeout in that range: a command still running "
        "when the call must answer goes on as a job. Nothing ran.]");
    expect_refusal_text(
        CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"ls\",\"timeout\":1801}}"), &with_conv,
        "[talkback: argument `timeout` must be between 1 and 1800 seconds "
        "(default 300). Call run again with a timeout in that range: a command still running "
        "when the call must answer goes on as a job. Nothing ran.]");
    expect_refusal_text(CALL("{\"name\":\"run\",\"arguments\":\"ls\"}"), &with_conv,
                        "[talkback: the arguments of `run` must be a JSON object, not a string. "
                        "Nothing ran.]");
    expect_refusal_text(CALL("{\"name\":\"write_file\",\"arguments\":{\"content\":\"x\"}}"),
                        &with_conv,
                        "[talkback: argument `path` is required and must be a string. "
                        "Nothing ran.]");
    /* write_file_max is 16 bytes in these opts. */
    expect_refusal_text(CALL("{\"name\":\"write_file\",\"arguments\":{\"path\":\"a\","
                             "\"content\":\"0123456789abcdefg\"}}"),
                        &with_conv,
                        "[talkback: argument `content` is 17 bytes, over the limit of 16 bytes. "
                        "Nothing ran. Make it smaller.]");
}

static void call_builds_request(void **state)
{
    (void)state;
    mcp_outcome_t out;
    int64_t before = proto_now_ms();
    handle(CALL("{\"name\":\"run\",\"arguments\":{\"command\":\"echo \\u00e9\\u0000x\","
                "\"junk\":{\"a\":1},\"timeout\":null}}"),
           &with_conv, &out);
    assert_int_equal(out.action, MCP_CALL);
    assert_null(out.body);
    assert_string_equal(out.cancel_key, "conv-1\n9");
    proto_msg_t *r = out.req;
    assert_non_null(r);
    assert_int_equal(r->type, PROTO_REQUEST);
    assert_string_equal(r->kind, "sandbox");
    assert_string_equal(r->name, "run");
    assert_string_equal(r->conv, "conv-1");
    assert_string_equal(r->user, "user-1");
    size_t len;
    const char *cmd = proto_map_str(&r->args, "command", &len);
    assert_int_equal(len, 9);
    assert_memory_equal(cmd, "echo \xc3\xa9\0x", 9);
    assert_int_equal(proto_map_int(&r->args, "timeout", -1), 300);
    assert_null(proto_map_get(&r->args, "junk"));
    assert_int_equal(out.call.wait_s, 330);
    assert_true(r->deadline_ms >= before + 330000 && r->deadline_ms <= proto_now_ms() + 330000);
    assert_int_equal(json_integer_value(out.call.id), 9);
    assert_string_equal(out.call.tool->name, "run");
    mcp_outcome_clear(&out);

    /* An integral real is an integer; no user header gives "". */
    mcp_headers_t h = { .conversation = "c" };
    handle(
        "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/call\",\"params\":{\"name\":\"run\","
        "\"arguments\":{\"command\":\"ls\",\"timeout\":30.0}}}",
        &h, &out);
    assert_int_equal(out.action, MCP_CALL);
    assert_string_equal(out.req->user, "");
    assert_int_equal(proto_map_int(&out.req->args, "timeout", -1), 30);
    assert_int_equal(out.call.wait_s, 60);
    assert_string_equal(out.cancel_key, "c\n\"x\"");
    mcp_outcome_clear(&out);

    /* Tools without a timeout: 60 s plus the grace. */
    handle(CALL("{\"name\":\"reset\",\"arguments\":{}}"), &with_conv, &out);
    assert_int_equal(out.action, MCP_CALL);
    assert_string_equal(out.req->name, "reset");
    assert_int_equal(out.req->args.n, 0);
    assert_int_equal(out.call.wait_s, 90);
    mcp_outcome_clear(&out);

    handle(CALL("{\"name\":\"write_file\",\"arguments\":{\"path\":\"a/b.txt\","
                "\"content\":\"\\u0000\\n\"}}"),
           &with_conv, &out);
    assert_int_equal(out.action, MCP_CALL);
    const char *content = proto_map_str(&out.req->args, "content", &len);
    assert_int_equal(len, 2);
    assert_memory_equal(content, "\0\n", 2);
    mcp_outcome_clear(&out);
}

static void cancel_key_matches(void **state)
{
    (void)state;
    json_t *id = json_integer(12);
    char *k = mcp_cancel_key("conv", id);
    assert_string_equal(k, "conv\n12");
    free(k);
    json_decref(id);
    id = json_string("a\"b");
    k = mcp_cancel_key("conv", id);
    assert_string_equal(k, "conv\n\"a\\\"b\"");
    free(k);
    json_decref(id);
}

/* ---- replies ------------------------------------------------------------------------------ */

static json_t *reply_result(const mcp_call_t *call, const proto_msg_t *reply, const char **text)
{
    char *body = mcp_call_reply(call, reply);
    assert_non_null(body);
    assert_null(strchr(body, '\n'));
    json_t *j = json_loads(body, JSON_ALLOW_NUL, NULL);
    free(body);
    assert_non_null(j);
    json_t *res = json_object_get(j, "result");
    *text = json_string_value(
        json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
    return j;
}

static void replies(void **state)
{
    (void)state;
    mcp_call_t call = { .id = json_integer(5), .tool = tools_find("run"), .wait_s = 330 };
    proto_msg_t *req = proto_msg_new(PROTO_REQUEST);
    const char *text;

    proto_msg_t *rep = proto_reply_new(req, PROTO_ST_OK, false, "hello\nexit code 0");
    json_t *j = reply_result(&call, rep, &text);
    assert_string_equal(text, "hello\nexit code 0");
    assert_int_equal(json_integer_value(json_object_get(j, "id")), 5);
    assert_true(json_is_false(json_object_get(json_object_get(j, "result"), "isError")));
    json_decref(j);

    /* Invalid UTF-8 is repaired, not dropped. */
    proto_msg_set_text(rep,
                       "a\xff"
                       "b\xc3",
                       4);
    rep->is_error = true;
    j = reply_result(&call, rep, &text);
    assert_string_equal(text, "a\xef\xbf\xbd"
                              "b\xef\xbf\xbd");
    assert_true(json_is_true(json_object_get(json_object_get(j, "result"), "isError")));
    json_decref(j);
    proto_msg_destroy(&rep);

    rep = proto_reply_new(req, PROTO_ST_NO_WORKER, true, "");
    j = reply_result(&call, rep, &text);
    assert_string_equal(text, "[talkback: the sandbox manager is not running, so nothing ran. Try "
                              "the same call again in a minute; if it keeps failing, tell the user "
                              "the sandbox service is down.]");
    assert_true(json_is_true(json_object_get(json_object_get(j, "result"), "isError")));
    json_decref(j);
    proto_msg_destroy(&rep);

    rep = proto_reply_new(req, PROTO_ST_WORKER_LOST, true, "");
    j = reply_result(&call, rep, &text);
    assert_string_equal(text,
                        "[talkback: the sandbox manager stopped while handling this call, so "
                        "its result is lost (the command may or may not have run). Check with "
                        "run before assuming anything, then try again.]");
    json_decref(j);
    proto_msg_destroy(&rep);

    rep = proto_reply_new(req, PROTO_ST_DEADLINE, true, "");
    j = reply_result(&call, rep, &text);
    assert_non_null(strstr(text, "[talkback: no answer within the call's deadline (330 s), so the "
                                 "call was given up."));
    json_decref(j);
    proto_msg_destroy(&rep);

    rep = proto_reply_new(req, PROTO_ST_INTERNAL, true, "docker said no");
    j = reply_result(&call, rep, &text);
    assert_non_null(
        strstr(text, "sandbox manager failed while handling this call: docker said no."));
    json_decref(j);
    proto_msg_destroy(&rep);

    /* A judge tool names the judge. */
    size_t n;
    const tools_def_t *table = tools_table(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(table[i].name, "run_code") == 0)
            call.tool = &table[i];
    rep = proto_reply_new(req, PROTO_ST_NO_WORKER, true, "");
    j = reply_result(&call, rep, &text);
    assert_string_equal(text,
                        "[talkback: the judge is not running, so nothing ran. Try the same "
                        "call again in a minute; if it keeps failing, tell the user the judge "
                        "service is down.]");
    json_decref(j);
    proto_msg_destroy(&rep);

    char *body = mcp_call_failure(&call, "[talkback: stopping.]");
    assert_non_null(strstr(body, "\"isError\":true"));
    free(body);

    proto_msg_destroy(&req);
    mcp_call_clear(&call);
    assert_null(call.id);
}

/* ---- UTF-8 repair ---------------------------------------------------------------------------- */

static void expect_sanitized(const char *in, size_t len, const char *want, size_t want_len)
{
    size_t n = 0;
    char *out = mcp_utf8_sanitize(in, len, &n);
    assert_non_null(out);
    assert_int_equal(n, want_len);
    assert_memory_equal(out, want, want_len);
    assert_int_equal(out[n], '\0');
    free(out);
}

#define FFFD   "\xef\xbf\xbd"
#define S(lit) lit, sizeof lit - 1

static void utf8(void **state)
{
    (void)state;
    expect_sanitized(S("plain ascii"), S("plain ascii"));
    expect_sanitized(S("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
                     S("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
    expect_sanitized(S("a\0b"), S("a\0b")); /* NUL kept */
    expect_sanitized(S("\xff"), S(FFFD));
    expect_sanitized(S("\x80x"), S(FFFD "x"));                       /* stray continuation */
    expect_sanitized(S("\xc0\xaf"), S(FFFD FFFD));                   /* overlong '/' */
    expect_sanitized(S("\xe0\x80\xaf"), S(FFFD FFFD FFFD));          /* overlong, 3 bytes */
    expect_sanitized(S("\xed\xa0\x80"), S(FFFD FFFD FFFD));          /* surrogate */
    expect_sanitized(S("\xf4\x90\x80\x80"), S(FFFD FFFD FFFD FFFD)); /* > U+10FFFF */
    expect_sanitized(S("\xe2\x82"), S(FFFD));                        /* truncated: one U+FFFD */
    expect_sanitized(S("\xe2\x82x"), S(FFFD "x"));
    expect_sanitized(S("\xf0\x9f\x98"), S(FFFD));
    expect_sanitized(S("\xf5\x80"), S(FFFD FFFD));
    expect_sanitized(S(""), S(""));

    /* mcp_json_text: exact when valid (NUL included), repaired when not. */
    json_t *j = mcp_json_text("a\0b", 3);
    assert_int_equal(json_string_length(j), 3);
    assert_memory_equal(json_string_value(j), "a\0b", 3);
    json_decref(j);
    j = mcp_json_text("x\xfe", 2);
    assert_string_equal(json_string_value(j), "x" FFFD);
    json_decref(j);
    j = mcp_json_text(NULL, 0);
    assert_string_equal(json_string_value(j), "");
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(versions),
        cmocka_unit_test(origins),
        cmocka_unit_test(hosts),
        cmocka_unit_test(media_types),
        cmocka_unit_test(jsonrpc_errors),
        cmocka_unit_test(protocol_header),
        cmocka_unit_test(notifications),
        cmocka_unit_test(initialize),
        cmocka_unit_test(ping),
        cmocka_unit_test(tools_list_shape),
        cmocka_unit_test(table_is_sound),
        cmocka_unit_test(call_refusals),
        cmocka_unit_test(call_arguments),
        cmocka_unit_test(call_builds_request),
        cmocka_unit_test(cancel_key_matches),
        cmocka_unit_test(replies),
        cmocka_unit_test(utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
