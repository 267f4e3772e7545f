/* mcp.c -- JSON-RPC 2.0 dispatch for MCP, the texts of failed calls, and
 * the header rules of the Streamable HTTP transport.
 *
 * Reading order: header rules, then JSON helpers (UTF-8 repair, error and
 * result bodies, shaped by era: era.h), then the methods (initialize,
 * ping, server/discover, tools/list, tools/call, notifications/cancelled),
 * then the table of methods and the eras each exists in, mcp_handle which
 * validates a message, picks its era and its method, and last
 * mcp_call_reply which turns the hub's reply into a tools/call result: its
 * text block, then one image block per image the reply carries.  Nothing here does I/O.
 */
#include "gateway/mcp.h"
#include "gateway/mcptext.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/convid.h"
#include "proto/ops.h"
#include "proto/optable.h"
#include "talk/texts.h"

static const char *const mcp_versions[] = {
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
};
#define MCP_NVERSIONS (sizeof mcp_versions / sizeof mcp_versions[0])

/* ---- header rules ----------------------------------------------------------- */

bool mcp_version_supported(const char *v)
{
    if (!v)
        return false;
    for (size_t i = 0; i < MCP_NVERSIONS; i++)
        if (strcmp(v, mcp_versions[i]) == 0)
            return true;
    return false;
}

const char *mcp_version_negotiate(const char *requested)
{
    for (size_t i = 0; requested && i < MCP_NVERSIONS; i++)
        if (strcmp(requested, mcp_versions[i]) == 0)
            return mcp_versions[i];
    return MCP_LATEST_VERSION;
}

/* If s starts with prefix (ASCII case-insensitive), return what follows. */
static const char *mcp_skip_prefix(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncasecmp(s, prefix, n) == 0 ? s + n : NULL;
}

/* Whether s is empty or ":" followed by 1-5 digits. */
static bool mcp_is_port_or_end(const char *s)
{
    if (*s == '\0')
        return true;
    if (*s++ != ':')
        return false;
    size_t n = 0;
    while (isdigit((unsigned char)s[n]))
        n++;
    return n >= 1 && n <= 5 && s[n] == '\0';
}

/* localhost, 127.0.0.1 or [::1], then an optional port, then the end. */
static bool mcp_is_loopback_authority(const char *s)
{
    static const char *const names[] = { "localhost", "127.0.0.1", "[::1]" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *rest = mcp_skip_prefix(s, names[i]);
        if (rest && mcp_is_port_or_end(rest))
            return true;
    }
    return false;
}

bool mcp_origin_allowed(const char *origin, const char *extra)
{
    if (!origin)
        return true;
    const char *rest = mcp_skip_prefix(origin, "http://");
    if (!rest)
        rest = mcp_skip_prefix(origin, "https://");
    if (rest && mcp_is_loopback_authority(rest))
        return true;

    /* The configured extra origins: compared whole, case-insensitively. */
    size_t olen = strlen(origin);
    for (const char *p = extra ? extra : ""; *p;) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        const char *end = p;
        while (*end && *end != ',')
            end++;
        const char *last = end;
        while (last > p && (isspace((unsigned char)last[-1]) || last[-1] == '/'))
            last--;
        if (last > p && (size_t)(last - p) == olen && strncasecmp(p, origin, olen) == 0)
            return true;
        p = end;
    }
    return false;
}

bool mcp_host_allowed(const char *host)
{
    return !host || mcp_is_loopback_authority(host);
}

/* Whether the media type at the start of s (up to ';', ',' or the end,
 * spaces trimmed) equals type. */
static bool mcp_media_is(const char *s, size_t len, const char *type)
{
    while (len > 0 && isspace((unsigned char)*s)) {
        s++;
        len--;
    }
    size_t n = 0;
    while (n < len && s[n] != ';')
        n++;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    return n == strlen(type) && strncasecmp(s, type, n) == 0;
}

bool mcp_content_type_json(const char *ct)
{
    return ct && mcp_media_is(ct, strlen(ct), "application/json");
}

/* Whether one of the comma-separated media ranges of accept is type. */
static bool mcp_accept_has(const char *accept, const char *type)
{
    for (const char *p = accept; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (mcp_media_is(p, n, type))
            return true;
        p += n;
        if (*p == ',')
            p++;
    }
    return false;
}

bool mcp_accept_ok(const char *accept)
{
    if (!accept)
        return true;
    return mcp_accept_has(accept, "application/json") || mcp_accept_has(accept, "application/*") ||
           mcp_accept_has(accept, "text/event-stream") || mcp_accept_has(accept, "*/*");
}

bool mcp_accept_sse(const char *accept)
{
    return accept && mcp_accept_has(accept, "text/event-stream");
}

/* ---- JSON helpers ------------------------------------------------------------ */

/* Serialise and release a message; NULL in gives NULL out. */
static char *mcp_dump(json_t *msg)
{
    if (!msg)
        return NULL;
    char *s = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    return s;
}

char *mcp_error_body(int code, const char *message, const json_t *id)
{
    json_t *msg = json_pack("{s:s, s:{s:i, s:s}, s:O}", "jsonrpc", "2.0", "error", "code", code,
                            "message", message ? message : "", "id",
                            id ? (json_t *)id : json_null());
    return mcp_dump(msg);
}

/* {"jsonrpc":"2.0","id":id,"result":result}, the result as the era wants
 * it (era.h: a modern one says its resultType and who answered); steals
 * result. */
static char *mcp_result_body(const json_t *id, era_t era, json_t *result)
{
    result = era_result(result, era, MCP_SERVER_NAME, MCP_SERVER_VERSION);
    if (!result)
        return NULL;
    return mcp_dump(
        json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", (json_t *)id, "result", result));
}

/* A tools/call result holding one text block; steals text. */
static char *mcp_text_result_body(const json_t *id, era_t era, json_t *text, bool is_error)
{
    if (!text)
        return NULL;
    return mcp_result_body(id, era,
                           json_pack("{s:[{s:s, s:o}], s:b}", "content", "type", "text", "text",
                                     text, "isError", is_error));
}

char *mcp_cancel_key(const char *conv, const json_t *id)
{
    char *ids = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!ids)
        return NULL;
    char *key = NULL;
    if (asprintf(&key, "%s\n%s", conv ? conv : "", ids) < 0)
        key = NULL;
    free(ids);
    return key;
}

void mcp_call_clear(mcp_call_t *call)
{
    json_decref(call->id);
    call->id = NULL;
}

void mcp_outcome_clear(mcp_outcome_t *out)
{
    free(out->body);
    free(out->cancel_key);
    proto_msg_destroy(&out->req);
    mcp_call_clear(&out->call);
    memset(out, 0, sizeof *out);
}

/* ---- outcome setters ------------------------------------------------------------ */

static void mcp_set_reply(mcp_outcome_t *out, int status, char *body)
{
    out->action = MCP_REPLY;
    out->http_status = body ? status : 500;
    out->body = body;
}

static void mcp_set_error(mcp_outcome_t *out, int status, int code, const char *message,
                          const json_t *id)
{
    mcp_set_reply(out, status, mcp_error_body(code, message, id));
}

/* An isError tools/call result carrying a text talkback wrote. */
static void mcp_set_refusal(mcp_outcome_t *out, const json_t *id, era_t era, const char *text)
{
    mcp_set_reply(out, 200, mcp_text_result_body(id, era, json_string(text), true));
}

/* A modern request refused by era_admit: its status, code, message (any
 * header bytes in it repaired to UTF-8) and data. */
static void mcp_set_rejection(mcp_outcome_t *out, const era_reject_t *rej, const json_t *id)
{
    json_t *err = json_pack("{s:i, s:o}", "code", rej->code, "message",
                            mcp_json_text(rej->message, strlen(rej->message)));
    if (err && rej->data && json_object_set(err, "data", rej->data) != 0) {
        json_decref(err);
        err = NULL;
    }
    json_t *msg = err ? json_pack("{s:s, s:o, s:O}", "jsonrpc", "2.0", "error", err, "id",
                                  id ? (json_t *)id : json_null())
                      : NULL;
    mcp_set_reply(out, rej->http_status, mcp_dump(msg));
}

/* ---- methods ------------------------------------------------------------------------ */

/* One request as the methods see it. */
typedef struct {
    const json_t *id;
    const json_t *params;
    const mcp_headers_t *h;
    const mcp_opts_t *o;
    era_t era;
} mcp_req_t;

/* initialize (legacy only: it is what selects the legacy era). */
static void mcp_initialize(const mcp_req_t *r, mcp_outcome_t *out)
{
    const char *asked = json_string_value(json_object_get(r->params, "protocolVersion"));
    char *instructions = tools_instructions();
    json_t *result = instructions
                         ? json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}, s:s}", "protocolVersion",
                                     mcp_version_negotiate(asked), "capabilities", "tools",
                                     "listChanged", 0, "serverInfo", "name", MCP_SERVER_NAME,
                                     "version", MCP_SERVER_VERSION, "instructions", instructions)
                         : NULL;
    free(instructions);
    mcp_set_reply(out, 200, mcp_result_body(r->id, r->era, result));
}

/* ping (legacy only: the modern revision removed it). */
static void mcp_ping(const mcp_req_t *r, mcp_outcome_t *out)
{
    mcp_set_reply(out, 200, mcp_result_body(r->id, r->era, json_object()));
}

/* server/discover (modern only): what initialize told a legacy client. */
static void mcp_discover(const mcp_req_t *r, mcp_outcome_t *out)
{
    char *instructions = tools_instructions();
    json_t *result = instructions ? era_discover(instructions, r->o->list_ttl_ms) : NULL;
    free(instructions);
    mcp_set_reply(out, 200, mcp_result_body(r->id, r->era, result));
}

/* tools/list: the one table, in its own order; a modern client may cache
 * it for list_ttl. */
static void mcp_tools_list(const mcp_req_t *r, mcp_outcome_t *out)
{
    json_t *tools = tools_list_json(&r->o->limits);
    json_t *result = tools ? json_pack("{s:o}", "tools", tools) : NULL;
    if (r->era == ERA_MODERN)
        result = era_cacheable(result, r->o->list_ttl_ms);
    mcp_set_reply(out, 200, mcp_result_body(r->id, r->era, result));
}

/* The refusal of a call whose conversation or user header is unusable;
 * true when there was one. */
static bool mcp_refuse_headers(const mcp_req_t *r, mcp_outcome_t *out)
{
    const mcp_headers_t *h = r->h;
    const mcp_opts_t *o = r->o;
    char *text = NULL;
    int n = 0;
    convid_err_t ce = convid_check(h->conversation);
    if (ce != CONVID_OK)
        n = asprintf(&text, TX_GW_CONV_HEADER, o->conversation_header, convid_strerror(ce),
                     o->conversation_header);
    else if (h->user && !convid_user_ok(h->user))
        n = asprintf(&text, TX_GW_USER_HEADER, o->user_header, o->user_header);
    else
        return false;
    if (n < 0)
        mcp_set_reply(out, 500, NULL);
    else
        mcp_set_refusal(out, r->id, r->era, text);
    free(text);
    return true;
}

static void mcp_tools_call(const mcp_req_t *r, mcp_outcome_t *out)
{
    const json_t *id = r->id, *params = r->params;
    const mcp_headers_t *h = r->h;
    const mcp_opts_t *o = r->o;
    const char *name = json_string_value(json_object_get(params, "name"));
    if (!name) {
        mcp_set_error(out, 200, MCP_INVALID_PARAMS,
                      "Invalid params: tools/call needs a tool name (params.name)", id);
        return;
    }
    const tools_def_t *tool = tools_find(name);
    if (!tool) {
        char *msg = NULL;
        if (asprintf(&msg, "Unknown tool: %s", name) < 0)
            msg = NULL;
        mcp_set_error(out, 200, MCP_INVALID_PARAMS, msg ? msg : "Unknown tool", id);
        free(msg);
        return;
    }
    if (mcp_refuse_headers(r, out))
        return;

    proto_msg_t *req = NULL;
    int64_t wait_s = 0;
    char *err = NULL;
    tools_err_t te = tools_build_request(tool, json_object_get(params, "arguments"),
                                         h->conversation, h->user, &o->limits, proto_now_ms(), &req,
                                         &wait_s, &err);
    if (te == TOOLS_EARG) {
        mcp_set_refusal(out, id, r->era, err);
        free(err);
        return;
    }
    if (te != TOOLS_OK) {
        mcp_set_error(out, 500, MCP_INTERNAL_ERROR, "Internal error: out of memory", id);
        return;
    }
    char *key = mcp_cancel_key(h->conversation, id);
    if (!key) {
        proto_msg_destroy(&req);
        mcp_set_error(out, 500, MCP_INTERNAL_ERROR, "Internal error: out of memory", id);
        return;
    }
    out->action = MCP_CALL;
    out->http_status = 200;
    out->req = req;
    out->cancel_key = key;
    out->call.id = json_incref((json_t *)id);
    out->call.tool = tool;
    out->call.wait_s = wait_s;
    out->call.era = r->era;
    tools_ignored_note(tool, json_object_get(params, "arguments"), out->call.note,
                       sizeof out->call.note);
}

/* A notification: only notifications/cancelled does anything (in either
 * era: a modern client cancels by closing its stream, but one that sends
 * the notification is obeyed too). */
static void mcp_notification(const char *method, const json_t *params, const mcp_headers_t *h,
                             mcp_outcome_t *out)
{
    out->action = MCP_ACCEPTED;
    out->http_status = 202;
    if (strcmp(method, "notifications/cancelled") != 0 ||
        convid_check(h->conversation) != CONVID_OK)
        return;
    const json_t *rid = json_object_get(params, "requestId");
    if (!json_is_string(rid) && !json_is_integer(rid))
        return;
    char *key = mcp_cancel_key(h->conversation, rid);
    if (!key)
        return; /* out of memory: the call then simply runs to its end */
    out->action = MCP_CANCEL;
    out->cancel_key = key;
}

/* ---- dispatch --------------------------------------------------------------------- */

#define MCP_LEGACY (1u << ERA_LEGACY)
#define MCP_MODERN (1u << ERA_MODERN)

/* Every method, and the eras it exists in. */
static const struct {
    const char *name;
    unsigned eras;
    void (*fn)(const mcp_req_t *r, mcp_outcome_t *out);
} mcp_methods[] = {
    { "initialize", MCP_LEGACY, mcp_initialize },
    { "ping", MCP_LEGACY, mcp_ping },
    { "server/discover", MCP_MODERN, mcp_discover },
    { "tools/list", MCP_LEGACY | MCP_MODERN, mcp_tools_list },
    { "tools/call", MCP_LEGACY | MCP_MODERN, mcp_tools_call },
};

/* A request: its method's row, or -32601 (a modern client gets it with
 * 404, as its revision says). */
static void mcp_request(const mcp_req_t *r, const char *m, mcp_outcome_t *out)
{
    for (size_t i = 0; i < sizeof mcp_methods / sizeof mcp_methods[0]; i++)
        if (strcmp(m, mcp_methods[i].name) == 0 && (mcp_methods[i].eras & (1u << r->era))) {
            mcp_methods[i].fn(r, out);
            return;
        }
    char *text = NULL;
    if (asprintf(&text, "Method not found: %.200s", m) < 0)
        text = NULL;
    mcp_set_error(out, r->era == ERA_MODERN ? ERA_METHOD_NOT_FOUND_HTTP : 200, MCP_METHOD_NOT_FOUND,
                  text ? text : "Method not found", r->id);
    free(text);
}

/* The 400 of an MCP-Protocol-Version no legacy request may carry. */
static void mcp_bad_version(const char *v, mcp_outcome_t *out)
{
    char *msg = NULL;
    if (asprintf(&msg,
                 "Bad Request: Unsupported protocol version: %.64s (supported versions: "
                 "2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)",
                 v) < 0)
        msg = NULL;
    mcp_set_error(out, 400, MCP_SERVER_ERROR,
                  msg ? msg : "Bad Request: Unsupported protocol version", NULL);
    free(msg);
}

/* The shape every message must have; false when *out already refuses it. */
static bool mcp_shape_ok(const json_t *msg, mcp_outcome_t *out)
{
    if (!json_is_object(msg)) {
        mcp_set_error(out, 400, MCP_INVALID_REQUEST,
                      json_is_array(msg) ? "Invalid Request: send one JSON-RPC message per POST, "
                                           "not a batch"
                                         : "Invalid Request: not a JSON-RPC message object",
                      NULL);
        return false;
    }
    const json_t *id = json_object_get(msg, "id");
    bool id_ok = json_is_string(id) || json_is_integer(id);
    const json_t *reply_id = id_ok ? id : NULL;
    const char *jsonrpc = json_string_value(json_object_get(msg, "jsonrpc"));
    const json_t *method = json_object_get(msg, "method");
    const json_t *params = json_object_get(msg, "params");

    if (!jsonrpc || strcmp(jsonrpc, "2.0") != 0) {
        mcp_set_error(out, 400, MCP_INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"",
                      reply_id);
    } else if (!method) {
        /* A response to a request talkback never sent: accepted and dropped. */
        if (id_ok && (json_object_get(msg, "result") || json_object_get(msg, "error"))) {
            out->action = MCP_ACCEPTED;
            out->http_status = 202;
        } else {
            mcp_set_error(out, 400, MCP_INVALID_REQUEST,
                          "Invalid Request: a message needs a method, or a result or error with "
                          "an id",
                          reply_id);
        }
    } else if (!json_is_string(method)) {
        mcp_set_error(out, 400, MCP_INVALID_REQUEST, "Invalid Request: method must be a string",
                      reply_id);
    } else if (id && !id_ok) {
        mcp_set_error(out, 400, MCP_INVALID_REQUEST,
                      "Invalid Request: id must be a string or an integer", NULL);
    } else if (params && !json_is_object(params)) {
        mcp_set_error(out, 400, MCP_INVALID_REQUEST, "Invalid Request: params must be an object",
                      reply_id);
    } else {
        return true;
    }
    return false;
}

/* Parse, pick the era (era.h), check, dispatch.  A legacy request is
 * answered exactly as before the modern era existed: an unsupported
 * MCP-Protocol-Version is refused before the body is looked at. */
void mcp_handle(const char *body, size_t len, const mcp_headers_t *h, const mcp_opts_t *o,
                mcp_outcome_t *out)
{
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    json_t *msg = json_loadb(body ? body : "", len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    era_t era = era_of(msg, h->protocol_version);
    out->era = era;

    if (era == ERA_LEGACY && h->protocol_version && !mcp_version_supported(h->protocol_version)) {
        mcp_bad_version(h->protocol_version, out);
    } else if (!msg) {
        char *text = NULL;
        if (asprintf(&text, "Parse error: %s", jerr.text) < 0)
            text = NULL;
        mcp_set_error(out, 400, MCP_PARSE_ERROR, text ? text : "Parse error", NULL);
        free(text);
    } else if (mcp_shape_ok(msg, out)) {
        era_headers_t eh = { h->protocol_version, h->mcp_method, h->mcp_name };
        era_reject_t rej = { 0 };
        const json_t *id = json_object_get(msg, "id");
        const char *m = json_string_value(json_object_get(msg, "method"));
        mcp_req_t r = { id, json_object_get(msg, "params"), h, o, era };
        if (era == ERA_MODERN && !era_admit(msg, &eh, &rej))
            mcp_set_rejection(out, &rej, id);
        else if (!id)
            mcp_notification(m, r.params, h, out);
        else
            mcp_request(&r, m, out);
        era_reject_clear(&rej);
    }
    json_decref(msg);
}

/* ---- replies -------------------------------------------------------------------------- */

/* text with the call's note (ignored arguments) in front, as one JSON
 * string; text itself when there is no note.  Steals text. */
static json_t *mcp_with_note(const mcp_call_t *call, json_t *text)
{
    if (!call->note[0] || !text)
        return text;
    size_t nl = strlen(call->note), tl = json_string_length(text);
    char *both = malloc(nl + tl + 1);
    json_t *j = NULL;
    if (both) {
        memcpy(both, call->note, nl);
        memcpy(both + nl, json_string_value(text), tl);
        both[nl + tl] = '\0';
        j = json_stringn(both, nl + tl);
        free(both);
    }
    json_decref(text);
    return j;
}

char *mcp_call_failure(const mcp_call_t *call, const char *text)
{
    return mcp_text_result_body(call->id, call->era, mcp_with_note(call, json_string(text)), true);
}

/* ": <text>" when a worker explained itself, else "". */
static const char *mcp_colon(const proto_msg_t *r)
{
    return r->text && r->text_len > 0 ? ": " : "";
}

/* Standard base64 of len bytes, as a JSON string; NULL when out of memory. */
static json_t *mcp_base64(const unsigned char *p, size_t len)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = 4 * ((len + 2) / 3);
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < len ? p[i + 2] : 0);
        out[o++] = abc[v >> 18 & 63];
        out[o++] = abc[v >> 12 & 63];
        out[o++] = i + 1 < len ? abc[v >> 6 & 63] : '=';
        out[o++] = i + 2 < len ? abc[v & 63] : '=';
    }
    json_t *j = json_stringn_nocheck(out, o);
    free(out);
    return j;
}

/* The images a worker sent back, as MCP image content blocks after the
 * text ({"type":"image","data":base64,"mimeType":...}).  Only the four
 * kinds talkback detects pass. */
static int mcp_add_images(json_t *content, const proto_msg_t *reply)
{
    static const char *const mimes[] = { "image/png", "image/jpeg", "image/gif", "image/webp" };
    for (size_t i = 0; i < reply->n_images; i++) {
        const proto_image_t *im = &reply->images[i];
        bool known = false;
        for (size_t k = 0; k < sizeof mimes / sizeof mimes[0]; k++)
            known = known || strcmp(im->mime, mimes[k]) == 0;
        if (!known)
            continue;
        json_t *data = mcp_base64((const unsigned char *)im->data, im->len);
        json_t *block =
            data ? json_pack("{s:s, s:o, s:s}", "type", "image", "data", data, "mimeType", im->mime)
                 : NULL;
        if (!block || json_array_append_new(content, block) != 0)
            return -1;
    }
    return 0;
}

/* A worker's reply as the tools/call result (mcp.h).  It is long because
 * it is the one place the reply's parts -- status, text, images, the
 * structured data, the era's envelope -- are put together in the order the
 * result shows them; each part is already a helper of its own. */
char *mcp_call_reply(const mcp_call_t *call, const proto_msg_t *reply)
{
    if (reply->status == PROTO_ST_OK && reply->n_images == 0)
        return mcp_text_result_body(
            call->id, call->era, mcp_with_note(call, mcp_json_text(reply->text, reply->text_len)),
            reply->is_error);
    if (reply->status == PROTO_ST_OK) {
        json_t *text = mcp_with_note(call, mcp_json_text(reply->text, reply->text_len));
        json_t *res = text ? json_pack("{s:[{s:s, s:o}], s:b}", "content", "type", "text", "text",
                                       text, "isError", reply->is_error)
                           : NULL;
        if (res && mcp_add_images(json_object_get(res, "content"), reply) != 0) {
            json_decref(res);
            res = NULL;
        }
        return mcp_result_body(call->id, call->era, res);
    }

    const ops_row_t *row = call->tool ? ops_named(call->tool->op) : NULL;
    const char *kind = row ? row->kind : KIND_SANDBOX;
    const char *who = row ? ops_kind_label(kind) : "worker";
    /* The worker's own words, repaired to UTF-8, for the two statuses that
     * carry them. */
    size_t wlen = 0;
    char *words = reply->text ? mcp_utf8_sanitize(reply->text, reply->text_len, &wlen) : NULL;
    if (reply->text && !words)
        return NULL;
    char *text = NULL;
    int r;
    switch (reply->status) {
    case PROTO_ST_NO_WORKER: r = asprintf(&text, TX_GW_NOT_RUNNING, who, kind); break;
    case PROTO_ST_WORKER_LOST:
        /* run_code: the hub says whether the program had started
         * (hub/retry.h); it is never run a second time unsaid. */
        if (proto_map_has(&reply->data, DATA_STARTED, PROTO_V_BOOL) &&
            proto_map_int(&reply->data, DATA_STARTED, 0))
            r = asprintf(&text, TX_GW_LOST_RUNNING, who);
        else if (proto_map_has(&reply->data, DATA_STARTED, PROTO_V_BOOL))
            r = asprintf(&text, TX_GW_LOST_BEFORE, who);
        else
            r = asprintf(&text, TX_GW_LOST, who);
        break;
    case PROTO_ST_DEADLINE: r = asprintf(&text, TX_GW_DEADLINE, (long long)call->wait_s); break;
    case PROTO_ST_BAD_REQUEST:
        r = asprintf(&text, TX_GW_NOT_UNDERSTOOD, who, mcp_colon(reply), words ? words : "");
        break;
    default:
        r = asprintf(&text, TX_GW_FAILED, who, mcp_colon(reply), words ? words : "", kind);
        break;
    }
    free(words);
    if (r < 0)
        return NULL;
    char *body =
        mcp_text_result_body(call->id, call->era, mcp_with_note(call, json_string(text)), true);
    free(text);
    return body;
}
