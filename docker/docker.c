/* docker.c -- the Docker Engine API over libcurl: calls, put_file.
 *
 * One docker_t holds the daemon's address (a unix socket or tcp://H:P) and
 * the API version negotiated once with GET /_ping; it never changes after
 * docker_new, so any number of threads may share it.  What may not be
 * shared is a curl easy handle, so every thread gets its own, kept in a
 * pthread key (freed when the thread exits) and reset between calls; the
 * handle keeps its connection cache, so a thread's calls reuse one
 * connection to the daemon.
 *
 * Exec and attach, the calls that stream, are in exec.c; what both files
 * share is in docker_int.h.
 *
 * Docker answers errors as JSON {"message": ...} with an HTTP status, which
 * libcurl reports as success; the status is what decides the result here.
 */
#include "docker/docker.h"
#include "docker/docker_int.h"

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

/* ---- small helpers ------------------------------------------------------ */

const char *docker_strerror(docker_err_t err)
{
    switch (err) {
    case DOCKER_OK: return "success";
    case DOCKER_ECONNECT: return "could not reach the Docker daemon";
    case DOCKER_EHTTP: return "the Docker daemon answered with an error";
    case DOCKER_ENOTFOUND: return "not found";
    case DOCKER_ECONFLICT: return "conflict";
    case DOCKER_EPROTO: return "could not understand the Docker daemon";
    case DOCKER_ENOMEM: return "out of memory";
    case DOCKER_ECANCELLED: return "cancelled";
    case DOCKER_EARG: return "bad argument";
    }
    return "unknown error";
}

char *docker_printf(const char *fmt, ...)
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
char *docker_path_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    char *out = malloc(3 * n + 1), *p = out;

    if (out == NULL)
        return NULL;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~') {
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

docker_err_t docker_status_err(long status)
{
    if ((status >= 200 && status < 300) || status == 304)
        return DOCKER_OK;
    if (status == 404)
        return DOCKER_ENOTFOUND;
    if (status == 409)
        return DOCKER_ECONFLICT;
    return DOCKER_EHTTP;
}

/* libcurl's write callback: an answer into a bounded textbuf_t (0, which
 * stops the transfer, once it is full or out of memory). */
static size_t answer_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
    return textbuf_append(ud, ptr, size * nmemb) == 0 ? size * nmemb : 0;
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

bool docker_global_init(void)
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
docker_err_t docker_base_setup(const docker_t *d, CURL *h, const char *url, char *curl_err)
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
    for (; i < len && n + 1 < sizeof ah->value && buf[i] != '\r' && buf[i] != '\n' && buf[i] != ' ';
         i++)
        ah->value[n++] = buf[i];
    ah->value[n] = '\0';
    return len;
}

typedef struct {
    const char *method;
    const char *path;  /* full path, version prefix included */
    const char *ctype; /* content type of body, or NULL */
    const void *body;  /* or NULL */
    size_t len;
    api_header_t *api; /* or NULL: collect Api-Version */
} request_t;

/* Perform one request on the thread's handle.  *status gets the HTTP
 * status (0 if none); resp gets the body.  curl_err (CURL_ERROR_SIZE) gets
 * libcurl's message when the daemon was not reached. */
static docker_err_t perform(const docker_t *d, const request_t *rq, long *status, textbuf_t *resp,
                            char *curl_err)
{
    struct curl_slist *hdrs = NULL, *tmp;
    char *url = NULL, *ctype = NULL;
    docker_err_t rc = DOCKER_ENOMEM;
    CURLcode cc = CURLE_OK;
    CURL *h;

    *status = 0;
    h = thread_handle();
    url = docker_printf("%s%s", d->base_url, rq->path);
    if (h == NULL || url == NULL)
        goto cleanup;
    if (docker_base_setup(d, h, url, curl_err) != DOCKER_OK)
        goto cleanup;

    /* No "Expect: 100-continue" round trip for large bodies. */
    if ((tmp = curl_slist_append(hdrs, "Expect:")) == NULL)
        goto cleanup;
    hdrs = tmp;
    if (rq->body != NULL) {
        ctype = docker_printf("Content-Type: %s", rq->ctype ? rq->ctype : "application/json");
        if (ctype == NULL || (tmp = curl_slist_append(hdrs, ctype)) == NULL)
            goto cleanup;
        hdrs = tmp;
    } else if ((tmp = curl_slist_append(hdrs, "Content-Type:")) == NULL) {
        goto cleanup; /* no form content type on an empty POST */
    } else {
        hdrs = tmp;
    }

    if (strcmp(rq->method, "GET") == 0) {
        cc |= curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (strcmp(rq->method, "POST") == 0 || strcmp(rq->method, "PUT") == 0) {
        cc |=
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(rq->body ? rq->len : 0));
        cc |= curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body ? rq->body : "");
        cc |= curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
    } else {
        cc |= curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
    }
    cc |= curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    cc |= curl_easy_setopt(h, CURLOPT_TIMEOUT, DOCKER_CALL_S);
    cc |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, answer_write);
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
        rc = docker_status_err(*status);
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
static json_t *answer_json(const textbuf_t *b, long status, docker_err_t rc)
{
    json_t *j = NULL;

    if (b->len > 0)
        j = json_loadb(b->buf, b->len, 0, NULL);
    if (j != NULL || rc == DOCKER_OK)
        return j;
    if (b->len > 0) {
        size_t n = b->len;
        while (n > 0 && (b->buf[n - 1] == '\n' || b->buf[n - 1] == '\r'))
            n--;
        j = json_pack("{s:s%}", "message", b->buf, n < 512 ? n : 512);
    }
    if (j == NULL) {
        char msg[64];
        snprintf(msg, sizeof msg, "HTTP status %ld", status);
        j = json_pack("{s:s}", "message", msg);
    }
    return j;
}

docker_err_t docker_call_raw(docker_t *d, const char *method, const char *path, const char *ctype,
                             const void *body, size_t len, long *status, json_t **out)
{
    char curl_err[CURL_ERROR_SIZE];
    char *full = NULL;
    textbuf_t resp;
    long st = 0;
    docker_err_t rc;

    textbuf_init_max(&resp, DOCKER_ANSWER_MAX);
    if (status != NULL)
        *status = 0;
    if (out != NULL)
        *out = NULL;
    if (d == NULL || method == NULL || path == NULL || path[0] != '/' || (body == NULL && len > 0))
        return DOCKER_EARG;

    full = docker_printf("%s%s", d->prefix, path);
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
    textbuf_free(&resp);
    free(full);
    return rc;
}

docker_err_t docker_call(docker_t *d, const char *method, const char *path, json_t *body,
                         long *status, json_t **out)
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
    rc = docker_call_raw(d, method, path, "application/json", text, text ? strlen(text) : 0, status,
                         out);
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
static docker_err_t parse_host(docker_t *d, const char *host, char *errbuf, size_t errlen)
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
    d->host_hdr = docker_printf(v6 ? "[%s]:%s" : "%s:%s", d->tcp_node, d->tcp_port);
    if (d->host_hdr == NULL)
        return DOCKER_ENOMEM;
    d->base_url = docker_printf("http://%s", d->host_hdr);
    return d->base_url ? DOCKER_OK : DOCKER_ENOMEM;
}

/* GET /_ping (unversioned) and read Api-Version; else GET /version. */
static docker_err_t negotiate(docker_t *d, char *errbuf, size_t errlen)
{
    char curl_err[CURL_ERROR_SIZE];
    api_header_t api = { "" };
    textbuf_t resp;
    json_t *ver = NULL;
    long st = 0;
    docker_err_t rc;

    textbuf_init_max(&resp, DOCKER_ANSWER_MAX);
    request_t ping = { "GET", "/_ping", NULL, NULL, 0, &api };
    rc = perform(d, &ping, &st, &resp, curl_err);
    if (rc == DOCKER_ECONNECT) {
        set_err(errbuf, errlen, "cannot reach Docker at %s: %s",
                d->sock_path ? d->sock_path : d->base_url, curl_err);
        goto cleanup;
    }
    if (rc == DOCKER_OK && version_ok(api.value))
        goto found;

    textbuf_free(&resp);
    request_t version = { "GET", "/version", NULL, NULL, 0, NULL };
    rc = perform(d, &version, &st, &resp, curl_err);
    if (rc == DOCKER_ECONNECT) {
        set_err(errbuf, errlen, "cannot reach Docker: %s", curl_err);
        goto cleanup;
    }
    if (rc == DOCKER_OK && resp.len > 0)
        ver = json_loadb(resp.buf, resp.len, 0, NULL);
    const char *v = json_string_value(json_object_get(ver, "ApiVersion"));
    if (rc != DOCKER_OK || v == NULL || strlen(v) >= sizeof api.value || !version_ok(v)) {
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
    textbuf_free(&resp);
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

/* ---- files -------------------------------------------------------------- */

docker_err_t docker_put_file(docker_t *d, const char *id, const char *abspath, const void *data,
                             size_t len, unsigned mode, int64_t mtime, long *status, json_t **out)
{
    docker_err_t rc = DOCKER_ENOMEM;
    char *tar = NULL, *cid = NULL, *path = NULL;
    size_t tar_len = 0, name_len;
    const char *name;

    if (status != NULL)
        *status = 0;
    if (out != NULL)
        *out = NULL;
    if (d == NULL || id == NULL || id[0] == '\0' || abspath == NULL || abspath[0] != '/' ||
        (data == NULL && len > 0))
        return DOCKER_EARG;
    name = abspath + strspn(abspath, "/");
    name_len = strlen(name);
    if (name_len == 0 || name[name_len - 1] == '/')
        return DOCKER_EARG;

    tar = docker_tar_file(name, data, len, mode, mtime ? mtime : (int64_t)time(NULL), &tar_len);
    cid = docker_path_escape(id);
    if (tar == NULL || cid == NULL)
        goto cleanup;
    path = docker_printf("/containers/%s/archive?path=%%2F", cid);
    if (path == NULL)
        goto cleanup;
    rc = docker_call_raw(d, "PUT", path, "application/x-tar", tar, tar_len, status, out);

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
    textbuf_t resp;
    long st = 0;
    docker_err_t rc = DOCKER_ENOMEM;

    *data = NULL;
    *len = 0;
    if (mtime != NULL)
        *mtime = 0;
    if (d == NULL || id == NULL || abspath == NULL || abspath[0] != '/')
        return DOCKER_EARG;
    /* The answer is a tar of the one file: its header plus content. */
    textbuf_init_max(&resp, max + 8192);
    cid = docker_path_escape(id);
    cpath = docker_path_escape(abspath);
    if (cid == NULL || cpath == NULL)
        goto cleanup;
    full = docker_printf("%s/containers/%s/archive?path=%s", d->prefix, cid, cpath);
    if (full == NULL)
        goto cleanup;
    request_t rq = { "GET", full, NULL, NULL, 0, NULL };
    rc = perform(d, &rq, &st, &resp, curl_err);
    if (rc == DOCKER_OK) {
        const char *p;
        size_t n;
        if (!docker_tar_first(resp.buf, resp.len, &p, &n, mtime)) {
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
    textbuf_free(&resp);
    free(full);
    free(cpath);
    free(cid);
    return rc;
}
