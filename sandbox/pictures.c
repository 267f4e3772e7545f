/* pictures.c -- the images a command drew, read, named and bounded (see
 * pictures.h).  The list comes from inside the sandbox, so every item is
 * checked for shape, and every image's kind and size are taken from the
 * bytes read, never from the list's word alone.
 */
#include "sandbox/pictures.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/imagehdr.h"
#include "common/textbuf.h"
#include "sandbox/run.h"
#include "talk/texts.h"

bool pictures_item(const char *item, int64_t *bytes, imagehdr_t *hd, const char **path)
{
    static const imagehdr_kind_t kinds[] = { IMAGEHDR_PNG, IMAGEHDR_JPEG, IMAGEHDR_GIF,
                                             IMAGEHDR_WEBP };
    char *end;
    if (item[0] < '0' || item[0] > '9')
        return false;
    unsigned long long b = strtoull(item, &end, 10);
    if (*end != ' ' || b > (unsigned long long)INT64_MAX)
        return false;
    const char *p = end + 1;
    if (*p < '0' || *p > '9')
        return false;
    unsigned long long ww = strtoull(p, &end, 10);
    if (*end != 'x' || end[1] < '0' || end[1] > '9' || ww > UINT32_MAX)
        return false;
    unsigned long long hh = strtoull(end + 1, &end, 10);
    if (*end != ' ' || hh > UINT32_MAX)
        return false;
    p = end + 1;
    memset(hd, 0, sizeof *hd);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t n = strlen(imagehdr_name(kinds[i]));
        if (strncmp(p, imagehdr_name(kinds[i]), n) == 0 && p[n] == ' ' && p[n + 1] == '/') {
            hd->kind = kinds[i];
            *path = p + n + 1;
        }
    }
    if (hd->kind == IMAGEHDR_NONE)
        return false;
    hd->width = (uint32_t)ww;
    hd->height = (uint32_t)hh;
    *bytes = (int64_t)b;
    return true;
}

/* "[image PATH: 640x480 PNG, 1234 bytes" (the size only when known).  A
 * control character in the name (a newline could fake a line of ours)
 * shows as '?'. */
static void pictures_describe(textbuf_t *t, const char *path, const imagehdr_t *hd, int64_t bytes)
{
    textbuf_t name;
    textbuf_init(&name);
    for (const char *p = path; *p; p++) {
        char ch = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
        textbuf_append(&name, &ch, 1);
    }
    if (hd->width && hd->height)
        textbuf_printf(t, TX_PIC_IMAGE, name.buf ?: "", hd->width, hd->height,
                       imagehdr_name(hd->kind), bytes);
    else
        textbuf_printf(t, TX_PIC_IMAGE_NODIM, name.buf ?: "", imagehdr_name(hd->kind), bytes);
    textbuf_free(&name);
}

/* One image of the list: shown (added to holder) or named with why not. */
static void pictures_one(proto_msg_t *holder, textbuf_t *t, const char *path, imagehdr_t hd,
                         int64_t bytes, const pictures_limits_t *lim, int64_t *call_bytes,
                         pictures_read_fn read, void *ctx)
{
    if (lim->max_count <= 0) {
        pictures_describe(t, path, &hd, bytes);
        textbuf_puts(t, TX_PIC_OFF);
        return;
    }
    if ((int64_t)holder->n_images >= lim->max_count || holder->n_images >= PROTO_MAX_IMAGES) {
        pictures_describe(t, path, &hd, bytes);
        textbuf_printf(t, TX_PIC_TOO_MANY, lim->max_count);
        return;
    }
    if (bytes > lim->max_bytes) {
        pictures_describe(t, path, &hd, bytes);
        textbuf_printf(t, TX_PIC_TOO_BIG, lim->max_bytes);
        return;
    }
    if (*call_bytes + bytes > lim->max_call_bytes) {
        pictures_describe(t, path, &hd, bytes);
        textbuf_printf(t, TX_PIC_CALL_BIG, lim->max_call_bytes);
        return;
    }
    char *data = NULL;
    size_t len = 0;
    imagehdr_t real;
    if (read(ctx, path, (size_t)lim->max_bytes, &data, &len) != 0 ||
        imagehdr_parse(data, len, &real) == IMAGEHDR_NONE ||
        *call_bytes + (int64_t)len > lim->max_call_bytes) {
        pictures_describe(t, path, &hd, bytes);
        textbuf_puts(t, TX_PIC_CHANGED);
        free(data);
        return;
    }
    if (proto_msg_add_image(holder, path, imagehdr_mime(real.kind), data, len) != 0) {
        pictures_describe(t, path, &real, (int64_t)len);
        textbuf_puts(t, TX_PIC_NO_MEMORY);
    } else {
        *call_bytes += (int64_t)len;
        pictures_describe(t, path, &real, (int64_t)len);
        textbuf_puts(t, TX_PIC_SHOWN);
    }
    free(data);
}

proto_msg_t *pictures_from_list(const char *list, size_t len, const pictures_limits_t *lim,
                                pictures_read_fn read, void *ctx)
{
    if (!list || len == 0 || list[len - 1] != '\0')
        return NULL;
    proto_msg_t *holder = proto_msg_new(PROTO_REPLY);
    if (!holder)
        return NULL;
    textbuf_t t;
    textbuf_init(&t);
    int64_t call_bytes = 0;
    for (const char *item = list; item < list + len; item += strlen(item) + 1) {
        int64_t bytes;
        imagehdr_t hd;
        const char *path;
        if (!pictures_item(item, &bytes, &hd, &path))
            continue;
        pictures_one(holder, &t, path, hd, bytes, lim, &call_bytes, read, ctx);
    }
    if (t.len == 0) {
        textbuf_free(&t);
        proto_msg_destroy(&holder);
        return NULL;
    }
    size_t tl;
    char *text = textbuf_take(&t, &tl);
    proto_msg_set_text(holder, text, tl);
    free(text);
    textbuf_free(&t);
    return holder;
}

typedef struct {
    const run_via_t *v;
    const char *id;
} pictures_docker_t;

static int pictures_docker_read(void *ctx, const char *path, size_t max, char **data, size_t *len)
{
    pictures_docker_t *pd = ctx;
    return run_read_file(pd->v, pd->id, path, max, data, len);
}

proto_msg_t *pictures_collect(const run_via_t *v, const pictures_limits_t *configured,
                              const char *id, const char *list, size_t len)
{
    if (!list)
        return NULL;
    pictures_limits_t lim = *configured;
    /* A reply must stay well within what proto_decode accepts. */
    if (lim.max_call_bytes > PICTURES_CALL_MAX)
        lim.max_call_bytes = PICTURES_CALL_MAX;
    if (lim.max_bytes > lim.max_call_bytes)
        lim.max_bytes = lim.max_call_bytes;
    pictures_docker_t pd = { v, id };
    return pictures_from_list(list, len, &lim, pictures_docker_read, &pd);
}
