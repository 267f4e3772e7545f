/* exec.c -- Docker exec and attach: the calls that stream (see docker.h).
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
 */
#include "docker/docker.h"
#include "docker/docker_int.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* ---- small helpers ------------------------------------------------------ */

/* Monotonic milliseconds, for the cancel-check cadence. */
static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleep through signals, for the ExitCode back-off. */
static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Whether the caller wants this exec given up. */
static bool is_cancelled(const docker_exec_t *x)
{
    return x->cancelled != NULL && x->cancelled(x->ctx);
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
            return false; /* out of memory or not UTF-8 */
        }
    }
    return json_object_set_new(obj, key, arr) == 0;
}

static json_t *exec_body(const docker_exec_t *x)
{
    json_t *b = json_pack("{s:b, s:b, s:b, s:b}", "AttachStdout", 1, "AttachStderr", 1,
                          "AttachStdin", x->stdin_data != NULL, "Tty", 0);

    if (b == NULL || !add_strv(b, "Cmd", x->argv) ||
        (x->env != NULL && !add_strv(b, "Env", x->env)) ||
        (x->workdir != NULL &&
         json_object_set_new(b, "WorkingDir", json_string(x->workdir)) != 0) ||
        (x->user != NULL && json_object_set_new(b, "User", json_string(x->user)) != 0)) {
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
    bool bad;          /* the demultiplexer refused the stream */
    textbuf_t errtext; /* body of an error answer */
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
    textbuf_append(&s->errtext, ptr, n); /* up to its bound */
    return n;
}

/* Start exec eid without stdin and stream its output through libcurl.
 * It is long because it is one transfer in order -- set up the handle,
 * pump the multi loop with the cancel and deadline checks, read the
 * result, clean up on every path -- and cut, each part would take the
 * handle, the multi handle and the stream state as arguments. */
static docker_err_t exec_stream_curl(docker_t *d, const char *eid, const docker_exec_t *x)
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
    textbuf_init_max(&s.errtext, DOCKER_ERRTEXT_MAX);
    s.x = x;

    if (!docker_global_init())
        goto cleanup;
    url = docker_printf("%s%s/exec/%s/start", d->base_url, d->prefix, eid);
    h = curl_easy_init();
    m = curl_multi_init();
    hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    if (url == NULL || h == NULL || m == NULL || hdrs == NULL)
        goto cleanup;
    s.h = h;
    if (docker_base_setup(d, h, url, NULL) != DOCKER_OK)
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
        rc = s.status == 101 ? DOCKER_OK : docker_status_err(s.status);
    }

cleanup:
    if (added)
        curl_multi_remove_handle(m, h);
    curl_easy_cleanup(h);
    curl_multi_cleanup(m);
    curl_slist_free_all(hdrs);
    textbuf_free(&s.errtext);
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
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
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
static docker_err_t raw_send_all(int fd, const char *buf, size_t len, const docker_exec_t *x)
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
static docker_err_t raw_read_head(int fd, const docker_exec_t *x, char *head, size_t *head_len,
                                  size_t *body_at, long *status)
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
        rc = docker_status_err(status);
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
 * stdin is sent, read until the daemon closes.  It is long because the
 * poll loop's two directions (stdin out, output in) share one deadline and
 * one half-close state; split, they would pass that state back and forth. */
static docker_err_t exec_stream_raw(docker_t *d, const char *eid, const docker_exec_t *x)
{
    docker_err_t rc = DOCKER_ENOMEM;
    docker_demux_t dm;
    char *req = NULL, *buf = NULL;
    size_t head_len = 0, body_at = 0, sent = 0;
    bool writing = true;
    int fd = -1;

    docker_demux_init(&dm);
    req = docker_printf("POST %s/exec/%s/start HTTP/1.1\r\n"
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
    if (!docker_demux_feed(&dm, buf + body_at, head_len - body_at, x->on_output, x->ctx)) {
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
                writing = false; /* the process is gone; keep reading */
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

docker_err_t docker_attach(docker_t *d, const char *id, int *fd_out, char **early,
                           size_t *early_len)
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
    cid = docker_path_escape(id);
    if (cid == NULL)
        goto cleanup;
    req =
        docker_printf("POST %s/containers/%s/attach?stream=1&stdin=1&stdout=1&stderr=1 HTTP/1.1\r\n"
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
    char *path = docker_printf("/exec/%s/json", eid);
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
            break; /* Docker does not say: -1 */
        sleep_us(delay);
        waited += delay;
        delay *= 2;
    }
    free(path);
    return rc;
}

docker_err_t docker_exec(docker_t *d, const char *id, const docker_exec_t *x, int *exit_code)
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
        rc = DOCKER_EARG; /* almost always text that is not UTF-8 */
        goto cleanup;
    }
    rc = DOCKER_ENOMEM;
    cid = docker_path_escape(id);
    if (cid == NULL || (path = docker_printf("/containers/%s/exec", cid)) == NULL)
        goto cleanup;
    rc = docker_call(d, "POST", path, body, NULL, &ans);
    if (rc != DOCKER_OK)
        goto cleanup;
    const char *raw_eid = json_string_value(json_object_get(ans, "Id"));
    if (raw_eid == NULL || raw_eid[0] == '\0') {
        rc = DOCKER_EPROTO;
        goto cleanup;
    }
    eid = docker_path_escape(raw_eid);
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
