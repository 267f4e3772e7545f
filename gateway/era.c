/* era.c -- which era serves a request, and the rules of the modern one
 * (see era.h).
 *
 * Reading order: the versions, era_of, the checks of era_admit one rung at
 * a time (envelope, headers against the body, version, headers present,
 * Mcp-Name), then the builders of modern results and the Base64 sentinel
 * of header values.  Nothing here does I/O.
 */
#include "gateway/era.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/mcptext.h"

/* Every version talkback speaks, newest first: the modern one, then the
 * legacy ones (the same list mcp.c negotiates initialize with). */
static const char *const era_versions[] = {
    ERA_MODERN_VERSION, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
};
#define ERA_NVERSIONS (sizeof era_versions / sizeof era_versions[0])

/* The methods whose Mcp-Name header mirrors params.name. */
static const char *const era_named_methods[] = { "tools/call", "prompts/get" };

static bool era_is_legacy_version(const char *v)
{
    for (size_t i = 1; v && i < ERA_NVERSIONS; i++)
        if (strcmp(v, era_versions[i]) == 0)
            return true;
    return false;
}

json_t *era_supported_json(void)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < ERA_NVERSIONS; i++)
        if (json_array_append_new(a, json_string(era_versions[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* params._meta when it is an object, else NULL. */
static const json_t *era_meta(const json_t *msg)
{
    const json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");
    return json_is_object(meta) ? meta : NULL;
}

era_t era_of(const json_t *msg, const char *version_header)
{
    if (!json_is_object(msg))
        return ERA_LEGACY;
    const json_t *claim = json_object_get(era_meta(msg), ERA_META_VERSION);
    if (claim)
        return era_is_legacy_version(json_string_value(claim)) ? ERA_LEGACY : ERA_MODERN;
    return version_header && strcmp(version_header, ERA_MODERN_VERSION) == 0 ? ERA_MODERN
                                                                             : ERA_LEGACY;
}

void era_reject_clear(era_reject_t *rej)
{
    json_decref(rej->data);
    rej->data = NULL;
}

/* Fill *rej: 400 unless said otherwise; steals data. */
static bool era_refuse(era_reject_t *rej, int code, json_t *data, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool era_refuse(era_reject_t *rej, int code, json_t *data, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rej->message, sizeof rej->message, fmt, ap);
    va_end(ap);
    rej->http_status = 400;
    rej->code = code;
    rej->data = data;
    return false;
}

/* ---- the envelope: -32602 ---------------------------------------------------- */

/* A key the envelope must carry is missing. */
static bool era_missing(era_reject_t *rej, const char *key)
{
    return era_refuse(rej, ERA_INVALID_PARAMS, json_pack("{s:[s]}", "missing", key),
                      "Invalid params: params._meta is missing %s, which every %s request must "
                      "carry",
                      key, ERA_MODERN_VERSION);
}

/* A key the envelope carries has the wrong shape. */
static bool era_invalid(era_reject_t *rej, const char *key, const char *want)
{
    return era_refuse(rej, ERA_INVALID_PARAMS, json_pack("{s:s}", "invalid", key),
                      "Invalid params: params._meta %s must be %s", key, want);
}

static bool era_envelope_ok(const json_t *msg, era_reject_t *rej)
{
    const json_t *params = json_object_get(msg, "params");
    const json_t *meta = json_object_get(params, "_meta");
    if (!meta)
        return era_missing(rej, ERA_META_VERSION);
    if (!json_is_object(meta))
        return era_invalid(rej, "_meta", "an object");
    const json_t *v = json_object_get(meta, ERA_META_VERSION);
    if (!v)
        return era_missing(rej, ERA_META_VERSION);
    if (!json_is_string(v))
        return era_invalid(rej, ERA_META_VERSION, "a string");
    const json_t *caps = json_object_get(meta, ERA_META_CAPABILITIES);
    if (!caps)
        return era_missing(rej, ERA_META_CAPABILITIES);
    if (!json_is_object(caps))
        return era_invalid(rej, ERA_META_CAPABILITIES, "an object");
    const json_t *info = json_object_get(meta, ERA_META_CLIENT_INFO);
    if (info && (!json_is_object(info) || !json_is_string(json_object_get(info, "name")) ||
                 !json_is_string(json_object_get(info, "version"))))
        return era_invalid(rej, ERA_META_CLIENT_INFO, "an object with string name and version");
    const json_t *token = json_object_get(meta, "progressToken");
    if (token && !json_is_string(token) && !json_is_integer(token))
        return era_invalid(rej, "progressToken", "a string or an integer");
    return true;
}

/* ---- the headers against the body: -32020 --------------------------------------- */

/* {"mismatch":{"header":hv,"body":bv}}: a header's bytes may be any, so
 * both are repaired to UTF-8. */
static json_t *era_mismatch_data(const char *hv, const char *bv)
{
    return json_pack("{s:{s:o, s:o}}", "mismatch", "header", mcp_json_text(hv, strlen(hv)), "body",
                     mcp_json_text(bv, strlen(bv)));
}

static bool era_mismatch(era_reject_t *rej, const char *header, const char *hv, const char *bv)
{
    return era_refuse(rej, ERA_HEADER_MISMATCH, era_mismatch_data(hv, bv),
                      "Header mismatch: %s header value '%.100s' does not match body value "
                      "'%.100s'",
                      header, hv, bv);
}

static bool era_header_missing(era_reject_t *rej, const char *header, const char *bv)
{
    return era_refuse(rej, ERA_HEADER_MISMATCH, era_mismatch_data("(missing)", bv),
                      "Header mismatch: the required %s header is missing (the body says "
                      "'%.100s')",
                      header, bv);
}

/* The Mcp-Name rung: tools/call (and prompts/get) mirror params.name. */
static bool era_name_ok(const char *method, const json_t *params, const char *header,
                        era_reject_t *rej)
{
    bool named = false;
    for (size_t i = 0; i < sizeof era_named_methods / sizeof era_named_methods[0]; i++)
        named = named || strcmp(method, era_named_methods[i]) == 0;
    if (!named)
        return true;
    const char *name = json_string_value(json_object_get(params, "name"));
    if (!name)
        return header ? era_mismatch(rej, "Mcp-Name", header, "(no params.name)") : true;
    if (!header)
        return era_header_missing(rej, "Mcp-Name", name);
    char *decoded = era_header_value(header);
    if (!decoded)
        return era_refuse(rej, ERA_HEADER_MISMATCH, NULL,
                          "Header mismatch: the Mcp-Name header '%.100s' is not valid "
                          "=?base64?...?= text",
                          header);
    bool same = strcmp(decoded, name) == 0;
    free(decoded);
    return same ? true : era_mismatch(rej, "Mcp-Name", header, name);
}

/* Checked in the order of the reference SDK's inbound ladder: envelope,
 * header/body disagreements, the version, then missing headers and
 * Mcp-Name.  A request failing several rungs gets the first. */
bool era_admit(const json_t *msg, const era_headers_t *h, era_reject_t *rej)
{
    memset(rej, 0, sizeof *rej);
    const char *method = json_string_value(json_object_get(msg, "method"));
    if (!method)
        return true; /* not a request: the legacy checks answer it */
    bool request = json_object_get(msg, "id") != NULL;
    if (request && !era_envelope_ok(msg, rej))
        return false;
    const char *claim = json_string_value(json_object_get(era_meta(msg), ERA_META_VERSION));
    if (claim && h->protocol_version && strcmp(claim, h->protocol_version) != 0)
        return era_mismatch(rej, "MCP-Protocol-Version", h->protocol_version, claim);
    if (h->method && strcmp(h->method, method) != 0)
        return era_mismatch(rej, "Mcp-Method", h->method, method);
    if (!request)
        return true;
    if (strcmp(claim, ERA_MODERN_VERSION) != 0) {
        json_t *supported = era_supported_json();
        json_t *data =
            supported ? json_pack("{s:o, s:s}", "supported", supported, "requested", claim) : NULL;
        return era_refuse(rej, ERA_UNSUPPORTED_VERSION, data, "Unsupported protocol version: %.64s",
                          claim);
    }
    if (!h->protocol_version)
        return era_header_missing(rej, "MCP-Protocol-Version", claim);
    if (!h->method)
        return era_header_missing(rej, "Mcp-Method", method);
    return era_name_ok(method, json_object_get(msg, "params"), h->name, rej);
}

/* ---- modern results ------------------------------------------------------------- */

json_t *era_result(json_t *result, era_t era, const char *server_name, const char *server_version)
{
    if (!result || era != ERA_MODERN)
        return result;
    if (json_object_set_new(result, "resultType", json_string("complete")) != 0 ||
        json_object_set_new(result, "_meta",
                            json_pack("{s:{s:s, s:s}}", ERA_META_SERVER_INFO, "name", server_name,
                                      "version", server_version)) != 0) {
        json_decref(result);
        return NULL;
    }
    return result;
}

json_t *era_cacheable(json_t *result, int64_t ttl_ms)
{
    if (!result)
        return NULL;
    if (json_object_set_new(result, "ttlMs", json_integer(ttl_ms < 0 ? 0 : ttl_ms)) != 0 ||
        json_object_set_new(result, "cacheScope", json_string("public")) != 0) {
        json_decref(result);
        return NULL;
    }
    return result;
}

json_t *era_discover(const char *instructions, int64_t ttl_ms)
{
    json_t *supported = era_supported_json();
    if (!supported)
        return NULL;
    json_t *r = json_pack("{s:o, s:{s:{s:b}}}", "supportedVersions", supported, "capabilities",
                          "tools", "listChanged", 0);
    if (r && instructions &&
        json_object_set_new(r, "instructions", json_string(instructions)) != 0) {
        json_decref(r);
        return NULL;
    }
    return era_cacheable(r, ttl_ms);
}

/* ---- header values -------------------------------------------------------------- */

/* The 6-bit value of a standard Base64 letter, or -1. */
static int era_b64(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Decode n Base64 letters (padding allowed at the end only); NULL when
 * they are not Base64, or decode to a NUL or to invalid UTF-8. */
static char *era_b64_decode(const char *s, size_t n)
{
    while (n > 0 && s[n - 1] == '=')
        n--;
    if (n % 4 == 1)
        return NULL;
    char *out = malloc(n / 4 * 3 + 3);
    if (!out)
        return NULL;
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = era_b64((unsigned char)s[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xFF);
        }
    }
    out[o] = '\0';
    json_t *check = json_stringn(out, o); /* jansson checks the UTF-8 */
    if (!check || memchr(out, '\0', o)) {
        json_decref(check);
        free(out);
        return NULL;
    }
    json_decref(check);
    return out;
}

char *era_header_value(const char *header)
{
    static const char pre[] = "=?base64?", post[] = "?=";
    size_t n = header ? strlen(header) : 0;
    size_t lp = sizeof pre - 1, ls = sizeof post - 1;
    if (n >= lp + ls && strncmp(header, pre, lp) == 0 && strcmp(header + n - ls, post) == 0)
        return era_b64_decode(header + lp, n - lp - ls);
    return header ? strdup(header) : NULL;
}
