/* fuzz_demux.c -- libFuzzer harness for docker_demux_feed (docker/docker.h).
 *
 * The sandbox manager reads every command's output through Docker's
 * 8-byte-header exec stream, and the network may cut that stream at any
 * byte.  The demultiplexer must read only inside the slice it is given and
 * must give the same result however the stream is cut.
 *
 * Input layout: the first 4 bytes seed a small generator that picks the
 * split points (between 0 and 64 bytes apart, zero-length feeds included);
 * the rest is the stream.  The harness feeds the stream once whole and once
 * in those pieces, collecting each stream's payload, and aborts when the two
 * disagree: other payload bytes, another stream number, or another verdict
 * on whether the stream is malformed.  A stream number other than 1 or 2
 * reaching the callback also aborts.
 *
 * Built only with -DTALKBACK_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt);
 * run by tests/fuzz/run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker/docker.h"

/* What one pass saw: each stream's bytes in order, tagged by stream. */
typedef struct {
    unsigned char *buf; /* stream number byte, then the payload byte */
    size_t n, cap;
} seen_t;

static void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_demux: %s\n", what);
    abort();
}

static void collect(void *ctx, int stream, const char *p, size_t n)
{
    seen_t *s = ctx;
    if (stream != 1 && stream != 2)
        fuzz_fail("the callback got a stream other than 1 or 2");
    if (n == 0)
        return;
    if (s->n + 2 * n > s->cap) {
        size_t cap = (s->cap ? s->cap * 2 : 256);
        while (cap < s->n + 2 * n)
            cap *= 2;
        unsigned char *b = realloc(s->buf, cap);
        if (!b)
            fuzz_fail("out of memory");
        s->buf = b;
        s->cap = cap;
    }
    for (size_t i = 0; i < n; i++) {
        s->buf[s->n++] = (unsigned char)stream;
        s->buf[s->n++] = (unsigned char)p[i];
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    uint32_t rng = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
                   (uint32_t)data[3] << 24;
    const char *stream = (const char *)data + 4;
    size_t len = size - 4;

    /* Whole. */
    seen_t whole = { 0 };
    docker_demux_t dm;
    docker_demux_init(&dm);
    bool ok_whole = docker_demux_feed(&dm, stream, len, collect, &whole);

    /* In pieces.  Each piece is copied into its own exact-size heap block
     * so ASan catches a read past the slice. */
    seen_t split = { 0 };
    docker_demux_init(&dm);
    bool ok_split = true;
    size_t pos = 0;
    do {
        rng = rng * 1103515245u + 12345u;
        size_t take = (rng >> 16) % 65;
        if (take > len - pos)
            take = len - pos;
        char *piece = malloc(take ? take : 1);
        if (!piece)
            fuzz_fail("out of memory");
        memcpy(piece, stream + pos, take);
        if (!docker_demux_feed(&dm, piece, take, collect, &split))
            ok_split = false;
        free(piece);
        pos += take;
    } while (pos < len);

    /* A NULL buffer with length 0 is a no-op that reports the state. */
    (void)docker_demux_feed(&dm, NULL, 0, collect, &split);

    if (ok_whole != ok_split)
        fuzz_fail("whole and split feeding disagree on whether the stream is malformed");
    if (whole.n != split.n || (whole.n && memcmp(whole.buf, split.buf, whole.n) != 0))
        fuzz_fail("whole and split feeding passed on different payload");

    free(whole.buf);
    free(split.buf);
    return 0;
}
