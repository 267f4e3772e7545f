/* http.c -- libmicrohttpd plumbing of the MCP endpoint.
 *
 * Reading order: listen address parsing, small response helpers, waiting
 * for a hub reply (with client-gone detection), the SSE stream, the
 * tools/call answer, the access handler (routes, header checks, body
 * accumulation), then start/stop.  What to answer is decided by mcp.c;
 * this file only moves bytes and tickets.
 *
 * Threads: libmicrohttpd runs one thread per connection
 * (MHD_USE_THREAD_PER_CONNECTION), and a tools/call blocks that thread in
 * queue_wait until the reply -- in the access handler for a JSON answer,
 * in the content reader for an SSE one.  Waits are sliced (one second) so
 * a closed client socket and a server stop are both noticed quickly.
 */
#include "gateway/http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/listen.h"
#include "common/log.h"
#include "gateway/admit.h"
#include "proto/ops.h"
#include "gateway/metrics.h"
#include "talk/texts.h"

/* libmicrohttpd's own caps sit this far above ours, so a connection over
 * max_connections / max_client_connections is still read and answered
 * 429/503 (and /healthz served) instead of dropped at accept. */
#define HTTP_SPARE_CONNECTIONS 64
#define HTTP_SLICE_MS          1000
#define HTTP_SSE_BLOCK         (64 * 1024)
/* A body already over max_body is read and dropped up to this much more
 * (so the client can read its 413); past that the connection is cut. */
#define HTTP_DISCARD_MAX       (16u * 1024u * 1024u)
/* Body bytes of one request that do not count against body_budget. */
#define HTTP_FREE_BODY         (64u * 1024u)

struct http {
    http_opts_t o;
    struct MHD_Daemon *d;
    bool loopback;      /* bound to a loopback address */
    char *token;        /* the bearer token; NULL = none needed */
    limits_t *lim;      /* connection limits, deadlines, body budget */
    metrics_t *metrics; /* call counters for GET /metrics */
    int port;
    atomic_bool stopping;
    atomic_int in_calls; /* tools/call requests not yet fully answered */
};

typedef enum {
    HTTP_DROP_NONE,
    HTTP_DROP_TOO_BIG, /* over max_body: 413 */
    HTTP_DROP_BUDGET,  /* over body_budget: 503 */
    HTTP_DROP_HEADERS, /* a control byte in the last header: 400 */
} http_drop_t;

#define HTTP_BAD_HEADER_TEXT                                                                       \
    "Bad Request: a header carries a NUL or another control byte (or a bare LF line end)"

/* State of one HTTP request (MHD's con_cls). */
typedef struct {
    char *body;
    size_t len, cap;
    uint64_t seen;           /* body bytes received, kept or not */
    size_t held;             /* bytes taken from body_budget (http_body_charge) */
    const char *headers_end; /* end of the last header value (in MHD's buffer) */
    bool body_started;
    http_drop_t drop; /* why the body is being dropped, if it is */
    bool answered;    /* a response was queued on the first call */
    bool in_call;     /* counted in http_t.in_calls */
} http_req_t;

/* ---- responses ------------------------------------------------------------------ */

/* Queue a response; xname/xvalue (may be NULL) is one extra header
 * (Allow, WWW-Authenticate, Connection). */
static enum MHD_Result http_send(struct MHD_Connection *c, unsigned status, const char *ctype,
                                 const char *body, const char *xname, const char *xvalue)
{
    size_t len = body ? strlen(body) : 0;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)(body ? body : ""), MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    if ((ctype && MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype) != MHD_YES) ||
        (xname && MHD_add_response_header(resp, xname, xvalue) != MHD_YES)) {
        MHD_destroy_response(resp);
        return MHD_NO;
    }
    enum MHD_Result ret = MHD_queue_response(c, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* A JSON body; NULL means talkback ran out of memory building it. */
static enum MHD_Result http_send_json(struct MHD_Connection *c, unsigned status, const char *body)
{
    static const char oom[] =
        "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32603,\"message\":\"Internal error: out of "
        "memory\"},\"id\":null}";
    if (!body)
        return http_send(c, 500, "application/json", oom, NULL, NULL);
    return http_send(c, status, "application/json", body, NULL, NULL);
}

/* A JSON-RPC error body with id null, for refusals at the HTTP level;
 * xname/xvalue as in http_send. */
static enum MHD_Result http_send_refusal(struct MHD_Connection *c, unsigned status,
                                         const char *message, const char *xname, const char *xvalue)
{
    char *body = mcp_error_body(MCP_SERVER_ERROR, message, NULL);
    enum MHD_Result ret = body ? http_send(c, status, "application/json", body, xname, xvalue)
                               : http_send_json(c, 500, NULL);
    free(body);
    return ret;
}

static const char *http_header(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* ---- waiting for the hub -------------------------------------------------------- */

typedef enum {
    HTTP_WAIT_REPLY, /* the reply came */
    HTTP_WAIT_TICK,  /* `until` passed first */
    HTTP_WAIT_GONE,  /* the client closed its connection */
    HTTP_WAIT_STOP   /* the server is stopping */
} http_wait_t;

/* Whether the client has closed (or reset) its side of the socket. */
static bool http_peer_gone(int fd)
{
    if (fd < 0)
        return false;
    struct pollfd p = { .fd = fd, .events = POLLRDHUP };
    if (poll(&p, 1, 0) <= 0)
        return false;
    return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

static int http_conn_fd(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    return ci ? ci->connect_fd : -1;
}

/* The limits entry of a connection (http_on_connection made it). */
static limits_conn_t *http_conn_limits(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Wait for the ticket's reply until the monotonic time `until`. */
static http_wait_t http_wait(http_t *h, queue_ticket_t *t, int fd, int64_t until,
                             const proto_msg_t **reply)
{
    for (;;) {
        if (atomic_load(&h->stopping))
            return HTTP_WAIT_STOP;
        int64_t left = until - proto_mono_ms();
        if (left <= 0)
            return HTTP_WAIT_TICK;
        const proto_msg_t *r = queue_wait(t, (int)(left < HTTP_SLICE_MS ? left : HTTP_SLICE_MS));
        if (r) {
            *reply = r;
            return HTTP_WAIT_REPLY;
        }
        if (http_peer_gone(fd))
            return HTTP_WAIT_GONE;
    }
}

static const char http_stop_text[] = TX_GW_SHUTDOWN;

static const char *http_status_word(proto_status_t st)
{
    switch (st) {
    case PROTO_ST_OK: return "ok";
    case PROTO_ST_NO_WORKER: return "no worker";
    case PROTO_ST_WORKER_LOST: return "worker lost";
    case PROTO_ST_DEADLINE: return "deadline";
    case PROTO_ST_BAD_REQUEST: return "bad request";
    case PROTO_ST_INTERNAL: return "internal";
    }
    return "?";
}

/* One log line per finished call, and its count in /metrics. */
static void http_log_call(http_t *h, const char *key, const mcp_call_t *call, const char *how,
                          metrics_outcome_t outcome, int64_t t0)
{
    const char *nl = key ? strchr(key, '\n') : NULL;
    int clen = nl ? (int)(nl - key) : 0;
    int64_t ms = proto_mono_ms() - t0;
    metrics_call(h->metrics, call->tool, outcome, ms);
    log_info("call %s conv=%.*s id=%s: %s after %lld ms", call->tool ? call->tool->name : "?", clen,
             key ? key : "", nl ? nl + 1 : "?", how, (long long)ms);
}

static void http_log_reply(http_t *h, const char *key, const mcp_call_t *call, const proto_msg_t *r,
                           int64_t t0)
{
    char how[64];
    snprintf(how, sizeof how, "%s%s", http_status_word(r->status),
             r->status == PROTO_ST_OK && r->is_error ? " (is_error)" : "");
    http_log_call(h, key, call, how, metrics_outcome_of(r), t0);
}

/* ---- SSE answers -------------------------------------------------------------------- */

typedef struct {
    http_t *h;
    queue_ticket_t *ticket;
    mcp_call_t call;
    char *key; /* cancel key, for logs */
    int fd;
    int64_t t0;
    int64_t next_keepalive; /* monotonic ms */
    const char *out;        /* bytes to hand MHD next */
    size_t out_len, out_off;
    char *owned; /* malloc'ed buffer behind out, if any */
    bool done;   /* out holds the last event */
} http_stream_t;

static void http_stream_free(void *cls)
{
    http_stream_t *s = cls;
    if (s->ticket) {
        /* The client left before the reply: forgetting the ticket cancels
         * the request. */
        http_log_call(s->h, s->key, &s->call, "client gone, cancelled", METRICS_CLIENT_GONE, s->t0);
        queue_ticket_destroy(&s->ticket);
    }
    mcp_call_clear(&s->call);
    free(s->owned);
    free(s->key);
    free(s);
}

/* Put the final event (body) in place; false when out of memory. */
static bool http_stream_last(http_stream_t *s, char *body)
{
    if (!body)
        return false;
    if (asprintf(&s->owned, "event: message\ndata: %s\n\n", body) < 0) {
        s->owned = NULL;
        free(body);
        return false;
    }
    free(body);
    s->out = s->owned;
    s->out_len = strlen(s->owned);
    s->done = true;
    return true;
}

static ssize_t http_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    http_stream_t *s = cls;
    (void)pos;
    for (;;) {
        if (s->out_off < s->out_len) {
            size_t n = s->out_len - s->out_off;
            if (n > max)
                n = max;
            memcpy(buf, s->out + s->out_off, n);
            s->out_off += n;
            return (ssize_t)n;
        }
        if (s->done)
            return MHD_CONTENT_READER_END_OF_STREAM;
        free(s->owned);
        s->owned = NULL;
        s->out = NULL;
        s->out_len = s->out_off = 0;

        const proto_msg_t *reply = NULL;
        switch (http_wait(s->h, s->ticket, s->fd, s->next_keepalive, &reply)) {
        case HTTP_WAIT_TICK:
            s->out = ": keepalive\n\n";
            s->out_len = strlen(s->out);
            s->next_keepalive = proto_mono_ms() + (int64_t)s->h->o.sse_keepalive_s * 1000;
            break;
        case HTTP_WAIT_REPLY:
            http_log_reply(s->h, s->key, &s->call, reply, s->t0);
            if (!http_stream_last(s, mcp_call_reply(&s->call, reply)))
                return MHD_CONTENT_READER_END_WITH_ERROR;
            queue_ticket_destroy(&s->ticket);
            break;
        case HTTP_WAIT_STOP:
            http_log_call(s->h, s->key, &s->call, "given up, gateway stopping", METRICS_STOPPING,
                          s->t0);
            queue_ticket_destroy(&s->ticket);
            if (!http_stream_last(s, mcp_call_failure(&s->call, http_stop_text)))
                return MHD_CONTENT_READER_END_WITH_ERROR;
            break;
        case HTTP_WAIT_GONE: return MHD_CONTENT_READER_END_WITH_ERROR;
        }
    }
}

static enum MHD_Result http_answer_sse(http_t *h, struct MHD_Connection *c, queue_ticket_t *t,
                                       mcp_outcome_t *out, int64_t t0)
{
    http_stream_t *s = calloc(1, sizeof *s);
    if (!s) {
        queue_ticket_destroy(&t);
        return MHD_NO;
    }
    s->h = h;
    s->ticket = t;
    s->call = out->call;
    out->call.id = NULL;
    s->key = out->cancel_key;
    out->cancel_key = NULL;
    s->fd = http_conn_fd(c);
    s->t0 = t0;
    s->next_keepalive = proto_mono_ms() + (int64_t)h->o.sse_keepalive_s * 1000;

    struct MHD_Response *resp = MHD_create_response_from_callback(
        MHD_SIZE_UNKNOWN, HTTP_SSE_BLOCK, http_stream_read, s, http_stream_free);
    if (!resp) {
        http_stream_free(s);
        return MHD_NO;
    }
    /* No "Connection: keep-alive": libmicrohttpd refuses that header (it
     * decides persistence itself, and HTTP/1.1 is persistent anyway). */
    enum MHD_Result ret = MHD_NO;
    if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream") ==
            MHD_YES &&
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache, no-transform") ==
            MHD_YES &&
        MHD_add_response_header(resp, "X-Accel-Buffering", "no") == MHD_YES)
        ret = MHD_queue_response(c, 200, resp);
    MHD_destroy_response(resp); /* frees s (through http_stream_free) once done */
    return ret;
}

/* ---- tools/call ------------------------------------------------------------------------ */

static enum MHD_Result http_answer_call(http_t *h, struct MHD_Connection *c, http_req_t *r,
                                        mcp_outcome_t *out)
{
    int64_t t0 = proto_mono_ms();
    /* Counted until the answer is sent (http_on_completed), so a stop can
     * let it go out first. */
    r->in_call = true;
    atomic_fetch_add(&h->in_calls, 1);
    proto_msg_t *req = out->req;
    out->req = NULL;
    queue_ticket_t *t = queue_submit(h->o.queue, req, out->cancel_key);
    if (!t) {
        http_log_call(h, out->cancel_key, &out->call, "not submitted", METRICS_NOT_QUEUED, t0);
        char *body = mcp_call_failure(&out->call, TX_GW_NO_QUEUE);
        enum MHD_Result ret = http_send_json(c, 200, body);
        free(body);
        return ret;
    }
    if (mcp_accept_sse(http_header(c, MHD_HTTP_HEADER_ACCEPT)))
        return http_answer_sse(h, c, t, out, t0);

    /* JSON answer: this connection's thread waits here for the reply. */
    const proto_msg_t *reply = NULL;
    char *body = NULL;
    switch (http_wait(h, t, http_conn_fd(c), INT64_MAX, &reply)) {
    case HTTP_WAIT_REPLY:
        http_log_reply(h, out->cancel_key, &out->call, reply, t0);
        body = mcp_call_reply(&out->call, reply);
        break;
    case HTTP_WAIT_STOP:
    case HTTP_WAIT_TICK:
        http_log_call(h, out->cancel_key, &out->call, "given up, gateway stopping",
                      METRICS_STOPPING, t0);
        body = mcp_call_failure(&out->call, http_stop_text);
        break;
    case HTTP_WAIT_GONE:
        http_log_call(h, out->cancel_key, &out->call, "client gone, cancelled", METRICS_CLIENT_GONE,
                      t0);
        queue_ticket_destroy(&t);
        return MHD_NO;
    }
    queue_ticket_destroy(&t);
    enum MHD_Result ret = http_send_json(c, 200, body);
    free(body);
    return ret;
}

/* ---- the access handler ---------------------------------------------------------------- */

static enum MHD_Result http_health(http_t *h, struct MHD_Connection *c)
{
    if (queue_live_workers(h->o.queue, KIND_SANDBOX) > 0)
        return http_send(c, 200, "text/plain", "ok", NULL, NULL);
    return http_send(c, 503, "text/plain", "no sandbox manager connected to the hub\n", NULL, NULL);
}

/* GET /metrics: the Prometheus text (metrics.h), behind the same token as
 * /mcp. */
static enum MHD_Result http_metrics(http_t *h, struct MHD_Connection *c, const char *method)
{
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return http_send(c, 405, "text/plain", "method not allowed\n", MHD_HTTP_HEADER_ALLOW,
                         "GET, HEAD");
    textbuf_t t;
    textbuf_init(&t);
    metrics_scrape(h->metrics, h->o.queue, &t);
    enum MHD_Result ret = t.oom ? http_send(c, 500, "text/plain", "out of memory\n", NULL, NULL)
                                : http_send(c, 200, METRICS_CONTENT_TYPE, t.buf, NULL, NULL);
    textbuf_free(&t);
    return ret;
}

/* Finding NUL and other control bytes in the request headers.
 *
 * libmicrohttpd 1.0 and later refuse a NUL in a header themselves (400)
 * and give every value its real length, so admit_bytes_clean sees the
 * rest.  Before 1.0 (0.9.75 to 0.9.77: Debian 12) a header value is
 * measured with strlen, so a NUL inside it ("sec-a\0other") silently
 * cuts the value.  Its values point
 * into the connection's read buffer, where each line's CRLF became two
 * NULs and the lines follow one another; so a value is whole exactly
 * when the next header's name starts right after its CRLF (and, for the
 * last header, the blank line's CRLF follows and the body starts right
 * after it: checked on the first body chunk, http_accumulate).  Anything
 * else -- a NUL in the value, a bare LF, an obsolete folded line -- is
 * refused, as are the other control bytes, which strlen does see. */
#define HTTP_MHD_CUTS_AT_NUL (MHD_VERSION < 0x01000000)

typedef struct {
    const char *bad; /* the offending header's name (NULL: none) */
    const char *end; /* end of the previous value */
} http_scan_t;

static enum MHD_Result http_scan_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                        size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    http_scan_t *s = cls;
    if (HTTP_MHD_CUTS_AT_NUL && s->end && key != s->end + 2) {
        s->bad = "a header before this one";
        return MHD_NO;
    }
    if (!value || !admit_bytes_clean(key, key_size) || !admit_bytes_clean(value, value_size)) {
        s->bad = key;
        return MHD_NO;
    }
    s->end = value + value_size;
    return MHD_YES;
}

/* Whether the headers are free of control bytes; *end is where the last
 * value ends, for the check of the body's start. */
static bool http_headers_clean(struct MHD_Connection *c, const char **bad, const char **end)
{
    http_scan_t scan = { 0 };
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, http_scan_header, &scan);
    /* The last line's CRLF and the blank line's CRLF, all four NULs. */
    if (HTTP_MHD_CUTS_AT_NUL && !scan.bad && scan.end &&
        (scan.end[1] || scan.end[2] || scan.end[3]))
        scan.bad = "the last header";
    *bad = scan.bad;
    *end = HTTP_MHD_CUTS_AT_NUL && !scan.bad ? scan.end : NULL;
    return !scan.bad;
}

/* Who may ask at all: the connection limits, clean header bytes, Host and
 * Origin.  Returns true when a response was queued (in *ret). */
static bool http_admit(http_t *h, struct MHD_Connection *c, http_req_t *r, const char *url,
                       const char *method, enum MHD_Result *ret)
{
    const char *bad = NULL;
    if (!http_headers_clean(c, &bad, &r->headers_end)) {
        log_info("refused %s %s: a control byte in %.64s", method, url, bad);
        *ret = http_send_refusal(c, 400, HTTP_BAD_HEADER_TEXT, MHD_HTTP_HEADER_CONNECTION, "close");
        return true;
    }
    limits_over_t over = limits_over(http_conn_limits(c));
    if (over != LIMITS_OK && strcmp(url, "/healthz") != 0) {
        log_info("refused %s %s: over %s", method, url,
                 over == LIMITS_OVER_CLIENT ? "max_client_connections" : "max_connections");
        *ret = over == LIMITS_OVER_CLIENT
                   ? http_send_refusal(c, 429,
                                       "Too Many Requests: this client has too many "
                                       "connections open (max_client_connections); close some "
                                       "or try again later",
                                       MHD_HTTP_HEADER_CONNECTION, "close")
                   : http_send_refusal(c, 503,
                                       "Service Unavailable: the gateway has too many "
                                       "connections open (max_connections); try again later",
                                       MHD_HTTP_HEADER_CONNECTION, "close");
        return true;
    }
    if (!mcp_origin_allowed(http_header(c, "Origin"), h->o.allowed_origins)) {
        log_info("refused %s %s: Origin %s", method, url, http_header(c, "Origin"));
        *ret = http_send_refusal(c, 403, "Forbidden: Origin not allowed", NULL, NULL);
        return true;
    }
    if (!admit_host_ok(http_header(c, MHD_HTTP_HEADER_HOST), h->loopback, h->o.allowed_hosts)) {
        log_info("refused %s %s: Host %s", method, url, http_header(c, MHD_HTTP_HEADER_HOST));
        *ret = http_send_refusal(c, 403, "Forbidden: Host not allowed (allowed_hosts)", NULL, NULL);
        return true;
    }
    return false;
}

/* Checks made as soon as the headers are in.  Returns true when a
 * response was queued (in *ret). */
static bool http_precheck(http_t *h, struct MHD_Connection *c, http_req_t *r, const char *url,
                          const char *method, enum MHD_Result *ret)
{
    if (http_admit(h, c, r, url, method, ret))
        return true;
    if (strcmp(url, "/healthz") == 0) {
        if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
            *ret = http_health(h, c);
        else
            *ret = http_send(c, 405, "text/plain", "method not allowed\n", MHD_HTTP_HEADER_ALLOW,
                             "GET, HEAD");
        return true;
    }
    bool metrics = strcmp(url, "/metrics") == 0;
    if (strcmp(url, "/mcp") != 0 && !metrics) {
        *ret = http_send(c, 404, "text/plain", "not found\n", NULL, NULL);
        return true;
    }
    if (!admit_token_ok(http_header(c, MHD_HTTP_HEADER_AUTHORIZATION), h->token)) {
        log_info("refused %s %s: %s bearer token", method, url,
                 http_header(c, MHD_HTTP_HEADER_AUTHORIZATION) ? "wrong" : "no");
        *ret = http_send_refusal(c, 401,
                                 "Unauthorized: this MCP endpoint needs the bearer token "
                                 "(Authorization: Bearer ...) it was configured with",
                                 MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
        return true;
    }
    if (metrics) {
        *ret = http_metrics(h, c, method);
        return true;
    }
    if (strcmp(method, "POST") != 0) {
        *ret = http_send_refusal(c, 405, "Method not allowed.", MHD_HTTP_HEADER_ALLOW, "POST");
        return true;
    }
    if (!mcp_content_type_json(http_header(c, MHD_HTTP_HEADER_CONTENT_TYPE))) {
        *ret = http_send_refusal(c, 415,
                                 "Unsupported Media Type: Content-Type must be "
                                 "application/json",
                                 NULL, NULL);
        return true;
    }
    if (!mcp_accept_ok(http_header(c, MHD_HTTP_HEADER_ACCEPT))) {
        *ret = http_send_refusal(c, 406,
                                 "Not Acceptable: Client must accept application/json "
                                 "or text/event-stream",
                                 NULL, NULL);
        return true;
    }
    const char *cl = http_header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        char *end = NULL;
        errno = 0;
        unsigned long long n = strtoull(cl, &end, 10);
        /* Far too big: answer at once and let the connection go.  Somewhat
         * too big: read and drop the body first (http_accumulate), because
         * a client that writes its whole body before it reads (fetch, as
         * LibreChat does) would see its write fail instead of our 413. */
        if (errno != 0 || end == cl || n > (unsigned long long)h->o.max_body + HTTP_DISCARD_MAX) {
            *ret = http_send_refusal(c, 413, "Payload Too Large: the body is over max_body", NULL,
                                     NULL);
            return true;
        }
    }
    return false;
}

/* What a body buffer of cap bytes takes from body_budget: the part past
 * HTTP_FREE_BODY.  Small bodies (every ping, tools/list and almost every
 * tools/call) take nothing, so clients holding big bodies open cannot
 * starve them; their memory is bounded by the connection caps instead. */
static size_t http_body_charge(size_t cap)
{
    return cap > HTTP_FREE_BODY ? cap - HTTP_FREE_BODY : 0;
}

/* Free the body kept so far and give its bytes back to the budget. */
static void http_body_free(http_t *h, http_req_t *r)
{
    free(r->body);
    r->body = NULL;
    r->len = r->cap = 0;
    if (r->held) {
        limits_body_give(h->lim, r->held);
        r->held = 0;
    }
}

/* Start dropping this body (why: too big, or over the budget). */
static void http_body_drop(http_t *h, http_req_t *r, http_drop_t why)
{
    r->drop = why;
    http_body_free(h, r);
    if (why == HTTP_DROP_BUDGET)
        log_warn("a request body was refused: the bodies in memory would pass body_budget");
}

/* Whether the first body bytes at data follow the blank line that ends
 * at hdr_end directly, or after one chunk-size line of a chunked body
 * ("1a2b[;ext]\r\n", which libmicrohttpd leaves as it is). */
static bool http_body_adjacent(const char *hdr_end, const char *data)
{
    if (data == hdr_end)
        return true;
    if (data < hdr_end || data - hdr_end > 128)
        return false;
    const char *p = hdr_end;
    while (p < data && isxdigit((unsigned char)*p))
        p++;
    if (p == hdr_end || p - hdr_end > 16 || p == data)
        return false;
    if (*p == ';')
        while (p < data && *p != '\r' && *p != '\n' && *p != '\0')
            p++;
    if (*p == '\r')
        p++;
    return *p == '\n' && p + 1 == data;
}

/* Keep a chunk of body, or count it once the body is dropped (over
 * max_body, or over body_budget).  false: cut the connection. */
static bool http_accumulate(http_t *h, http_req_t *r, const char *data, size_t n)
{
    /* The body must start right after the blank line (http_scan_header). */
    if (!r->body_started && r->headers_end && !http_body_adjacent(r->headers_end + 4, data))
        r->drop = HTTP_DROP_HEADERS;
    r->body_started = true;
    r->seen += n;
    if (!r->drop && r->len + n > h->o.max_body)
        http_body_drop(h, r, HTTP_DROP_TOO_BIG);
    if (r->drop)
        return r->seen <= (uint64_t)h->o.max_body + HTTP_DISCARD_MAX;
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        while (cap < r->len + n + 1)
            cap *= 2;
        size_t charge = http_body_charge(cap) - http_body_charge(r->cap);
        if (!limits_body_take(h->lim, charge)) {
            http_body_drop(h, r, HTTP_DROP_BUDGET);
            return true;
        }
        char *b = realloc(r->body, cap);
        if (!b) {
            limits_body_give(h->lim, charge);
            return false;
        }
        r->held += charge;
        r->body = b;
        r->cap = cap;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    r->body[r->len] = '\0';
    return true;
}

/* The whole body is in: decide with mcp.c and answer. */
static enum MHD_Result http_mcp(http_t *h, struct MHD_Connection *c, http_req_t *r)
{
    mcp_headers_t hd = {
        .conversation = http_header(c, h->o.mcp.conversation_header),
        .user = http_header(c, h->o.mcp.user_header),
        .protocol_version = http_header(c, "MCP-Protocol-Version"),
        .mcp_method = http_header(c, "Mcp-Method"),
        .mcp_name = http_header(c, "Mcp-Name"),
    };
    mcp_outcome_t out;
    mcp_handle(r->body, r->len, &hd, &h->o.mcp, &out);
    metrics_request(h->metrics, out.era);
    http_body_free(h, r);

    enum MHD_Result ret = MHD_NO;
    switch (out.action) {
    case MCP_REPLY: ret = http_send_json(c, (unsigned)out.http_status, out.body); break;
    case MCP_ACCEPTED: ret = http_send(c, 202, NULL, NULL, NULL, NULL); break;
    case MCP_CANCEL: {
        bool passed = queue_cancel(h->o.queue, out.cancel_key);
        const char *nl = strchr(out.cancel_key, '\n');
        log_info("cancel conv=%.*s id=%s: %s", (int)(nl - out.cancel_key), out.cancel_key, nl + 1,
                 passed ? "passed to the hub" : "not passed on");
        ret = http_send(c, 202, NULL, NULL, NULL, NULL);
        break;
    }
    case MCP_CALL: ret = http_answer_call(h, c, r, &out); break;
    }
    mcp_outcome_clear(&out);
    return ret;
}

/* The answer to a whole body that was dropped. */
static enum MHD_Result http_dropped(struct MHD_Connection *c, http_drop_t why)
{
    if (why == HTTP_DROP_HEADERS)
        return http_send_refusal(c, 400, HTTP_BAD_HEADER_TEXT, MHD_HTTP_HEADER_CONNECTION, "close");
    if (why == HTTP_DROP_TOO_BIG)
        return http_send_refusal(c, 413, "Payload Too Large: the body is over max_body", NULL,
                                 NULL);
    return http_send_refusal(c, 503,
                             "Service Unavailable: the gateway holds too many request "
                             "bodies right now (body_budget); try again in a moment",
                             NULL, NULL);
}

static enum MHD_Result http_on_request(void *cls, struct MHD_Connection *c, const char *url,
                                       const char *method, const char *version, const char *data,
                                       size_t *data_size, void **con_cls)
{
    http_t *h = cls;
    http_req_t *r = *con_cls;
    (void)version;
    if (!r) {
        /* The headers are in: the body's deadline starts. */
        limits_phase(h->lim, http_conn_limits(c), LIMITS_BODY);
        r = calloc(1, sizeof *r);
        if (!r)
            return MHD_NO;
        *con_cls = r;
        enum MHD_Result ret = MHD_YES;
        if (http_precheck(h, c, r, url, method, &ret))
            r->answered = true;
        return ret;
    }
    if (*data_size > 0) {
        bool ok = r->answered || http_accumulate(h, r, data, *data_size);
        *data_size = 0;
        return ok ? MHD_YES : MHD_NO;
    }
    /* The whole request is in: answering has no deadline of ours. */
    limits_phase(h->lim, http_conn_limits(c), LIMITS_BUSY);
    if (r->answered)
        return MHD_YES;
    r->answered = true;
    if (r->drop)
        return http_dropped(c, r->drop);
    return http_mcp(h, c, r);
}

static void http_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    http_t *h = cls;
    http_req_t *r = *con_cls;
    /* A kept-alive connection now waits for its next request's headers. */
    limits_phase(h->lim, http_conn_limits(c), LIMITS_HEADERS);
    if (r) {
        if (r->in_call)
            atomic_fetch_sub(&h->in_calls, 1);
        http_body_free(h, r);
        free(r);
        *con_cls = NULL;
    }
}

/* A connection opened or closed: its entry in the limits table. */
static void http_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                               enum MHD_ConnectionNotificationCode toe)
{
    http_t *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ai =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        *socket_context = limits_open(h->lim, http_conn_fd(c), ai ? ai->client_addr : NULL);
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        limits_conn_t *lc = *socket_context;
        limits_close(h->lim, &lc);
        *socket_context = NULL;
    }
}

/* A connection refused at accept (past max_connections or
 * max_client_connections plus HTTP_SPARE_CONNECTIONS): one line every ten
 * seconds at most, with the count, so a flood of sockets is not also a
 * flood of log lines. */
static void http_log_refused_accept(void)
{
    static atomic_llong next_ms;
    static atomic_uint refused;
    unsigned n = atomic_fetch_add(&refused, 1) + 1;
    long long now = (long long)proto_mono_ms(), next = atomic_load(&next_ms);
    if (now < next || !atomic_compare_exchange_strong(&next_ms, &next, now + 10000))
        return;
    atomic_fetch_sub(&refused, n);
    log_warn("refused %u connection(s) at accept: over max_connections or max_client_connections "
             "(plus %d spare)",
             n, HTTP_SPARE_CONNECTIONS);
}

static void http_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    /* Ending a response early because its client left is expected. */
    if (strstr(line, "application error generating response") ||
        strstr(line, "Application reported internal error"))
        log_debug("libmicrohttpd: %s", line);
    else if (strstr(line, "reached connection limit"))
        http_log_refused_accept();
    else
        log_warn("libmicrohttpd: %s", line);
}

/* ---- start and stop ---------------------------------------------------------------------- */

/* Start libmicrohttpd on ss with h's limits.  false when it cannot. */
static bool http_daemon(http_t *h, const struct sockaddr_storage *ss)
{
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    if (ss->ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* libmicrohttpd's inactivity timeout backs up ours (limits.h): it
     * covers a client that stops reading its answer.  A connection waiting
     * for a reply is never idle (its thread is in talkback's code, and SSE
     * sends keep-alives). */
    const limits_opts_t *lo = &h->o.limits;
    unsigned idle_s = 30;
    if (idle_s < lo->header_timeout_s)
        idle_s = lo->header_timeout_s;
    if (idle_s < lo->body_timeout_s)
        idle_s = lo->body_timeout_s;
    if (idle_s < (unsigned)h->o.sse_keepalive_s * 4)
        idle_s = (unsigned)h->o.sse_keepalive_s * 4;
    unsigned total = lo->max_connections ? lo->max_connections + HTTP_SPARE_CONNECTIONS : 0;
    unsigned per_ip =
        lo->max_client_connections ? lo->max_client_connections + HTTP_SPARE_CONNECTIONS : 0;

    uint16_t port = ss->ss_family == AF_INET6 ? ntohs(((const struct sockaddr_in6 *)ss)->sin6_port)
                                              : ntohs(((const struct sockaddr_in *)ss)->sin_port);
    h->d = MHD_start_daemon(
        flags, port, NULL, NULL, http_on_request, h, MHD_OPTION_EXTERNAL_LOGGER, http_mhd_log,
        (void *)h, MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)ss, MHD_OPTION_CONNECTION_LIMIT,
        total ? total : 65536u, MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, idle_s, MHD_OPTION_NOTIFY_COMPLETED, http_on_completed,
        (void *)h, MHD_OPTION_NOTIFY_CONNECTION, http_on_connection, (void *)h, MHD_OPTION_END);
    return h->d != NULL;
}

static void http_free(http_t *h)
{
    limits_destroy(&h->lim);
    metrics_destroy(&h->metrics);
    free(h->token);
    free(h);
}

http_t *http_start(const http_opts_t *opts)
{
    http_t *h = calloc(1, sizeof *h);
    if (!h) {
        log_error("http: out of memory");
        return NULL;
    }
    h->o = *opts;
    if (h->o.sse_keepalive_s < 1)
        h->o.sse_keepalive_s = 1;
    atomic_init(&h->stopping, false);
    atomic_init(&h->in_calls, 0);

    struct sockaddr_storage ss;
    if (listen_parse(opts->listen, &ss, &h->loopback) != 0) {
        log_error("cannot use listen address \"%s\" (want HOST:PORT or [V6]:PORT)", opts->listen);
        free(h);
        return NULL;
    }
    char err[512];
    if (admit_token_load(opts->auth_token, opts->auth_token_file, h->loopback, &h->token, err,
                         sizeof err) != 0) {
        log_error("refusing to start: %s", err);
        free(h);
        return NULL;
    }
    h->lim = limits_new(&h->o.limits);
    h->metrics = metrics_new();
    if (!h->lim || !h->metrics) {
        http_free(h);
        return NULL;
    }
    if (!http_daemon(h, &ss)) {
        log_error("cannot listen on %s (address in use, or not allowed?)", opts->listen);
        http_free(h);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = di ? di->port : 0;
    log_info("MCP endpoint http://%s/mcp (port %d), %s, Host checked%s%s", opts->listen, h->port,
             h->token ? "bearer token required" : "no token (loopback)",
             h->o.allowed_hosts && *h->o.allowed_hosts ? " against allowed_hosts " : "",
             h->o.allowed_hosts ? h->o.allowed_hosts : "");
    return h;
}

int http_port(const http_t *h)
{
    return h ? h->port : 0;
}

void http_stop(http_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    http_t *h = *self_p;
    /* Waiting calls see `stopping` within a slice and answer with
     * http_stop_text; give those answers a moment to go out. */
    atomic_store(&h->stopping, true);
    MHD_quiesce_daemon(h->d);
    for (int i = 0; i < 30 && atomic_load(&h->in_calls) > 0; i++)
        usleep(100 * 1000);
    MHD_stop_daemon(h->d);
    http_free(h);
    *self_p = NULL;
}
