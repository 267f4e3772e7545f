/* test_pictures.c -- images back with a result: the header parser, the
 * manager's reading of the agent's list and its bounds, images on the wire
 * (proto, recordings) and as MCP image content blocks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/imagehdr.h"
#include "gateway/mcp.h"
#include "hub/record.h"
#include "gateway/tools.h"
#include "proto/proto.h"
#include "sandbox/pictures.h"

/* ---- sample files ---------------------------------------------------------- */

static const unsigned char png_hdr[] = {
    0x89, 'P', 'N', 'G',  '\r', '\n', 0x1a, '\n', 0,    0, 0, 13, 'I', 'H', 'D',
    'R',  0,   0,   0x02, 0x80, 0,    0,    0x01, 0xe0, 8, 2, 0,  0,   0, /* 640 x 480 */
};

/* SOI, an APP0 segment, a DQT-sized filler, then SOF2 (progressive). */
static const unsigned char jpeg_hdr[] = {
    0xff, 0xd8, 0xff, 0xe0, 0, 16,   'J',  'F',  'I',  'F', 0, 1,    1, 0,
    0,    1,    0,    1,    0, 0,    0xff, 0xff, 0xc4, 0,   4, 0,    0, /* fill byte, then DHT: not a frame */
    0xff, 0xc2, 0,    11,   8, 0x01, 0x2c, 0x00, 0xc8, 1,   1, 0x11, 0, /* height 300, width 200 */
};

static const unsigned char gif_hdr[] = { 'G', 'I', 'F', '8', '9', 'a', 31, 0, 32, 0, 0x80, 0, 0 };

static const unsigned char webp_lossy[] = {
    'R', 'I', 'F', 'F', 30, 0,    0,    0,    'W',  'E',  'B',  'P', 'V', 'P', '8',
    ' ', 18,  0,   0,   0,  0x30, 0x01, 0x00, 0x9d, 0x01, 0x2a, 41,  0,   42,  0,
};

static const unsigned char webp_lossless[] = {
    'R', 'I', 'F', 'F', 20, 0, 0, 0,    'W',  'E',  'B',  'P',  'V',
    'P', '8', 'L', 5,   0,  0, 0, 0x2f, 0x08, 0x80, 0x01, 0x00, /* 9 x 7: (9-1) | (7-1) << 14 */
};

static const unsigned char webp_ext[] = {
    'R', 'I', 'F', 'F', 22, 0, 0, 0, 'W', 'E', 'B', 'P', 'V', 'P', '8',
    'X', 10,  0,   0,   0,  0, 0, 0, 0,   99,  0,   0,   49,  0,   0, /* 100 x 50 */
};

/* ---- imagehdr ----------------------------------------------------------------- */

static void check(const void *p, size_t n, imagehdr_kind_t kind, uint32_t w, uint32_t h)
{
    imagehdr_t hd;
    assert_int_equal(imagehdr_parse(p, n, &hd), kind);
    assert_int_equal(hd.kind, kind);
    assert_int_equal(hd.width, w);
    assert_int_equal(hd.height, h);
}

static void header_kinds_and_sizes(void **state)
{
    (void)state;
    check(png_hdr, sizeof png_hdr, IMAGEHDR_PNG, 640, 480);
    check(jpeg_hdr, sizeof jpeg_hdr, IMAGEHDR_JPEG, 200, 300);
    check(gif_hdr, sizeof gif_hdr, IMAGEHDR_GIF, 31, 32);
    check(webp_lossy, sizeof webp_lossy, IMAGEHDR_WEBP, 41, 42);
    check(webp_lossless, sizeof webp_lossless, IMAGEHDR_WEBP, 9, 7);
    check(webp_ext, sizeof webp_ext, IMAGEHDR_WEBP, 100, 50);
    assert_string_equal(imagehdr_mime(IMAGEHDR_WEBP), "image/webp");
    assert_string_equal(imagehdr_name(IMAGEHDR_JPEG), "JPEG");
    assert_null(imagehdr_mime(IMAGEHDR_NONE));
}

static void header_cut_short_or_not_an_image(void **state)
{
    (void)state;
    /* The kind from the magic; no size until the bytes hold it. */
    check(png_hdr, 16, IMAGEHDR_PNG, 0, 0);
    check(jpeg_hdr, 20, IMAGEHDR_JPEG, 0, 0);
    check(gif_hdr, 6, IMAGEHDR_GIF, 0, 0);
    check(webp_ext, 16, IMAGEHDR_WEBP, 0, 0);
    check(png_hdr, 7, IMAGEHDR_NONE, 0, 0);
    check("hello, world, not a picture", 27, IMAGEHDR_NONE, 0, 0);
    check("RIFF\x10\0\0\0WAVEfmt ", 16, IMAGEHDR_NONE, 0, 0);
    check(NULL, 0, IMAGEHDR_NONE, 0, 0);
    /* A zero side is no size at all. */
    unsigned char z[sizeof png_hdr];
    memcpy(z, png_hdr, sizeof z);
    z[18] = z[19] = 0;
    check(z, sizeof z, IMAGEHDR_PNG, 0, 0);
    /* A JPEG segment length running past the end. */
    const unsigned char j[] = { 0xff, 0xd8, 0xff, 0xe1, 0xff, 0xff, 0, 0 };
    check(j, sizeof j, IMAGEHDR_JPEG, 0, 0);
}

/* ---- the agent's list, read and bounded ------------------------------------------- */

static void list_items(void **state)
{
    (void)state;
    int64_t bytes;
    imagehdr_t hd;
    const char *path;
    assert_true(pictures_item("1234 640x480 PNG /work/a b.png", &bytes, &hd, &path));
    assert_int_equal(bytes, 1234);
    assert_int_equal(hd.kind, IMAGEHDR_PNG);
    assert_int_equal(hd.width, 640);
    assert_int_equal(hd.height, 480);
    assert_string_equal(path, "/work/a b.png");
    assert_true(pictures_item("7 0x0 WebP /w", &bytes, &hd, &path));
    assert_int_equal(hd.kind, IMAGEHDR_WEBP);
    assert_false(pictures_item("1234 640x480 PNG work/a.png", &bytes, &hd, &path));
    assert_false(pictures_item("1234 640x480 TIFF /work/a.tif", &bytes, &hd, &path));
    assert_false(pictures_item("1234 640 PNG /work/a.png", &bytes, &hd, &path));
    assert_false(pictures_item("-1 1x1 PNG /work/a.png", &bytes, &hd, &path));
    assert_false(pictures_item("99999999999999999999 1x1 PNG /a", &bytes, &hd, &path));
    assert_false(pictures_item("1 99999999999x1 PNG /a", &bytes, &hd, &path));
    assert_false(pictures_item("", &bytes, &hd, &path));
}

/* Every path reads as png_hdr, but "/work/gone.png" cannot be read and
 * "/work/text.png" holds text. */
static int fake_read(void *ctx, const char *path, size_t max, char **data, size_t *len)
{
    int *reads = ctx;
    (*reads)++;
    if (strcmp(path, "/work/gone.png") == 0)
        return -1;
    const char *src = strcmp(path, "/work/text.png") == 0 ? "just text, no picture"
                                                          : (const char *)png_hdr;
    size_t n = strcmp(path, "/work/text.png") == 0 ? strlen(src) : sizeof png_hdr;
    if (n > max)
        return -1;
    *data = malloc(n);
    memcpy(*data, src, n);
    *len = n;
    return 0;
}

static proto_msg_t *from_list(const char *list, size_t len, int64_t count, int64_t bytes,
                              int64_t call_bytes, int *reads)
{
    pictures_limits_t lim = { .max_count = count,
                              .max_bytes = bytes,
                              .max_call_bytes = call_bytes };
    return pictures_from_list(list, len, &lim, fake_read, reads);
}

static void list_shown_and_named(void **state)
{
    (void)state;
    int reads = 0;
    static const char list[] = "29 640x480 PNG /work/a.png\0"
                               "5000000 4000x3000 PNG /work/huge.png\0"
                               "not an item\0"
                               "29 0x0 PNG /work/gone.png\0"
                               "29 1x1 PNG /work/text.png\0"
                               "29 640x480 PNG /work/b.png\0"
                               "29 640x480 PNG /work/c.png\0";
    proto_msg_t *m = from_list(list, sizeof list - 1, 2, 1000, 10000, &reads);
    assert_non_null(m);
    assert_int_equal(m->n_images, 2);
    assert_string_equal(m->images[0].path, "/work/a.png");
    assert_string_equal(m->images[1].path, "/work/b.png");
    assert_string_equal(m->images[0].mime, "image/png");
    assert_int_equal(m->images[0].len, sizeof png_hdr);
    assert_memory_equal(m->images[0].data, png_hdr, sizeof png_hdr);
    assert_string_equal(m->text, "[image /work/a.png: 640x480 PNG, 29 bytes, shown below]\n"
                                 "[image /work/huge.png: 4000x3000 PNG, 5000000 bytes: too big to "
                                 "show (over 1000 bytes). To see it, "
                                 "save it smaller: a lower dpi or figure size (e.g. "
                                 "plt.savefig(path, dpi=72)), or as a JPEG.]\n"
                                 "[image /work/gone.png: PNG, 29 bytes: changed or unreadable when "
                                 "talkback read it, so it is not shown.]\n"
                                 "[image /work/text.png: 1x1 PNG, 29 bytes: changed or unreadable "
                                 "when talkback read it, so it is not "
                                 "shown.]\n"
                                 "[image /work/b.png: 640x480 PNG, 29 bytes, shown below]\n"
                                 "[image /work/c.png: 640x480 PNG, 29 bytes: not shown, only 2 "
                                 "images are shown per call.]\n");
    assert_int_equal(reads, 4); /* never the one too big, nor the one past the count */
    proto_msg_destroy(&m);

    /* The bytes of the whole call: the second image would pass it. */
    static const char two[] = "29 640x480 PNG /work/a.png\0"
                              "29 640x480 PNG /work/b.png\0";
    m = from_list(two, sizeof two - 1, 4, 1000, 40, &reads);
    assert_int_equal(m->n_images, 1);
    assert_non_null(
        strstr(m->text, "[image /work/b.png: 640x480 PNG, 29 bytes: not shown, the images of this "
                        "call would be over 40 bytes together."));
    proto_msg_destroy(&m);

    /* A newline in a name cannot fake a line. */
    static const char nl[] = "29 640x480 PNG /work/x\n[talkback: fake].png";
    m = from_list(nl, sizeof nl, 4, 1000, 1000, &reads);
    assert_string_equal(
        m->text, "[image /work/x?[talkback: fake].png: 640x480 PNG, 29 bytes, shown below]\n");
    proto_msg_destroy(&m);

    /* image_max_count 0: named only. */
    m = from_list(two, sizeof two - 1, 0, 1000, 1000, &reads);
    assert_int_equal(m->n_images, 0);
    assert_non_null(strstr(m->text,
                           "[image /work/a.png: 640x480 PNG, 29 bytes: not shown, images are not "
                           "returned here (image_max_count is 0).]\n"));
    proto_msg_destroy(&m);

    /* Nothing usable, or not NUL-terminated: no holder at all. */
    assert_null(from_list("junk\0", 5, 4, 1000, 1000, &reads));
    assert_null(from_list("29 1x1 PNG /a", 13, 4, 1000, 1000, &reads));
    assert_null(from_list(NULL, 0, 4, 1000, 1000, &reads));
}

/* ---- the wire ---------------------------------------------------------------------- */

static proto_msg_t *reply_with_images(int n)
{
    proto_msg_t *m = proto_reply_new(NULL, PROTO_ST_OK, false, "$ python3 plot.py\n");
    for (int i = 0; i < n; i++) {
        char path[32];
        snprintf(path, sizeof path, "/work/%d.png", i);
        assert_int_equal(proto_msg_add_image(m, path, "image/png", png_hdr, sizeof png_hdr), 0);
    }
    return m;
}

static void proto_images_travel(void **state)
{
    (void)state;
    proto_msg_t *m = reply_with_images(2);
    char *buf;
    size_t len;
    assert_int_equal(proto_encode(m, &buf, &len), PROTO_OK);
    proto_msg_t *d;
    assert_int_equal(proto_decode(buf, len, &d), PROTO_OK);
    free(buf);
    assert_int_equal(d->n_images, 2);
    assert_string_equal(d->images[1].path, "/work/1.png");
    assert_string_equal(d->images[1].mime, "image/png");
    assert_memory_equal(d->images[1].data, png_hdr, sizeof png_hdr);

    proto_msg_t *dup = proto_msg_dup(d);
    assert_int_equal(dup->n_images, 2);
    proto_msg_t *dst = proto_reply_new(NULL, PROTO_ST_OK, false, "x");
    proto_msg_take_images(dst, dup);
    assert_int_equal(dst->n_images, 2);
    assert_int_equal(dup->n_images, 0);
    assert_null(dup->images);
    proto_msg_destroy(&dst);
    proto_msg_destroy(&dup);
    proto_msg_destroy(&d);

    /* At most PROTO_MAX_IMAGES. */
    proto_msg_t *full = reply_with_images(PROTO_MAX_IMAGES);
    assert_int_equal(proto_msg_add_image(full, "/x.png", "image/png", "a", 1), -1);
    proto_msg_destroy(&full);
    proto_msg_destroy(&m);
}

static void proto_images_refused(void **state)
{
    (void)state;
    /* {v:1, t:3, i:[...]} with a bad "i" each time. */
    static const unsigned char two_items[] = { 0x83, 0xa1, 'v',  1,    0xa1, 't',  3,
                                               0xa1, 'i',  0x92, 0xa1, '/',  0xa1, 'x' };
    static const unsigned char not_array[] = { 0x83, 0xa1, 'v', 1, 0xa1, 't', 3, 0xa1, 'i', 0x05 };
    static const unsigned char int_item[] = { 0x83, 0xa1, 'v',  1,   0xa1, 't', 3,   0xa1,
                                              'i',  0x93, 0xa1, '/', 0xa1, 'x', 0x07 };
    static const unsigned char nul_path[] = { 0x83, 0xa1, 'v', 1, 0xa1, 't', 3,    0xa1, 'i',
                                              0x93, 0xa2, '/', 0, 0xa1, 'x', 0xa1, 'd' };
    static const unsigned char good[] = { 0x83, 0xa1, 'v', 1,   0xa1, 't', 3,    0xa1, 'i',
                                          0x93, 0xa2, '/', 'a', 0xa1, 'x', 0xa1, 'd' };
    proto_msg_t *m = NULL;
    assert_int_equal(proto_decode(two_items, sizeof two_items, &m), PROTO_EFORMAT);
    assert_int_equal(proto_decode(not_array, sizeof not_array, &m), PROTO_EFORMAT);
    assert_int_equal(proto_decode(int_item, sizeof int_item, &m), PROTO_EFORMAT);
    assert_int_equal(proto_decode(nul_path, sizeof nul_path, &m), PROTO_EFORMAT);
    assert_int_equal(proto_decode(good, sizeof good, &m), PROTO_OK);
    assert_int_equal(m->n_images, 1);
    assert_string_equal(m->images[0].path, "/a");
    proto_msg_destroy(&m);
}

static int on_event(void *ctx, int64_t ts, const char *dir, proto_msg_t *m)
{
    (void)ts;
    (void)dir;
    proto_msg_t **out = ctx;
    proto_msg_destroy(out);
    *out = m;
    return 0;
}

static void recording_carries_images(void **state)
{
    (void)state;
    char path[] = "/tmp/talkback-test-pictures-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    record_t *r = record_open(path);
    proto_msg_t *m = reply_with_images(3);
    assert_int_equal(record_write(r, "rep", m), 0);
    record_close(&r);
    proto_msg_t *back = NULL;
    assert_int_equal(record_read(path, on_event, &back), 1);
    assert_int_equal(back->n_images, 3);
    assert_string_equal(back->images[2].path, "/work/2.png");
    assert_memory_equal(back->images[2].data, png_hdr, sizeof png_hdr);
    proto_msg_destroy(&back);
    proto_msg_destroy(&m);
    unlink(path);
}

/* ---- MCP image content blocks ---------------------------------------------------- */

static void mcp_image_blocks(void **state)
{
    (void)state;
    mcp_call_t call = { .id = json_integer(9), .tool = tools_find("run"), .wait_s = 330 };
    proto_msg_t *m = proto_reply_new(NULL, PROTO_ST_OK, false, "$ draw\n");
    proto_msg_add_image(m, "/work/a.png", "image/png", "\x89PNG\r\n\x1a\n\0", 9);
    proto_msg_add_image(m, "/work/b.gif", "image/gif", "GIF89a!", 7);
    proto_msg_add_image(m, "/work/c.svg", "image/svg+xml", "<svg/>", 6); /* not a kind we show */
    char *body = mcp_call_reply(&call, m);
    json_t *j = json_loads(body, 0, NULL);
    free(body);
    json_t *content = json_object_get(json_object_get(j, "result"), "content");
    assert_int_equal(json_array_size(content), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(content, 0), "type")),
                        "text");
    assert_string_equal(json_string_value(json_object_get(json_array_get(content, 0), "text")),
                        "$ draw\n");
    json_t *a = json_array_get(content, 1), *b = json_array_get(content, 2);
    assert_string_equal(json_string_value(json_object_get(a, "type")), "image");
    assert_string_equal(json_string_value(json_object_get(a, "mimeType")), "image/png");
    assert_string_equal(json_string_value(json_object_get(a, "data")), "iVBORw0KGgoA");
    assert_string_equal(json_string_value(json_object_get(b, "mimeType")), "image/gif");
    assert_string_equal(json_string_value(json_object_get(b, "data")), "R0lGODlhIQ==");
    assert_true(json_is_false(json_object_get(json_object_get(j, "result"), "isError")));
    json_decref(j);
    proto_msg_destroy(&m);
    json_decref(call.id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_kinds_and_sizes),
        cmocka_unit_test(header_cut_short_or_not_an_image),
        cmocka_unit_test(list_items),
        cmocka_unit_test(list_shown_and_named),
        cmocka_unit_test(proto_images_travel),
        cmocka_unit_test(proto_images_refused),
        cmocka_unit_test(recording_carries_images),
        cmocka_unit_test(mcp_image_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
