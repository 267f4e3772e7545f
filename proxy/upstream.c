/* upstream.c -- one request to the model server, in its own thread (see
 * upstream.h).
 *
 * Reading order: process-wide set-up; the object and its references;
 * waking the reader; libcurl's callbacks (headers, body, progress); the
 * worker thread; what the HTTP side calls (decide, wait, read, cancel).
 *
 * One mutex guards the shared state; the condition variable wakes the
 * worker (program decided, queue drained, cancelled) and a mailbox
 * (common/mailbox.h) wakes the reader, which polls its descriptor together
 * with the client's socket.  The bytes themselves stay in a queue of their
 * own, not in the mailbox: it is bounded (UPSTREAM_QUEUE_MAX), so a client
 * that reads slowly slows the transfer down instead of growing memory, and
 * the reader takes from it as much as its buffer holds, not a post at a
 * time.
 */
#include "proxy/upstream.h"

#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mailbox.h"
#include "common/textbuf.h"

#define UPSTREAM_QUEUE_MAX (4u << 20)
#define UPSTREAM_POLL_MS   500

/* ---- the upstream URL ------------------------------------------------------------- */

const char *upstream_url_strerror(upstream_url_err_t e)
{
    switch (e) {
    case UPSTREAM_URL_OK: return "usable";
    case UPSTREAM_URL_NOT_ORIGIN: return "the request-target must be a path that starts with /";
    case UPSTREAM_URL_BAD_BYTE:
        return "the request-target holds a control byte, a space, '#', '\\' or a non-ASCII byte";
    case UPSTREAM_URL_DOT_SEGMENT: return "the request-target holds a . or .. path segment";
    case UPSTREAM_URL_NOMEM: return "the upstream URL could not be built";
    }
    return "unusable";
}

/* Check an origin-form target: "/" first, printable ASCII, no '#', no
 * '\\', and no "." / ".." segment in the path (before any '?'). */
static upstream_url_err_t upstream_target_check(const char *t)
{
    if (!t || t[0] != '/')
        return UPSTREAM_URL_NOT_ORIGIN;
    for (const char *p = t; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f || *p == '#' || *p == '\\')
            return UPSTREAM_URL_BAD_BYTE;
    size_t plen = strcspn(t, "?");
    for (size_t i = 0; i < plen; i++) {
        if (t[i] != '/')
            continue;
        size_t n = strcspn(t + i + 1, "/?");
        if ((n == 1 && t[i + 1] == '.') || (n == 2 && t[i + 1] == '.' && t[i + 2] == '.'))
            return UPSTREAM_URL_DOT_SEGMENT;
    }
    return UPSTREAM_URL_OK;
}

/* The root's path (without its trailing '/') followed by the target's
 * path; malloc'ed. */
static char *upstream_join_path(CURLU *u, const char *target, size_t tlen)
{
    char *rp = NULL;
    if (curl_url_get(u, CURLUPART_PATH, &rp, 0) != CURLUE_OK)
        rp = NULL;
    size_t rl = rp ? strlen(rp) : 0;
    while (rl > 0 && rp[rl - 1] == '/')
        rl--;
    char *path = malloc(rl + tlen + 1);
    if (path) {
        if (rl)
            memcpy(path, rp, rl);
        memcpy(path + rl, target, tlen);
        path[rl + tlen] = '\0';
    }
    curl_free(rp);
    return path;
}

upstream_url_err_t upstream_url(const char *root, const char *target, char **out)
{
    *out = NULL;
    upstream_url_err_t e = upstream_target_check(target);
    if (e != UPSTREAM_URL_OK)
        return e;
    CURLU *u = curl_url();
    if (!u)
        return UPSTREAM_URL_NOMEM;
    const char *q = strchr(target, '?');
    size_t tlen = q ? (size_t)(q - target) : strlen(target);
    char *path = NULL, *url = NULL;
    e = UPSTREAM_URL_NOMEM;
    if (curl_url_set(u, CURLUPART_URL, root, 0) != CURLUE_OK)
        goto done;
    path = upstream_join_path(u, target, tlen);
    if (!path || curl_url_set(u, CURLUPART_PATH, path, 0) != CURLUE_OK ||
        curl_url_set(u, CURLUPART_QUERY, q && q[1] ? q + 1 : NULL, 0) != CURLUE_OK ||
        curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK)
        goto done;
    *out = strdup(url);
    e = *out ? UPSTREAM_URL_OK : UPSTREAM_URL_NOMEM;
done:
    curl_free(url);
    free(path);
    curl_url_cleanup(u);
    return e;
}

/* ---- process-wide -------------------------------------------------------------- */

static CURLSH *upstream_share;
static pthread_mutex_t upstream_share_mu[CURL_LOCK_DATA_LAST];
static atomic_bool upstream_stopping;
static atomic_int upstream_active; /* worker threads still running */

static void upstream_share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *u)
{
    (void)h, (void)a, (void)u;
    pthread_mutex_lock(&upstream_share_mu[d]);
}

static void upstream_share_unlock(CURL *h, curl_lock_data d, void *u)
{
    (void)h, (void)u;
    pthread_mutex_unlock(&upstream_share_mu[d]);
}

int upstream_global_init(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return -1;
    atomic_init(&upstream_stopping, false);
    atomic_init(&upstream_active, 0);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&upstream_share_mu[i], NULL);
    /* Keep connections to the model server open between requests. */
    upstream_share = curl_share_init();
    if (upstream_share) {
        curl_share_setopt(upstream_share, CURLSHOPT_LOCKFUNC, upstream_share_lock);
        curl_share_setopt(upstream_share, CURLSHOPT_UNLOCKFUNC, upstream_share_unlock);
        curl_share_setopt(upstream_share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
        curl_share_setopt(upstream_share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    }
    return 0;
}

void upstream_shutdown(void)
{
    atomic_store(&upstream_stopping, true);
}

void upstream_global_cleanup(void)
{
    /* Workers notice upstream_stopping within a poll slice. */
    for (int i = 0; i < 300 && atomic_load(&upstream_active) > 0; i++)
        usleep(10 * 1000);
    if (atomic_load(&upstream_active) > 0) {
        log_warn("%d transfers still running at exit", atomic_load(&upstream_active));
        return; /* leave libcurl to the exit rather than pull it from under them */
    }
    if (upstream_share && curl_share_cleanup(upstream_share) == CURLSHE_OK)
        upstream_share = NULL;
    curl_global_cleanup();
}

/* ---- the object ------------------------------------------------------------------- */

typedef struct {
    char *name, *value;
} upstream_header_t;

struct upstream {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;
    mailbox_t *wake;     /* worker -> reader: only kicks, no items */
    bool reader_waiting; /* a kick is wanted */
    atomic_bool cancelled;
    int client_fd;

    /* the request (worker only) */
    char *url, *method, *body;
    size_t body_len;
    struct curl_slist *headers;
    long connect_timeout_s;

    /* the decision */
    bool decided;
    repair_program_t *program;

    /* the answer */
    bool head_seen; /* status line and headers complete (worker) */
    bool ready;     /* the HTTP side may answer */
    bool done;      /* the transfer ended */
    bool failed;    /* ... and broke off */
    long status;
    bool event_stream;
    upstream_mode_t mode;
    upstream_header_t *hdr;
    size_t nhdr, caphdr;
    char error[CURL_ERROR_SIZE + 128];

    CURL *curl;        /* worker only */
    CURLM *multi;      /* while the transfer runs; for curl_multi_wakeup */
    repair_sse_t *sse; /* worker only */
    textbuf_t whole;   /* JSON mode: the answer (worker, then reader) */
    textbuf_t queue;   /* streaming modes: bytes for the reader */
    size_t qoff;
};

static void upstream_headers_clear(upstream_t *u)
{
    for (size_t i = 0; i < u->nhdr; i++) {
        free(u->hdr[i].name);
        free(u->hdr[i].value);
    }
    u->nhdr = 0;
}

static void upstream_free(upstream_t *u)
{
    upstream_headers_clear(u);
    free(u->hdr);
    free(u->url);
    free(u->method);
    free(u->body);
    curl_slist_free_all(u->headers);
    if (u->program) {
        repair_program_free(u->program);
        free(u->program);
    }
    repair_sse_free(&u->sse);
    textbuf_free(&u->whole);
    textbuf_free(&u->queue);
    mailbox_destroy(&u->wake);
    pthread_cond_destroy(&u->cv);
    pthread_mutex_destroy(&u->mu);
    free(u);
}

upstream_t *upstream_ref(upstream_t *u)
{
    pthread_mutex_lock(&u->mu);
    u->refs++;
    pthread_mutex_unlock(&u->mu);
    return u;
}

void upstream_release(upstream_t **up)
{
    if (!up || !*up)
        return;
    upstream_t *u = *up;
    *up = NULL;
    pthread_mutex_lock(&u->mu);
    int left = --u->refs;
    pthread_mutex_unlock(&u->mu);
    if (left == 0)
        upstream_free(u);
}

/* ---- waking the reader (mutex held) ----------------------------------------------------- */

static void upstream_wake_locked(upstream_t *u)
{
    if (u->reader_waiting) {
        u->reader_waiting = false;
        mailbox_kick(u->wake);
    }
}

static void upstream_cancel_locked(upstream_t *u)
{
    atomic_store(&u->cancelled, true);
    pthread_cond_broadcast(&u->cv);
    if (u->multi)
        curl_multi_wakeup(u->multi);
}

/* ---- libcurl callbacks (worker thread) ------------------------------------------------ */

static size_t upstream_on_header(char *p, size_t size, size_t n, void *cls)
{
    upstream_t *u = cls;
    size_t len = size * n;
    if (atomic_load(&u->cancelled))
        return 0;
    if (u->head_seen)
        return len; /* trailers */
    size_t l = len;
    while (l && (p[l - 1] == '\n' || p[l - 1] == '\r'))
        l--;
    if (l >= 5 && memcmp(p, "HTTP/", 5) == 0) {
        /* a new status line: 100 Continue or a redirect came before */
        pthread_mutex_lock(&u->mu);
        upstream_headers_clear(u);
        pthread_mutex_unlock(&u->mu);
        return len;
    }
    const char *colon = memchr(p, ':', l);
    if (!colon || colon == p)
        return len;
    size_t nl = (size_t)(colon - p);
    const char *v = colon + 1;
    while (v < p + l && (*v == ' ' || *v == '\t'))
        v++;
    pthread_mutex_lock(&u->mu);
    if (u->nhdr == u->caphdr) {
        size_t ncap = u->caphdr ? u->caphdr * 2 : 16;
        upstream_header_t *nh = realloc(u->hdr, ncap * sizeof *nh);
        if (!nh) {
            pthread_mutex_unlock(&u->mu);
            return 0;
        }
        u->hdr = nh;
        u->caphdr = ncap;
    }
    char *name = strndup(p, nl), *value = strndup(v, (size_t)(p + l - v));
    if (name && value)
        u->hdr[u->nhdr++] = (upstream_header_t){ name, value };
    else {
        free(name);
        free(value);
    }
    pthread_mutex_unlock(&u->mu);
    return len;
}

static const char *upstream_find_header(const upstream_t *u, const char *name)
{
    const char *v = NULL;
    for (size_t i = 0; i < u->nhdr; i++)
        if (strcasecmp(u->hdr[i].name, name) == 0)
            v = u->hdr[i].value;
    return v;
}

/* The status and headers are in: pick the mode (mutex held; waits for the
 * program to be decided, which happens while curl connects). */
static void upstream_head_locked(upstream_t *u, CURL *c)
{
    u->head_seen = true;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &u->status);
    const char *ct = upstream_find_header(u, "Content-Type");
    const char *ce = upstream_find_header(u, "Content-Encoding");
    u->event_stream = ct && strncasecmp(ct, "text/event-stream", 17) == 0;
    while (!u->decided && !atomic_load(&u->cancelled))
        pthread_cond_wait(&u->cv, &u->mu);
    u->mode = UPSTREAM_PASS;
    if (u->program && u->status >= 200 && u->status < 300 &&
        (!ce || strcasecmp(ce, "identity") == 0)) {
        if (u->event_stream) {
            u->sse = repair_sse_new(u->program);
            if (u->sse)
                u->mode = UPSTREAM_SSE;
        } else if (ct && strstr(ct, "json")) {
            u->mode = UPSTREAM_JSON;
        }
    }
    if (u->mode != UPSTREAM_JSON) {
        u->ready = true;
        upstream_wake_locked(u);
    }
}

static size_t upstream_on_body(char *p, size_t size, size_t n, void *cls)
{
    upstream_t *u = cls;
    size_t len = size * n;
    if (atomic_load(&u->cancelled))
        return 0;
    if (!u->head_seen) {
        pthread_mutex_lock(&u->mu);
        upstream_head_locked(u, u->curl);
        pthread_mutex_unlock(&u->mu);
    }
    if (u->mode == UPSTREAM_JSON) {
        textbuf_append(&u->whole, p, len);
        return u->whole.oom ? 0 : len;
    }
    textbuf_t filtered;
    const char *out = p;
    size_t outlen = len;
    if (u->mode == UPSTREAM_SSE) {
        textbuf_init(&filtered);
        repair_sse_feed(u->sse, p, len, &filtered);
        out = filtered.buf;
        outlen = filtered.len;
    }
    pthread_mutex_lock(&u->mu);
    if (outlen) {
        textbuf_append(&u->queue, out, outlen);
        upstream_wake_locked(u);
    }
    while (u->queue.len - u->qoff > UPSTREAM_QUEUE_MAX && !atomic_load(&u->cancelled))
        pthread_cond_wait(&u->cv, &u->mu);
    bool oom = u->queue.oom || (u->mode == UPSTREAM_SSE && filtered.oom);
    pthread_mutex_unlock(&u->mu);
    if (u->mode == UPSTREAM_SSE)
        textbuf_free(&filtered);
    return oom || atomic_load(&u->cancelled) ? 0 : len;
}

static int upstream_on_progress(void *cls, curl_off_t dt, curl_off_t dn, curl_off_t ut,
                                curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    upstream_t *u = cls;
    return atomic_load(&u->cancelled) || atomic_load(&upstream_stopping);
}

/* ---- the worker thread ----------------------------------------------------------------- */

static void upstream_set_method(upstream_t *u, CURL *c)
{
    if (strcmp(u->method, "HEAD") == 0) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
        return;
    }
    if (u->body_len || strcmp(u->method, "POST") == 0) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, u->body ? u->body : "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)u->body_len);
    } else {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    }
    if (strcmp(u->method, "GET") != 0 && strcmp(u->method, "POST") != 0)
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, u->method);
}

/* The transfer ended (mutex held): finish the filter, say why it failed. */
static void upstream_finish_locked(upstream_t *u, CURL *c, CURLcode rc, const char *errbuf)
{
    if (!u->head_seen && rc == CURLE_OK)
        upstream_head_locked(u, c);
    if (rc != CURLE_OK) {
        u->failed = true;
        snprintf(u->error, sizeof u->error, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
    }
    if (u->mode == UPSTREAM_SSE) {
        textbuf_t tail;
        textbuf_init(&tail);
        repair_sse_end(u->sse, &tail);
        textbuf_append(&u->queue, tail.buf ? tail.buf : "", tail.len);
        textbuf_free(&tail);
        if (repair_sse_repaired(u->sse))
            log_info("appended the program (%s) to a streamed reply",
                     u->program->tag[0] ? u->program->tag : "no language tag");
    }
    if (u->failed && u->event_stream && u->head_seen && !atomic_load(&u->cancelled)) {
        /* An SSE answer that broke off ends with an error event the
         * client's SDK reports, not with a silently short reply. */
        textbuf_t ev;
        textbuf_init(&ev);
        textbuf_puts(&ev, "\n\ndata: {\"error\":{\"message\":\"talkback-proxy: the model server's "
                          "stream broke off: ");
        for (const char *s = u->error; *s; s++) {
            if (*s == '"' || *s == '\\')
                textbuf_printf(&ev, "\\%c", *s);
            else if ((unsigned char)*s < 0x20)
                textbuf_printf(&ev, "\\u%04x", (unsigned char)*s);
            else
                textbuf_append(&ev, s, 1);
        }
        textbuf_puts(&ev, "\",\"type\":\"upstream_error\",\"code\":502}}\n\n");
        textbuf_append(&u->queue, ev.buf ? ev.buf : "", ev.len);
        textbuf_free(&ev);
        u->failed = false;
        log_warn("the model server's stream broke off: %s", u->error);
    }
    if (u->mode == UPSTREAM_JSON && !u->failed) {
        char *fixed = NULL;
        size_t fixed_len = 0;
        if (repair_json(u->whole.buf ? u->whole.buf : "", u->whole.len, u->program, &fixed,
                        &fixed_len) == 1) {
            textbuf_free(&u->whole);
            textbuf_append(&u->whole, fixed, fixed_len);
            free(fixed);
            log_info("appended the program (%s) to a reply",
                     u->program->tag[0] ? u->program->tag : "no language tag");
        }
    }
    u->done = true;
    u->ready = true;
    upstream_wake_locked(u);
    pthread_cond_broadcast(&u->cv);
}

/* curl_easy_perform, but through a one-handle multi so that a cancel can
 * wake the wait at once (curl_multi_wakeup) instead of at the next
 * progress callback, up to a second later. */
static CURLcode upstream_perform(upstream_t *u, CURL *c)
{
    CURLM *m = curl_multi_init();
    if (!m || curl_multi_add_handle(m, c) != CURLM_OK) {
        if (m)
            curl_multi_cleanup(m);
        return curl_easy_perform(c);
    }
    pthread_mutex_lock(&u->mu);
    u->multi = m;
    pthread_mutex_unlock(&u->mu);
    CURLcode rc = CURLE_OK;
    int running = 1;
    for (;;) {
        if (curl_multi_perform(m, &running) != CURLM_OK) {
            rc = CURLE_FAILED_INIT;
            break;
        }
        if (!running)
            break;
        if (atomic_load(&u->cancelled) || atomic_load(&upstream_stopping)) {
            rc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        if (curl_multi_poll(m, NULL, 0, 1000, NULL) != CURLM_OK) {
            rc = CURLE_FAILED_INIT;
            break;
        }
    }
    int left;
    for (CURLMsg *msg; (msg = curl_multi_info_read(m, &left));)
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == c)
            rc = msg->data.result;
    pthread_mutex_lock(&u->mu);
    u->multi = NULL;
    pthread_mutex_unlock(&u->mu);
    curl_multi_remove_handle(m, c);
    curl_multi_cleanup(m);
    return rc;
}

static void *upstream_main(void *arg)
{
    upstream_t *u = arg;
    char errbuf[CURL_ERROR_SIZE] = "";
    CURLcode rc = CURLE_OUT_OF_MEMORY;
    CURL *c = curl_easy_init();
    u->curl = c;
    if (c) {
        curl_easy_setopt(c, CURLOPT_URL, u->url);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, u->headers);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, u->connect_timeout_s);
        curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, upstream_on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, u);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, upstream_on_body);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, u);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, upstream_on_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, u);
        if (upstream_share)
            curl_easy_setopt(c, CURLOPT_SHARE, upstream_share);
        upstream_set_method(u, c);
        rc = upstream_perform(u, c);
    }
    pthread_mutex_lock(&u->mu);
    upstream_finish_locked(u, c, rc, errbuf);
    pthread_mutex_unlock(&u->mu);
    if (c)
        curl_easy_cleanup(c);
    upstream_release(&u);
    atomic_fetch_sub(&upstream_active, 1);
    return NULL;
}

upstream_t *upstream_start(upstream_req_t *req)
{
    upstream_t *u = calloc(1, sizeof *u);
    if (!u || !(u->wake = mailbox_new(NULL))) {
        free(u);
        free(req->url);
        free(req->body);
        curl_slist_free_all(req->headers);
        memset(req, 0, sizeof *req);
        return NULL;
    }
    pthread_mutex_init(&u->mu, NULL);
    pthread_cond_init(&u->cv, NULL);
    atomic_init(&u->cancelled, false);
    u->client_fd = -1;
    u->refs = 2; /* the caller and the worker */
    u->url = req->url;
    u->headers = req->headers;
    u->body = req->body;
    u->body_len = req->body_len;
    u->connect_timeout_s = req->connect_timeout_s > 0 ? req->connect_timeout_s : 10;
    u->method = strdup(req->method);
    memset(req, 0, sizeof *req);
    textbuf_init(&u->whole);
    textbuf_init(&u->queue);

    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    atomic_fetch_add(&upstream_active, 1);
    int rc = u->method ? pthread_create(&t, &attr, upstream_main, u) : ENOMEM;
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        atomic_fetch_sub(&upstream_active, 1);
        upstream_free(u);
        return NULL;
    }
    return u;
}

/* ---- the HTTP side ------------------------------------------------------------------- */

void upstream_decide(upstream_t *u, repair_program_t *p)
{
    pthread_mutex_lock(&u->mu);
    u->program = p;
    u->decided = true;
    pthread_cond_broadcast(&u->cv);
    pthread_mutex_unlock(&u->mu);
}

void upstream_cancel(upstream_t *u)
{
    pthread_mutex_lock(&u->mu);
    upstream_cancel_locked(u);
    pthread_mutex_unlock(&u->mu);
}

/* Sleep until the worker wakes us, the client hangs up, or a slice passes.
 * Mutex held on entry and on return.  false: the client left. */
static bool upstream_wait_locked(upstream_t *u)
{
    u->reader_waiting = true;
    pthread_mutex_unlock(&u->mu);
    struct pollfd pf[2] = {
        { .fd = mailbox_fd(u->wake), .events = POLLIN },
        { .fd = u->client_fd, .events = POLLRDHUP },
    };
    int n = poll(pf, u->client_fd >= 0 ? 2 : 1, UPSTREAM_POLL_MS);
    mailbox_drain(u->wake, NULL, NULL);
    bool gone = n > 0 && u->client_fd >= 0 && (pf[1].revents & (POLLRDHUP | POLLHUP | POLLERR));
    pthread_mutex_lock(&u->mu);
    if (atomic_load(&upstream_stopping))
        gone = true;
    if (gone)
        upstream_cancel_locked(u);
    return !gone;
}

int upstream_wait_head(upstream_t *u, int client_fd)
{
    pthread_mutex_lock(&u->mu);
    u->client_fd = client_fd;
    int rc = 0;
    while (!u->ready) {
        if (!upstream_wait_locked(u)) {
            rc = -2;
            break;
        }
    }
    if (rc == 0 && u->failed && (!u->head_seen || u->mode == UPSTREAM_JSON))
        rc = -1;
    if (rc == -1 && !u->error[0])
        snprintf(u->error, sizeof u->error, "no answer");
    pthread_mutex_unlock(&u->mu);
    return rc;
}

long upstream_status(const upstream_t *u)
{
    return u->status;
}

upstream_mode_t upstream_mode(const upstream_t *u)
{
    return u->mode;
}

const char *upstream_error(const upstream_t *u)
{
    return u->error;
}

bool upstream_header(const upstream_t *u, size_t i, const char **name, const char **value)
{
    if (i >= u->nhdr)
        return false;
    *name = u->hdr[i].name;
    *value = u->hdr[i].value;
    return true;
}

const char *upstream_body(const upstream_t *u, size_t *len)
{
    *len = u->whole.len;
    return u->whole.buf ? u->whole.buf : "";
}

ssize_t upstream_read(upstream_t *u, char *buf, size_t max)
{
    pthread_mutex_lock(&u->mu);
    ssize_t rc;
    for (;;) {
        size_t avail = u->queue.len - u->qoff;
        if (avail) {
            size_t n = avail < max ? avail : max;
            memcpy(buf, u->queue.buf + u->qoff, n);
            u->qoff += n;
            if (u->qoff == u->queue.len) {
                u->queue.len = 0;
                u->qoff = 0;
            } else if (u->qoff > (1u << 16) && u->qoff * 2 > u->queue.len) {
                memmove(u->queue.buf, u->queue.buf + u->qoff, u->queue.len - u->qoff);
                u->queue.len -= u->qoff;
                u->qoff = 0;
            }
            pthread_cond_broadcast(&u->cv);
            rc = (ssize_t)n;
            break;
        }
        if (u->done) {
            rc = u->failed ? -1 : 0;
            break;
        }
        if (atomic_load(&u->cancelled) || !upstream_wait_locked(u)) {
            rc = -1;
            break;
        }
    }
    pthread_mutex_unlock(&u->mu);
    return rc;
}
