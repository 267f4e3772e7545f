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

#define HTTP_MAX_CONNECTIONS 4096
#define HTTP_SLICE_MS        1000
#define HTTP_SSE_BLOCK       (64 * 1024)
/* A body already over max_body is read and dropped up to this much more
 * (so the client can read its 413); past that the connection is cut. */
#define HTTP_DISCARD_MAX     (16u * 1024u * 1024u)

struct http {
    http_opts_t o;
    struct MHD_Daemon *d;
    bool loopback;            /* bound to a loopback address: check Host */
    int port;
    atomic_bool stopping;
    atomic_int in_calls;      /* tools/call requests not yet fully answered */
};

/* State of one HTTP request (MHD's con_cls). */
typedef struct {
    char *body;
    size_t len, cap;
    uint64_t seen;            /* body bytes received, kept or not */
    bool too_big;
    bool answered;            /* a response was queued on the first call */
    bool in_call;             /* counted in http_t.in_calls */
} http_req_t;

/* ---- responses ------------------------------------------------------------------ */

static enum MHD_Result http_send(struct MHD_Connection *c, unsigned status, const char *ctype,
                                 const char *body, const char *allow)
{
    size_t len = body ? strlen(body) : 0;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)(body ? body : ""), MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    if ((ctype && MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype) != MHD_YES)
        || (allow && MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow) != MHD_YES)) {
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
        return http_send(c, 500, "application/json", oom, NULL);
    return http_send(c, status, "application/json", body, NULL);
}

/* A JSON-RPC error body with id null, for refusals at the HTTP level. */
static enum MHD_Result http_send_refusal(struct MHD_Connection *c, unsigned status,
                                         const char *message, const char *allow)
{
    char *body = mcp_error_body(MCP_SERVER_ERROR, message, NULL);
    enum MHD_Result ret = body ? http_send(c, status, "application/json", body, allow)
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
    HTTP_WAIT_REPLY,   /* the reply came */
    HTTP_WAIT_TICK,    /* `until` passed first */
    HTTP_WAIT_GONE,    /* the client closed its connection */
    HTTP_WAIT_STOP     /* the server is stopping */
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
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    return ci ? ci->connect_fd : -1;
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

static const char http_stop_text[] =
    "[talkback: the gateway is shutting down, so this call was given up (the command may or "
    "may not have run). Check with run before assuming anything, then try again.]";

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

/* One log line per finished call. */
static void http_log_call(const char *key, const mcp_call_t *call, const char *how, int64_t t0)
{
    const char *nl = key ? strchr(key, '\n') : NULL;
    int clen = nl ? (int)(nl - key) : 0;
    log_info("call %s conv=%.*s id=%s: %s after %lld ms", call->tool ? call->tool->name : "?",
             clen, key ? key : "", nl ? nl + 1 : "?", how, (long long)(proto_mono_ms() - t0));
}

static void http_log_reply(const char *key, const mcp_call_t *call, const proto_msg_t *r,
                           int64_t t0)
{
    char how[64];
    snprintf(how, sizeof how, "%s%s", http_status_word(r->status),
             r->status == PROTO_ST_OK && r->is_error ? " (is_error)" : "");
    http_log_call(key, call, how, t0);
}

/* ---- SSE answers -------------------------------------------------------------------- */

typedef struct {
    http_t *h;
    queue_ticket_t *ticket;
    mcp_call_t call;
    char *key;                /* cancel key, for logs */
    int fd;
    int64_t t0;
    int64_t next_keepalive;   /* monotonic ms */
    const char *out;          /* bytes to hand MHD next */
    size_t out_len, out_off;
    char *owned;              /* malloc'ed buffer behind out, if any */
    bool done;                /* out holds the last event */
} http_stream_t;

static void http_stream_free(void *cls)
{
    http_stream_t *s = cls;
    if (s->ticket) {
        /* The client left before the reply: forgetting the ticket cancels
         * the request. */
        http_log_call(s->key, &s->call, "client gone, cancelled", s->t0);
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
            http_log_reply(s->key, &s->call, reply, s->t0);
            if (!http_stream_last(s, mcp_call_reply(&s->call, reply)))
                return MHD_CONTENT_READER_END_WITH_ERROR;
            queue_ticket_destroy(&s->ticket);
            break;
        case HTTP_WAIT_STOP:
            http_log_call(s->key, &s->call, "given up, gateway stopping", s->t0);
            queue_ticket_destroy(&s->ticket);
            if (!http_stream_last(s, mcp_call_failure(&s->call, http_stop_text)))
                return MHD_CONTENT_READER_END_WITH_ERROR;
            break;
        case HTTP_WAIT_GONE:
            return MHD_CONTENT_READER_END_WITH_ERROR;
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
    if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream") == MHD_YES
        && MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache, no-transform") == MHD_YES
        && MHD_add_response_header(resp, "X-Accel-Buffering", "no") == MHD_YES)
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
        http_log_call(out->cancel_key, &out->call, "not submitted", t0);
        char *body = mcp_call_failure(&out->call,
                                      "[talkback: the gateway could not queue this call (out of "
                                      "memory), so nothing ran. Try again in a minute.]");
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
        http_log_reply(out->cancel_key, &out->call, reply, t0);
        body = mcp_call_reply(&out->call, reply);
        break;
    case HTTP_WAIT_STOP:
    case HTTP_WAIT_TICK:
        http_log_call(out->cancel_key, &out->call, "given up, gateway stopping", t0);
        body = mcp_call_failure(&out->call, http_stop_text);
        break;
    case HTTP_WAIT_GONE:
        http_log_call(out->cancel_key, &out->call, "client gone, cancelled", t0);
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
    if (queue_live_workers(h->o.queue, "sandbox") > 0)
        return http_send(c, 200, "text/plain", "ok", NULL);
    return http_send(c, 503, "text/plain", "no sandbox manager connected to the hub\n", NULL);
}

/* Checks made as soon as the headers are in.  Returns true when a
 * response was queued (in *ret). */
static bool http_precheck(http_t *h, struct MHD_Connection *c, const char *url,
                          const char *method, enum MHD_Result *ret)
{
    if (!mcp_origin_allowed(http_header(c, "Origin"), h->o.allowed_origins)) {
        log_info("refused %s %s: Origin %s", method, url, http_header(c, "Origin"));
        *ret = http_send_refusal(c, 403, "Forbidden: Origin not allowed", NULL);
        return true;
    }
    if (h->loopback && !mcp_host_allowed(http_header(c, MHD_HTTP_HEADER_HOST))) {
        log_info("refused %s %s: Host %s", method, url, http_header(c, MHD_HTTP_HEADER_HOST));
        *ret = http_send_refusal(c, 403, "Forbidden: Host not allowed", NULL);
        return true;
    }
    if (strcmp(url, "/healthz") == 0) {
        if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
            *ret = http_health(h, c);
        else
            *ret = http_send(c, 405, "text/plain", "method not allowed\n", "GET, HEAD");
        return true;
    }
    if (strcmp(url, "/mcp") != 0) {
        *ret = http_send(c, 404, "text/plain", "not found\n", NULL);
        return true;
    }
    if (strcmp(method, "POST") != 0) {
        *ret = http_send_refusal(c, 405, "Method not allowed.", "POST");
        return true;
    }
    if (!mcp_content_type_json(http_header(c, MHD_HTTP_HEADER_CONTENT_TYPE))) {
        *ret = http_send_refusal(c, 415, "Unsupported Media Type: Content-Type must be "
                                 "application/json", NULL);
        return true;
    }
    if (!mcp_accept_ok(http_header(c, MHD_HTTP_HEADER_ACCEPT))) {
        *ret = http_send_refusal(c, 406, "Not Acceptable: Client must accept application/json "
                                 "or text/event-stream", NULL);
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
            *ret = http_send_refusal(c, 413, "Payload Too Large: the body is over max_body", NULL);
            return true;
        }
    }
    return false;
}

/* Keep a chunk of body, or count it once the body is over max_body.
 * false: cut the connection. */
static bool http_accumulate(http_t *h, http_req_t *r, const char *data, size_t n)
{
    r->seen += n;
    if (!r->too_big && r->len + n > h->o.max_body) {
        r->too_big = true;
        free(r->body);
        r->body = NULL;
        r->len = r->cap = 0;
    }
    if (r->too_big)
        return r->seen <= (uint64_t)h->o.max_body + HTTP_DISCARD_MAX;
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        while (cap < r->len + n + 1)
            cap *= 2;
        char *b = realloc(r->body, cap);
        if (!b)
            return false;
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
    };
    mcp_outcome_t out;
    mcp_handle(r->body, r->len, &hd, &h->o.mcp, &out);
    free(r->body);
    r->body = NULL;
    r->len = r->cap = 0;

    enum MHD_Result ret = MHD_NO;
    switch (out.action) {
    case MCP_REPLY:
        ret = http_send_json(c, (unsigned)out.http_status, out.body);
        break;
    case MCP_ACCEPTED:
        ret = http_send(c, 202, NULL, NULL, NULL);
        break;
    case MCP_CANCEL: {
        bool passed = queue_cancel(h->o.queue, out.cancel_key);
        const char *nl = strchr(out.cancel_key, '\n');
        log_info("cancel conv=%.*s id=%s: %s", (int)(nl - out.cancel_key), out.cancel_key,
                 nl + 1, passed ? "passed to the hub" : "not passed on");
        ret = http_send(c, 202, NULL, NULL, NULL);
        break;
    }
    case MCP_CALL:
        ret = http_answer_call(h, c, r, &out);
        break;
    }
    mcp_outcome_clear(&out);
    return ret;
}

static enum MHD_Result http_on_request(void *cls, struct MHD_Connection *c, const char *url,
                                       const char *method, const char *version,
                                       const char *data, size_t *data_size, void **con_cls)
{
    http_t *h = cls;
    http_req_t *r = *con_cls;
    (void)version;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return MHD_NO;
        *con_cls = r;
        enum MHD_Result ret = MHD_YES;
        if (http_precheck(h, c, url, method, &ret))
            r->answered = true;
        return ret;
    }
    if (r->answered) {
        *data_size = 0;
        return MHD_YES;
    }
    if (*data_size > 0) {
        bool ok = http_accumulate(h, r, data, *data_size);
        *data_size = 0;
        return ok ? MHD_YES : MHD_NO;
    }
    r->answered = true;
    if (r->too_big)
        return http_send_refusal(c, 413, "Payload Too Large: the body is over max_body", NULL);
    return http_mcp(h, c, r);
}

static void http_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
    (void)c;
    (void)toe;
    http_t *h = cls;
    http_req_t *r = *con_cls;
    if (r) {
        if (r->in_call)
            atomic_fetch_sub(&h->in_calls, 1);
        free(r->body);
        free(r);
        *con_cls = NULL;
    }
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
    if (strstr(line, "application error generating response")
        || strstr(line, "Application reported internal error"))
        log_debug("libmicrohttpd: %s", line);
    else
        log_warn("libmicrohttpd: %s", line);
}

/* ---- start and stop ---------------------------------------------------------------------- */

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
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION
                     | MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* Idle keep-alive connections close after this; a connection waiting
     * for a reply is never idle (its thread is in talkback's code, and SSE
     * sends keep-alives). */
    unsigned idle_s = 300;
    if (idle_s < (unsigned)h->o.sse_keepalive_s * 4)
        idle_s = (unsigned)h->o.sse_keepalive_s * 4;

    uint16_t port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                             : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    h->d = MHD_start_daemon(flags, port, NULL, NULL, http_on_request, h,
                            MHD_OPTION_EXTERNAL_LOGGER, http_mhd_log, (void *)h,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
                            MHD_OPTION_CONNECTION_TIMEOUT, idle_s,
                            MHD_OPTION_NOTIFY_COMPLETED, http_on_completed, (void *)h,
                            MHD_OPTION_END);
    if (!h->d) {
        log_error("cannot listen on %s (address in use, or not allowed?)", opts->listen);
        free(h);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = di ? di->port : 0;
    log_info("MCP endpoint http://%s/mcp (port %d)%s", opts->listen, h->port,
             h->loopback ? ", loopback: Host checked" : "");
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
    free(h);
    *self_p = NULL;
}
