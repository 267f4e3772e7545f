/* output.h -- a run's output as the model may read it: text stays text,
 * binary output is described instead of pasted.
 *
 * `cat` of a compiled program, an image or a gzip file puts thousands of
 * control bytes and U+FFFD characters in front of a small model, which
 * then "reads" them.  A result says instead what the bytes are (their
 * kind, from the file's magic number, and their size) and shows the first
 * ones as a hex dump, with the commands that look inside safely:
 *
 *     $ cat a.out
 *     [The output is binary, not text: 15 960 bytes of an ELF program or library (a
 *     compiled Linux binary). Its raw bytes are not shown; the first 64 in hex:]
 *     00000000: 7f45 4c46 0201 0100 0000 0000 0000 0000  .ELF............
 *     ...
 *     [To look inside: file FILE, xxd FILE | head, strings FILE | head. ...]
 *
 * Text that only holds a few control bytes keeps its text: terminal colour
 * codes (ESC [ ... m) are taken out, a carriage return that redraws a
 * progress line keeps what the line showed last, and any other control
 * byte is shown as ^X.  Pure code, unit tested (tests/unit/test_hints.c).
 */
#ifndef TALKBACK_HINTS_OUTPUT_H
#define TALKBACK_HINTS_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include "common/textbuf.h"

/* Whether bytes look binary: a NUL, or one byte in ten that no text has
 * (a control byte, invalid UTF-8). */
bool hints_output_is_binary(const char *s, size_t n);

/* Append c to t as the model reads it (see above): capbuf_render's text
 * for text, cleaned of control bytes; a description and a hex preview
 * for binary output. */
void hints_output_render(const capbuf_t *c, textbuf_t *t);

/* The same for bytes held whole (run_code's output, n bytes of it). */
void hints_output_render_bytes(const char *s, size_t n, textbuf_t *t);

#endif
