/* imagehdr.h -- what kind of image a file is, and its size in pixels,
 * from its first bytes.
 *
 * Images come back with a command's result when the file's bytes say it is
 * a PNG, JPEG, GIF or WebP -- never its name.  The agent inside a sandbox
 * reads a written file's first bytes to tell (agent/images.c) and the
 * manager names each image's pixel size in the result.  Both read bytes
 * anyone in the sandbox can write, so this parser never reads past what
 * it was given and answers "unknown" rather than guess (fuzzed:
 * tests/fuzz/fuzz_imagehdr.c).  libc only: the static agent links it.
 */
#ifndef TALKBACK_IMAGEHDR_H
#define TALKBACK_IMAGEHDR_H

#include <stddef.h>
#include <stdint.h>

/* Bytes enough to tell the kind (not always the size: a JPEG's size may
 * come after kilobytes of metadata). */
#define IMAGEHDR_MAGIC_LEN 16u

typedef enum {
    IMAGEHDR_NONE = 0,
    IMAGEHDR_PNG,
    IMAGEHDR_JPEG,
    IMAGEHDR_GIF,
    IMAGEHDR_WEBP
} imagehdr_kind_t;

typedef struct {
    imagehdr_kind_t kind;
    uint32_t width, height; /* 0 x 0 when the bytes given do not say */
} imagehdr_t;

/* Read the kind and size from the first len bytes of a file.  Returns
 * out->kind (IMAGEHDR_NONE: not an image of a kind we show). */
imagehdr_kind_t imagehdr_parse(const void *p, size_t len, imagehdr_t *out);

/* "image/png", ...; NULL for IMAGEHDR_NONE. */
const char *imagehdr_mime(imagehdr_kind_t k);
/* "PNG", "JPEG", "GIF", "WebP"; "?" for IMAGEHDR_NONE. */
const char *imagehdr_name(imagehdr_kind_t k);

#endif
