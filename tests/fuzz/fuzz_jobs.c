/* fuzz_jobs.c -- libFuzzer harness for what the sandbox manager reads of
 * jobs that ended (sandbox/jobs.c).
 *
 * The items come in an agent's EXIT (jobs), and anything in the sandbox
 * can forge one: the parser must never read past its input, and every
 * line written from them must stay bounded and hold no control byte but
 * the newline that ends it, and no backtick inside a command.
 *
 * Input: the FS_JOBS bytes (NUL-terminated items, or not).  Built only
 * with -DTALKBACK_FUZZ=ON and clang; run by tests/fuzz/run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/jobs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly size bytes: ASan sees a read past the input. */
    char *items = malloc(size ? size : 1);
    if (!items)
        return 0;
    if (size)
        memcpy(items, data, size);
    textbuf_t t;
    textbuf_init(&t);
    jobs_ended_lines(items, size, &t);
    if (t.len > JOBS_ITEMS_MAX * 1024) {
        fprintf(stderr, "fuzz_jobs: %zu bytes of lines\n", t.len);
        abort();
    }
    size_t lines = 0;
    for (size_t i = 0; i < t.len; i++) {
        unsigned char c = (unsigned char)t.buf[i];
        if ((c < 0x20 && c != '\n') || c == 0x7f) {
            fprintf(stderr, "fuzz_jobs: control byte %#x in a line\n", c);
            abort();
        }
        lines += c == '\n';
    }
    if (lines > JOBS_ITEMS_MAX) {
        fprintf(stderr, "fuzz_jobs: %zu lines\n", lines);
        abort();
    }
    /* Each line holds exactly the text's four backticks: around the
     * command and around `talkback job N`. */
    for (const char *p = t.buf; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p), ticks = 0;
        for (size_t i = 0; i < n; i++)
            ticks += p[i] == '`';
        if (ticks != 4) {
            fprintf(stderr, "fuzz_jobs: %zu backticks in a line\n", ticks);
            abort();
        }
        p += n + (nl ? 1 : 0);
    }
    textbuf_free(&t);
    free(items);
    return 0;
}
