/* docker.c -- the Docker Engine API over libcurl: calls, exec, put_file.
 *
 * One docker_t holds the daemon's address (a unix socket or tcp://H:P) and
 * the API version negotiated once with GET /_ping; it never changes after
 * docker_new, so any number of threads may share it.  What may not be
 * shared is a curl easy handle, so every thread gets its own, kept in a
 * pthread key (freed when the thread exits) and reset between calls; the
 * handle keeps its connection cache, so a thread's calls reuse one
 * connection to the daemon.
 *
 * Exec is the one call that is not request/response.  POST /exec/{id}/start
 * hijacks the connection: the daemon answers 200 (or 101 when asked to
 * upgrade) and then sends the raw multiplexed stream until it closes it.
 *   - Without stdin, libcurl reads that stream as a body of unknown length.
 *     It runs on a multi handle of its own so the loop wakes every 100 ms to
 *     ask the caller whether to give up (curl_easy_perform only wakes once a
 *     second when the line is quiet), on a fresh easy handle with reuse
 *     forbidden since the connection cannot serve another request.
 *   - With stdin, the request goes out by hand over a plain socket, because
 *     the write side has to be half-closed once stdin is sent -- otherwise a
 *     reader such as cat waits forever -- and libcurl cannot do that.  Stdin
 *     is written while output is read, so a command that answers before it
 *     has read all its input cannot deadlock against us.
 * Attach (docker_attach, for the agent in a sandbox) is the same hand-made
 * upgrade with no body -- an HTTP proxy in between may drop the Upgrade of
 * a request that has one -- and hands the socket to the caller.
 *
 * Neither path has an overall timeout: how long a command may run is the
 * caller's decision, made through the cancel check.  Abandoning the stream
 * does not stop the process inside the container (Docker keeps it running).
 *
 * Docker answers errors as JSON {"message": ...} with an HTTP status, which
 * libcurl reports as success; the status is what decides the result here.
 */
#include "docker/docker.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define DOCKER_DEFAULT_HOST  "unix:///var/run/docker.sock"
#define DOCKER_DEFAULT_PORT  "2375"
/* Connecting to a local daemon is instant; 10 s covers a slow tcp peer. */
#define DOCKER_CONNECT_S     10L
/* A normal call may be slow (create, stop with a grace period, a large
 * archive) but never endless. */
#define DOCKER_CALL_S        120L
/* Largest answer kept in memory (a container list with sizes is the
 * biggest thing we ask for). */
#define DOCKER_ANSWER_MAX    ((size_t)64 << 20)
/* Error text kept from a failed exec start. */
#define DOCKER_ERRTEXT_MAX   4096
/* How often the cancel check runs while an exec streams. */
#define DOCKER_CANCEL_MS     100
/* Waiting for ExitCode after the stream ended: 1 ms doubling, ~1 s total. */
#define DOCKER_EXIT_FIRST_US 1000L
#define DOCKER_EXIT_TOTAL_US 1000000L
/* Response head of a hand-made exec start. */
#define DOCKER_HEAD_MAX      16384
#define DOCKER_IO_CHUNK      65536
#define DOCKER_VERSION_MAX   16

struct docker {
    char *sock_path;   /* unix socket path, or NULL for tcp */
    char *tcp_node;    /* tcp host (no brackets) */
    char *tcp_port;
    char *base_url;    /* "http://localhost" or "http://H:P" */
    char *host_hdr;    /* Host: header of hand-made requests */
    char version[DOCKER_VERSION_MAX];
    char prefix[DOCKER_VERSION_MAX + 2];  /* "/v1.41" */
};

/* ---- small helpers ------------------------------------------------------ */

const char *docker_strerror(docker_err_t err)
{
    switch (err) {
    case DOCKER_OK:         return "success";
    case DOCKER_ECONNECT:   return "could not reach the Docker daemon";
    case DOCKER_EHTTP:      return "the Docker daemon answered with an error";
    case DOCKER_ENOTFOUND:  return "not found";
    case DOCKER_ECONFLICT:  return "conflict";
    case DOCKER_EPROTO:     return "could not understand the Docker daemon";
    case DOCKER_ENOMEM:     return "out of memory";
    case DOCKER_ECANCELLED: return "cancelled";
    case DOCKER_EARG:       return "bad argument";
    }
    return "unknown error";
}

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;

    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

/* Percent-encode everything but unreserved characters, for ids and names
 * that go into a path. */
static char *path_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    char *out = malloc(3 * n + 1), *p = out;

    if (out == NULL)
        return NULL;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~') {
            *p++ = (char)c;
        } else {
            *p++ = '%';
            *p++ = hex[c >> 4];
            *p++ = hex[c & 15];
        }
    }
    *p = '\0';
    return out;
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (errbuf == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(errbuf, errlen, fmt, ap);
    va_end(ap);
}

static docker_err_t status_err(long status)
{
    if ((status >= 200 && status < 300) || status == 304)
        return DOCKER_OK;
    if (status == 404)
        return DOCKER_ENOTFOUND;
    if (status == 409)
        return DOCKER_ECONFLICT;
    return DOCKER_EHTTP;
}

static bool is_cancelled(const docker_exec_t *x)
{
    return x->cancelled != NULL && x->cancelled(x->ctx);
}

/* ---- growable answer buffer --------------------------------------------- */

typedef struct {
    char *data;
    size_t len, cap, max;
    bool overflow, oom;
} membuf_t;

static void membuf_init(membuf_t *b, size_t max)
{
    memset(b, 0, sizeof *b);
    b->max = max;
}

static void membuf_free(membuf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

static bool membuf_add(membuf_t *b, const char *p, size_t n)
{
    if (n > b->max - b->len) {
        b->overflow = true;
        return false;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (d == NULL) {
            b->oom = true;
            return false;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return true;
}

static size_t membuf_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
    return membuf_add(ud, ptr, size * nmemb) ? size * nmemb : 0;
}

/* ---- per-thread curl handles -------------------------------------------- */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_handle_key;
static bool g_ready;

static void handle_free(void *h)
{
    curl_easy_cleanup(h);
}

static void global_init(void)
{
    g_ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK &&
              pthread_key_create(&g_handle_key, handle_free) == 0;
}

static bool docker_global_init(void)
{
    pthread_once(&g_once, global_init);
    return g_ready;
}

/* The calling thread's easy handle, reset to defaults (its connection
 * cache survives the reset). */
static CURL *thread_handle(void)
{
    CURL *h;

    if (!docker_global_init())
        return NULL;
    h = pthread_getspecific(g_handle_key);
    if (h != NULL) {
        curl_easy_reset(h);
        return h;
    }
    h = curl_easy_init();
    if (h != NULL && pthread_setspecific(g_handle_key, h) != 0) {
        curl_easy_cleanup(h);
        h = NULL;
    }
    return h;
}

/* Options every request shares: address, no signals, connect timeout. */
static docker_err_t base_setup(const docker_t *d, CURL *h, const char *url,
                               char *curl_err)
{
    CURLcode c = CURLE_OK;

    c |= curl_easy_setopt(h, CURLOPT_URL, url);
    if (d->sock_path != NULL)
        c |= curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, d->sock_path);
    c |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    c |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, DOCKER_CONNECT_S);
    c |= curl_easy_setopt(h, CURLOPT_USERAGENT, "talkback");
    if (curl_err != NULL) {
        curl_err[0] = '\0';
        c |= curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
    }
    return c == CURLE_OK ? DOCKER_OK : DOCKER_ENOMEM;
}

/* ---- plain request/response --------------------------------------------- */

typedef struct {
    char value[DOCKER_VERSION_MAX];
} api_header_t;

/* Header callback of the version probe: keeps the Api-Version header. */
static size_t api_header_cb(char *buf, size_t size, size_t nmemb, void *ud)
{
    static const char key[] = "api-version:";
    size_t len = size * nmemb, klen = sizeof key - 1, i, n = 0;
    api_header_t *ah = ud;

    if (len <= klen || strncasecmp(buf, key, klen) != 0)
        return len;
    for (i = klen; i < len && (buf[i] == ' ' || buf[i] == '\t'); i++)
        ;
    for (; i < len && n + 1 < sizeof ah->value && buf[i] != '\r' &&
           buf[i] != '\n' && buf[i] != ' '; i++)
        ah->value[n++] = buf[i];
    ah->value[n] = '\0';
    return len;
}

typedef struct {
    const char *method;
    const char *path;      /* full path, version prefix included */
    const char *ctype;     /* content type of body, or NULL */
    const void *body;      /* or NULL */
    size_t len;
    api_header_t *api;     /* or NULL: collect Api-Version */
} request_t;

/* Perform one request on the thread's handle.  *status gets the HTTP
 * status (0 if none); resp gets the body.  curl_err (CURL_ERROR_SIZE) gets
 * libcurl's message when the daemon was not reached. */
static docker_err_t perform(const docker_t *d, const request_t *rq,
                            long *status, membuf_t *resp, char *curl_err)
{
    struct curl_slist *hdrs = NULL, *tmp;
    char *url = NULL, *ctype = NULL;
    docker_err_t rc = DOCKER_ENOMEM;
    CURLcode cc = CURLE_OK;
    CURL *h;

    *status = 0;
    h = thread_handle();
    url = str_printf("%s%s", d->base_url, rq->path);
    if (h == NULL || url == NULL)
        goto cleanup;
    if (base_setup(d, h, url, curl_err) != DOCKER_OK)
        goto cleanup;

    /* No "Expect: 100-continue" round trip for large bodies. */
    if ((tmp = curl_slist_append(hdrs, "Expect:")) == NULL)
        goto cleanup;
    hdrs = tmp;
    if (rq->body != NULL) {
        ctype = str_printf("Content-Type: %s", rq->ctype ? rq->ctype : "application/json");
        if (ctype == NULL || (tmp = curl_slist_append(hdrs, ctype)) == NULL)
            goto cleanup;
        hdrs = tmp;
    } else if ((tmp = curl_slist_append(hdrs, "Content-Type:")) == NULL) {
        goto cleanup;  /* no form content type on an empty POST */
    } else {
        hdrs = tmp;
    }

    if (strcmp(rq->method, "GET") == 0) {
        cc |= curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (strcmp(rq->method, "POST") == 0 || strcmp(rq->method, "PUT") == 0) {
        cc |= curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                               (curl_off_t)(rq->body ? rq->len : 0));
        cc |= curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body ? rq->body : "");
        cc |= curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
    } else {
        cc |= curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
    }
    cc |= curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    cc |= curl_easy_setopt(h, CURLOPT_TIMEOUT, DOCKER_CALL_S);
    cc |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, membuf_write);
    cc |= curl_easy_setopt(h, CURLOPT_WRITEDATA, resp);
    if (rq->api != NULL) {
        cc |= curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, api_header_cb);
        cc |= curl_easy_setopt(h, CURLOPT_HEADERDATA, rq->api);
    }
    if (cc != CURLE_OK)
        goto cleanup;

    cc = curl_easy_perform(h);
    /* The handle is reused by the thread's next call: drop pointers to our
     * stack and heap now. */
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
    if (cc == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
        rc = status_err(*status);
    } else if (cc == CURLE_OUT_OF_MEMORY || resp->oom) {
        rc = DOCKER_ENOMEM;
    } else if (resp->overflow) {
        rc = DOCKER_EPROTO;
    } else {
        if (curl_err != NULL && curl_err[0] == '\0')
            snprintf(curl_err, CURL_ERROR_SIZE, "%s", curl_easy_strerror(cc));
        rc = DOCKER_ECONNECT;
    }

cleanup:
    curl_slist_free_all(hdrs);
    free(ctype);
    free(url);
    return rc;
}

/* The parsed answer: JSON if it is JSON; for errors always an object with
 * a message (Docker's own, or one made from the text or the status). */
static json_t *answer_json(const membuf_t *b, long status, docker_err_t rc)
{
    json_t *j = NULL;

    if (b->len > 0)
        j = json_loadb(b->data, b->len, 0, NULL);
    if (j != NULL || rc == DOCKER_OK)
        return j;
    if (b->len > 0) {
        size_t n = b->len;
        while (n > 0 && (b->data[n - 1] == '\n' || b->data[n - 1] == '\r'))
            n--;
        j = json_pack("{s:s%}", "message", b->data, n < 512 ? n : 512);
    }
    if (j == NULL) {
        char msg[64];
        snprintf(msg, sizeof msg, "HTTP status %ld", status);
        j = json_pack("{s:s}", "message", msg);
    }
    return j;
}

docker_err_t docker_call_raw(docker_t *d, const char *method, const char *path,
                             const char *ctype, const void *body, size_t len,
                             long *status, json_t **out)
{
    char curl_err[CURL_ERROR_SIZE];
    char *full = NULL;
    membuf_t resp;
    long st = 0;
    docker_err_t rc;

    membuf_init(&resp, DOCKER_ANSWER_MAX);
    if (status != NULL)
        *status = 0;
    if (out != NULL)
        *out = NULL;
    if (d == NULL || method == NULL || path == NULL || path[0] != '/' ||
        (body == NULL && len > 0))
        return DOCKER_EARG;

    full = str_printf("%s%s", d->prefix, path);
    if (full == NULL)
        return DOCKER_ENOMEM;
    request_t rq = { method, full, ctype, body, len, NULL };
    rc = perform(d, &rq, &st, &resp, curl_err);
    if (status != NULL)
        *status = st;
    if (out != NULL) {
        if (rc == DOCKER_ECONNECT)
            *out = json_pack("{s:s}", "message", curl_err);
        else if (rc != DOCKER_ENOMEM && rc != DOCKER_EPROTO)
            *out = answer_json(&resp, st, rc);
    }
    membuf_free(&resp);
    free(full);
    return rc;
}

docker_err_t docker_call(docker_t *d, const char *method, const char *path,
                         json_t *body, long *status, json_t **out)
{
    char *text = NULL;
    docker_err_t rc;

    if (body != NULL) {
        text = json_dumps(body, JSON_COMPACT);
        if (text == NULL) {
            if (status != NULL)
                *status = 0;
            if (out != NULL)
                *out = NULL;
            return DOCKER_ENOMEM;
        }
    }
    rc = docker_call_raw(d, method, path, "application/json", text,
                         text ? strlen(text) : 0, status, out);
    free(text);
    return rc;
}

const char *docker_message(const json_t *answer)
{
    const char *m = json_string_value(json_object_get(answer, "message"));
    return m != NULL ? m : "";
}

/* ---- construction and version negotiation ------------------------------- */

static bool version_ok(const char *v)
{
    if (v[0] < '0' || v[0] > '9')
        return false;
    for (; *v; v++)
        if ((*v < '0' || *v > '9') && *v != '.')
            return false;
    return true;
}

/* Split "unix:///path" or "tcp://host:port" into d's address fields. */
static docker_err_t parse_host(docker_t *d, const char *host, char *errbuf,
                               size_t errlen)
{
    if (strncmp(host, "unix://", 7) == 0) {
        const char *path = host + 7;
        struct sockaddr_un sa;
        if (path[0] == '\0' || strlen(path) >= sizeof sa.sun_path) {
            set_err(errbuf, errlen, "bad unix socket path in %s", host);
            return DOCKER_EARG;
        }
        d->sock_path = strdup(path);
        d->base_url = strdup("http://localhost");
        d->host_hdr = strdup("localhost");
        if (!d->sock_path || !d->base_url || !d->host_hdr)
            return DOCKER_ENOMEM;
        return DOCKER_OK;
    }

    const char *rest = NULL, *node, *port = NULL;
    size_t node_len;
    if (strncmp(host, "tcp://", 6) == 0)
        rest = host + 6;
    else if (strncmp(host, "http://", 7) == 0)
        rest = host + 7;
    if (rest == NULL || rest[0] == '\0') {
        set_err(errbuf, errlen, "unsupported Docker host %s (unix:// or tcp://)", host);
        return DOCKER_EARG;
    }
    size_t auth_len = strcspn(rest, "/");
    if (rest[auth_len] == '/' && rest[auth_len + 1] != '\0') {
        set_err(errbuf, errlen, "a path in the Docker host is not supported: %s", host);
        return DOCKER_EARG;
    }
    if (rest[0] == '[') {
        const char *end = memchr(rest, ']', auth_len);
        if (end == NULL) {
            set_err(errbuf, errlen, "bad address in %s", host);
            return DOCKER_EARG;
        }
        node = rest + 1;
        node_len = (size_t)(end - node);
        if (end + 1 < rest + auth_len && end[1] == ':')
            port = end + 2;
    } else {
        const char *colon = memchr(rest, ':', auth_len);
        node = rest;
        node_len = colon ? (size_t)(colon - rest) : auth_len;
        if (colon != NULL)
            port = colon + 1;
    }
    size_t port_len = port ? (size_t)(rest + auth_len - port) : 0;
    if (node_len == 0 || (port != NULL && port_len == 0)) {
        set_err(errbuf, errlen, "bad address in %s", host);
        return DOCKER_EARG;
    }
    d->tcp_node = strndup(node, node_len);
    d->tcp_port = port ? strndup(port, port_len) : strdup(DOCKER_DEFAULT_PORT);
    if (!d->tcp_node || !d->tcp_port)
        return DOCKER_ENOMEM;
    bool v6 = strchr(d->tcp_node, ':') != NULL;
    d->host_hdr = str_printf(v6 ? "[%s]:%s" : "%s:%s", d->tcp_node, d->tcp_port);
    if (d->host_hdr == NULL)
        return DOCKER_ENOMEM;
    d->base_url = str_printf("http://%s", d->host_hdr);
    return d->base_url ? DOCKER_OK : DOCKER_ENOMEM;
}

/* GET /_ping (unversioned) and read Api-Version; else GET /version. */
static docker_err_t negotiate(docker_t *d, char *errbuf, size_t errlen)
{
    char curl_err[CURL_ERROR_SIZE];
    api_header_t api = { "" };
    membuf_t resp;
    json_t *ver = NULL;
    long st = 0;
    docker_err_t rc;

    membuf_init(&resp, DOCKER_ANSWER_MAX);
    request_t ping = { "GET", "/_ping", NULL, NULL, 0, &api };
    rc = perform(d, &ping, &st, &resp, curl_err);
    if (rc == DOCKER_ECONNECT) {
        set_err(errbuf, errlen, "cannot reach Docker at %s: %s",
                d->sock_path ? d->sock_path : d->base_url, curl_err);
        goto cleanup;
    }
    if (rc == DOCKER_OK && version_ok(api.value))
        goto found;

    membuf_free(&resp);
    request_t version = { "GET", "/version", NULL, NULL, 0, NULL };
    rc = perform(d, &version, &st, &resp, curl_err);
    if (rc == DOCKER_ECONNECT) {
        set_err(errbuf, errlen, "cannot reach Docker: %s", curl_err);
        goto cleanup;
    }
    if (rc == DOCKER_OK && resp.len > 0)
        ver = json_loadb(resp.data, resp.len, 0, NULL);
    const char *v = json_string_value(json_object_get(ver, "ApiVersion"));
    if (rc != DOCKER_OK || v == NULL || strlen(v) >= sizeof api.value ||
        !version_ok(v)) {
        set_err(errbuf, errlen, "Docker did not tell its API version (HTTP %ld)", st);
        rc = rc == DOCKER_OK || rc == DOCKER_ENOTFOUND ? DOCKER_EPROTO : rc;
        goto cleanup;
    }
    strcpy(api.value, v);

found:
    strcpy(d->version, api.value);
    snprintf(d->prefix, sizeof d->prefix, "/v%s", d->version);
    rc = DOCKER_OK;
cleanup:
    json_decref(ver);
    membuf_free(&resp);
    return rc;
}

docker_t *docker_new(const char *host, docker_err_t *err, char *errbuf, size_t errlen)
{
    docker_err_t rc = DOCKER_ENOMEM;
    docker_t *d = NULL;

    if (errbuf != NULL && errlen > 0)
        errbuf[0] = '\0';
    if (host == NULL || host[0] == '\0')
        host = getenv("DOCKER_HOST");
    if (host == NULL || host[0] == '\0')
        host = DOCKER_DEFAULT_HOST;

    if (!docker_global_init()) {
        set_err(errbuf, errlen, "cannot initialise libcurl");
        goto fail;
    }
    d = calloc(1, sizeof *d);
    if (d == NULL)
        goto fail;
    rc = parse_host(d, host, errbuf, errlen);
    if (rc != DOCKER_OK)
        goto fail;
    rc = negotiate(d, errbuf, errlen);
    if (rc != DOCKER_OK)
        goto fail;
    if (err != NULL)
        *err = DOCKER_OK;
    return d;

fail:
    if (rc == DOCKER_ENOMEM && (errbuf == NULL || errbuf[0] == '\0'))
        set_err(errbuf, errlen, "out of memory");
    if (err != NULL)
        *err = rc;
    docker_destroy(&d);
    return NULL;
}

void docker_destroy(docker_t **self_p)
{
    docker_t *d;

    if (self_p == NULL || *self_p == NULL)
        return;
    d = *self_p;
    free(d->sock_path);
    free(d->tcp_node);
    free(d->tcp_port);
    free(d->base_url);
    free(d->host_hdr);
    free(d);
    *self_p = NULL;
    /* The calling thread's handle goes too (a later call makes a new one):
     * for a process that destroys its client on the way out, this leaves
     * nothing of ours behind. */
    if (docker_global_init()) {
        CURL *h = pthread_getspecific(g_handle_key);
        if (h != NULL) {
            pthread_setspecific(g_handle_key, NULL);
            curl_easy_cleanup(h);
        }
    }
}

const char *docker_api_version(const docker_t *d)
{
    return d != NULL ? d->version : "";
}

/* ---- exec --------------------------------------------------------------- */

/* Append a NULL-terminated string vector to obj[key] as a JSON array. */
static bool add_strv(json_t *obj, const char *key, const char *const *v)
{
    json_t *arr = json_array();

    if (arr == NULL)
        return false;
    for (; *v; v++) {
        if (json_array_append_new(arr, json_string(*v)) != 0) {
            json_decref(arr);
            return false;  /* out of memory or not UTF-8 */
        }
    }
    return json_object_set_new(obj, key, arr) == 0;
}

static json_t *exec_body(const docker_exec_t *x)
{
    json_t *b = json_pack("{s:b, s:b, s:b, s:b}",
                          "AttachStdout", 1, "AttachStderr", 1,
                          "AttachStdin", x->stdin_data != NULL, "Tty", 0);

    if (b == NULL || !add_strv(b, "Cmd", x->argv) ||
        (x->env != NULL && !add_strv(b, "Env", x->env)) ||
        (x->workdir != NULL &&
         json_object_set_new(b, "WorkingDir", json_string(x->workdir)) != 0) ||
        (x->user != NULL &&
         json_object_set_new(b, "User", json_string(x->user)) != 0)) {
        json_decref(b);
        return NULL;
    }
    return b;
}

#define EXEC_START_BODY "{\"Detach\":false,\"Tty\":false}"

/* State of an exec stream read through libcurl. */
typedef struct {
    docker_demux_t dm;
    const docker_exec_t *x;
    CURL *h;
    long status;
    bool bad;         /* the demultiplexer refused the stream */
    membuf_t errtext; /* body of an error answer */
} curl_stream_t;

static size_t curl_stream_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
    curl_stream_t *s = ud;
    size_t n = size * nmemb;

    if (s->status == 0)
        curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &s->status);
    if (s->status == 200 || s->status == 101) {
        if (!docker_demux_feed(&s->dm, ptr, n, s->x->on_output, s->x->ctx)) {
            s->bad = true;
            return 0;
        }
        return n;
    }
    membuf_add(&s->errtext, ptr, n);  /* keep what fits */
    return n;
}

/* Start exec eid without stdin and stream its output through libcurl. */
static docker_err_t exec_stream_curl(docker_t *d, const char *eid,
                                     const docker_exec_t *x)
{
    curl_stream_t s;
    struct curl_slist *hdrs = NULL;
    docker_err_t rc = DOCKER_ENOMEM;
    CURLM *m = NULL;
    CURL *h = NULL;
    char *url = NULL;
    bool added = false;
    CURLcode cc = CURLE_OK;
    int running = 1;

    memset(&s, 0, sizeof s);
    docker_demux_init(&s.dm);
    membuf_init(&s.errtext, DOCKER_ERRTEXT_MAX);
    s.x = x;

    if (!docker_global_init())
        goto cleanup;
    url = str_printf("%s%s/exec/%s/start", d->base_url, d->prefix, eid);
    h = curl_easy_init();
    m = curl_multi_init();
    hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    if (url == NULL || h == NULL || m == NULL || hdrs == NULL)
        goto cleanup;
    s.h = h;
    if (base_setup(d, h, url, NULL) != DOCKER_OK)
        goto cleanup;
    cc |= curl_easy_setopt(h, CURLOPT_POSTFIELDS, EXEC_START_BODY);
    cc |= curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    cc |= curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
    cc |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, curl_stream_write);
    cc |= curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    if (cc != CURLE_OK || curl_multi_add_handle(m, h) != CURLM_OK)
        goto cleanup;
    added = true;

    long last = now_ms();
    for (;;) {
        int events = 0;
        if (curl_multi_perform(m, &running) != CURLM_OK) {
            rc = DOCKER_ECONNECT;
            goto cleanup;
        }
        if (running == 0)
            break;
        if (curl_multi_poll(m, NULL, 0, DOCKER_CANCEL_MS, &events) != CURLM_OK) {
            rc = DOCKER_ECONNECT;
            goto cleanup;
        }
        long t = now_ms();
        if (events == 0 || t - last >= DOCKER_CANCEL_MS) {
            last = t;
            if (is_cancelled(x)) {
                rc = DOCKER_ECANCELLED;
                goto cleanup;
            }
        }
    }

    CURLMsg *msg;
    int left;
    cc = CURLE_FAILED_INIT;
    while ((msg = curl_multi_info_read(m, &left)) != NULL)
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == h)
            cc = msg->data.result;
    if (s.bad)
        rc = DOCKER_EPROTO;
    else if (cc == CURLE_OUT_OF_MEMORY)
        rc = DOCKER_ENOMEM;
    else if (cc != CURLE_OK)
        rc = DOCKER_ECONNECT;
    else {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &s.status);
        rc = s.status == 101 ? DOCKER_OK : status_err(s.status);
    }

cleanup:
    if (added)
        curl_multi_remove_handle(m, h);
    curl_easy_cleanup(h);
    curl_multi_cleanup(m);
    curl_slist_free_all(hdrs);
    membuf_free(&s.errtext);
    free(url);
    return rc;
}

/* Connect a plain stream socket to the daemon; -1 on failure. */
static int raw_connect(const docker_t *d)
{
    int fd = -1;

    if (d->sock_path != NULL) {
        struct sockaddr_un sa;
        memset(&sa, 0, sizeof sa);
        sa.sun_family = AF_UNIX;
        memcpy(sa.sun_path, d->sock_path, strlen(d->sock_path) + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        /* A local connect completes at once; go non-blocking after it. */
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
            close(fd);
            return -1;
        }
        return fd;
    }

    struct addrinfo hints, *res = NULL, *ai;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(d->tcp_node, d->tcp_port, &hints, &res) != 0)
        return -1;
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        if (errno == EINPROGRESS) {
            struct pollfd p = { fd, POLLOUT, 0 };
            int soerr = 0;
            socklen_t sl = sizeof soerr;
            if (poll(&p, 1, (int)DOCKER_CONNECT_S * 1000) == 1 &&
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0)
                break;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

/* Send all of buf on a non-blocking socket, checking cancel while it waits. */
static docker_err_t raw_send_all(int fd, const char *buf, size_t len,
                                 const docker_exec_t *x)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return DOCKER_ECONNECT;
        struct pollfd p = { fd, POLLOUT, 0 };
        if (poll(&p, 1, DOCKER_CANCEL_MS) == 0 && is_cancelled(x))
            return DOCKER_ECANCELLED;
    }
    return DOCKER_OK;
}

/* Read the response head of a hand-made exec start into head (which also
 * gets the stream bytes that came with it).  Sets *head_len and *body_at. */
static docker_err_t raw_read_head(int fd, const docker_exec_t *x, char *head,
                                  size_t *head_len, size_t *body_at, long *status)
{
    size_t have = 0;
    long last = now_ms();

    for (;;) {
        ssize_t n = recv(fd, head + have, DOCKER_HEAD_MAX - 1 - have, 0);
        if (n > 0) {
            have += (size_t)n;
            head[have] = '\0';
            char *end = memmem(head, have, "\r\n\r\n", 4);
            if (end != NULL) {
                int maj, min;
                if (sscanf(head, "HTTP/%d.%d %ld", &maj, &min, status) != 3)
                    return DOCKER_EPROTO;
                *head_len = have;
                *body_at = (size_t)(end - head) + 4;
                return DOCKER_OK;
            }
            if (have == DOCKER_HEAD_MAX - 1)
                return DOCKER_EPROTO;
            continue;
        }
        if (n == 0)
            return DOCKER_ECONNECT;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return DOCKER_ECONNECT;
        struct pollfd p = { fd, POLLIN, 0 };
        int r = poll(&p, 1, DOCKER_CANCEL_MS);
        long t = now_ms();
        if (r == 0 || t - last >= DOCKER_CANCEL_MS) {
            last = t;
            if (is_cancelled(x))
                return DOCKER_ECANCELLED;
        }
    }
}

/* Send a hand-made request that upgrades the connection to a raw stream
 * (exec start, attach) and read the answer's head into buf (at least
 * DOCKER_HEAD_MAX).  On DOCKER_OK *fd is the connected socket and
 * buf[*body_at..*head_len) the stream bytes that came with the head. */
static docker_err_t raw_upgrade(docker_t *d, const char *req, const docker_exec_t *x, char *buf,
                                int *fd, size_t *head_len, size_t *body_at)
{
    long status = 0;
    *fd = raw_connect(d);
    if (*fd < 0)
        return DOCKER_ECONNECT;
    docker_err_t rc = raw_send_all(*fd, req, strlen(req), x);
    if (rc == DOCKER_OK)
        rc = raw_read_head(*fd, x, buf, head_len, body_at, &status);
    if (rc == DOCKER_OK && status != 101 && status != 200) {
        rc = status_err(status);
        if (rc == DOCKER_OK)
            rc = DOCKER_EHTTP;
    }
    if (rc != DOCKER_OK) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}

/* Start exec eid with stdin over a plain socket: request by hand, response
 * head, then stdin out and output in at the same time, half-close once
 * stdin is sent, read until the daemon closes. */
static docker_err_t exec_stream_raw(docker_t *d, const char *eid,
                                    const docker_exec_t *x)
{
    docker_err_t rc = DOCKER_ENOMEM;
    docker_demux_t dm;
    char *req = NULL, *buf = NULL;
    size_t head_len = 0, body_at = 0, sent = 0;
    bool writing = true;
    int fd = -1;

    docker_demux_init(&dm);
    req = str_printf("POST %s/exec/%s/start HTTP/1.1\r\n"
                     "Host: %s\r\n"
                     "User-Agent: talkback\r\n"
                     "Content-Type: application/json\r\n"
                     "Connection: Upgrade\r\n"
                     "Upgrade: tcp\r\n"
                     "Content-Length: %zu\r\n"
                     "\r\n" EXEC_START_BODY,
                     d->prefix, eid, d->host_hdr, strlen(EXEC_START_BODY));
    buf = malloc(DOCKER_HEAD_MAX > DOCKER_IO_CHUNK ? DOCKER_HEAD_MAX : DOCKER_IO_CHUNK);
    if (req == NULL || buf == NULL)
        goto cleanup;

    rc = raw_upgrade(d, req, x, buf, &fd, &head_len, &body_at);
    if (rc != DOCKER_OK)
        goto cleanup;
    if (!docker_demux_feed(&dm, buf + body_at, head_len - body_at,
                           x->on_output, x->ctx)) {
        rc = DOCKER_EPROTO;
        goto cleanup;
    }

    long last = now_ms();
    for (;;) {
        if (writing && sent == x->stdin_len) {
            shutdown(fd, SHUT_WR);
            writing = false;
        }
        struct pollfd p = { fd, (short)(POLLIN | (writing ? POLLOUT : 0)), 0 };
        int r = poll(&p, 1, DOCKER_CANCEL_MS);
        if (r < 0 && errno != EINTR) {
            rc = DOCKER_ECONNECT;
            goto cleanup;
        }
        long t = now_ms();
        if (r == 0 || t - last >= DOCKER_CANCEL_MS) {
            last = t;
            if (is_cancelled(x)) {
                rc = DOCKER_ECANCELLED;
                goto cleanup;
            }
        }
        if (r <= 0)
            continue;

        if (writing && (p.revents & POLLOUT)) {
            size_t want = x->stdin_len - sent;
            if (want > DOCKER_IO_CHUNK)
                want = DOCKER_IO_CHUNK;
            ssize_t n = send(fd, (const char *)x->stdin_data + sent, want, MSG_NOSIGNAL);
            if (n > 0)
                sent += (size_t)n;
            else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                writing = false;  /* the process is gone; keep reading */
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = recv(fd, buf, DOCKER_IO_CHUNK, 0);
            if (n == 0)
                break;
            if (n < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                    continue;
                if (errno == ECONNRESET)
                    break;
                rc = DOCKER_ECONNECT;
                goto cleanup;
            }
            if (!docker_demux_feed(&dm, buf, (size_t)n, x->on_output, x->ctx)) {
                rc = DOCKER_EPROTO;
                goto cleanup;
            }
        }
    }
    rc = DOCKER_OK;

cleanup:
    if (fd >= 0)
        close(fd);
    free(buf);
    free(req);
    return rc;
}

/* docker_attach gives up on a daemon that does not answer within this. */
#define DOCKER_ATTACH_MS 5000

static bool attach_expired(void *ctx)
{
    return now_ms() >= *(const long *)ctx;
}

docker_err_t docker_attach(docker_t *d, const char *id, int *fd_out, char **early, size_t *early_len)
{
    docker_err_t rc = DOCKER_ENOMEM;
    char *cid = NULL, *req = NULL, *buf = NULL;
    size_t head_len = 0, body_at = 0;
    long deadline = now_ms() + DOCKER_ATTACH_MS;
    docker_exec_t x = { .cancelled = attach_expired, .ctx = &deadline };
    int fd = -1;

    *fd_out = -1;
    *early = NULL;
    *early_len = 0;
    if (d == NULL || id == NULL || id[0] == '\0')
        return DOCKER_EARG;
    cid = path_escape(id);
    if (cid == NULL)
        goto cleanup;
    req = str_printf("POST %s/containers/%s/attach?stream=1&stdin=1&stdout=1&stderr=1 HTTP/1.1\r\n"
                     "Host: %s\r\n"
                     "User-Agent: talkback\r\n"
                     "Connection: Upgrade\r\n"
                     "Upgrade: tcp\r\n"
                     "\r\n",
                     d->prefix, cid, d->host_hdr);
    buf = malloc(DOCKER_HEAD_MAX);
    if (req == NULL || buf == NULL)
        goto cleanup;
    rc = raw_upgrade(d, req, &x, buf, &fd, &head_len, &body_at);
    if (rc == DOCKER_ECANCELLED)
        rc = DOCKER_ECONNECT;
    if (rc != DOCKER_OK)
        goto cleanup;
    if (head_len > body_at) {
        *early = malloc(head_len - body_at);
        if (*early == NULL) {
            rc = DOCKER_ENOMEM;
            goto cleanup;
        }
        memcpy(*early, buf + body_at, head_len - body_at);
        *early_len = head_len - body_at;
    }
    *fd_out = fd;
    fd = -1;
    rc = DOCKER_OK;

cleanup:
    if (fd >= 0)
        close(fd);
    free(buf);
    free(req);
    free(cid);
    return rc;
}

/* GET /exec/{eid}/json until it tells the exit code; Docker may record it
 * a moment after the stream has ended. */
static docker_err_t exec_exit_code(docker_t *d, const char *eid, int *exit_code)
{
    char *path = str_printf("/exec/%s/json", eid);
    long delay = DOCKER_EXIT_FIRST_US, waited = 0;
    docker_err_t rc = DOCKER_OK;

    if (path == NULL)
        return DOCKER_ENOMEM;
    for (;;) {
        json_t *ans = NULL;
        docker_err_t r = docker_call(d, "GET", path, NULL, NULL, &ans);
        if (r == DOCKER_OK) {
            json_t *code = json_object_get(ans, "ExitCode");
            if (json_is_integer(code) && !json_is_true(json_object_get(ans, "Running"))) {
                *exit_code = (int)json_integer_value(code);
                json_decref(ans);
                break;
            }
        }
        json_decref(ans);
        if (r == DOCKER_ECONNECT || r == DOCKER_ENOMEM) {
            rc = r;
            break;
        }
        if (r != DOCKER_OK || waited >= DOCKER_EXIT_TOTAL_US)
            break;  /* Docker does not say: -1 */
        sleep_us(delay);
        waited += delay;
        delay *= 2;
    }
    free(path);
    return rc;
}

docker_err_t docker_exec(docker_t *d, const char *id, const docker_exec_t *x,
                         int *exit_code)
{
    docker_err_t rc;
    json_t *body = NULL, *ans = NULL;
    char *cid = NULL, *path = NULL, *eid = NULL;
    int code = -1;

    if (exit_code != NULL)
        *exit_code = -1;
    if (d == NULL || id == NULL || id[0] == '\0' || x == NULL || x->argv == NULL ||
        x->argv[0] == NULL || (x->stdin_data == NULL && x->stdin_len > 0))
        return DOCKER_EARG;

    body = exec_body(x);
    if (body == NULL) {
        rc = DOCKER_EARG;  /* almost always text that is not UTF-8 */
        goto cleanup;
    }
    rc = DOCKER_ENOMEM;
    cid = path_escape(id);
    if (cid == NULL || (path = str_printf("/containers/%s/exec", cid)) == NULL)
        goto cleanup;
    rc = docker_call(d, "POST", path, body, NULL, &ans);
    if (rc != DOCKER_OK)
        goto cleanup;
    const char *raw_eid = json_string_value(json_object_get(ans, "Id"));
    if (raw_eid == NULL || raw_eid[0] == '\0') {
        rc = DOCKER_EPROTO;
        goto cleanup;
    }
    eid = path_escape(raw_eid);
    if (eid == NULL) {
        rc = DOCKER_ENOMEM;
        goto cleanup;
    }

    if (x->stdin_data != NULL)
        rc = exec_stream_raw(d, eid, x);
    else
        rc = exec_stream_curl(d, eid, x);
    if (rc != DOCKER_OK)
        goto cleanup;
    rc = exec_exit_code(d, eid, &code);
    if (exit_code != NULL)
        *exit_code = code;

cleanup:
    json_decref(ans);
    json_decref(body);
    free(eid);
    free(path);
    free(cid);
    return rc;
}

/* ---- files -------------------------------------------------------------- */

docker_err_t docker_put_file(docker_t *d, const char *id, const char *abspath,
                             const void *data, size_t len, unsigned mode, int64_t mtime,
                             long *status, json_t **out)
{
    docker_err_t rc = DOCKER_ENOMEM;
    char *tar = NULL, *cid = NULL, *path = NULL;
    size_t tar_len = 0, name_len;
    const char *name;

    if (status != NULL)
        *status = 0;
    if (out != NULL)
        *out = NULL;
    if (d == NULL || id == NULL || id[0] == '\0' || abspath == NULL ||
        abspath[0] != '/' || (data == NULL && len > 0))
        return DOCKER_EARG;
    name = abspath + strspn(abspath, "/");
    name_len = strlen(name);
    if (name_len == 0 || name[name_len - 1] == '/')
        return DOCKER_EARG;

    tar = docker_tar_file(name, data, len, mode, mtime ? mtime : (int64_t)time(NULL), &tar_len);
    cid = path_escape(id);
    if (tar == NULL || cid == NULL)
        goto cleanup;
    path = str_printf("/containers/%s/archive?path=%%2F", cid);
    if (path == NULL)
        goto cleanup;
    rc = docker_call_raw(d, "PUT", path, "application/x-tar", tar, tar_len,
                         status, out);

cleanup:
    free(path);
    free(cid);
    free(tar);
    return rc;
}

docker_err_t docker_get_file(docker_t *d, const char *id, const char *abspath, size_t max,
                             char **data, size_t *len, int64_t *mtime)
{
    char curl_err[CURL_ERROR_SIZE];
    char *cid = NULL, *cpath = NULL, *full = NULL;
    membuf_t resp;
    long st = 0;
    docker_err_t rc = DOCKER_ENOMEM;

    *data = NULL;
    *len = 0;
    if (mtime != NULL)
        *mtime = 0;
    if (d == NULL || id == NULL || abspath == NULL || abspath[0] != '/')
        return DOCKER_EARG;
    /* The answer is a tar of the one file: its header plus content. */
    membuf_init(&resp, max + 8192);
    cid = path_escape(id);
    cpath = path_escape(abspath);
    if (cid == NULL || cpath == NULL)
        goto cleanup;
    full = str_printf("%s/containers/%s/archive?path=%s", d->prefix, cid, cpath);
    if (full == NULL)
        goto cleanup;
    request_t rq = { "GET", full, NULL, NULL, 0, NULL };
    rc = perform(d, &rq, &st, &resp, curl_err);
    if (rc == DOCKER_OK) {
        const char *p;
        size_t n;
        if (!docker_tar_first(resp.data, resp.len, &p, &n, mtime)) {
            rc = DOCKER_EPROTO;
        } else if ((*data = malloc(n + 1)) == NULL) {
            rc = DOCKER_ENOMEM;
        } else {
            memcpy(*data, p, n);
            (*data)[n] = '\0';
            *len = n;
        }
    }
cleanup:
    membuf_free(&resp);
    free(full);
    free(cpath);
    free(cid);
    return rc;
}
