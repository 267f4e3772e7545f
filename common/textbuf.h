/* textbuf.h -- growable byte buffers and the head+tail output cap.
 *
 * textbuf_t is a plain growable buffer (always NUL-terminated).
 * capbuf_t keeps at most `cap` bytes of a stream that may be far longer: the
 * first cap/2 bytes and the last cap/2 bytes, and counts what it dropped, so
 * a 1 GiB output costs 64 KiB of memory and the model is told how many bytes
 * were cut.  Pure code, unit-tested.
 */
#ifndef TALKBACK_TEXTBUF_H
#define TALKBACK_TEXTBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *buf;
    size_t len, cap;
    int oom; /* set once an allocation failed; further appends are dropped */
} textbuf_t;

void textbuf_init(textbuf_t *t);
void textbuf_free(textbuf_t *t);
void textbuf_append(textbuf_t *t, const void *data, size_t len);
void textbuf_puts(textbuf_t *t, const char *s);
void textbuf_printf(textbuf_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Take ownership of the bytes (NUL-terminated); t is reset. */
char *textbuf_take(textbuf_t *t, size_t *len);

typedef struct {
    size_t cap; /* total bytes kept at most (head + tail) */
    char *head; /* first cap/2 bytes */
    size_t head_len;
    char *ring; /* last cap - cap/2 bytes, circular */
    size_t ring_len, ring_pos;
    uint64_t total; /* bytes seen */
} capbuf_t;

int capbuf_init(capbuf_t *c, size_t cap);
void capbuf_free(capbuf_t *c);
void capbuf_append(capbuf_t *c, const char *data, size_t len);
/* Bytes dropped from the middle. */
uint64_t capbuf_cut(const capbuf_t *c);
/* Render into t: head, then if bytes were cut a line
 * "\n[... N bytes cut from the middle of the output ...]\n", then tail. */
void capbuf_render(const capbuf_t *c, textbuf_t *t);

#endif
