/* response.h -- the head and framing of dockerd's answer, as the Docker
 * guard reads it before it copies a byte back.
 *
 * The guard splices a connection both ways only when dockerd really handed
 * it over: a 101 to a request that asked for an upgrade, or a 200 whose
 * Content-Type is Docker's raw stream (application/vnd.docker.raw-stream or
 * .multiplexed-stream) with neither Content-Length nor Transfer-Encoding,
 * which is what dockerd writes after it hijacked the connection of an
 * attach or exec start that did not ask for an upgrade (dockerd 20.10,
 * checked on this host).  Any other answer is relayed one way, exactly as
 * long as its framing says (Content-Length, chunked, or until dockerd
 * closes), under a head that says Connection: close, and the connection
 * ends there: nothing the client sends after its request ever reaches
 * dockerd then.  Pure functions (no I/O), unit-tested and fuzzed
 * (tests/unit/test_guard.c, tests/fuzz/fuzz_relay.c).
 */
#ifndef TALKBACK_GUARD_RESPONSE_H
#define TALKBACK_GUARD_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>

#define GRESP_HEAD_MAX 16384 /* the largest answer head the guard reads */

/* What the head of an answer says. */
typedef struct {
    int status;               /* 100-999 */
    long long content_length; /* -1: none */
    bool chunked;             /* Transfer-Encoding ends in chunked */
    bool has_te;              /* any Transfer-Encoding */
    bool raw_stream;          /* Content-Type: Docker's raw or multiplexed stream */
} gresp_t;

/* How the guard copies an answer back. */
typedef enum {
    GFRAME_SPLICE,  /* dockerd handed the connection over: both ways */
    GFRAME_NONE,    /* no body (HEAD, 204, 304) */
    GFRAME_LENGTH,  /* content_length bytes */
    GFRAME_CHUNKED, /* chunks up to the last one and its trailers */
    GFRAME_CLOSE,   /* until dockerd closes (one way) */
    GFRAME_BAD,     /* an answer the guard does not pass on (502) */
} gframe_t;

/* Parse head[0..len), the status line and headers without the blank line
 * that ends them.  0, or -1 when it is not a well-formed HTTP/1.x head
 * (bare CR or LF, a second or non-digit Content-Length, ...). */
int gresp_parse(const char *head, size_t len, gresp_t *r);

/* The framing of answer r to a request on a hijack route (attach, exec
 * start) or not, that asked for an upgrade or not, by method HEAD or not. */
gframe_t gresp_frame(const gresp_t *r, bool hijack_route, bool req_upgrade, bool head_method);

/* The head the client gets for an answer that is not spliced: the status
 * line and headers of head[0..len) without Connection, Keep-Alive,
 * Proxy-Connection and Upgrade (and, with drop_length, Content-Length
 * and Transfer-Encoding), then "Connection: close" and the blank line.
 * Its length, or 0 when it does not fit in cap. */
size_t gresp_head(const char *head, size_t len, bool drop_length, char *out, size_t cap);

/* The end of a chunked body, found as its bytes go by.  Chunk sizes up to
 * 15 hex digits, extension and trailer lines up to GCHUNK_LINE_MAX. */
#define GCHUNK_LINE_MAX 4096
typedef struct {
    int state;
    unsigned long long left; /* data bytes left in this chunk */
    size_t line;             /* length of the size, extension or trailer line so far */
    bool done;               /* the last chunk and its trailers went by */
} gchunk_t;

/* Called with each run of chunk data (for a caller that decodes). */
typedef int (*gchunk_data_fn)(void *ctx, const char *p, size_t n);

/* Feed buf[0..len) (c zeroed at first): how many of these bytes belong to
 * the body (all of them until c->done; then up to its last byte), or -1
 * when it is no chunked body or on_data failed.  on_data may be NULL. */
long long gchunk_feed(gchunk_t *c, const char *buf, size_t len, gchunk_data_fn on_data, void *ctx);

#endif
