/* fuzz_jsonrpc.c -- libFuzzer harness for the gateway's JSON-RPC handling.
 *
 * mcp_handle (gateway/mcp.h) is the pure function behind POST /mcp: it
 * takes the body and the few header values that matter and decides the
 * answer, without I/O.  Everything in it sees bytes straight from the
 * network, so it must never crash, leak or read out of bounds, whatever
 * arrives.
 *
 * Input layout: byte 0 picks the header values (conversation id present,
 * usable or not; user id; MCP-Protocol-Version absent, supported or not)
 * and, with its two top bits, the client's own timeout (none, 600 s, or
 * 20 s, shorter than any set-up); the rest is the POST body.  When the outcome is a tools/call, the harness
 * also turns a made-up hub reply (each status, error or not) into the
 * JSON-RPC answer with mcp_call_reply and mcp_call_failure, as the HTTP
 * front would.  Every answer body must be one line of valid JSON.  The
 * header predicates (Origin, Host, Accept, Content-Type) and the UTF-8
 * repair get the body as a string too.
 *
 * Built only with -DTALKBACK_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt);
 * run by tests/fuzz/run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gateway/mcp.h"
#include "gateway/mcptext.h"

static void fuzz_fail(const char *what, const char *body)
{
    fprintf(stderr, "fuzz_jsonrpc: %s\n%s\n", what, body ? body : "(null)");
    abort();
}

/* An answer body must be a JSON value on one line. */
static void check_body(const char *body)
{
    if (!body)
        return;
    if (strchr(body, '\n'))
        fuzz_fail("an answer body spans more than one line", body);
    json_error_t e;
    json_t *j = json_loads(body, JSON_DECODE_ANY, &e);
    if (!j)
        fuzz_fail("an answer body is not valid JSON", body);
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const char *const convs[] = { NULL, "fuzz-chat-1", "", "../etc", "a b" };
    static const char *const users[] = { NULL, "user-1" };
    static const char *const versions[] = { NULL, "2025-06-18", "1999-01-01", "2025-11-25" };
    uint8_t sel = data[0];
    mcp_headers_t h = {
        .conversation = convs[sel % 5],
        .user = users[(sel / 5) % 2],
        .protocol_version = versions[(sel / 10) % 4],
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
                    /* no client limit, LibreChat's 600 s, one shorter than set-up */
                    .client_timeout = (sel & 0x40) ? ((sel & 0x80) ? 20 : 600) : 0 },
    };
    const char *body = (const char *)data + 1;
    size_t len = size - 1;

    /* An exact-size copy, so ASan catches a read past the body. */
    char *copy = malloc(len ? len : 1);
    if (!copy)
        return 0;
    memcpy(copy, body, len);

    mcp_outcome_t out;
    mcp_handle(copy, len, &h, &o, &out);
    switch (out.action) {
    case MCP_REPLY:
        if (out.http_status < 200 || out.http_status > 599)
            fuzz_fail("MCP_REPLY with an impossible HTTP status", out.body);
        check_body(out.body);
        break;
    case MCP_ACCEPTED: break;
    case MCP_CANCEL:
        if (!out.cancel_key)
            fuzz_fail("MCP_CANCEL without a cancel key", NULL);
        break;
    case MCP_CALL: {
        if (!out.req || !out.cancel_key || !out.call.tool)
            fuzz_fail("MCP_CALL without a request, a cancel key or a tool", NULL);
        proto_msg_t *reply =
            proto_reply_new(out.req, (proto_status_t)(sel % 6), sel & 1, "fuzz reply text");
        if (reply) {
            /* Reuse some body bytes as the reply text: any bytes can come
             * back from a sandbox. */
            proto_msg_set_text(reply, copy, len > 256 ? 256 : len);
            char *answer = mcp_call_reply(&out.call, reply);
            check_body(answer);
            free(answer);
            proto_msg_destroy(&reply);
        }
        char *failure = mcp_call_failure(&out.call, "talkback gave this call up");
        check_body(failure);
        free(failure);
        break;
    }
    default: fuzz_fail("unknown action", NULL);
    }
    mcp_outcome_clear(&out);

    /* The header rules and the UTF-8 repair, on the body as a string. */
    char *str = malloc(len + 1);
    if (str) {
        memcpy(str, body, len);
        str[len] = '\0';
        (void)mcp_origin_allowed(str, "https://chat.example");
        (void)mcp_host_allowed(str);
        (void)mcp_content_type_json(str);
        (void)mcp_accept_ok(str);
        (void)mcp_accept_sse(str);
        (void)mcp_version_supported(str);
        (void)mcp_version_negotiate(str);
        size_t clean_len = 0;
        char *clean = mcp_utf8_sanitize(body, len, &clean_len);
        if (clean) {
            json_t *j = mcp_json_text(clean, clean_len);
            if (!j)
                fuzz_fail("mcp_json_text refused sanitized text", NULL);
            json_decref(j);
            free(clean);
        }
        free(str);
    }
    free(copy);
    return 0;
}
