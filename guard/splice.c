/* splice.c -- copying between the client and dockerd (see splice.h).  One
 * buffer per direction, poll() over both sockets, so neither direction
 * waits on the other. */
#include "guard/splice.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define SPLICE_BUF 65536

int gsplice_write(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

void gsplice_one(int from, int to)
{
    char buf[SPLICE_BUF];
    for (;;) {
        /* A client that went away cancels, as dockerd's own server does:
         * a `wait` it no longer listens to does not hold this thread. */
        struct pollfd p[2] = { { .fd = from, .events = POLLIN },
                               { .fd = to, .events = POLLRDHUP } };
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR))
            break;
        if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        ssize_t n = recv(from, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || gsplice_write(to, buf, (size_t)n))
            break;
    }
    shutdown(to, SHUT_WR);
}

/* One direction of gsplice_two. */
typedef struct {
    int from, to;
    char buf[SPLICE_BUF];
    size_t off, len;
    bool eof; /* from ended and everything read was written */
} dir_t;

/* Make progress on d for the events its fds got; false when it failed. */
static bool step(dir_t *d, short rev_from, short rev_to)
{
    if (d->len == 0 && (rev_from & (POLLIN | POLLHUP | POLLERR))) {
        ssize_t n = recv(d->from, d->buf, sizeof d->buf, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return true;
        if (n <= 0) {
            d->eof = true;
            shutdown(d->to, SHUT_WR);
            return n == 0;
        }
        d->off = 0;
        d->len = (size_t)n;
    }
    if (d->len > 0 && (rev_to & (POLLOUT | POLLERR | POLLHUP))) {
        ssize_t n = send(d->to, d->buf + d->off, d->len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return true;
        if (n <= 0)
            return false;
        d->off += (size_t)n;
        d->len -= (size_t)n;
    }
    return true;
}

void gsplice_two(int a, int b)
{
    dir_t *dirs = malloc(2 * sizeof *dirs);
    if (!dirs)
        return;
    dir_t *ab = &dirs[0], *ba = &dirs[1];
    *ab = (dir_t){ .from = a, .to = b };
    *ba = (dir_t){ .from = b, .to = a };
    while (!(ab->eof && ba->eof)) {
        struct pollfd p[2] = { { .fd = a }, { .fd = b } };
        /* a: readable for ab when its buffer is empty, writable for ba. */
        if (!ab->eof && ab->len == 0)
            p[0].events |= POLLIN;
        if (ba->len > 0)
            p[0].events |= POLLOUT;
        if (!ba->eof && ba->len == 0)
            p[1].events |= POLLIN;
        if (ab->len > 0)
            p[1].events |= POLLOUT;
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        /* Both halves of a shut: nothing can reach it any more. */
        if ((p[0].revents & (POLLHUP | POLLERR)) && ab->eof)
            break;
        if ((!ab->eof && !step(ab, p[0].revents, p[1].revents)) ||
            (!ba->eof && !step(ba, p[1].revents, p[0].revents)))
            break;
    }
    free(dirs);
}
