/* fuzz_imagehdr.c -- libFuzzer harness for what talkback reads about the
 * images a command drew: common/imagehdr.c (kind and pixel size from a
 * file's first bytes, read by the agent and the manager from files anyone
 * in the sandbox can write) and the agent's image list as the manager
 * takes it (sandbox/pictures.c: pictures_item, pictures_from_list).
 *
 * Input layout: byte 0 picks the target.  Even: the rest is a file's head;
 * imagehdr_parse must not read past it, must give a size only with a kind,
 * and must give the same kind for every prefix of IMAGEHDR_MAGIC_LEN bytes
 * or more (the agent decides from 16 bytes, the manager from the whole
 * file).  Odd: the rest is split at the first 0xff byte into an image list
 * (NUL-terminated items, as the agent sends it) and the bytes a reader
 * returns for every image; pictures_from_list must name what it shows and
 * never show more than its limits allow.
 *
 * Built only with -DTALKBACK_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt);
 * run by tests/fuzz/run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/imagehdr.h"
#include "sandbox/pictures.h"

static void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_imagehdr: %s\n", what);
    abort();
}

static void fuzz_header(const uint8_t *p, size_t n)
{
    /* An exact-size copy, so ASan sees any read past n. */
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy)
        return;
    memcpy(copy, p, n);
    imagehdr_t whole;
    imagehdr_kind_t k = imagehdr_parse(copy, n, &whole);
    if (k == IMAGEHDR_NONE && (whole.width || whole.height))
        fuzz_fail("a size without a kind");
    if ((whole.width == 0) != (whole.height == 0))
        fuzz_fail("half a size");
    if (k != IMAGEHDR_NONE && !imagehdr_mime(k))
        fuzz_fail("a kind without a MIME type");
    if (n >= IMAGEHDR_MAGIC_LEN) {
        imagehdr_t head;
        if (imagehdr_parse(copy, IMAGEHDR_MAGIC_LEN, &head) != k)
            fuzz_fail("the first bytes and the whole file disagree about the kind");
    }
    free(copy);
}

typedef struct {
    const uint8_t *p;
    size_t n;
} fuzz_file_t;

static int fuzz_read(void *ctx, const char *path, size_t max, char **data, size_t *len)
{
    const fuzz_file_t *f = ctx;
    (void)path;
    if (f->n > max)
        return -1;
    *data = malloc(f->n + 1);
    if (!*data)
        return -1;
    memcpy(*data, f->p, f->n);
    *len = f->n;
    return 0;
}

static void fuzz_list(const uint8_t *p, size_t n)
{
    const uint8_t *cut = memchr(p, 0xff, n);
    size_t ln = cut ? (size_t)(cut - p) : n;
    fuzz_file_t f = { cut ? cut + 1 : p + n, cut ? n - ln - 1 : 0 };
    char *list = malloc(ln ? ln : 1);
    if (!list)
        return;
    memcpy(list, p, ln);
    pictures_limits_t lim = { .max_count = 3, .max_bytes = 4096, .max_call_bytes = 6000 };
    proto_msg_t *m = pictures_from_list(list, ln, &lim, fuzz_read, &f);
    if (m) {
        if ((int64_t)m->n_images > lim.max_count)
            fuzz_fail("more images than image_max_count");
        size_t total = 0;
        for (size_t i = 0; i < m->n_images; i++) {
            total += m->images[i].len;
            /* Named as the text shows names: control characters as '?'. */
            char *shown = strdup(m->images[i].path);
            if (!shown)
                continue;
            for (char *c = shown; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                    *c = '?';
            if (!m->text || !strstr(m->text, shown))
                fuzz_fail("an image shown but not named");
            free(shown);
        }
        if ((int64_t)total > lim.max_call_bytes)
            fuzz_fail("more bytes than image_max_call_bytes");
        proto_msg_destroy(&m);
    }
    free(list);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        fuzz_list(data + 1, size - 1);
    else
        fuzz_header(data + 1, size - 1);
    return 0;
}
