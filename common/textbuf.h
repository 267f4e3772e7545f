/* textbuf.h -- the one growable byte buffer, and the head+tail output cap.
 *
 * textbuf_t is a growable buffer (curl's dynbuf is the model): always
 * NUL-terminated, optionally bounded (textbuf_init_max), with sticky
 * errors: once an allocation failed (oom) or an append would have passed
 * the bound (overflow), that append and every later one is dropped, so the
 * bytes held are always a prefix of what was appended and a caller checks
 * once, at the end.  Every growable buffer of the tree is one: texts for
 * the model, Docker's answers (docker/docker.c), the agent's frames
 * (proto/frame.c, which the static agent builds too: libc only).
 * capbuf_t keeps at most `cap` bytes of a stream that may be far longer: the
 * first cap/2 bytes and the last cap/2 bytes, and counts what it dropped, so
 * a 1 GiB output costs 64 KiB of memory and the model is told how many bytes
 * were cut.  Pure code, unit-tested (tests/unit/test_textbuf.c).
 */
#ifndef TALKBACK_TEXTBUF_H
#define TALKBACK_TEXTBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *buf;    /* NULL until the first byte; then buf[len] == '\0' */
    size_t len;   /* bytes held, the NUL not counted */
    size_t cap;   /* bytes allocated */
    size_t max;   /* most bytes held (the NUL not counted); 0: no bound */
    int oom;      /* set once an allocation failed; further appends are dropped */
    int overflow; /* set once an append would have passed max; the same */
} textbuf_t;

void textbuf_init(textbuf_t *t);
/* A buffer that holds at most max bytes (0: no bound). */
void textbuf_init_max(textbuf_t *t, size_t max);
void textbuf_free(textbuf_t *t);
/* Empty again, errors cleared; the memory and the bound are kept. */
void textbuf_reset(textbuf_t *t);
/* Room for `more` bytes past len (and the NUL): 0, or -1 when out of memory
 * or past the bound (then oom or overflow is set).  For writers that fill
 * buf + len themselves and then call textbuf_setlen. */
int textbuf_reserve(textbuf_t *t, size_t more);
/* The length after writing into reserved room (len < cap); NUL-terminates. */
void textbuf_setlen(textbuf_t *t, size_t len);
/* 0, or -1 when the bytes were dropped (an error is set). */
int textbuf_append(textbuf_t *t, const void *data, size_t len);
int textbuf_puts(textbuf_t *t, const char *s);
int textbuf_printf(textbuf_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether an error dropped bytes (oom or overflow). */
int textbuf_failed(const textbuf_t *t);
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
