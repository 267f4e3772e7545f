/* fuzz_frame.c -- libFuzzer harness for the manager <-> agent framing
 * (proto/frame.h).
 *
 * The sandbox manager reads the agent's stdout, which is the sandbox's
 * stdout: anything running in the sandbox can write into it, so the frame
 * reader and decoder take bytes from the model's machine and must never
 * read out of bounds, loop, leak or crash, in strict mode or while
 * resynchronising, however the stream is cut.
 *
 * Input layout: byte 0 picks the mode (bit 0: resync, bit 1: skip a byte
 * whenever a partial frame is pending, as the agent does after silence),
 * bytes 1..4 seed the generator of split points (0 to 64 bytes apart); the
 * rest is the stream.  The harness feeds the stream once whole and once in
 * pieces and checks that both passes take out the same frames (type, id,
 * every field) and reach the same verdict.  Each decoded frame is encoded
 * again and must decode to the same message (the encoder and the decoder
 * agree); frame_decode is also run on the raw input as one payload.  Each
 * frame is also read as an EXIT carrying the inotify watchdog's report
 * (sandbox/inotify_cap.c), and its line written: the numbers and the
 * process name come from the sandbox too.
 *
 * Built only with -DTALKBACK_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt);
 * run by tests/fuzz/run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/frame.h"
#include "sandbox/inotify_cap.h"

static void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_frame: %s\n", what);
    abort();
}

/* A digest of a message, for comparing passes: FNV-1a over every field. */
static uint64_t digest(const frame_msg_t *m)
{
    uint64_t h = 1469598103934665603ull;
#define MIX(p, n)                                                                                  \
    do {                                                                                           \
        const unsigned char *q_ = (const unsigned char *)(p);                                      \
        for (size_t i_ = 0; i_ < (n); i_++) {                                                      \
            h ^= q_[i_];                                                                           \
            h *= 1099511628211ull;                                                                 \
        }                                                                                          \
    } while (0)
    MIX(&m->type, sizeof m->type);
    MIX(&m->id, sizeof m->id);
    MIX(&m->has_num, sizeof m->has_num);
    MIX(&m->has_str, sizeof m->has_str);
    for (int f = 0; f < FN__COUNT; f++)
        if (frame_has_num(m, (frame_num_t)f))
            MIX(&m->num[f], sizeof m->num[f]);
    for (int f = 0; f < FS__COUNT; f++)
        if (frame_has_str(m, (frame_str_t)f)) {
            MIX(&m->str_len[f], sizeof m->str_len[f]);
            MIX(m->str[f], m->str_len[f]);
        }
#undef MIX
    return h;
}

static void check_reencode(const frame_msg_t *m)
{
    textbuf_t b = { 0 };
    if (frame_encode(m, &b) != 0)
        fuzz_fail("a decoded message does not encode");
    frame_msg_t again;
    if (frame_decode(b.buf + FRAME_HDR, b.len - FRAME_HDR, &again) != 0)
        fuzz_fail("the encoding of a decoded message does not decode");
    if (digest(&again) != digest(m))
        fuzz_fail("decode(encode(m)) differs from m");
    textbuf_free(&b);
}

/* The watchdog's report of m, and its line: printable, one line. */
static void check_report(const frame_msg_t *m)
{
    icap_set(16384, 32);
    icap_report_t r;
    icap_take(&r, m);
    for (const char *c = r.comm; *c; c++)
        if (*c < 0x20 || *c == 0x7f || *c == '`')
            fuzz_fail("a process name with a control byte or a backtick");
    textbuf_t t;
    textbuf_init(&t);
    icap_line(&r, &t);
    if (t.len && (t.buf[t.len - 1] != '\n' || memchr(t.buf, '\n', t.len - 1)))
        fuzz_fail("the watchdog's line is not one line");
    textbuf_free(&t);
}

typedef struct {
    uint64_t frames[64];
    size_t n;
    int verdict; /* last frame_reader_next result */
} pass_t;

static void drain(frame_reader_t *r, pass_t *p, bool skip)
{
    frame_msg_t m;
    for (int guard = 0; guard < 1 << 20; guard++) {
        int rc = frame_reader_next(r, &m);
        p->verdict = rc;
        if (rc == 1) {
            check_reencode(&m);
            check_report(&m);
            if (p->n < 64)
                p->frames[p->n] = digest(&m);
            p->n++;
            continue;
        }
        if (rc == 0 && skip && frame_reader_partial(r)) {
            frame_reader_skip(r);
            continue;
        }
        return;
    }
    fuzz_fail("the reader does not come to rest");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5)
        return 0;
    bool resync = data[0] & 1, skip = (data[0] & 2) != 0;
    uint32_t seed = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 |
                    (uint32_t)data[4] << 24;
    const uint8_t *s = data + 5;
    size_t n = size - 5;

    frame_msg_t one;
    if (frame_decode(s, n, &one) == 0)
        check_reencode(&one);

    /* Small max, so hostile lengths are refused often. */
    pass_t whole = { .n = 0 }, pieces = { .n = 0 };
    frame_reader_t r;
    frame_reader_init(&r, 4096, resync);
    if (frame_reader_feed(&r, s, n) == 0)
        drain(&r, &whole, skip);
    frame_reader_free(&r);

    frame_reader_init(&r, 4096, resync);
    size_t off = 0;
    while (off <= n) {
        seed = seed * 1103515245u + 12345u;
        size_t step = (seed >> 16) % 65;
        if (step > n - off)
            step = n - off;
        if (frame_reader_feed(&r, s + off, step) != 0)
            break;
        /* Skipping depends on where the cuts fall, so only drain
         * between pieces without it. */
        drain(&r, &pieces, false);
        frame_reader_trim(&r);
        off += step;
        if (off == n)
            break;
    }
    if (skip)
        drain(&r, &pieces, true);
    frame_reader_free(&r);

    if (!skip) {
        if (whole.n != pieces.n)
            fuzz_fail("whole and piecewise feeds take out different numbers of frames");
        for (size_t i = 0; i < whole.n && i < 64; i++)
            if (whole.frames[i] != pieces.frames[i])
                fuzz_fail("whole and piecewise feeds take out different frames");
        if ((whole.verdict < 0) != (pieces.verdict < 0))
            fuzz_fail("whole and piecewise feeds disagree on whether the stream is malformed");
    }
    return 0;
}
