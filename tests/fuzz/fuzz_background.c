/* fuzz_background.c -- libFuzzer harness for what the sandbox manager reads
 * of programs left running in the background (sandbox/background.c).
 *
 * The items come in an agent's EXIT (bgl, bgd, bga), and anything in the
 * sandbox can forge one: the parser must never read past its input, and
 * every line written from them must stay bounded and free of control
 * bytes (but the tail's newlines) and backticks inside a label.
 *
 * Input layout: byte 0 picks what the rest is (bit 0: the list of this
 * command, bit 1: ended between calls, bit 2: the set running, kept as
 * the record and read back by the resume); byte 1 how many of the rest's
 * first bytes are the listeners a probe would print; the rest is the list
 * (NUL-terminated items, or not).
 *
 * Built only with -DTALKBACK_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt);
 * run by tests/fuzz/run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kept/kept.h"
#include "sandbox/background.h"

static const char *probe_text;
static size_t probe_len;

static int fake_probe(void *ctx, const char *command, textbuf_t *out)
{
    (void)ctx;
    (void)command;
    textbuf_append(out, probe_text, probe_len);
    return 0;
}

/* Every line is bounded, and past the sentences' own text holds no
 * control byte but newlines. */
static void check(const textbuf_t *t)
{
    if (t->len > 64 * 1024) {
        fprintf(stderr, "fuzz_background: %zu bytes of lines\n", t->len);
        abort();
    }
    for (size_t i = 0; i < t->len; i++) {
        unsigned char c = (unsigned char)t->buf[i];
        if ((c < 0x20 && c != '\n') || c == 0x7f) {
            fprintf(stderr, "fuzz_background: control byte %#x in a line\n", c);
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[] = "/tmp/fuzz-background-XXXXXX";
    static kept_t *kept; /* the records: made once, kept for the run */
    if (!kept) {
        if (!mkdtemp(dir) || !(kept = kept_new(dir)))
            abort();
    }
    if (size < 2)
        return 0;
    uint8_t what = data[0];
    size_t plen = data[1] < size - 2 ? data[1] : size - 2;
    probe_text = (const char *)data + 2;
    probe_len = plen;
    const char *list = (const char *)data + 2 + plen;
    size_t len = size - 2 - plen;
    char *copy = malloc(len + 1);
    if (!copy)
        return 0;
    memcpy(copy, list, len);
    bgr_t r = { 0 };
    if (what & 1) {
        r.left = copy;
        r.left_len = len;
    } else if (what & 2) {
        r.died = copy;
        r.died_len = len;
    } else {
        r.alive = copy;
        r.alive_len = len;
        r.has_alive = true;
    }
    textbuf_t t;
    textbuf_init(&t);
    bg_died_lines(&r, false, &t);
    bg_died_lines(&r, true, &t);
    bg_left_lines(&r, probe_text, probe_len, fake_probe, NULL, &t);
    const char *id = "00000000000000000000000000000000000000000000000000000000000000aa";
    if (what & 4) {
        bg_record(kept, id, &r);
        bg_resume_words(kept, id, &t);
    }
    check(&t);
    textbuf_free(&t);
    bgr_free(&r);
    return 0;
}
