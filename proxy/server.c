/* server.c -- talkback-proxy's HTTP side (see server.h).
 *
 * Reading order: the listen address and the upstream URL; answers the
 * proxy makes itself (errors); which request headers go on; forwarding one
 * request (upstream.h does the transfer); libmicrohttpd's callbacks; start
 * and stop.
 *
 * A request's raw URI (query string and escapes as the client sent them)
 * comes from libmicrohttpd's URI-log callback, which also allocates the
 * per-request state, so the model server sees exactly the path it was
 * asked for.  Answers that stream (SSE, or anything passed through) come
 * from a content-reader callback that blocks on the transfer's queue:
 * that is fine with a thread per connection.
 */
#include "proxy/server.h"

#include <curl/curl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "common/listen.h"
#include "common/log.h"
#include "common/textbuf.h"
#include "proxy/upstream.h"

#define SERVER_MAX_CONNECTIONS 1024
#define SERVER_STREAM_BLOCK    (16 * 1024)

struct server {
    server_opts_t o;
    char *root; /* upstream root URL, no trailing / or /v1 */
    struct MHD_Daemon *d;
    int port;
};

typedef struct {
    char *uri; /* raw, as sent */
    bool started;
    bool too_big;
    textbuf_t body;
} server_req_t;

char *server_upstream_root(const char *url)
{
    if (!url)
        return NULL;
    char *r = strdup(url);
    if (!r)
        return NULL;
    size_t n = strlen(r);
    while (n && r[n - 1] == '/')
        r[--n] = '\0';
    if (n >= 3 && strcmp(r + n - 3, "/v1") == 0) {
        n -= 3;
        r[n] = '\0';
        while (n && r[n - 1] == '/')
            r[--n] = '\0';
    }
    return r;
}

/* ---- answers of the proxy itself ----------------------------------------------------- */

/* An OpenAI-style error: {"error":{"message","type","param","code"}}. */
static enum MHD_Result server_error(struct MHD_Connection *c, unsigned status, const char *type,
                                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static enum MHD_Result server_error(struct MHD_Connection *c, unsigned status, const char *type,
                                    const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *j = json_pack("{s:{s:s, s:s, s:n, s:i}}", "error", "message", msg, "type", type,
                          "param", "code", (int)status);
    char *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!body)
        return MHD_NO;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* ---- headers -------------------------------------------------------------------------- */

/* Hop-by-hop headers and the ones curl must set itself. */
static bool server_skip_request_header(const char *name)
{
    static const char *const skip[] = {
        "Host",
        "Connection",
        "Keep-Alive",
        "Proxy-Connection",
        "Proxy-Authorization",
        "TE",
        "Trailer",
        "Transfer-Encoding",
        "Upgrade",
        "Content-Length",
        "Expect",
        /* The answer must arrive unencoded for the repair to read it. */
        "Accept-Encoding",
    };
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        if (strcasecmp(name, skip[i]) == 0)
            return true;
    return false;
}

static bool server_skip_response_header(const char *name)
{
    static const char *const skip[] = {
        "Connection",        "Keep-Alive", "Proxy-Connection", "TE",   "Trailer",
        "Transfer-Encoding", "Upgrade",    "Content-Length",   "Date",
    };
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        if (strcasecmp(name, skip[i]) == 0)
            return true;
    return false;
}

typedef struct {
    struct curl_slist *list;
    bool oom, has_type, has_accept;
} server_hdrs_t;

static enum MHD_Result server_collect_header(void *cls, enum MHD_ValueKind kind, const char *name,
                                             const char *value)
{
    (void)kind;
    server_hdrs_t *h = cls;
    if (!name || server_skip_request_header(name))
        return MHD_YES;
    if (strcasecmp(name, "Content-Type") == 0)
        h->has_type = true;
    if (strcasecmp(name, "Accept") == 0)
        h->has_accept = true;
    char *line = NULL;
    /* "Name;" is curl's way of sending a header with an empty value. */
    int n = value && *value ? asprintf(&line, "%s: %s", name, value) : asprintf(&line, "%s;", name);
    if (n < 0) {
        h->oom = true;
        return MHD_NO;
    }
    struct curl_slist *nl = curl_slist_append(h->list, line);
    free(line);
    if (!nl) {
        h->oom = true;
        return MHD_NO;
    }
    h->list = nl;
    return MHD_YES;
}

static struct curl_slist *server_request_headers(struct MHD_Connection *c)
{
    server_hdrs_t h = { 0 };
    MHD_get_connection_values(c, MHD_HEADER_KIND, server_collect_header, &h);
    /* Nothing curl would add on its own: no Expect: 100-continue wait, no
     * made-up Content-Type or Accept. */
    const char *extra[] = { "Expect:", h.has_type ? NULL : "Content-Type:",
                            h.has_accept ? NULL : "Accept:" };
    for (size_t i = 0; i < sizeof extra / sizeof extra[0] && !h.oom; i++) {
        if (!extra[i])
            continue;
        struct curl_slist *nl = curl_slist_append(h.list, extra[i]);
        if (!nl)
            h.oom = true;
        else
            h.list = nl;
    }
    if (h.oom) {
        curl_slist_free_all(h.list);
        return NULL;
    }
    return h.list;
}

/* ---- forwarding ---------------------------------------------------------------------------- */

static bool server_is_chat(const char *uri)
{
    size_t n = strcspn(uri, "?#");
    static const char tail[] = "/chat/completions";
    size_t tl = sizeof tail - 1;
    while (n > 1 && uri[n - 1] == '/')
        n--;
    return n >= tl && memcmp(uri + n - tl, tail, tl) == 0;
}

static ssize_t server_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    ssize_t n = upstream_read(cls, buf, max);
    if (n > 0)
        return n;
    return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void server_read_done(void *cls)
{
    upstream_t *u = cls;
    upstream_cancel(u); /* a no-op when the answer is complete */
    upstream_release(&u);
}

static void server_copy_headers(const upstream_t *u, struct MHD_Response *r)
{
    const char *name, *value;
    for (size_t i = 0; upstream_header(u, i, &name, &value); i++)
        if (!server_skip_response_header(name))
            MHD_add_response_header(r, name, value);
}

/* The turn's program, when this is a chat request that ran one. */
static repair_program_t *server_program(const server_t *s, const char *method, const char *uri,
                                        const char *body, size_t len)
{
    /* Without a tool result there is no program: skip the JSON parse. */
    if (strcmp(method, "POST") != 0 || !server_is_chat(uri) || !body ||
        !memmem(body, len, "tool_call_id", 12))
        return NULL;
    repair_program_t *p = malloc(sizeof *p);
    if (!p)
        return NULL;
    if (repair_find(body, len, &s->o.tools, p) != 1) {
        free(p);
        return NULL;
    }
    log_debug("this turn's program: %s, %zu bytes, %s", p->tag[0] ? p->tag : "(no tag)",
              strlen(p->code), p->verdict == REPAIR_PASS ? "passed" : "did not pass");
    return p;
}

static enum MHD_Result server_forward(server_t *s, struct MHD_Connection *c, const char *method,
                                      server_req_t *r)
{
    upstream_req_t q = { .method = method, .connect_timeout_s = s->o.connect_timeout_s };
    upstream_url_err_t ue = upstream_url(s->root, r->uri, &q.url);
    if (ue != UPSTREAM_URL_OK && ue != UPSTREAM_URL_NOMEM) {
        log_info("refused %s %.200s: %s", method, r->uri, upstream_url_strerror(ue));
        return server_error(c, 400, "invalid_request_error", "talkback-proxy: %s",
                            upstream_url_strerror(ue));
    }
    q.headers = server_request_headers(c);
    if (r->body.len)
        q.body = textbuf_take(&r->body, &q.body_len);
    const char *body = q.body;
    size_t body_len = q.body_len;
    if (!q.url || r->body.oom) {
        free(q.url);
        free(q.body);
        curl_slist_free_all(q.headers);
        return server_error(c, 500, "server_error", "talkback-proxy: out of memory");
    }
    upstream_t *u = upstream_start(&q);
    if (!u)
        return server_error(c, 500, "server_error", "talkback-proxy: could not start the request");
    /* The body now belongs to u, which stays alive while we hold it; the
     * parse runs while curl connects. */
    upstream_decide(u, server_program(s, method, r->uri, body, body_len));

    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    int wrc = upstream_wait_head(u, ci ? ci->connect_fd : -1);
    enum MHD_Result ret;
    if (wrc == -2) {
        log_info("%s %s: the client left before the answer", method, r->uri);
        ret = MHD_NO;
    } else if (wrc == -1) {
        log_warn("%s %s: the model server at %s did not answer: %s", method, r->uri, s->root,
                 upstream_error(u));
        ret = server_error(c, 502, "upstream_error",
                           "talkback-proxy: the model server at %s did not answer: %s", s->root,
                           upstream_error(u));
    } else {
        struct MHD_Response *resp;
        if (upstream_mode(u) == UPSTREAM_JSON) {
            size_t len;
            const char *b = upstream_body(u, &len);
            resp = MHD_create_response_from_buffer(len, (void *)b, MHD_RESPMEM_MUST_COPY);
        } else {
            upstream_t *ref = upstream_ref(u); /* the response's own */
            resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SERVER_STREAM_BLOCK,
                                                     server_read, ref, server_read_done);
            if (!resp)
                upstream_release(&ref);
        }
        if (!resp) {
            ret = MHD_NO;
        } else {
            server_copy_headers(u, resp);
            log_debug("%s %s -> %ld", method, r->uri, upstream_status(u));
            ret = MHD_queue_response(c, (unsigned)upstream_status(u), resp);
            MHD_destroy_response(resp);
        }
    }
    if (ret == MHD_NO)
        upstream_cancel(u);
    upstream_release(&u);
    return ret;
}

/* ---- libmicrohttpd callbacks -------------------------------------------------------------- */

static void *server_on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls, (void)c;
    server_req_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->uri = strdup(uri ? uri : "/");
    textbuf_init(&r->body);
    if (!r->uri) {
        free(r);
        return NULL;
    }
    return r;
}

static void server_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                                enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    server_req_t *r = *con_cls;
    if (!r)
        return;
    free(r->uri);
    textbuf_free(&r->body);
    free(r);
    *con_cls = NULL;
}

static enum MHD_Result server_on_request(void *cls, struct MHD_Connection *c, const char *url,
                                         const char *method, const char *version,
                                         const char *upload, size_t *upload_size, void **con_cls)
{
    (void)url, (void)version;
    server_t *s = cls;
    server_req_t *r = *con_cls;
    if (!r)
        return MHD_NO;
    if (!r->started) {
        r->started = true;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!r->too_big && r->body.len + *upload_size > s->o.max_body) {
            r->too_big = true;
            textbuf_free(&r->body);
        }
        if (!r->too_big)
            textbuf_append(&r->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (r->too_big)
        return server_error(c, 413, "invalid_request_error",
                            "talkback-proxy: the request body is over %zu bytes (proxy_max_body)",
                            s->o.max_body);
    return server_forward(s, c, method, r);
}

static void server_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && line[n - 1] == '\n')
        line[--n] = '\0';
    log_debug("libmicrohttpd: %s", line);
}

/* ---- start and stop ------------------------------------------------------------------------- */

server_t *server_start(const server_opts_t *o)
{
    server_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->o = *o;
    s->root = server_upstream_root(o->upstream);
    char *probe = NULL;
    bool usable = s->root && strncmp(s->root, "http", 4) == 0 &&
                  upstream_url(s->root, "/", &probe) == UPSTREAM_URL_OK;
    free(probe);
    if (!usable) {
        log_error("proxy_upstream \"%s\" is not an http:// or https:// URL",
                  o->upstream ? o->upstream : "");
        free(s->root);
        free(s);
        return NULL;
    }
    struct sockaddr_storage ss;
    if (listen_parse(o->listen, &ss, NULL) != 0) {
        log_error("cannot use listen address \"%s\" (want HOST:PORT or [V6]:PORT)", o->listen);
        free(s->root);
        free(s);
        return NULL;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, server_on_request, s, MHD_OPTION_EXTERNAL_LOGGER,
                            server_mhd_log, (void *)s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                            MHD_OPTION_URI_LOG_CALLBACK, server_on_uri, (void *)s,
                            MHD_OPTION_NOTIFY_COMPLETED, server_on_completed, (void *)s,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVER_MAX_CONNECTIONS,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)600,
                            MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned)1, MHD_OPTION_END);
    if (!s->d) {
        log_error("cannot listen on %s (address in use, or not allowed?)", o->listen);
        free(s->root);
        free(s);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : 0;
    log_info("listening on %s (port %d), model server %s; programs from tools %s / %s + %s",
             o->listen, s->port, s->root, o->tools.run_code, o->tools.write_file, o->tools.run);
    return s;
}

int server_port(const server_t *s)
{
    return s ? s->port : 0;
}

void server_stop(server_t **sp)
{
    if (!sp || !*sp)
        return;
    server_t *s = *sp;
    upstream_shutdown(); /* blocked readers give up within a slice */
    MHD_stop_daemon(s->d);
    free(s->root);
    free(s);
    *sp = NULL;
}
