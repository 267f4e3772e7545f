/* textbuf.c -- the growable buffer and the head+tail output cap (see
 * textbuf.h).
 *
 * capbuf keeps the first half of its budget verbatim and the second half
 * as a ring of the most recent bytes: the start of an output says what a
 * program was doing, the end says how it finished, and the middle of a
 * 1 GiB log is what a model can least use.
 */
#include "common/textbuf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void textbuf_init(textbuf_t *t)
{
    memset(t, 0, sizeof *t);
}

void textbuf_init_max(textbuf_t *t, size_t max)
{
    memset(t, 0, sizeof *t);
    t->max = max;
}

void textbuf_free(textbuf_t *t)
{
    size_t max = t->max;
    free(t->buf);
    memset(t, 0, sizeof *t);
    t->max = max;
}

void textbuf_reset(textbuf_t *t)
{
    t->len = 0;
    t->oom = t->overflow = 0;
    if (t->buf)
        t->buf[0] = '\0';
}

/* Room for more bytes and the NUL, doubling from 256 bytes.  Checked
 * against the bound and against size_t wrapping before any arithmetic. */
int textbuf_reserve(textbuf_t *t, size_t more)
{
    if (t->oom || t->overflow)
        return -1;
    if ((t->max && more > t->max - t->len) || more > SIZE_MAX / 2 - t->len - 1) {
        t->overflow = 1;
        return -1;
    }
    if (t->len + more + 1 <= t->cap)
        return 0;
    size_t ncap = t->cap ? t->cap : 256;
    while (ncap < t->len + more + 1)
        ncap *= 2;
    char *nb = realloc(t->buf, ncap);
    if (!nb) {
        t->oom = 1;
        return -1;
    }
    t->buf = nb;
    t->cap = ncap;
    return 0;
}

void textbuf_setlen(textbuf_t *t, size_t len)
{
    if (!t->buf || len >= t->cap)
        return; /* not reserved: a caller's bug, never a write past cap */
    t->len = len;
    t->buf[len] = '\0';
}

int textbuf_append(textbuf_t *t, const void *data, size_t len)
{
    if (textbuf_reserve(t, len))
        return -1;
    if (len)
        memcpy(t->buf + t->len, data, len);
    t->len += len;
    t->buf[t->len] = '\0';
    return 0;
}

int textbuf_puts(textbuf_t *t, const char *s)
{
    return textbuf_append(t, s, strlen(s));
}

int textbuf_printf(textbuf_t *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || textbuf_reserve(t, (size_t)n))
        return -1;
    va_start(ap, fmt);
    vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
    return 0;
}

int textbuf_failed(const textbuf_t *t)
{
    return t->oom || t->overflow;
}

char *textbuf_take(textbuf_t *t, size_t *len)
{
    if (!t->buf)
        textbuf_append(t, "", 0);
    char *b = t->buf;
    if (len)
        *len = t->len;
    size_t max = t->max;
    memset(t, 0, sizeof *t);
    t->max = max;
    return b;
}

int capbuf_init(capbuf_t *c, size_t cap)
{
    memset(c, 0, sizeof *c);
    if (cap < 2)
        cap = 2;
    c->cap = cap;
    c->head = malloc(cap / 2);
    c->ring = malloc(cap - cap / 2);
    if (!c->head || !c->ring) {
        capbuf_free(c);
        return -1;
    }
    return 0;
}

void capbuf_free(capbuf_t *c)
{
    free(c->head);
    free(c->ring);
    memset(c, 0, sizeof *c);
}

void capbuf_append(capbuf_t *c, const char *data, size_t len)
{
    c->total += len;
    size_t hcap = c->cap / 2;
    if (c->head_len < hcap) {
        size_t n = hcap - c->head_len;
        if (n > len)
            n = len;
        memcpy(c->head + c->head_len, data, n);
        c->head_len += n;
        data += n;
        len -= n;
    }
    size_t rcap = c->cap - hcap;
    if (len >= rcap) { /* only the last rcap bytes can survive */
        data += len - rcap;
        len = rcap;
    }
    while (len) {
        size_t n = rcap - c->ring_pos;
        if (n > len)
            n = len;
        memcpy(c->ring + c->ring_pos, data, n);
        c->ring_pos = (c->ring_pos + n) % rcap;
        if (c->ring_len < rcap)
            c->ring_len = (c->ring_len + n > rcap) ? rcap : c->ring_len + n;
        data += n;
        len -= n;
    }
}

uint64_t capbuf_cut(const capbuf_t *c)
{
    return c->total - c->head_len - c->ring_len;
}

void capbuf_render(const capbuf_t *c, textbuf_t *t)
{
    textbuf_append(t, c->head, c->head_len);
    uint64_t cut = capbuf_cut(c);
    if (cut)
        textbuf_printf(t, "\n[... %" PRIu64 " bytes cut from the middle of the output ...]\n", cut);
    size_t rcap = c->cap - c->cap / 2;
    if (c->ring_len < rcap) {
        textbuf_append(t, c->ring, c->ring_len);
    } else {
        textbuf_append(t, c->ring + c->ring_pos, rcap - c->ring_pos);
        textbuf_append(t, c->ring, c->ring_pos);
    }
}
