/* test_era.c -- the two MCP eras (gateway/era.c) and mcp_handle under the
 * modern one: which era a request selects, the order of the modern checks
 * (-32602, -32020, -32022), the Base64 sentinel of Mcp-Name, and the
 * fields a modern result carries that a legacy one must not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/era.h"
#include "gateway/mcp.h"

#define META                                                                                       \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                       \
    "\"io.modelcontextprotocol/clientCapabilities\":{}}"

static const mcp_opts_t opts = {
    .conversation_header = "X-Conversation-Id",
    .user_header = "X-User-Id",
    .limits = { .run_timeout = 300,
                .run_timeout_max = 1800,
                .call_grace = 30,
                .write_file_max = 1024 },
    .list_ttl_ms = 60000,
};

/* The headers a 2026-07-28 client sends with method (and name). */
static mcp_headers_t modern_headers(const char *method, const char *name)
{
    mcp_headers_t h = { .conversation = "conv-1",
                        .protocol_version = "2026-07-28",
                        .mcp_method = method,
                        .mcp_name = name };
    return h;
}

/* mcp_handle on body; the answer parsed (caller decrefs), or NULL. */
static json_t *answer(const char *body, const mcp_headers_t *h, mcp_outcome_t *out)
{
    mcp_handle(body, strlen(body), h, &opts, out);
    if (!out->body)
        return NULL;
    json_t *j = json_loads(out->body, 0, NULL);
    assert_non_null(j);
    return j;
}

static void expect_refusal(const char *body, const mcp_headers_t *h, int status, int code)
{
    mcp_outcome_t out;
    json_t *j = answer(body, h, &out);
    assert_int_equal(out.action, MCP_REPLY);
    assert_int_equal(out.http_status, status);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "error"), "code")),
                     code);
    json_decref(j);
    mcp_outcome_clear(&out);
}

static void era_selection(void **state)
{
    (void)state;
    json_t *m = json_loads("{\"method\":\"tools/list\",\"params\":{" META "}}", 0, NULL);
    assert_int_equal(era_of(m, NULL), ERA_MODERN);
    json_decref(m);
    m = json_loads("{\"method\":\"tools/list\"}", 0, NULL);
    assert_int_equal(era_of(m, NULL), ERA_LEGACY);
    assert_int_equal(era_of(m, "2025-11-25"), ERA_LEGACY);
    assert_int_equal(era_of(m, "2026-07-28"), ERA_MODERN);
    assert_int_equal(era_of(m, "2099-01-01"), ERA_LEGACY);
    json_decref(m);
    /* A legacy version in _meta is the legacy era; an unknown one is not. */
    m = json_loads("{\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
                   "\"2025-06-18\"}}}",
                   0, NULL);
    assert_int_equal(era_of(m, NULL), ERA_LEGACY);
    json_decref(m);
    m = json_loads("{\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":7}}}", 0,
                   NULL);
    assert_int_equal(era_of(m, NULL), ERA_MODERN);
    json_decref(m);
    assert_int_equal(era_of(NULL, "2026-07-28"), ERA_LEGACY);
}

static void modern_checks(void **state)
{
    (void)state;
    mcp_headers_t h = modern_headers("tools/call", "run");
    const char *call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                       "\"name\":\"run\",\"arguments\":{\"command\":\"true\"}," META "}}";
    mcp_outcome_t out;
    json_t *j = answer(call, &h, &out);
    assert_int_equal(out.action, MCP_CALL);
    assert_int_equal(out.call.era, ERA_MODERN);
    json_decref(j);
    mcp_outcome_clear(&out);

    h.mcp_name = "reset";
    expect_refusal(call, &h, 400, ERA_HEADER_MISMATCH);
    h.mcp_name = "=?base64?cnVu?="; /* "run" */
    j = answer(call, &h, &out);
    assert_int_equal(out.action, MCP_CALL);
    json_decref(j);
    mcp_outcome_clear(&out);
    h.mcp_name = NULL;
    expect_refusal(call, &h, 400, ERA_HEADER_MISMATCH);
    h = modern_headers("tools/list", "run");
    expect_refusal(call, &h, 400, ERA_HEADER_MISMATCH);
    h = modern_headers(NULL, "run");
    expect_refusal(call, &h, 400, ERA_HEADER_MISMATCH);
    h = modern_headers("tools/call", "run");
    h.protocol_version = NULL;
    expect_refusal(call, &h, 400, ERA_HEADER_MISMATCH);

    /* The envelope first, then the headers, then the version. */
    h = modern_headers("tools/list", NULL);
    expect_refusal("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", &h, 400,
                   MCP_INVALID_PARAMS);
    expect_refusal("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
                   "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}",
                   &h, 400, MCP_INVALID_PARAMS);
    h.mcp_method = "ping";
    expect_refusal("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
                   "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}",
                   &h, 400, MCP_INVALID_PARAMS);
    h = modern_headers("tools/list", NULL);
    h.protocol_version = "1900-01-01";
    const char *old = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{"
                      "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"1900-01-01\","
                      "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
    j = answer(old, &h, &out);
    assert_int_equal(out.http_status, 400);
    json_t *err = json_object_get(j, "error");
    assert_int_equal(json_integer_value(json_object_get(err, "code")), ERA_UNSUPPORTED_VERSION);
    json_t *data = json_object_get(err, "data");
    assert_string_equal(json_string_value(json_object_get(data, "requested")), "1900-01-01");
    assert_string_equal(json_string_value(json_array_get(json_object_get(data, "supported"), 0)),
                        "2026-07-28");
    json_decref(j);
    mcp_outcome_clear(&out);
    h.protocol_version = "2026-07-28"; /* disagrees with _meta: the mismatch comes first */
    expect_refusal(old, &h, 400, ERA_HEADER_MISMATCH);
}

static void modern_results(void **state)
{
    (void)state;
    mcp_headers_t h = modern_headers("tools/list", NULL);
    mcp_outcome_t out;
    json_t *j = answer(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" META "}}", &h, &out);
    json_t *res = json_object_get(j, "result");
    assert_string_equal(json_string_value(json_object_get(res, "resultType")), "complete");
    assert_int_equal(json_integer_value(json_object_get(res, "ttlMs")), 60000);
    assert_string_equal(json_string_value(json_object_get(res, "cacheScope")), "public");
    assert_non_null(json_object_get(json_object_get(res, "_meta"), ERA_META_SERVER_INFO));
    json_decref(j);
    mcp_outcome_clear(&out);

    h = modern_headers("server/discover", NULL);
    j = answer("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"server/discover\",\"params\":{" META
               "}}",
               &h, &out);
    res = json_object_get(j, "result");
    assert_string_equal(json_string_value(json_object_get(res, "resultType")), "complete");
    assert_non_null(json_object_get(res, "supportedVersions"));
    assert_non_null(json_object_get(res, "instructions"));
    assert_int_equal(json_integer_value(json_object_get(res, "ttlMs")), 60000);
    json_decref(j);
    mcp_outcome_clear(&out);

    h = modern_headers("ping", NULL);
    expect_refusal("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{" META "}}", &h,
                   404, MCP_METHOD_NOT_FOUND);

    /* The reply of a modern call says its resultType; a legacy one does not. */
    h = modern_headers("tools/call", "run");
    j = answer("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
               "\"run\",\"arguments\":{\"command\":\"true\"}," META "}}",
               &h, &out);
    assert_int_equal(out.action, MCP_CALL);
    char *failure = mcp_call_failure(&out.call, "gone");
    json_t *f = json_loads(failure, 0, NULL);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(f, "result"), "resultType")), "complete");
    json_decref(f);
    free(failure);
    out.call.era = ERA_LEGACY;
    failure = mcp_call_failure(&out.call, "gone");
    f = json_loads(failure, 0, NULL);
    assert_null(json_object_get(json_object_get(f, "result"), "resultType"));
    json_decref(f);
    free(failure);
    json_decref(j);
    mcp_outcome_clear(&out);
}

static void header_values(void **state)
{
    (void)state;
    char *v = era_header_value("run");
    assert_string_equal(v, "run");
    free(v);
    v = era_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=");
    assert_string_equal(v, "Hello, \xe4\xb8\x96\xe7\x95\x8c");
    free(v);
    assert_null(era_header_value("=?base64?!!?="));
    assert_null(era_header_value("=?base64?AA==?=")); /* a NUL */
    assert_null(era_header_value("=?base64?/w==?=")); /* not UTF-8 */
    v = era_header_value("=?base64?"
                         "?=");
    assert_string_equal(v, "");
    free(v);
    assert_null(era_header_value(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(era_selection),
        cmocka_unit_test(modern_checks),
        cmocka_unit_test(modern_results),
        cmocka_unit_test(header_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
