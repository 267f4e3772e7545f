/* test_docker.c -- unit tests of the pure parts of docker/: the exec
 * stream demultiplexer (docker_demux_*) and the one-file tar writer
 * (docker_tar_file).
 *
 * The demultiplexer is fed the same bytes cut at every position and one
 * byte at a time, and must give the same output each way; malformed
 * headers must stop it for good.  The tar writer's blocks are checked
 * field by field (checksum, size, padding, end blocks), and the archives
 * are also listed and extracted with GNU tar, which is the reader talkback
 * does not control.  The calls against a real daemon live in the
 * integration tests, not here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "docker/docker.h"

/* ---- demultiplexer ------------------------------------------------------ */

#define SINK_MAX 64

/* What came out of the demultiplexer, adjacent pieces of one stream
 * merged, so that output does not depend on how the input was cut. */
typedef struct {
    int stream[SINK_MAX];
    char data[SINK_MAX][256];
    size_t len[SINK_MAX];
    size_t n;
    size_t calls;
} sink_t;

static void sink_out(void *ctx, int stream, const char *data, size_t len)
{
    sink_t *s = ctx;

    s->calls++;
    assert_true(len > 0);
    if (s->n > 0 && s->stream[s->n - 1] == stream) {
        assert_true(s->len[s->n - 1] + len <= sizeof s->data[0]);
        memcpy(s->data[s->n - 1] + s->len[s->n - 1], data, len);
        s->len[s->n - 1] += len;
        return;
    }
    assert_true(s->n < SINK_MAX);
    assert_true(len <= sizeof s->data[0]);
    s->stream[s->n] = stream;
    memcpy(s->data[s->n], data, len);
    s->len[s->n] = len;
    s->n++;
}

/* Append one frame to buf at *at. */
static void put_frame(unsigned char *buf, size_t *at, int stream, const char *payload, size_t len)
{
    unsigned char *p = buf + *at;

    p[0] = (unsigned char)stream;
    p[1] = p[2] = p[3] = 0;
    p[4] = (unsigned char)(len >> 24);
    p[5] = (unsigned char)(len >> 16);
    p[6] = (unsigned char)(len >> 8);
    p[7] = (unsigned char)len;
    memcpy(p + 8, payload, len);
    *at += 8 + len;
}

/* stdout "hello\n", an empty stdout frame, stderr "oops", an empty stderr
 * frame, stdout "x", stdin-echo (0) "in", stderr with a binary payload. */
static size_t sample_stream(unsigned char *buf)
{
    size_t at = 0;

    put_frame(buf, &at, 1, "hello\n", 6);
    put_frame(buf, &at, 1, "", 0);
    put_frame(buf, &at, 2, "oops", 4);
    put_frame(buf, &at, 2, "", 0);
    put_frame(buf, &at, 1, "x", 1);
    put_frame(buf, &at, 0, "in", 2);
    put_frame(buf, &at, 2, "\0\1\2\377", 4);
    return at;
}

static void check_sample(const sink_t *s)
{
    assert_int_equal(s->n, 4);
    assert_int_equal(s->stream[0], 1);
    assert_int_equal(s->len[0], 6);
    assert_memory_equal(s->data[0], "hello\n", 6);
    assert_int_equal(s->stream[1], 2);
    assert_int_equal(s->len[1], 4);
    assert_memory_equal(s->data[1], "oops", 4);
    /* "x" then "in" from stream 0, which is passed on as stdout */
    assert_int_equal(s->stream[2], 1);
    assert_int_equal(s->len[2], 3);
    assert_memory_equal(s->data[2], "xin", 3);
    assert_int_equal(s->stream[3], 2);
    assert_int_equal(s->len[3], 4);
    assert_memory_equal(s->data[3], "\0\1\2\377", 4);
}

static void test_demux_one_feed(void **state)
{
    (void)state;
    unsigned char buf[256];
    size_t len = sample_stream(buf);
    docker_demux_t dm;
    sink_t s = { 0 };

    docker_demux_init(&dm);
    assert_true(docker_demux_feed(&dm, (const char *)buf, len, sink_out, &s));
    check_sample(&s);
    /* a whole stream consumed leaves the state between frames */
    assert_int_equal(dm.hdr_have, 0);
    assert_int_equal(dm.left, 0);
    assert_false(dm.bad);
}

static void test_demux_split_everywhere(void **state)
{
    (void)state;
    unsigned char buf[256];
    size_t len = sample_stream(buf);

    for (size_t cut = 0; cut <= len; cut++) {
        docker_demux_t dm;
        sink_t s = { 0 };

        docker_demux_init(&dm);
        assert_true(docker_demux_feed(&dm, (const char *)buf, cut, sink_out, &s));
        assert_true(docker_demux_feed(&dm, (const char *)buf + cut, len - cut, sink_out, &s));
        check_sample(&s);
    }
    /* and every pair of cuts: three slices */
    for (size_t a = 0; a <= len; a++) {
        for (size_t b = a; b <= len; b++) {
            docker_demux_t dm;
            sink_t s = { 0 };

            docker_demux_init(&dm);
            assert_true(docker_demux_feed(&dm, (const char *)buf, a, sink_out, &s));
            assert_true(docker_demux_feed(&dm, (const char *)buf + a, b - a, sink_out, &s));
            assert_true(docker_demux_feed(&dm, (const char *)buf + b, len - b, sink_out, &s));
            check_sample(&s);
        }
    }
}

static void test_demux_byte_by_byte(void **state)
{
    (void)state;
    unsigned char buf[256];
    size_t len = sample_stream(buf);
    docker_demux_t dm;
    sink_t s = { 0 };

    docker_demux_init(&dm);
    for (size_t i = 0; i < len; i++) {
        /* each byte in a buffer of its own, so reading past it would show
         * under a sanitizer */
        char *one = malloc(1);
        assert_non_null(one);
        *one = (char)buf[i];
        assert_true(docker_demux_feed(&dm, one, 1, sink_out, &s));
        free(one);
    }
    check_sample(&s);
    /* payload bytes arrive one call each */
    assert_int_equal(s.calls, 6 + 4 + 1 + 2 + 4);
}

static void test_demux_zero_length_frames(void **state)
{
    (void)state;
    unsigned char buf[64];
    size_t at = 0;
    docker_demux_t dm;
    sink_t s = { 0 };

    put_frame(buf, &at, 1, "", 0);
    put_frame(buf, &at, 2, "", 0);
    put_frame(buf, &at, 1, "", 0);
    docker_demux_init(&dm);
    assert_true(docker_demux_feed(&dm, (const char *)buf, at, sink_out, &s));
    assert_int_equal(s.calls, 0);
    assert_int_equal(dm.hdr_have, 0);
    assert_int_equal(dm.left, 0);

    /* a frame after them still comes through */
    at = 0;
    put_frame(buf, &at, 2, "after", 5);
    assert_true(docker_demux_feed(&dm, (const char *)buf, at, sink_out, &s));
    assert_int_equal(s.n, 1);
    assert_int_equal(s.stream[0], 2);
    assert_memory_equal(s.data[0], "after", 5);
}

static void test_demux_empty_feeds(void **state)
{
    (void)state;
    docker_demux_t dm;
    sink_t s = { 0 };

    docker_demux_init(&dm);
    assert_true(docker_demux_feed(&dm, NULL, 0, sink_out, &s));
    assert_true(docker_demux_feed(&dm, "", 0, sink_out, &s));
    assert_int_equal(s.calls, 0);
    /* a NULL callback just drops the output */
    unsigned char buf[32];
    size_t at = 0;
    put_frame(buf, &at, 1, "dropped", 7);
    assert_true(docker_demux_feed(&dm, (const char *)buf, at, NULL, NULL));
    assert_int_equal(dm.left, 0);
}

static void test_demux_bad_stream(void **state)
{
    (void)state;
    unsigned char good[32], bad[8] = { 3, 0, 0, 0, 0, 0, 0, 1 };
    size_t at = 0;
    docker_demux_t dm;
    sink_t s = { 0 };

    put_frame(good, &at, 1, "ok", 2);
    docker_demux_init(&dm);
    assert_true(docker_demux_feed(&dm, (const char *)good, at, sink_out, &s));
    /* the bad header arrives in two pieces: only the second can tell */
    assert_true(docker_demux_feed(&dm, (const char *)bad, 4, sink_out, &s));
    assert_false(docker_demux_feed(&dm, (const char *)bad + 4, 4, sink_out, &s));
    assert_true(dm.bad);
    /* and it stays bad, even for good input and empty feeds */
    assert_false(docker_demux_feed(&dm, (const char *)good, at, sink_out, &s));
    assert_false(docker_demux_feed(&dm, "", 0, sink_out, &s));
    assert_int_equal(s.n, 1);
    assert_int_equal(s.len[0], 2);

    /* every stream byte above 2 is refused */
    for (int b = 3; b < 256; b++) {
        unsigned char h[8] = { (unsigned char)b, 0, 0, 0, 0, 0, 0, 0 };
        docker_demux_init(&dm);
        assert_false(docker_demux_feed(&dm, (const char *)h, 8, NULL, NULL));
    }
}

static void test_demux_bad_padding(void **state)
{
    (void)state;
    docker_demux_t dm;

    for (int i = 1; i <= 3; i++) {
        unsigned char h[9] = { 1, 0, 0, 0, 0, 0, 0, 1, 'z' };
        h[i] = 0x20;
        docker_demux_init(&dm);
        assert_false(docker_demux_feed(&dm, (const char *)h, sizeof h, sink_out, NULL));
        assert_true(dm.bad);
    }
    /* JSON where a frame was expected (an error answer) is refused */
    docker_demux_init(&dm);
    assert_false(docker_demux_feed(&dm, "{\"message\":\"x\"}", 15, NULL, NULL));
}

static void test_demux_large_frame_partial(void **state)
{
    (void)state;
    /* a header announcing 4 GiB - 1, then a few bytes: they pass through
     * and the rest stays due */
    unsigned char h[8] = { 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
    docker_demux_t dm;
    sink_t s = { 0 };

    docker_demux_init(&dm);
    assert_true(docker_demux_feed(&dm, (const char *)h, 8, sink_out, &s));
    assert_int_equal(dm.left, 0xffffffffu);
    char *p = malloc(10);
    assert_non_null(p);
    memcpy(p, "0123456789", 10);
    assert_true(docker_demux_feed(&dm, p, 10, sink_out, &s));
    free(p);
    assert_int_equal(dm.left, 0xffffffffu - 10);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.stream[0], 2);
    assert_int_equal(s.len[0], 10);
}

/* ---- tar ---------------------------------------------------------------- */

#define BLK 512

/* Parse an octal field (digits then NUL or space). */
static uint64_t octal_field(const char *f, size_t width)
{
    uint64_t v = 0;
    size_t i = 0;

    while (i < width && f[i] >= '0' && f[i] <= '7')
        v = v * 8 + (uint64_t)(f[i++] - '0');
    assert_true(i < width);
    assert_true(f[i] == '\0' || f[i] == ' ');
    return v;
}

/* The block's stored checksum matches the one computed over it. */
static void check_header(const unsigned char *h)
{
    unsigned sum = 0;

    for (size_t i = 0; i < BLK; i++)
        sum += (i >= 148 && i < 156) ? ' ' : h[i];
    assert_int_equal(octal_field((const char *)h + 148, 8), sum);
    assert_memory_equal(h + 257,
                        "ustar\0"
                        "00",
                        8);
    assert_string_equal((const char *)h + 265, "root");
    assert_string_equal((const char *)h + 297, "root");
    assert_int_equal(octal_field((const char *)h + 108, 8), 0); /* uid */
    assert_int_equal(octal_field((const char *)h + 116, 8), 0); /* gid */
}

static bool all_zero(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return false;
    return true;
}

/* Write the archive to a temporary file; returns its malloc'ed path. */
static char *write_temp(const char *tar, size_t len)
{
    char *path = strdup("/tmp/test_docker_XXXXXX");
    assert_non_null(path);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, tar, len), (ssize_t)len);
    close(fd);
    return path;
}

/* Run a shell command and return its whole stdout (malloc'ed). */
static char *run_cmd(const char *cmd, size_t *out_len)
{
    FILE *f = popen(cmd, "r");
    size_t cap = 4096, len = 0;
    char *out = malloc(cap);

    assert_non_null(f);
    assert_non_null(out);
    for (;;) {
        if (len + 1024 > cap) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        size_t n = fread(out + len, 1, cap - len - 1, f);
        if (n == 0)
            break;
        len += n;
    }
    out[len] = '\0';
    assert_int_equal(pclose(f), 0);
    if (out_len != NULL)
        *out_len = len;
    return out;
}

/* List the archive with GNU tar and extract the file's content back. */
static void check_with_tar(const char *tar, size_t tar_len, const char *name, const char *mode_text,
                           const void *data, size_t len)
{
    char *path = write_temp(tar, tar_len);
    char cmd[512];
    size_t got_len;

    snprintf(cmd, sizeof cmd, "tar -tvf %s", path);
    char *list = run_cmd(cmd, NULL);
    assert_non_null(strstr(list, mode_text));
    assert_non_null(strstr(list, "root/root"));
    assert_non_null(strstr(list, name));
    /* exactly one entry, the file itself */
    size_t lines = 0;
    for (const char *c = list; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 1);
    free(list);

    snprintf(cmd, sizeof cmd, "tar -xOf %s", path);
    char *content = run_cmd(cmd, &got_len);
    assert_int_equal(got_len, len);
    if (len > 0)
        assert_memory_equal(content, data, len);
    free(content);

    unlink(path);
    free(path);
}

static void test_tar_basic(void **state)
{
    (void)state;
    size_t len = 0;
    char *t = docker_tar_file("hello.txt", "hi\n", 3, 0644, 1700000000, &len);

    assert_non_null(t);
    assert_int_equal(len, BLK + BLK + 2 * BLK);
    check_header((unsigned char *)t);
    assert_string_equal(t, "hello.txt");
    assert_int_equal(octal_field(t + 100, 8), 0644);
    assert_int_equal(octal_field(t + 124, 12), 3);
    assert_memory_equal(t + 124, "00000000003\0", 12);
    assert_int_equal(octal_field(t + 136, 12), 1700000000);
    assert_int_equal(t[156], '0');
    assert_true(all_zero(t + 345, 155)); /* no prefix */
    assert_memory_equal(t + BLK, "hi\n", 3);
    assert_true(all_zero(t + BLK + 3, BLK - 3)); /* padding */
    assert_true(all_zero(t + 2 * BLK, 2 * BLK)); /* end blocks */
    check_with_tar(t, len, "hello.txt", "-rw-r--r--", "hi\n", 3);
    free(t);
}

static void test_tar_sizes(void **state)
{
    (void)state;
    static const size_t sizes[] = { 0, 1, 511, 512, 513, 1024, 100000 };

    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i], len = 0;
        char *data = malloc(n + 1);
        assert_non_null(data);
        for (size_t j = 0; j < n; j++)
            data[j] = (char)(j * 7 + 3);
        char *t = docker_tar_file("d/f.bin", n ? data : NULL, n, 0755, 0, &len);
        size_t padded = (n + BLK - 1) / BLK * BLK;

        assert_non_null(t);
        assert_int_equal(len, BLK + padded + 2 * BLK);
        assert_int_equal(len % BLK, 0);
        check_header((unsigned char *)t);
        assert_int_equal(octal_field(t + 124, 12), n);
        if (n > 0)
            assert_memory_equal(t + BLK, data, n);
        assert_true(all_zero(t + BLK + n, len - BLK - n));
        check_with_tar(t, len, "d/f.bin", "-rwxr-xr-x", data, n);
        free(t);
        free(data);
    }
}

static void test_tar_binary_and_quotes(void **state)
{
    (void)state;
    char data[256 + 16];
    size_t len = 0;

    for (int i = 0; i < 256; i++)
        data[i] = (char)i;
    memcpy(data + 256, "\"'`$(x)\\\n\r\t", 12);
    char *t = docker_tar_file("tmp/\"q\" it's.bin", data, 268, 0600, 5, &len);
    assert_non_null(t);
    check_header((unsigned char *)t);
    assert_string_equal(t, "tmp/\"q\" it's.bin");
    /* GNU tar's listing quotes nothing for these characters */
    check_with_tar(t, len, "tmp/\"q\" it's.bin", "-rw-------", data, 268);
    free(t);
}

static void test_tar_mode_masked(void **state)
{
    (void)state;
    size_t len = 0;
    char *t = docker_tar_file("m", "", 0, 0170755, 0, &len);

    assert_non_null(t);
    assert_int_equal(octal_field(t + 100, 8), 0755);
    free(t);
}

static void test_tar_name_100(void **state)
{
    (void)state;
    char name[101];
    size_t len = 0;

    memset(name, 'n', 100);
    name[100] = '\0';
    char *t = docker_tar_file(name, "a", 1, 0644, 0, &len);
    assert_non_null(t);
    assert_memory_equal(t, name, 100); /* full field, no NUL */
    assert_true(all_zero(t + 345, 155));
    assert_int_equal(t[156], '0');
    check_with_tar(t, len, name, "-rw-r--r--", "a", 1);
    free(t);
}

static void test_tar_prefix_split(void **state)
{
    (void)state;
    char name[300] = "";
    size_t len = 0;

    /* 15 x "component-xx/" (195) + "file.txt" = 203 bytes */
    for (int i = 0; i < 15; i++)
        strcat(name, "component-xx/");
    strcat(name, "file.txt");
    char *t = docker_tar_file(name, "hello", 5, 0644, 0, &len);
    assert_non_null(t);
    check_header((unsigned char *)t);
    assert_int_equal(t[156], '0'); /* no PAX header needed */
    assert_int_equal(len, 4 * BLK);
    /* prefix + '/' + name gives the whole name back */
    char prefix[156] = { 0 }, base[101] = { 0 }, joined[300];
    memcpy(prefix, t + 345, 155);
    memcpy(base, t, 100);
    assert_true(strlen(prefix) <= 155 && strlen(prefix) > 0);
    assert_true(strlen(base) <= 100 && strlen(base) > 0);
    snprintf(joined, sizeof joined, "%s/%s", prefix, base);
    assert_string_equal(joined, name);
    check_with_tar(t, len, name, "-rw-r--r--", "hello", 5);
    free(t);
}

/* Check the PAX header in front and return the path it records. */
static char *pax_path(const char *t)
{
    assert_int_equal(t[156], 'x');
    check_header((const unsigned char *)t);
    size_t rec_len = (size_t)octal_field(t + 124, 12);
    const char *rec = t + BLK;
    char *end;
    unsigned long n = strtoul(rec, &end, 10);

    assert_int_equal(*end, ' ');
    assert_int_equal(n, rec_len); /* one record: path */
    assert_int_equal(rec[n - 1], '\n');
    assert_memory_equal(end + 1, "path=", 5);
    /* the block after the records is zero-padded */
    size_t padded = (rec_len + BLK - 1) / BLK * BLK;
    assert_true(all_zero(rec + rec_len, padded - rec_len));
    return strndup(end + 6, (size_t)(rec + n - 1 - (end + 6)));
}

static void test_tar_pax_long_component(void **state)
{
    (void)state;
    char name[400] = "x/";
    size_t len = 0;

    memset(name + 2, 'y', 250); /* a 250-byte file name */
    name[252] = '\0';
    char *t = docker_tar_file(name, "pax", 3, 0755, 42, &len);
    assert_non_null(t);
    char *p = pax_path(t);
    assert_string_equal(p, name);
    free(p);
    /* the file's own header follows the PAX block(s) */
    const char *h = t + 2 * BLK;
    check_header((const unsigned char *)h);
    assert_int_equal(h[156], '0');
    assert_int_equal(octal_field(h + 124, 12), 3);
    assert_int_equal(len, 6 * BLK); /* pax hdr, records, hdr, data, 2 end */
    assert_memory_equal(h + BLK, "pax", 3);
    assert_true(all_zero(t + len - 2 * BLK, 2 * BLK));
    check_with_tar(t, len, name, "-rwxr-xr-x", "pax", 3);
    free(t);
}

static void test_tar_pax_very_long(void **state)
{
    (void)state;
    /* more than 256 bytes in all, cut in components: no ustar split fits */
    char name[2000] = "";
    size_t len = 0;

    while (strlen(name) < 1500)
        strcat(name, "abcdefghij/");
    strcat(name, "end");
    char *t = docker_tar_file(name, "z", 1, 0644, 0, &len);
    assert_non_null(t);
    char *p = pax_path(t);
    assert_string_equal(p, name);
    free(p);
    check_with_tar(t, len, name, "-rw-r--r--", "z", 1);
    free(t);
}

static void test_tar_pax_record_lengths(void **state)
{
    (void)state;
    /* the record length counts its own digits: check it across the
     * 2->3 and 3->4 digit steps (no '/' so every name needs PAX) */
    for (size_t n = 101; n <= 1100; n++) {
        char *name = malloc(n + 1);
        size_t len = 0;

        assert_non_null(name);
        memset(name, 'a' + (char)(n % 26), n);
        name[n] = '\0';
        char *t = docker_tar_file(name, "", 0, 0644, 0, &len);
        assert_non_null(t);
        char *p = pax_path(t);
        assert_string_equal(p, name);
        free(p);
        free(t);
        free(name);
    }
}

static void test_tar_rejects(void **state)
{
    (void)state;
    size_t len = 7;

    assert_null(docker_tar_file("", "a", 1, 0644, 0, &len));
    assert_int_equal(len, 0);
    assert_null(docker_tar_file(NULL, "a", 1, 0644, 0, &len));
    assert_null(docker_tar_file("/abs", "a", 1, 0644, 0, &len));
    assert_null(docker_tar_file("dir/", "a", 1, 0644, 0, &len));
    assert_null(docker_tar_file("f", NULL, 1, 0644, 0, &len));
    assert_null(docker_tar_file("f", "a", 1, 0644, 0, NULL));
    /* empty data may come as NULL */
    char *t = docker_tar_file("f", NULL, 0, 0644, 0, &len);
    assert_non_null(t);
    assert_int_equal(len, 3 * BLK);
    free(t);
}

static void test_tar_mtime_clamped(void **state)
{
    (void)state;
    size_t len = 0;
    char *t = docker_tar_file("f", "", 0, 0644, -5, &len);

    assert_non_null(t);
    assert_int_equal(octal_field(t + 136, 12), 0);
    free(t);
    t = docker_tar_file("f", "", 0, 0644, INT64_MAX, &len);
    assert_non_null(t);
    assert_int_equal(octal_field(t + 136, 12), 077777777777ULL);
    check_header((unsigned char *)t);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_demux_one_feed),
        cmocka_unit_test(test_demux_split_everywhere),
        cmocka_unit_test(test_demux_byte_by_byte),
        cmocka_unit_test(test_demux_zero_length_frames),
        cmocka_unit_test(test_demux_empty_feeds),
        cmocka_unit_test(test_demux_bad_stream),
        cmocka_unit_test(test_demux_bad_padding),
        cmocka_unit_test(test_demux_large_frame_partial),
        cmocka_unit_test(test_tar_basic),
        cmocka_unit_test(test_tar_sizes),
        cmocka_unit_test(test_tar_binary_and_quotes),
        cmocka_unit_test(test_tar_mode_masked),
        cmocka_unit_test(test_tar_name_100),
        cmocka_unit_test(test_tar_prefix_split),
        cmocka_unit_test(test_tar_pax_long_component),
        cmocka_unit_test(test_tar_pax_very_long),
        cmocka_unit_test(test_tar_pax_record_lengths),
        cmocka_unit_test(test_tar_rejects),
        cmocka_unit_test(test_tar_mtime_clamped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
