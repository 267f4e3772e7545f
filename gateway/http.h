/* http.h -- the gateway's HTTP front: MCP Streamable HTTP on libmicrohttpd.
 *
 * Routes: POST /mcp (one JSON-RPC message per request, see mcp.h),
 * GET/DELETE /mcp -> 405, GET /healthz -> 200 "ok" while a sandbox
 * manager is connected to the hub, else 503; GET /metrics -> the
 * Prometheus text (metrics.h), with the bearer token like /mcp; anything
 * else -> 404.
 * Every connection has its own thread, so any number of tools/call
 * requests wait for their replies at once and chats are never serialised.
 * A tools/call is answered as SSE (with keep-alive comments) when the
 * client accepts text/event-stream, else as one JSON body; a client that
 * goes away before its reply cancels the request.
 *
 * Before /mcp is read: the bearer token, header bytes and Host (admit.h),
 * and what one client may hold -- connections, header and body deadlines,
 * the body budget (limits.h); refusals carry a JSON-RPC error body.
 */
#ifndef TALKBACK_HTTP_H
#define TALKBACK_HTTP_H

#include <stddef.h>
#include "gateway/limits.h"
#include "gateway/mcp.h"
#include "hub/queue.h"

typedef struct http http_t;

typedef struct {
    const char *listen;          /* "HOST:PORT", "[::1]:PORT"; port 0 = any */
    queue_t *queue;              /* the hub; not owned */
    mcp_opts_t mcp;              /* header names and call limits */
    size_t max_body;             /* larger bodies get 413 */
    int sse_keepalive_s;         /* seconds between SSE keep-alive comments */
    const char *allowed_origins; /* comma list of extra allowed Origins */
    const char *auth_token;      /* bearer token, or "" */
    const char *auth_token_file; /* file holding it, or "" */
    const char *allowed_hosts;   /* comma list of Host names besides loopback */
    limits_opts_t limits;        /* connections, deadlines, body budget */
} http_opts_t;

/* Bind and start serving.  The strings in opts must outlive the server.
 * NULL (and a log line) on failure -- among others when the address is
 * not loopback and no bearer token is set. */
http_t *http_start(const http_opts_t *opts);
/* The TCP port actually bound (useful with port 0). */
int http_port(const http_t *h);
/* Stop serving: calls still waiting are given up, every connection is
 * closed, the server freed.  NULL-safe. */
void http_stop(http_t **self_p);

#endif
