/* mcp.h -- MCP over JSON-RPC 2.0: what talkback answers to each message.
 *
 * mcp_handle takes one POSTed body and the few header values that matter
 * and decides, without doing any I/O, what the HTTP front must do: send a
 * JSON body with a status, answer 202, cancel a request, or submit a proto
 * request to the hub and later turn its reply into a tools/call result
 * (mcp_call_reply).  The header rules of the Streamable HTTP transport
 * (Origin, Host, Content-Type, Accept, MCP-Protocol-Version) live here too
 * as pure predicates, so all of it is unit-tested without a socket.
 *
 * talkback is stateless: it never hands out an Mcp-Session-Id.  Every
 * tools/call names its chat with the conversation header; initialize, ping
 * and tools/list work without it.  Two eras are served (era.h): the legacy
 * one, opened by initialize, exactly as LibreChat has always seen it, and
 * the modern one (2026-07-28, _meta on every request), from the same
 * tool table; each request is served by the rules of its own era.
 */
#ifndef TALKBACK_MCP_H
#define TALKBACK_MCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "gateway/era.h"
#include "gateway/tools.h"
#include "proto/proto.h"

#define MCP_SERVER_NAME    "talkback"
#define MCP_SERVER_VERSION "0.1.0"
/* Answered to a client asking for a version talkback does not speak. */
#define MCP_LATEST_VERSION "2025-11-25"

/* JSON-RPC error codes. */
#define MCP_PARSE_ERROR      (-32700)
#define MCP_INVALID_REQUEST  (-32600)
#define MCP_METHOD_NOT_FOUND (-32601)
#define MCP_INVALID_PARAMS   (-32602)
#define MCP_INTERNAL_ERROR   (-32603)
#define MCP_SERVER_ERROR     (-32000)

/* Fixed settings, from the config at startup. */
typedef struct {
    const char *conversation_header; /* e.g. "X-Conversation-Id" */
    const char *user_header;         /* e.g. "X-User-Id" */
    tools_limits_t limits;
    int64_t list_ttl_ms; /* ttlMs of tools/list and server/discover (modern era) */
} mcp_opts_t;

/* The header values of one POST (NULL when absent). */
typedef struct {
    const char *conversation;
    const char *user;
    const char *protocol_version; /* MCP-Protocol-Version */
    const char *mcp_method;       /* Mcp-Method (modern era) */
    const char *mcp_name;         /* Mcp-Name (modern era) */
} mcp_headers_t;

typedef enum {
    MCP_REPLY,    /* send body (application/json) with http_status */
    MCP_ACCEPTED, /* a notification or response: 202, no body */
    MCP_CANCEL,   /* notifications/cancelled: queue_cancel(cancel_key), 202 */
    MCP_CALL      /* tools/call: submit req with cancel_key, then answer
                      mcp_call_reply(&call, reply) */
} mcp_action_t;

/* What is needed to answer a tools/call once its reply comes. */
typedef struct {
    json_t *id; /* the JSON-RPC id (owned reference) */
    const tools_def_t *tool;
    int64_t wait_s; /* seconds from submit to the deadline */
    era_t era;      /* how the result is shaped (era.h) */
    char note[320]; /* lines put before the result: arguments that
                                   were ignored (tools_ignored_note); "" = none.
                                   An array, so copying the struct copies it */
} mcp_call_t;

typedef struct {
    mcp_action_t action;
    era_t era;        /* whose rules answered (for /metrics) */
    int http_status;  /* MCP_REPLY */
    char *body;       /* MCP_REPLY: one-line JSON; NULL only when
                                   out of memory (answer 500) */
    char *cancel_key; /* MCP_CALL, MCP_CANCEL */
    proto_msg_t *req; /* MCP_CALL: the request, owned until submitted
                                   (set to NULL after handing it over) */
    mcp_call_t call;  /* MCP_CALL */
} mcp_outcome_t;

/* Decide what to do with one POST body.  *out is overwritten; release it
 * with mcp_outcome_clear.  Never fails: out of memory gives MCP_REPLY with
 * http_status 500 (and possibly body NULL). */
void mcp_handle(const char *body, size_t len, const mcp_headers_t *h, const mcp_opts_t *o,
                mcp_outcome_t *out);
/* Free what an outcome still owns (body, key, req, call id). */
void mcp_outcome_clear(mcp_outcome_t *out);

/* The JSON-RPC response to a tools/call given the hub's reply: its text
 * and is_error when the status is PROTO_ST_OK, else a text explaining the
 * failure (no worker, worker lost, deadline, ...).  One line, malloc'ed;
 * NULL when out of memory. */
char *mcp_call_reply(const mcp_call_t *call, const proto_msg_t *reply);
/* A tools/call response with this text as an isError result (used when
 * talkback itself gives a call up).  NULL when out of memory. */
char *mcp_call_failure(const mcp_call_t *call, const char *text);
/* Release call->id. */
void mcp_call_clear(mcp_call_t *call);

/* The key naming a call for cancellation: conversation + "\n" + the
 * JSON-RPC id as compact JSON.  malloc'ed, NULL when out of memory. */
char *mcp_cancel_key(const char *conv, const json_t *id);

/* Legacy protocol versions: whether an initialize-era request may say v,
 * and what talkback answers to an initialize asking for `requested`
 * (itself if spoken, else the latest).  The modern one is era.h's. */
bool mcp_version_supported(const char *v);
const char *mcp_version_negotiate(const char *requested);

/* {"jsonrpc":"2.0","error":{"code":C,"message":M},"id":id|null}, one
 * line, malloc'ed; NULL when out of memory. */
char *mcp_error_body(int code, const char *message, const json_t *id);

/* ---- Streamable HTTP header rules ---------------------------------------- */

/* An Origin header is allowed when it is http(s)://localhost,
 * http(s)://127.0.0.1 or http(s)://[::1], with or without a port, or is
 * one of the comma-separated `extra` origins (may be NULL or ""). */
bool mcp_origin_allowed(const char *origin, const char *extra);
/* A Host header acceptable on a loopback bind: localhost, 127.0.0.1 or
 * [::1], with or without a port.  NULL (no header) is acceptable. */
bool mcp_host_allowed(const char *host);
/* Whether a Content-Type is application/json (parameters ignored). */
bool mcp_content_type_json(const char *ct);
/* Whether an Accept header lets talkback answer at all: absent, or naming
 * application/json, application/ *, text/event-stream or * / *. */
bool mcp_accept_ok(const char *accept);
/* Whether an Accept header names text/event-stream. */
bool mcp_accept_sse(const char *accept);

#endif
