/* era.h -- the two MCP eras one endpoint serves, and the rules of the
 * modern one.
 *
 * Legacy (2024-11-05 ... 2025-11-25): a client opens with `initialize`;
 * results are as they always were (what LibreChat reads).  Modern
 * (2026-07-28): no handshake, no session; every request carries its
 * protocol version and the client's capabilities in params._meta, every
 * result carries `resultType`, cacheable results `ttlMs` and
 * `cacheScope`, and the Mcp-Method / Mcp-Name headers mirror the body.
 *
 * The era is chosen per request, from the request alone (talkback keeps no
 * session): a `_meta` naming io.modelcontextprotocol/protocolVersion, or an
 * MCP-Protocol-Version header of 2026-07-28, selects the modern rules;
 * anything else is served exactly as before.  A `_meta` naming a legacy
 * version is served under the legacy rules too, so every version listed as
 * supported can really be used.
 *
 * Everything here is pure (no I/O): era_of picks the era, era_admit checks
 * a modern request against the revision's rules in the order the
 * reference SDK checks them, and the era_* builders add what a modern
 * result carries.  Unit-tested in tests/unit/test_era.c.
 */
#ifndef TALKBACK_ERA_H
#define TALKBACK_ERA_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

/* The modern revision talkback speaks (the only one so far). */
#define ERA_MODERN_VERSION "2026-07-28"

/* The _meta keys of the modern revision. */
#define ERA_META_VERSION      "io.modelcontextprotocol/protocolVersion"
#define ERA_META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define ERA_META_CLIENT_INFO  "io.modelcontextprotocol/clientInfo"
#define ERA_META_SERVER_INFO  "io.modelcontextprotocol/serverInfo"

/* JSON-RPC error codes the modern revision defines. */
#define ERA_HEADER_MISMATCH       (-32020)
#define ERA_UNSUPPORTED_VERSION   (-32022)
#define ERA_INVALID_PARAMS        (-32602)
#define ERA_METHOD_NOT_FOUND_HTTP 404

typedef enum {
    ERA_LEGACY = 0, /* initialize-based, 2025-11-25 and earlier */
    ERA_MODERN      /* per-request _meta, 2026-07-28 */
} era_t;

/* The header values the modern rules compare with the body (NULL when
 * absent). */
typedef struct {
    const char *protocol_version; /* MCP-Protocol-Version */
    const char *method;           /* Mcp-Method */
    const char *name;             /* Mcp-Name */
} era_headers_t;

/* Why a modern request is refused: the HTTP status and the JSON-RPC error
 * (data is owned, NULL for none; release with era_reject_clear). */
typedef struct {
    int http_status;
    int code;
    char message[320];
    json_t *data;
} era_reject_t;

/* Which era's rules serve this message (a parsed JSON-RPC object, or
 * anything else: legacy). */
era_t era_of(const json_t *msg, const char *version_header);

/* Check a message era_of called modern against the revision's rules: the
 * _meta envelope (-32602), the headers against the body (-32020), the
 * version (-32022 with data.supported and data.requested).  true when it
 * may be dispatched; else *rej says how to refuse it (400, nothing runs).
 * Notifications are checked only for an Mcp-Method that disagrees. */
bool era_admit(const json_t *msg, const era_headers_t *h, era_reject_t *rej);
void era_reject_clear(era_reject_t *rej);

/* Every protocol version talkback speaks, the modern one first, as a new
 * JSON array (NULL when out of memory). */
json_t *era_supported_json(void);

/* A result as the era wants it; steals result (NULL in, NULL out).  Modern:
 * adds "resultType":"complete" and _meta serverInfo (name, version); legacy:
 * unchanged. */
json_t *era_result(json_t *result, era_t era, const char *server_name, const char *server_version);
/* Adds the caching hints of a cacheable modern result: ttlMs, and
 * cacheScope "public" (talkback's lists are the same for every caller).
 * Steals result. */
json_t *era_cacheable(json_t *result, int64_t ttl_ms);

/* The result of server/discover (before era_result): supported versions,
 * capabilities, instructions (may be NULL), caching hints.  New reference,
 * NULL when out of memory. */
json_t *era_discover(const char *instructions, int64_t ttl_ms);

/* The value of an Mcp-Name header as the body would say it: itself, or the
 * Base64 "=?base64?...?=" sentinel decoded.  malloc'ed; NULL when the
 * sentinel is not valid Base64 of UTF-8 without NUL (or out of memory). */
char *era_header_value(const char *header);

#endif
