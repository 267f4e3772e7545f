/* conn.c -- one client connection of the Docker guard.
 *
 * One request per connection: read the head, match it against the rules,
 * read and check the body, find whose container it is about, then send
 * dockerd a head rebuilt from what was parsed (Connection: close, or
 * Upgrade for attach and exec start) and the checked body, and copy the
 * answer back (relay.c).  Nothing the client sends after its request
 * reaches dockerd, unless dockerd really handed the connection over (a
 * 101, or a 200 raw stream without framing, on attach or exec start:
 * response.h), when both ways are spliced; any other answer is relayed as
 * far as its framing goes under Connection: close, and the connection
 * ends.  A container list goes with the guard's own query and comes back
 * with only talkback's containers (list.h).  Refusals are 403 with a JSON
 * message, as Docker's own errors look, so clients show the sentence.
 */
#include "guard/conn.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/log.h"
#include "guard/list.h"
#include "guard/owner.h"
#include "guard/relay.h"
#include "guard/request.h"
#include "guard/rules.h"
#include "guard/splice.h"
#include "spec/sandbox.h"

#define GCONN_BODY_MAX   (1 << 20) /* a JSON body */
#define GCONN_TIMEOUT_S  30        /* to send a request head and body */
#define GCONN_LINGER_MS  500       /* to read what a client sent past its request */
#define GCONN_LINGER_MAX (256 << 10)

/* Answer status with {"message": "refused by the talkback Docker guard: ..."}. */
static void refuse(int cfd, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *j = json_pack("{s:s+}", "message",
                          status == 404 ? "" : "refused by the talkback Docker guard: ", msg);
    char *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    char head[256];
    const char *reason = status == 403   ? "Forbidden"
                         : status == 404 ? "Not Found"
                         : status == 502 ? "Bad Gateway"
                                         : "Bad Request";
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     status, reason, body ? strlen(body) : 0);
    gsplice_write(cfd, head, (size_t)n);
    if (body)
        gsplice_write(cfd, body, strlen(body));
    if (status == 404)
        log_debug("%d %s", status, msg);
    else
        log_warn("%d %s", status, msg);
    free(body);
}

/* Read the request head into buf (GREQ_HEAD_MAX + 1 bytes): *head_len is
 * its length without the blank line, *have all bytes read.  0 or -1. */
static int read_head(int fd, char *buf, size_t *head_len, size_t *have)
{
    *have = 0;
    for (;;) {
        ssize_t n = recv(fd, buf + *have, GREQ_HEAD_MAX - *have, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        size_t from = *have > 3 ? *have - 3 : 0;
        *have += (size_t)n;
        buf[*have] = '\0';
        char *end = memmem(buf + from, *have - from, "\r\n\r\n", 4);
        if (end) {
            *head_len = (size_t)(end - buf);
            return 0;
        }
        if (*have == GREQ_HEAD_MAX)
            return -1;
    }
}

/* Read a whole body of len bytes, of which the first `early` came with the
 * head.  malloc'ed, or NULL. */
static char *read_body(int fd, const char *early, size_t early_len, size_t len)
{
    char *b = malloc(len + 1);
    if (!b)
        return NULL;
    size_t have = early_len < len ? early_len : len;
    memcpy(b, early, have);
    while (have < len) {
        ssize_t n = recv(fd, b + have, len - have, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            free(b);
            return NULL;
        }
        have += (size_t)n;
    }
    return b;
}

/* Check a JSON body by route; the rebuilt body (compact JSON), or NULL. */
static char *check_body(const guard_t *g, const groute_t *rt, const char *b, size_t len,
                        json_t **checked, char *why, size_t whylen)
{
    json_t *j = NULL;
    switch (rt->body) {
    case GB_CREATE: j = gbody_create(b, len, &g->tpl, why, whylen); break;
    case GB_EXEC_CREATE: j = gbody_exec_create(b, len, why, whylen); break;
    case GB_EXEC_START: j = gbody_exec_start(b, len, why, whylen); break;
    case GB_NET_CREATE: j = gbody_net_create(b, len, &g->tpl, why, whylen); break;
    case GB_NET_CONNECT: j = gbody_net_attach(b, len, 0, why, whylen); break;
    case GB_NET_DISCONNECT: j = gbody_net_attach(b, len, 1, why, whylen); break;
    default: snprintf(why, whylen, "a body where none belongs"); return NULL;
    }
    if (!j)
        return NULL;
    *checked = j;
    return json_dumps(j, JSON_COMPACT);
}

/* The container the call is about must be talkback's: the path (or, for
 * connect/disconnect, the body's Container) is rewritten to its full id.
 * 0, or -1 after answering the client. */
static int check_owner(const guard_t *g, int cfd, const groute_t *rt, json_t *checked, char id[65])
{
    const char *ref = rt->id;
    gowner_t o;
    if (rt->body == GB_NET_CONNECT || rt->body == GB_NET_DISCONNECT) {
        ref = json_string_value(json_object_get(checked, "Container"));
        if (!ref || strlen(ref) > 128 ||
            strspn(ref, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
                strlen(ref) ||
            !*ref) {
            refuse(cfd, 403, "the network body names no container");
            return -1;
        }
        o = gowner_container(g->docker_socket, ref, id);
    } else if (rt->target == GT_EXEC) {
        o = gowner_exec(g->docker_socket, ref, id);
    } else if (rt->target == GT_CONTAINER) {
        o = gowner_container(g->docker_socket, ref, id);
    } else {
        return 0;
    }
    if (rt->spare ? o == GOWN_SPARE
                  : (o == GOWN_SANDBOX || o == GOWN_SPARE || (o == GOWN_TOMBSTONE && rt->tomb) ||
                     (o == GOWN_PROBE && rt->probe)))
        return 0;
    if (o == GOWN_MISSING)
        refuse(cfd, 404, "No such %s: %s", rt->target == GT_EXEC ? "exec instance" : "container",
               ref);
    else if (o == GOWN_ERROR)
        refuse(cfd, 502, "cannot ask dockerd whose %s is", ref);
    else
        refuse(cfd, 403, "%s is not a talkback %s", ref, rt->spare ? "spare sandbox" : "sandbox");
    return -1;
}

/* The head sent to dockerd: the request line with the path (its {id}
 * replaced by the full id when there is one), the client's end-to-end
 * headers, and framing the guard sets itself. */
static char *build_head(const greq_t *r, const groute_t *rt, const char *id, long long body_len)
{
    size_t cap = GREQ_HEAD_MAX + 1024, n = 0;
    char *h = malloc(cap);
    if (!h)
        return NULL;
    if (*id && rt->target == GT_CONTAINER)
        n += (size_t)snprintf(h + n, cap - n, "%s %.*s%s%s", r->method, (int)rt->id_at, r->path, id,
                              r->path + rt->id_at + strlen(rt->id));
    else
        n += (size_t)snprintf(h + n, cap - n, "%s %s", r->method, r->path);
    n += (size_t)snprintf(h + n, cap - n, "%s%s HTTP/1.1\r\nHost: docker\r\n", *r->query ? "?" : "",
                          r->query);
    for (size_t i = 0; i < r->n_hdr && n < cap; i++)
        if (!greq_hop_header(r->hdr[i].name))
            n += (size_t)snprintf(h + n, cap - n, "%s: %s\r\n", r->hdr[i].name, r->hdr[i].value);
    if (body_len >= 0 && n < cap)
        n += (size_t)snprintf(h + n, cap - n, "Content-Length: %lld\r\n", body_len);
    if (n < cap)
        n += (size_t)snprintf(h + n, cap - n, "%s\r\n",
                              rt->hijack && r->upgrade ? "Connection: Upgrade\r\nUpgrade: tcp\r\n"
                                                       : "Connection: close\r\n");
    if (n >= cap) {
        free(h);
        return NULL;
    }
    return h;
}

/* Send head, body and the rest of a streamed body to dockerd, then relay
 * its answer.  stream_left: body bytes still to come from the client. */
static void forward(const guard_t *g, int cfd, const greq_t *r, const groute_t *rt,
                    const char *head, const char *body, size_t body_len, long long stream_left)
{
    int ufd = gowner_connect(g->docker_socket);
    if (ufd < 0) {
        refuse(cfd, 502, "cannot reach dockerd at %s", g->docker_socket);
        return;
    }
    if (gsplice_write(ufd, head, strlen(head)) || gsplice_write(ufd, body, body_len))
        goto done;
    char buf[65536];
    while (stream_left > 0) {
        ssize_t n = recv(cfd, buf,
                         stream_left < (long long)sizeof buf ? (size_t)stream_left : sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || gsplice_write(ufd, buf, (size_t)n))
            goto done;
        stream_left -= n;
    }
    /* A command may run for as long as run_timeout_max: no timeout now. */
    struct timeval none = { 0, 0 };
    setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
    grelay_t o = { .hijack = rt->hijack,
                   .upgrade = rt->hijack && r->upgrade,
                   .head = !strcmp(r->method, "HEAD"),
                   .list = rt->target == GT_LIST };
    char why[256];
    if (grelay(cfd, ufd, &o, why, sizeof why) == GRELAY_BAD)
        refuse(cfd, 502, "%s (%s %s)", why, r->method, r->path);
done:
    close(ufd);
}

/* Read and check the body of a JSON route, and check whose container the
 * call is about.  The body to send (malloc'ed; "" for none) or NULL after
 * answering the client. */
static char *checked_body(const guard_t *g, int cfd, const greq_t *r, const groute_t *rt,
                          const char *early, size_t early_len, char id[65])
{
    char why[256] = "";
    json_t *checked = NULL;
    char *out = NULL, *b = NULL;
    long long cl = r->content_length < 0 ? 0 : r->content_length;
    if (rt->body == GB_NONE || rt->body == GB_STREAM) {
        if (rt->body == GB_NONE && cl > 0) {
            refuse(cfd, 403, "a body on %s %s, which takes none", r->method, r->path);
            return NULL;
        }
        return check_owner(g, cfd, rt, NULL, id) ? NULL : strdup("");
    }
    if (cl > GCONN_BODY_MAX) {
        refuse(cfd, 403, "a JSON body over %d bytes", GCONN_BODY_MAX);
        return NULL;
    }
    b = read_body(cfd, early, early_len, (size_t)cl);
    if (!b)
        return NULL;
    out = check_body(g, rt, b, (size_t)cl, &checked, why, sizeof why);
    free(b);
    if (!out) {
        refuse(cfd, 403, "%s", why);
    } else if (rt->body == GB_CREATE &&
               json_object_get(json_object_get(checked, "Labels"), SPEC_LABEL_PROBE) &&
               !grules_probe_query_ok(r->query)) {
        refuse(cfd, 403, "a storage probe whose query is not name=talkback-probe-...");
        free(out);
        out = NULL;
    } else if (rt->body == GB_CREATE &&
               !grules_create_query_fits(
                   r->query,
                   json_object_get(json_object_get(checked, "Labels"), SPEC_LABEL_SPARE))) {
        refuse(cfd, 403,
               "a create whose name does not fit its labels (a spare is named talkback-spare-..., "
               "nothing else is)");
        free(out);
        out = NULL;
    } else if (check_owner(g, cfd, rt, checked, id)) {
        free(out);
        out = NULL;
    } else if (rt->body == GB_NET_CONNECT || rt->body == GB_NET_DISCONNECT) {
        free(out);
        json_object_set_new(checked, "Container", json_string(id));
        out = json_dumps(checked, JSON_COMPACT);
    }
    json_decref(checked);
    return out;
}

/* Close a client connection after its one answer.  Whatever it sent past
 * its request is read and dropped first (for at most GCONN_LINGER_MS and
 * GCONN_LINGER_MAX bytes): closing with unread bytes would reset the
 * connection and could take the answer with it. */
static void linger_close(int cfd)
{
    char buf[4096];
    size_t total = 0;
    struct timeval tv = { 0, GCONN_LINGER_MS * 1000 };
    shutdown(cfd, SHUT_WR);
    setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    for (ssize_t n; total < GCONN_LINGER_MAX && (n = recv(cfd, buf, sizeof buf, 0)) > 0;)
        total += (size_t)n;
    close(cfd);
}

void gconn_serve(const guard_t *g, int cfd)
{
    char *head = malloc(GREQ_HEAD_MAX + 1);
    char why[256], id[65] = "", list_query[GLIST_QUERY_MAX];
    size_t head_len, have;
    greq_t r;
    groute_t rt;
    struct timeval tv = { GCONN_TIMEOUT_S, 0 };
    setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);

    if (!head || read_head(cfd, head, &head_len, &have))
        goto done;
    const char *early = head + head_len + 4;
    size_t early_len = have - head_len - 4;
    if (greq_parse(head, head_len, &r, why, sizeof why)) {
        refuse(cfd, 400, "%s", why);
        goto done;
    }
    if (grules_match(r.method, r.path, g->tpl.s.network, &rt, why, sizeof why)) {
        refuse(cfd, 403, "%s", why);
        goto done;
    }
    if (rt.body == GB_CREATE && !grules_create_query_ok(r.query)) {
        refuse(cfd, 403, "a create whose query is not name=talkback-...");
        goto done;
    }
    if (rt.spare && !grules_rename_query_ok(r.query)) {
        refuse(cfd, 403, "a rename whose query is not name=<a chat sandbox's name>");
        goto done;
    }
    if (rt.target == GT_LIST) {
        if (glist_query(r.query, list_query, why, sizeof why)) {
            refuse(cfd, 403, "%s", why);
            goto done;
        }
        r.query = list_query;
    }
    char *body = checked_body(g, cfd, &r, &rt, early, early_len, id);
    if (!body)
        goto done;
    long long len = rt.body == GB_STREAM ? r.content_length : (long long)strlen(body);
    if (rt.body == GB_NONE && r.content_length < 0)
        len = -1;
    char *h = build_head(&r, &rt, id, len);
    log_debug("pass %s %s%s%s", r.method, r.path, *r.query ? "?" : "", r.query);
    if (h && rt.body == GB_STREAM) {
        size_t now = early_len < (size_t)(len > 0 ? len : 0) ? early_len
                                                             : (size_t)(len > 0 ? len : 0);
        forward(g, cfd, &r, &rt, h, early, now, (len > 0 ? len : 0) - (long long)now);
    } else if (h) {
        forward(g, cfd, &r, &rt, h, body, strlen(body), 0);
    }
    free(h);
    free(body);
done:
    free(head);
    linger_close(cfd);
}
