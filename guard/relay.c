/* relay.c -- dockerd's answer back to the client (see relay.h).
 *
 * The head is read whole (up to GRESP_HEAD_MAX) before a byte goes back,
 * so the decision -- splice, or relay one framed answer -- is made on the
 * complete head (response.h).  A relayed body is read from dockerd only
 * as far as its framing says; what the client sends meanwhile is never
 * read, and the connection is closed after it.
 */
#include "guard/relay.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "guard/list.h"
#include "guard/response.h"
#include "guard/splice.h"

#define RELAY_BUF 65536

/* Where a body goes: to the client, or (a list) into buf to filter. */
typedef struct {
    gframe_t frame;
    long long left; /* GFRAME_LENGTH: bytes still to come */
    gchunk_t chunk;
    int cfd;
    bool collect, done, failed;
    char *buf;
    size_t len, cap;
} body_t;

/* Append p[0..n) to the collected body (up to GLIST_ANSWER_MAX). */
static int collect(void *ctx, const char *p, size_t n)
{
    body_t *b = ctx;
    if (b->len + n > GLIST_ANSWER_MAX)
        return -1;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + n)
            cap *= 2;
        char *nb = realloc(b->buf, cap);
        if (!nb)
            return -1;
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, p, n);
    b->len += n;
    return 0;
}

/* Send body bytes p[0..n) on (decoded bytes are collected by the chunk
 * reader itself). */
static int sink(body_t *b, const char *p, size_t n)
{
    return b->collect ? collect(b, p, n) : gsplice_write(b->cfd, p, n);
}

/* Take bytes p[0..n) read from dockerd, as far as the framing goes. */
static void feed(body_t *b, const char *p, size_t n)
{
    long long k;
    switch (b->frame) {
    case GFRAME_LENGTH:
        k = (long long)n < b->left ? (long long)n : b->left;
        b->failed = sink(b, p, (size_t)k) != 0;
        b->left -= k;
        b->done = b->left == 0;
        break;
    case GFRAME_CHUNKED:
        k = gchunk_feed(&b->chunk, p, n, b->collect ? collect : NULL, b);
        b->failed = k < 0 || (!b->collect && gsplice_write(b->cfd, p, (size_t)k));
        b->done = b->chunk.done;
        break;
    case GFRAME_CLOSE: b->failed = sink(b, p, n) != 0; break;
    default: b->done = true; break;
    }
}

/* Read the body from ufd after the early bytes that came with the head,
 * until it ends, dockerd closes, or the client hangs up. */
static void body_copy(body_t *b, int ufd, const char *early, size_t early_len)
{
    char *buf = malloc(RELAY_BUF);
    b->done = b->frame == GFRAME_NONE || (b->frame == GFRAME_LENGTH && b->left == 0);
    if (!b->done && early_len)
        feed(b, early, early_len);
    while (buf && !b->done && !b->failed) {
        /* Data first: a client that shut its sending side still reads. */
        struct pollfd p[2] = { { .fd = ufd, .events = POLLIN },
                               { .fd = b->cfd, .events = POLLRDHUP } };
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = recv(ufd, buf, RELAY_BUF, 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                b->done = b->frame == GFRAME_CLOSE;
                b->failed = !b->done;
                break;
            }
            feed(b, buf, (size_t)n);
        } else if (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
            b->failed = true; /* the client went away: a `wait` it gave up */
        }
    }
    free(buf);
}

/* Read dockerd's answer head into buf (GRESP_HEAD_MAX bytes): *head_len
 * without its blank line, *have all bytes read.  0 or -1. */
static int read_head(int ufd, char *buf, size_t *head_len, size_t *have)
{
    *have = 0;
    for (;;) {
        ssize_t n = recv(ufd, buf + *have, GRESP_HEAD_MAX - *have, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        size_t from = *have > 3 ? *have - 3 : 0;
        *have += (size_t)n;
        char *end = memmem(buf + from, *have - from, "\r\n\r\n", 4);
        if (end) {
            *head_len = (size_t)(end - buf);
            return 0;
        }
        if (*have == GRESP_HEAD_MAX)
            return -1;
    }
}

/* A container list's 200: its body read whole, filtered to talkback's own
 * containers, sent with a length of its own. */
static grelay_rc_t relay_list(int cfd, int ufd, body_t *b, const char *head, size_t head_len,
                              const char *early, size_t early_len, char *why, size_t whylen)
{
    b->collect = true;
    body_copy(b, ufd, early, early_len);
    size_t len = 0;
    char *text = b->failed ? NULL : glist_filter(b->buf, b->len, &len);
    free(b->buf);
    char out[GRESP_HEAD_MAX + 64];
    size_t n = text ? gresp_head(head, head_len, true, out, sizeof out - 40) : 0;
    if (!n) {
        free(text);
        snprintf(why, whylen, "dockerd's container list could not be read (over %d MiB?)",
                 GLIST_ANSWER_MAX >> 20);
        return GRELAY_BAD;
    }
    /* "Connection: close\r\n\r\n" ends out: the length goes before it. */
    n -= strlen("Connection: close\r\n\r\n");
    n += (size_t)snprintf(out + n, sizeof out - n,
                          "Content-Length: %zu\r\nConnection: close\r\n\r\n", len);
    if (!gsplice_write(cfd, out, n))
        gsplice_write(cfd, text, len);
    free(text);
    return GRELAY_SENT;
}

grelay_rc_t grelay(int cfd, int ufd, const grelay_t *o, char *why, size_t whylen)
{
    char *buf = malloc(GRESP_HEAD_MAX + 1);
    size_t head_len = 0, have = 0;
    gresp_t r;
    grelay_rc_t rc = GRELAY_BAD;
    if (!buf || read_head(ufd, buf, &head_len, &have)) {
        snprintf(why, whylen, "dockerd sent no answer head (or one over %d bytes)", GRESP_HEAD_MAX);
        goto done;
    }
    if (gresp_parse(buf, head_len, &r)) {
        snprintf(why, whylen, "dockerd's answer head is not well-formed HTTP/1.1");
        goto done;
    }
    gframe_t f = gresp_frame(&r, o->hijack, o->upgrade, o->head);
    const char *early = buf + head_len + 4;
    size_t early_len = have - head_len - 4;
    body_t b = { .frame = f, .left = r.content_length, .cfd = cfd };
    if (f == GFRAME_BAD) {
        snprintf(why, whylen, "dockerd answered %d, which the guard does not pass on here",
                 r.status);
    } else if (f == GFRAME_SPLICE) {
        /* Handed over: what follows the head is the stream itself. */
        if (!gsplice_write(cfd, buf, have))
            gsplice_two(cfd, ufd);
        rc = GRELAY_SPLICED;
    } else if (o->list && r.status == 200 && f != GFRAME_NONE) {
        rc = relay_list(cfd, ufd, &b, buf, head_len, early, early_len, why, whylen);
    } else {
        char out[GRESP_HEAD_MAX + 32];
        size_t n = gresp_head(buf, head_len, false, out, sizeof out);
        rc = GRELAY_SENT;
        if (n && !gsplice_write(cfd, out, n))
            body_copy(&b, ufd, early, early_len);
    }
done:
    free(buf);
    return rc;
}
