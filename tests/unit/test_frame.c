/* test_frame.c -- the manager <-> agent framing (proto/frame.h): round
 * trips, every integer width, truncation at every byte, hostile lengths,
 * resync after garbage and after half a frame. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "proto/frame.h"

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* A full frame around a hand-made payload. */
static size_t wrap(const unsigned char *payload, size_t n, unsigned char *out)
{
    memcpy(out, "TBA\x01", 4);
    put_be32(out + 4, (uint32_t)n);
    put_be32(out + 8, frame_crc32(payload, n));
    put_be32(out + 12, frame_crc32(out, 12));
    memcpy(out + FRAME_HDR, payload, n);
    return FRAME_HDR + n;
}

static frame_msg_t sample(void)
{
    static const char argv[] = "bash\0-c\0echo hi\0";
    static const char data[] = "a\0b\xff\x80 TBA\x01";
    frame_msg_t m = { .type = FRAME_RUN, .id = 0xfedcba9876543210ull };
    frame_set_str(&m, FS_ARGV, argv, sizeof argv - 1);
    frame_set_str(&m, FS_STDIN, data, sizeof data - 1);
    frame_set_str(&m, FS_CWD, "/work", 5);
    frame_set_num(&m, FN_MODE, 0755);
    frame_set_num(&m, FN_STATUS, -1);
    frame_set_num(&m, FN_MTIME, INT64_MIN);
    frame_set_num(&m, FN_MEM, INT64_MAX);
    frame_set_num(&m, FN_SIGNAL, -200);
    frame_set_num(&m, FN_PID, 70000);
    frame_set_num(&m, FN_NONCE, -40000);
    frame_set_num(&m, FN_PIDS, (int64_t)1 << 40);
    return m;
}

static void assert_same(const frame_msg_t *a, const frame_msg_t *b)
{
    assert_int_equal(a->type, b->type);
    assert_true(a->id == b->id);
    assert_int_equal(a->has_num, b->has_num);
    assert_int_equal(a->has_str, b->has_str);
    for (int f = 0; f < FN__COUNT; f++)
        if (frame_has_num(a, (frame_num_t)f))
            assert_true(a->num[f] == b->num[f]);
    for (int f = 0; f < FS__COUNT; f++)
        if (frame_has_str(a, (frame_str_t)f)) {
            assert_int_equal(a->str_len[f], b->str_len[f]);
            assert_memory_equal(a->str[f], b->str[f], a->str_len[f]);
        }
}

static void roundtrip(void **state)
{
    (void)state;
    frame_msg_t m = sample();
    textbuf_t b = { 0 };
    assert_int_equal(frame_encode(&m, &b), 0);
    frame_reader_t r;
    frame_reader_init(&r, FRAME_MAX, false);
    assert_int_equal(frame_reader_feed(&r, b.buf, b.len), 0);
    frame_msg_t got;
    assert_int_equal(frame_reader_next(&r, &got), 1);
    assert_same(&m, &got);
    assert_int_equal(frame_reader_next(&r, &got), 0);
    assert_false(frame_reader_partial(&r));
    frame_reader_free(&r);
    textbuf_free(&b);
}

/* Every integer from -2^63 to 2^63-1 at the width boundaries. */
static void integer_widths(void **state)
{
    (void)state;
    const int64_t vals[] = { 0,         1,      127,    128,           255,
                             256,       65535,  65536,  4294967295LL,  4294967296LL,
                             INT64_MAX, -1,     -32,    -33,           -128,
                             -129,      -32768, -32769, -2147483648LL, -2147483649LL,
                             INT64_MIN };
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        frame_msg_t m = { .type = FRAME_EXIT, .id = (uint64_t)i + 1 };
        frame_set_num(&m, FN_STATUS, vals[i]);
        textbuf_t b = { 0 };
        assert_int_equal(frame_encode(&m, &b), 0);
        frame_msg_t got;
        assert_int_equal(frame_decode(b.buf + FRAME_HDR, b.len - FRAME_HDR, &got), 0);
        assert_true(got.num[FN_STATUS] == vals[i]);
        textbuf_free(&b);
    }
}

/* A frame cut at any byte is "need more", never a frame or an error. */
static void truncation(void **state)
{
    (void)state;
    frame_msg_t m = sample();
    textbuf_t b = { 0 };
    assert_int_equal(frame_encode(&m, &b), 0);
    for (size_t cut = 0; cut < b.len; cut++) {
        frame_reader_t r;
        frame_reader_init(&r, FRAME_MAX, false);
        assert_int_equal(frame_reader_feed(&r, b.buf, cut), 0);
        frame_msg_t got;
        assert_int_equal(frame_reader_next(&r, &got), 0);
        /* The rest, byte by byte, completes it. */
        for (size_t i = cut; i < b.len; i++) {
            assert_int_equal(frame_reader_next(&r, &got), 0);
            assert_int_equal(frame_reader_feed(&r, b.buf + i, 1), 0);
        }
        assert_int_equal(frame_reader_next(&r, &got), 1);
        assert_same(&m, &got);
        frame_reader_free(&r);
        /* A payload cut short does not decode. */
        if (cut > FRAME_HDR)
            assert_int_equal(frame_decode(b.buf + FRAME_HDR, cut - FRAME_HDR, &got), -1);
    }
    textbuf_free(&b);
}

static void hostile_lengths(void **state)
{
    (void)state;
    frame_msg_t got;
    /* A header declaring 4 GiB: refused before any byte of it is awaited. */
    unsigned char h[FRAME_HDR];
    memcpy(h, "TBA\x01", 4);
    put_be32(h + 4, 0xffffffffu);
    put_be32(h + 8, 0);
    put_be32(h + 12, frame_crc32(h, 12));
    frame_reader_t r;
    frame_reader_init(&r, FRAME_AGENT_MAX, false);
    assert_int_equal(frame_reader_feed(&r, h, sizeof h), 0);
    assert_int_equal(frame_reader_next(&r, &got), -1);
    assert_int_equal(frame_reader_next(&r, &got), -1); /* stays bad */
    assert_int_equal(frame_reader_feed(&r, h, sizeof h), -1);
    frame_reader_free(&r);

    /* Inside the payload: strings and maps longer than the payload. */
    const unsigned char str32[] = { 0x82, 0xa1, 't',  0x12, 0xa1, 'd',
                                    0xc6, 0xff, 0xff, 0xff, 0xff, 'x' };
    assert_int_equal(frame_decode(str32, sizeof str32, &got), -1);
    const unsigned char map32[] = { 0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 't', 0x12 };
    assert_int_equal(frame_decode(map32, sizeof map32, &got), -1);
    const unsigned char map16[] = { 0xde, 0x00, 0x41, 0xa1, 't', 0x12 }; /* 65 keys > max */
    assert_int_equal(frame_decode(map16, sizeof map16, &got), -1);
    /* Wrong shapes: not a map, nested array, no type, unknown type, bin key,
     * a string where a number goes, trailing bytes. */
    const unsigned char notmap[] = { 0x91, 0x01 };
    assert_int_equal(frame_decode(notmap, sizeof notmap, &got), -1);
    const unsigned char nested[] = { 0x82, 0xa1, 't', 0x12, 0xa1, 'd', 0x90 };
    assert_int_equal(frame_decode(nested, sizeof nested, &got), -1);
    const unsigned char notype[] = { 0x81, 0xa2, 'i', 'd', 0x01 };
    assert_int_equal(frame_decode(notype, sizeof notype, &got), -1);
    const unsigned char badtype[] = { 0x81, 0xa1, 't', 0x63 };
    assert_int_equal(frame_decode(badtype, sizeof badtype, &got), -1);
    const unsigned char binkey[] = { 0x81, 0xc4, 0x01, 't', 0x12 };
    assert_int_equal(frame_decode(binkey, sizeof binkey, &got), -1);
    const unsigned char strnum[] = { 0x82, 0xa1, 't', 0x13, 0xa2, 's', 't', 0xa1, '1' };
    assert_int_equal(frame_decode(strnum, sizeof strnum, &got), -1);
    const unsigned char trailing[] = { 0x81, 0xa1, 't', 0x12, 0x00 };
    assert_int_equal(frame_decode(trailing, sizeof trailing, &got), -1);
    const unsigned char neg_id[] = { 0x82, 0xa1, 't', 0x12, 0xa2, 'i', 'd', 0xff };
    assert_int_equal(frame_decode(neg_id, sizeof neg_id, &got), -1);
    /* Unknown keys with scalar values are skipped. */
    const unsigned char unknown[] = { 0x83, 0xa1, 't',  0x14, 0xa3, 'z', 'z',
                                      'z',  0xc0, 0xa2, 'i',  'd',  0x07 };
    assert_int_equal(frame_decode(unknown, sizeof unknown, &got), 0);
    assert_int_equal(got.type, FRAME_DONE);
    assert_true(got.id == 7);

    /* A valid header whose payload checksum is wrong: strict mode fails. */
    unsigned char f[64];
    size_t n = wrap(trailing, 4, f);
    f[8] ^= 1;
    put_be32(f + 12, frame_crc32(f, 12));
    frame_reader_init(&r, FRAME_AGENT_MAX, false);
    assert_int_equal(frame_reader_feed(&r, f, n), 0);
    assert_int_equal(frame_reader_next(&r, &got), -1);
    frame_reader_free(&r);
    /* Garbage first: strict mode fails at its first byte. */
    frame_reader_init(&r, FRAME_AGENT_MAX, false);
    assert_int_equal(frame_reader_feed(&r, "x", 1), 0);
    assert_int_equal(frame_reader_next(&r, &got), -1);
    frame_reader_free(&r);
}

/* Resync mode finds the frame after garbage, false magics and half a
 * frame given up on. */
static void resync(void **state)
{
    (void)state;
    frame_msg_t m = sample();
    textbuf_t b = { 0 };
    assert_int_equal(frame_encode(&m, &b), 0);
    frame_reader_t r;
    frame_reader_init(&r, FRAME_MAX, true);
    const char junk[] =
        "hello TBA\x01 TBA TBA\x01\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00 xx";
    assert_int_equal(frame_reader_feed(&r, junk, sizeof junk - 1), 0);
    assert_int_equal(frame_reader_feed(&r, b.buf, b.len), 0);
    frame_msg_t got;
    assert_int_equal(frame_reader_next(&r, &got), 1);
    assert_same(&m, &got);
    assert_true(r.skipped == sizeof junk - 1);

    /* Half a frame, then a whole one: the half swallows the start of the
     * whole one until skipped, then the reader finds the next. */
    assert_int_equal(frame_reader_feed(&r, b.buf, b.len / 2), 0);
    assert_int_equal(frame_reader_feed(&r, b.buf, b.len), 0);
    assert_int_equal(frame_reader_feed(&r, b.buf, b.len), 0);
    int frames = 0, guard = 0;
    while (guard++ < 100000) {
        int rc = frame_reader_next(&r, &got);
        if (rc == 1) {
            assert_same(&m, &got);
            frames++;
            continue;
        }
        assert_int_equal(rc, 0);
        if (!frame_reader_partial(&r))
            break;
        frame_reader_skip(&r);
    }
    assert_true(frames >= 1);
    frame_reader_trim(&r);
    assert_null(r.buf);
    frame_reader_free(&r);
    textbuf_free(&b);
}

static void count_item(void *ctx, const char *item)
{
    (void)item;
    (*(int *)ctx)++;
}

static void lists(void **state)
{
    (void)state;
    int n = 0;
    assert_int_equal(frame_list_each("a\0bc\0\0", 6, count_item, &n), 3);
    assert_int_equal(n, 3);
    assert_int_equal(frame_list_each("a\0b", 3, NULL, NULL), -1);
    assert_int_equal(frame_list_each("", 0, NULL, NULL), 0);
    assert_int_equal(frame_crc32("123456789", 9), 0xcbf43926u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(roundtrip),  cmocka_unit_test(integer_widths),
        cmocka_unit_test(truncation), cmocka_unit_test(hostile_lengths),
        cmocka_unit_test(resync),     cmocka_unit_test(lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
