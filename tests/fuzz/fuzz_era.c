/* fuzz_era.c -- libFuzzer harness for the 2026-07-28 request shapes.
 *
 * The same mcp_handle as fuzz_jsonrpc, driven the way a modern client
 * drives it: the body is a request whose params._meta carries (or fails
 * to carry) the per-request envelope, and the headers the revision
 * requires (MCP-Protocol-Version, Mcp-Method, Mcp-Name) agree with it,
 * disagree, are missing or are Base64 sentinels.  Everything must be
 * answered, never crash, leak or read out of bounds; every answer is one
 * line of JSON; and a tools/call that passes is answered with a resultType whatever the hub's
 * reply.  era_header_value also gets the body itself as a header value:
 * a decoded sentinel must be UTF-8.
 *
 * Input layout: byte 0 picks MCP-Protocol-Version (4 values), byte 1
 * Mcp-Method and byte 2 Mcp-Name (each from a small list or, with the top
 * bit set, the rest of the input up to its first NUL, as hostile header
 * bytes); the rest is the POST body.
 *
 * Built only with -DTALKBACK_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt);
 * run by tests/fuzz/run with tests/fuzz/era.dict.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gateway/era.h"
#include "gateway/mcp.h"

static void fuzz_fail(const char *what, const char *body)
{
    fprintf(stderr, "fuzz_era: %s\n%s\n", what, body ? body : "(null)");
    abort();
}

/* An answer body must be one line of JSON; returns it parsed. */
static json_t *check_body(const char *body)
{
    if (!body)
        return NULL;
    if (strchr(body, '\n'))
        fuzz_fail("an answer body spans more than one line", body);
    json_t *j = json_loads(body, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (!j)
        fuzz_fail("an answer body is not valid JSON", body);
    return j;
}

/* A tools/call answer of the modern era must say its resultType. */
static void check_modern_result(const char *body)
{
    json_t *j = check_body(body);
    if (j && !json_is_string(json_object_get(json_object_get(j, "result"), "resultType")))
        fuzz_fail("a modern tools/call result without resultType", body);
    json_decref(j);
}

static void fuzz_call(mcp_outcome_t *out, const char *text, size_t len, uint8_t sel)
{
    proto_msg_t *reply = proto_reply_new(out->req, (proto_status_t)(sel % 6), sel & 1, "reply");
    if (reply) {
        proto_msg_set_text(reply, text, len > 256 ? 256 : len);
        char *answer = mcp_call_reply(&out->call, reply);
        if (out->call.era == ERA_MODERN)
            check_modern_result(answer);
        else
            json_decref(check_body(answer));
        free(answer);
        proto_msg_destroy(&reply);
    }
    char *failure = mcp_call_failure(&out->call, "talkback gave this call up");
    json_decref(check_body(failure));
    free(failure);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    static const char *const versions[] = { "2026-07-28", NULL, "2025-11-25", "1900-01-01" };
    static const char *const methods[] = { NULL, "tools/call", "tools/list", "server/discover" };
    static const char *const names[] = { NULL, "run", "=?base64?cnVu?=", "=?base64?!?=" };
    const char *body = (const char *)data + 3;
    size_t len = size - 3;
    char *copy = malloc(len + 1); /* NUL-terminated: the hostile header value */
    if (!copy)
        return 0;
    memcpy(copy, body, len);
    copy[len] = '\0';

    mcp_headers_t h = {
        .conversation = "fuzz-chat-1",
        .user = "user-1",
        .protocol_version = versions[data[0] % 4],
        .mcp_method = (data[1] & 0x80) ? copy : methods[data[1] % 4],
        .mcp_name = (data[2] & 0x80) ? copy : names[data[2] % 4],
    };
    mcp_opts_t o = {
        .conversation_header = "X-Conversation-Id",
        .user_header = "X-User-Id",
        .limits = { .run_timeout = 300,
                    .run_timeout_max = 1800,
                    .call_grace = 30,
                    .write_file_max = 8 << 20,
                    .code_run_timeout = 10,
                    .code_timeout_max = 300,
                    .code_compile_timeout = 120,
                    .client_timeout = 600 },
        .list_ttl_ms = 3600000,
    };

    mcp_outcome_t out;
    mcp_handle(copy, len, &h, &o, &out);
    switch (out.action) {
    case MCP_REPLY:
        if (out.http_status < 200 || out.http_status > 599)
            fuzz_fail("MCP_REPLY with an impossible HTTP status", out.body);
        json_decref(check_body(out.body));
        break;
    case MCP_ACCEPTED: break;
    case MCP_CANCEL:
        if (!out.cancel_key)
            fuzz_fail("MCP_CANCEL without a cancel key", NULL);
        break;
    case MCP_CALL:
        if (!out.req || !out.cancel_key || !out.call.tool)
            fuzz_fail("MCP_CALL without a request, a cancel key or a tool", NULL);
        fuzz_call(&out, copy, len, data[0]);
        break;
    default: fuzz_fail("unknown action", NULL);
    }
    mcp_outcome_clear(&out);

    /* A plain value comes back as it is; a decoded sentinel must be UTF-8. */
    char *v = era_header_value(copy);
    size_t n = strlen(copy);
    bool sentinel = n >= 11 && strncmp(copy, "=?base64?", 9) == 0 &&
                    strcmp(copy + n - 2, "?=") == 0;
    json_t *vj = v && sentinel ? json_string(v) : NULL;
    if (v && sentinel && !vj)
        fuzz_fail("era_header_value gave text that is not UTF-8", v);
    json_decref(vj);
    free(v);
    free(copy);
    return 0;
}
