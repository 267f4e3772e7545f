/* fuzz_relay.c -- libFuzzer harness for how the Docker guard passes
 * dockerd's answer back (guard/relay.c and what it reads with:
 * guard/response.c, guard/list.c) and for the container list's query.
 *
 * The relay is driven for real over two socketpairs: the fuzzed bytes are
 * the answer of a scripted "dockerd" (one end of the first pair), the
 * "client" (one end of the second) has pipelined a GET /info after its
 * request and half-closed.  What must hold, whatever dockerd says:
 *   - a byte reaches "dockerd" from the client only when the answer was
 *     spliced, and only a hijack route's answer is ever spliced;
 *   - an answer that is not spliced goes back under a head that ends in
 *     Connection: close, and its body is a prefix of what dockerd sent
 *     after its head (never more, never other bytes; a filtered list
 *     apart, which is valid JSON);
 *   - a refused answer (GRELAY_BAD) sent the client nothing.
 *
 * Input layout: byte 0: bit 0 a hijack route, bit 1 the request asked for
 * an upgrade, bit 2 a HEAD request, bit 3 a container list; bits 6-7 = 3:
 * the rest is a container list query for glist_query instead.  The rest
 * (at most 32 KiB: it has to fit in the socket buffers) is the answer.
 *
 * Built only with -DTALKBACK_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt);
 * run by tests/fuzz/run.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "guard/list.h"
#include "guard/relay.h"

#define ANSWER_MAX (32 << 10)
#define OUT_MAX    (ANSWER_MAX + 4096)

/* Everything readable on fd now (it is non-blocking) into buf. */
static size_t drain(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    ssize_t k;
    fcntl(fd, F_SETFL, O_NONBLOCK);
    while (n < cap && (k = read(fd, buf + n, cap - n)) > 0)
        n += (size_t)k;
    return n;
}

/* The query mode: whatever the query, a rebuilt one is plain ASCII and
 * always carries a label filter. */
static void fuzz_query(const uint8_t *data, size_t size)
{
    char *q = malloc(size + 1), out[GLIST_QUERY_MAX], why[256];
    memcpy(q, data, size);
    q[size] = '\0';
    if (glist_query(q, out, why, sizeof why) == 0) {
        if (!strstr(out, "filters=") || !strstr(out, "%22label%22"))
            abort();
        for (const char *p = out; *p; p++)
            if (*p <= ' ' || *p >= 0x7f || *p == '#' || *p == '"' || *p == ';')
                abort();
    }
    free(q);
}

/* Whether the client's answer is what the rules allow for this one. */
static void check(const char *ans, size_t alen, const char *got, size_t glen, grelay_rc_t rc,
                  const grelay_t *o)
{
    const char *ah = memmem(ans, alen, "\r\n\r\n", 4);
    if (rc == GRELAY_BAD) {
        if (glen)
            abort();
        return;
    }
    if (rc == GRELAY_SPLICED) {
        /* Spliced: the answer went back as it came. */
        if (!o->hijack || glen != alen || memcmp(ans, got, alen))
            abort();
        return;
    }
    const char *gh = memmem(got, glen, "\r\n\r\n", 4);
    if (!gh || !ah || gh - got < 19 || memcmp(gh - 17, "Connection: close", 17))
        abort();
    size_t body = glen - (size_t)(gh + 4 - got), sent = alen - (size_t)(ah + 4 - ans);
    if (o->list && body)
        return; /* a filtered list: checked by glist_filter's own JSON */
    if (body > sent || memcmp(gh + 4, ah + 4, body))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] >> 6 == 3) {
        fuzz_query(data + 1, size - 1);
        return 0;
    }
    grelay_t o = {
        .hijack = data[0] & 1, .upgrade = data[0] & 2, .head = data[0] & 4, .list = data[0] & 8
    };
    const char *ans = (const char *)data + 1;
    size_t alen = size - 1 > ANSWER_MAX ? ANSWER_MAX : size - 1;
    int c[2], u[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, c))
        return 0;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, u)) {
        close(c[0]);
        close(c[1]);
        return 0;
    }
    static const char later[] = "GET /info HTTP/1.1\r\nHost: docker\r\n\r\n";
    if (write(u[1], ans, alen) != (ssize_t)alen || write(c[1], later, sizeof later - 1) < 0)
        abort();
    shutdown(u[1], SHUT_WR);
    shutdown(c[1], SHUT_WR);
    char why[256];
    grelay_rc_t rc = grelay(c[0], u[0], &o, why, sizeof why);
    close(c[0]);
    close(u[0]);
    static char got[OUT_MAX], to_docker[256];
    size_t glen = drain(c[1], got, sizeof got);
    size_t dlen = drain(u[1], to_docker, sizeof to_docker);
    close(c[1]);
    close(u[1]);
    if (dlen && rc != GRELAY_SPLICED)
        abort(); /* the client reached dockerd without a hijack */
    check(ans, alen, got, glen, rc, &o);
    return 0;
}
