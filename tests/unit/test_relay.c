/* test_relay.c -- unit tests of how the Docker guard passes dockerd's
 * answers back (guard/response.h, guard/relay.h, guard/list.h): which
 * answers are spliced, how the others are framed and cut, the container
 * list's query and filter; and grelay itself over socketpairs, with a
 * scripted answer: nothing the client sends after its request reaches
 * "dockerd" unless the answer was a real hijack. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "guard/body.h"
#include "guard/list.h"
#include "guard/relay.h"
#include "guard/response.h"

/* Parse head s (without its blank line); the frame for a hijack route
 * with or without an upgrade asked for. */
static gframe_t frame_of(const char *s, bool hijack, bool upgrade)
{
    gresp_t r;
    if (gresp_parse(s, strlen(s), &r))
        return (gframe_t)-1;
    return gresp_frame(&r, hijack, upgrade, false);
}

static void test_parse(void **state)
{
    gresp_t r;
    (void)state;
    const char *ok = "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
                     "Api-Version: 1.41";
    assert_int_equal(gresp_parse(ok, strlen(ok), &r), 0);
    assert_int_equal(r.status, 200);
    assert_true(r.raw_stream);
    assert_int_equal(r.content_length, -1);
    const char *cl = "HTTP/1.1 404 Not Found\r\ncontent-length:  42 \r\nX: y";
    assert_int_equal(gresp_parse(cl, strlen(cl), &r), 0);
    assert_int_equal(r.content_length, 42);
    const char *te = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked";
    assert_int_equal(gresp_parse(te, strlen(te), &r), 0);
    assert_true(r.chunked && r.has_te);
    const char *mux =
        "HTTP/1.1 200 OK\r\nContent-Type: Application/Vnd.Docker.Multiplexed-Stream; x=1";
    assert_int_equal(gresp_parse(mux, strlen(mux), &r), 0);
    assert_true(r.raw_stream);
    static const char *const bad[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1",
        "HTTP/1.1 200 OK\r\nContent-Length: 1x",
        "HTTP/1.1 200 OK\r\nContent-Length: -1",
        "HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456789",
        "HTTP/1.1 200 OK\nContent-Length: 1",
        "HTTP/1.1 200 OK\r\nX: a\rb",
        "HTTP/1.1 200 OK\r\n folded",
        "HTTP/1.1 200 OK\r\nno colon",
        "HTTP/1.1 20 OK",
        "HTTP/1.1 2000",
        "HTTP/2 200",
        "HTTP/1.1 099 x",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(gresp_parse(bad[i], strlen(bad[i]), &r), -1);
    assert_int_equal(gresp_parse("HTTP/1.1 200 OK\0", 16, &r), -1);
}

/* The splice decision: only a 101 to an upgrade, or an unframed 200 raw
 * stream, on attach / exec start. */
static void test_frame(void **state)
{
    (void)state;
    const char *up = "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
                     "Connection: Upgrade\r\nUpgrade: tcp";
    const char *raw = "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream";
    /* What dockerd answers a detached exec start: a plain, framed 200. */
    const char *detached = "HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nContent-Length: 0";
    assert_int_equal(frame_of(up, true, true), GFRAME_SPLICE);
    assert_int_equal(frame_of(up, true, false), GFRAME_BAD);
    assert_int_equal(frame_of(up, false, true), GFRAME_BAD);
    assert_int_equal(frame_of(raw, true, false), GFRAME_SPLICE);
    assert_int_equal(frame_of(raw, true, true), GFRAME_SPLICE);
    assert_int_equal(frame_of(raw, false, false), GFRAME_CLOSE);
    assert_int_equal(frame_of(detached, true, true), GFRAME_LENGTH);
    assert_int_equal(
        frame_of("HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
                 "Content-Length: 0",
                 true, true),
        GFRAME_LENGTH);
    assert_int_equal(
        frame_of("HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
                 "Transfer-Encoding: chunked",
                 true, true),
        GFRAME_CHUNKED);
    assert_int_equal(frame_of("HTTP/1.1 200 OK\r\nContent-Type: text/plain", true, false),
                     GFRAME_CLOSE);
    /* dockerd's hijacked error: a raw-stream 404 ended by its close. */
    assert_int_equal(
        frame_of("HTTP/1.1 404 Not Found\r\nContent-Type: application/vnd.docker.raw-stream", true,
                 true),
        GFRAME_CLOSE);
    assert_int_equal(frame_of("HTTP/1.1 204 No Content\r\nContent-Length: 5", false, false),
                     GFRAME_NONE);
    assert_int_equal(frame_of("HTTP/1.1 304 Not Modified", true, true), GFRAME_NONE);
    assert_int_equal(frame_of("HTTP/1.1 100 Continue", false, false), GFRAME_BAD);
    assert_int_equal(frame_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip", false, false),
                     GFRAME_CLOSE);
    gresp_t r;
    const char *h = "HTTP/1.1 200 OK\r\nContent-Length: 9";
    gresp_parse(h, strlen(h), &r);
    assert_int_equal(gresp_frame(&r, false, false, true), GFRAME_NONE);
}

static void test_head(void **state)
{
    char out[512];
    (void)state;
    const char *h = "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n"
                    "Content-Length: 3\r\nUpgrade: tcp\r\nApi-Version: 1.41";
    size_t n = gresp_head(h, strlen(h), false, out, sizeof out);
    out[n] = '\0';
    assert_string_equal(out, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nApi-Version: 1.41\r\n"
                             "Connection: close\r\n\r\n");
    n = gresp_head(h, strlen(h), true, out, sizeof out);
    out[n] = '\0';
    assert_string_equal(out, "HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nConnection: close\r\n\r\n");
    assert_int_equal(gresp_head(h, strlen(h), false, out, 20), 0);
}

/* gchunk_feed on one buffer, all at once or byte by byte: what it
 * consumed (-1: refused); the data into data (decoded). */
static char data[256];
static size_t data_len;
static int take(void *ctx, const char *p, size_t n)
{
    (void)ctx;
    memcpy(data + data_len, p, n);
    data_len += n;
    return 0;
}
static long long chunked(const char *s, bool bytewise)
{
    gchunk_t c = { 0 };
    long long total = 0;
    data_len = 0;
    size_t len = strlen(s);
    for (size_t i = 0; i < len && !c.done; i += bytewise ? 1 : len) {
        long long k = gchunk_feed(&c, s + i, bytewise ? 1 : len, take, NULL);
        if (k < 0)
            return -1;
        total += k;
    }
    data[data_len] = '\0';
    return c.done ? total : -2;
}

static void test_chunked(void **state)
{
    (void)state;
    static const char *const body = "5\r\nhello\r\nA;ext=1\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n";
    for (int bytewise = 0; bytewise < 2; bytewise++) {
        assert_int_equal(chunked(body, bytewise), (long long)strlen(body));
        assert_string_equal(data, "hello0123456789");
        /* What follows the last chunk is not the body's. */
        char more[256];
        snprintf(more, sizeof more, "%sGET /info HTTP/1.1\r\n", body);
        assert_int_equal(chunked(more, bytewise), (long long)strlen(body));
        assert_int_equal(chunked("0\r\n\r\n", bytewise), 5);
        assert_int_equal(chunked("3 \r\nabc\r\n0\r\n\r\n", bytewise), 14);
        static const char *const bad[] = {
            "5\r\nhelloX\r\n0\r\n\r\n",   "\r\n",         "g\r\n",
            "1234567890abcdef\r\n",       "5\nhello\r\n", "5\r\nhello\r\n0\r\n\n",
            "5\r\nhello\r\n0\r\nX\n\r\n", "5 x\r\n",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
            assert_int_equal(chunked(bad[i], bytewise), -1);
        assert_int_equal(chunked("5\r\nhel", bytewise), -2); /* not done yet */
    }
}

/* glist_query: the rebuilt query, or NULL when refused. */
static const char *query(const char *q)
{
    static char out[GLIST_QUERY_MAX];
    char why[256];
    return glist_query(q, out, why, sizeof why) ? NULL : out;
}

static void test_list_query(void **state)
{
    (void)state;
    const char *added = "filters=%7B%22label%22%3A%7B%22talkback.created%22%3Atrue%7D%7D";
    char want[512];
    assert_string_equal(query(""), added);
    snprintf(want, sizeof want, "all=1&size=0&%s", added);
    assert_string_equal(query("size=0&all=1"), want);
    /* The manager's own: kept as they are, no label added. */
    assert_string_equal(
        query("all=1&size=1&filters=%7B%22label%22%3A%5B%22talkback.conversation%22%5D%7D"),
        "all=1&size=1&filters=%7B%22label%22%3A%7B%22talkback.conversation%22%3Atrue%7D%7D");
    /* An id filter: kept, narrowed with the label. */
    assert_string_equal(query("filters=%7B%22id%22%3A%5B%22ab%22%5D%7D"),
                        "filters=%7B%22id%22%3A%7B%22ab%22%3Atrue%7D%2C%22label%22%3A%7B%22"
                        "talkback.created%22%3Atrue%7D%7D");
    /* A label that is not talkback's, or talkback's negated: narrowed. */
    assert_string_equal(query("filters={\"label\":[\"talkback.conversation!=x\"]}"),
                        "filters=%7B%22label%22%3A%7B%22talkback.conversation%21%3Dx%22%3Atrue%2C"
                        "%22talkback.created%22%3Atrue%7D%7D");
    assert_string_equal(query("filters=%7B%22label%22%3A%7B%22talkback.spare%3Dh%22%3Afalse%7D%7D"),
                        "filters=%7B%22label%22%3A%7B%22talkback.spare%3Dh%22%3Atrue%7D%7D");
    static const char *const bad[] = {
        "all=1&all=1",
        "all=1;size=1",
        "before=x",
        "all=%zz",
        "all=1%00",
        "all=a+b",
        "filters=%7B%22label%22%3A%5B%22a%22%5D%2C%22label%22%3A%5B%22b%22%5D%7D",
        "filters=%5B%5D",
        "filters=%7B%22Label%22%3A%5B%22a%22%5D%7D",
        "filters=%7B%22label%22%3A%5B1%5D%7D",
        "filters=%7B%22label%22%3A%22a%22%7D",
        "filters=%7B%22label%22%3A%7B%22a%22%3A1%7D%7D",
        "filters=%7B",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_null(query(bad[i]));
    assert_non_null(query("all=1&&size=1&"));
    assert_string_equal(query("al%6c=1"), query("all=1")); /* keys are unescaped too */
}

static void test_list_filter(void **state)
{
    (void)state;
    const char *in =
        "[{\"Id\":\"a\",\"Names\":[\"/talkback-x-0123456789abcdef\"],\"Labels\":"
        "{\"talkback.conversation\":\"x\"}},"
        "{\"Id\":\"b\",\"Names\":[\"/talkback-gone-x\"],\"Labels\":{\"talkback.tombstone\":\"x\"}},"
        "{\"Id\":\"c\",\"Names\":[\"/foreign\"],\"Labels\":{}},"
        "{\"Id\":\"d\",\"Names\":[\"/evil\"],\"Labels\":{\"talkback.conversation\":\"x\"}},"
        "{\"Id\":\"e\",\"Names\":[\"/talkback-y-0123456789abcdef/db\",\"/db\"],\"Labels\":"
        "{\"talkback.conversation\":\"x\"}},"
        "{\"Id\":\"f\"},7]";
    size_t n = 0;
    char *out = glist_filter(in, strlen(in), &n);
    assert_non_null(out);
    assert_int_equal(n, strlen(out));
    json_t *j = json_loads(out, 0, NULL);
    assert_int_equal(json_array_size(j), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "Id")), "a");
    assert_string_equal(json_string_value(json_object_get(json_array_get(j, 1), "Id")), "b");
    json_decref(j);
    free(out);
    assert_null(glist_filter("{}", 2, &n));
    assert_null(glist_filter("[", 1, &n));
}

/* grelay over socketpairs: the scripted answer, the client's bytes after
 * its request, and what came out each side. */
typedef struct {
    char to_client[4096];
    char to_docker[4096];
    grelay_rc_t rc;
} relayed_t;

static void relay(const char *answer, bool hijack, bool upgrade, bool list, relayed_t *out)
{
    int c[2], u[2];
    char why[256];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, c), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, u), 0);
    /* c[1] is the client, u[1] dockerd; the guard holds c[0] and u[0]. */
    assert_int_equal(write(u[1], answer, strlen(answer)), (ssize_t)strlen(answer));
    shutdown(u[1], SHUT_WR);
    const char *later = "GET /info HTTP/1.1\r\nHost: d\r\n\r\n";
    assert_int_equal(write(c[1], later, strlen(later)), (ssize_t)strlen(later));
    grelay_t o = { .hijack = hijack, .upgrade = upgrade, .list = list };
    if (hijack && upgrade)
        shutdown(c[1], SHUT_WR); /* so that a splice ends */
    out->rc = grelay(c[0], u[0], &o, why, sizeof why);
    close(c[0]);
    close(u[0]);
    ssize_t n = read(c[1], out->to_client, sizeof out->to_client - 1);
    out->to_client[n > 0 ? n : 0] = '\0';
    n = read(u[1], out->to_docker, sizeof out->to_docker - 1);
    out->to_docker[n > 0 ? n : 0] = '\0';
    close(c[1]);
    close(u[1]);
}

static void test_grelay(void **state)
{
    relayed_t r;
    (void)state;
    /* A detached exec start's 200, with a byte dockerd would pipeline. */
    relay("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nX", true, true, false, &r);
    assert_int_equal(r.rc, GRELAY_SENT);
    assert_string_equal(r.to_client, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
                                     "Connection: close\r\n\r\n");
    assert_string_equal(r.to_docker, "");
    relay("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\nHTTP/1.1", true,
          true, false, &r);
    assert_string_equal(r.to_client, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                                     "Connection: close\r\n\r\n2\r\nhi\r\n0\r\n\r\n");
    assert_string_equal(r.to_docker, "");
    relay("HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope and more", true, true, false,
          &r);
    assert_string_equal(r.to_client, "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n"
                                     "Connection: close\r\n\r\nnope");
    relay("HTTP/1.1 101 UPGRADED\r\nUpgrade: tcp\r\n\r\n", true, false, false, &r);
    assert_int_equal(r.rc, GRELAY_BAD);
    assert_string_equal(r.to_client, "");
    assert_string_equal(r.to_docker, "");
    relay("garbage\r\n\r\n", true, true, false, &r);
    assert_int_equal(r.rc, GRELAY_BAD);
    /* A real hijack: the client's bytes go to the stream. */
    relay("HTTP/1.1 101 UPGRADED\r\nUpgrade: tcp\r\n\r\nout", true, true, false, &r);
    assert_int_equal(r.rc, GRELAY_SPLICED);
    assert_string_equal(r.to_client, "HTTP/1.1 101 UPGRADED\r\nUpgrade: tcp\r\n\r\nout");
    assert_string_equal(r.to_docker, "GET /info HTTP/1.1\r\nHost: d\r\n\r\n");
    /* A list: filtered, with a length of its own. */
    relay("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
          "d\r\n[{\"Names\":[\"/\r\n"
          "f\r\nx\"]},{\"Id\":1}]\n\r\n0\r\n\r\n",
          false, false, true, &r);
    assert_int_equal(r.rc, GRELAY_SENT);
    assert_string_equal(r.to_client, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
                                     "Connection: close\r\n\r\n[]\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),      cmocka_unit_test(test_frame),
        cmocka_unit_test(test_head),       cmocka_unit_test(test_chunked),
        cmocka_unit_test(test_list_query), cmocka_unit_test(test_list_filter),
        cmocka_unit_test(test_grelay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
