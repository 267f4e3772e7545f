/* imagehdr.c -- image kind and pixel size from a file's first bytes (see
 * imagehdr.h).  Every read is checked against len first.
 */
#include "common/imagehdr.h"

#include <string.h>

static uint32_t be16(const unsigned char *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}
static uint32_t le16(const unsigned char *p)
{
    return (uint32_t)p[1] << 8 | p[0];
}
static uint32_t le24(const unsigned char *p)
{
    return (uint32_t)p[2] << 16 | le16(p);
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* PNG: the signature, then the IHDR chunk holds width and height. */
static void imagehdr_png(const unsigned char *p, size_t len, imagehdr_t *out)
{
    if (len >= 24 && memcmp(p + 12, "IHDR", 4) == 0) {
        out->width = be32(p + 16);
        out->height = be32(p + 20);
    }
}

/* JPEG: walk the segments to the first start-of-frame marker (SOF0..15
 * but DHT C4, JPG C8 and DAC CC), which holds height then width. */
static void imagehdr_jpeg(const unsigned char *p, size_t len, imagehdr_t *out)
{
    size_t pos = 2;
    while (pos + 4 <= len) {
        if (p[pos] != 0xff)
            return; /* lost: not a marker */
        unsigned char mk = p[pos + 1];
        if (mk == 0xff) { /* fill byte */
            pos++;
            continue;
        }
        if (mk == 0x01 || (mk >= 0xd0 && mk <= 0xd8)) { /* no length */
            pos += 2;
            continue;
        }
        if (mk == 0xd9 || mk == 0xda)
            return; /* end, or scan data: no frame seen */
        uint32_t seg = be16(p + pos + 2);
        if (seg < 2)
            return;
        if (mk >= 0xc0 && mk <= 0xcf && mk != 0xc4 && mk != 0xc8 && mk != 0xcc) {
            if (seg >= 7 && pos + 9 <= len) {
                out->height = be16(p + pos + 5);
                out->width = be16(p + pos + 7);
            }
            return;
        }
        pos += 2 + (size_t)seg;
    }
}

/* WebP: RIFF, then the first chunk is VP8 (lossy), VP8L (lossless) or
 * VP8X (extended, with the canvas size). */
static void imagehdr_webp(const unsigned char *p, size_t len, imagehdr_t *out)
{
    if (len >= 30 && memcmp(p + 12, "VP8 ", 4) == 0) {
        if (p[23] == 0x9d && p[24] == 0x01 && p[25] == 0x2a) {
            out->width = le16(p + 26) & 0x3fff;
            out->height = le16(p + 28) & 0x3fff;
        }
    } else if (len >= 25 && memcmp(p + 12, "VP8L", 4) == 0) {
        if (p[20] == 0x2f) {
            uint32_t b = (uint32_t)p[21] | (uint32_t)p[22] << 8 | (uint32_t)p[23] << 16 |
                         (uint32_t)p[24] << 24;
            out->width = (b & 0x3fff) + 1;
            out->height = ((b >> 14) & 0x3fff) + 1;
        }
    } else if (len >= 30 && memcmp(p + 12, "VP8X", 4) == 0) {
        out->width = le24(p + 24) + 1;
        out->height = le24(p + 27) + 1;
    }
}

imagehdr_kind_t imagehdr_parse(const void *data, size_t len, imagehdr_t *out)
{
    const unsigned char *p = data;
    memset(out, 0, sizeof *out);
    if (!p)
        return IMAGEHDR_NONE;
    if (len >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0) {
        out->kind = IMAGEHDR_PNG;
        imagehdr_png(p, len, out);
    } else if (len >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff) {
        out->kind = IMAGEHDR_JPEG;
        imagehdr_jpeg(p, len, out);
    } else if (len >= 6 && (memcmp(p, "GIF87a", 6) == 0 || memcmp(p, "GIF89a", 6) == 0)) {
        out->kind = IMAGEHDR_GIF;
        if (len >= 10) {
            out->width = le16(p + 6);
            out->height = le16(p + 8);
        }
    } else if (len >= 16 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBPVP8", 7) == 0) {
        out->kind = IMAGEHDR_WEBP;
        imagehdr_webp(p, len, out);
    }
    if (out->width == 0 || out->height == 0)
        out->width = out->height = 0;
    return out->kind;
}

const char *imagehdr_mime(imagehdr_kind_t k)
{
    switch (k) {
    case IMAGEHDR_PNG: return "image/png";
    case IMAGEHDR_JPEG: return "image/jpeg";
    case IMAGEHDR_GIF: return "image/gif";
    case IMAGEHDR_WEBP: return "image/webp";
    case IMAGEHDR_NONE: break;
    }
    return NULL;
}

const char *imagehdr_name(imagehdr_kind_t k)
{
    switch (k) {
    case IMAGEHDR_PNG: return "PNG";
    case IMAGEHDR_JPEG: return "JPEG";
    case IMAGEHDR_GIF: return "GIF";
    case IMAGEHDR_WEBP: return "WebP";
    case IMAGEHDR_NONE: break;
    }
    return "?";
}
