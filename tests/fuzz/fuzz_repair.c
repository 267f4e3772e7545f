/* fuzz_repair.c -- libFuzzer harness for the reply proxy's reading of a
 * chat-completions request (proxy/repair.c) and of run_code and run
 * results (proxy/verdict.c).
 *
 * Everything in a request comes from the chat client and, through the
 * tool results, from programs the model ran: it must never crash, leak or
 * read out of bounds.  Input layout: the whole input is the request body
 * for repair_find; the same bytes, cut at the first NUL, are a tool result
 * text for repair_code_verdict (both ways) and repair_run_verdict.  A PASS
 * is only ever read from a call that compared.
 *
 * Built only with -DTALKBACK_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt);
 * run by tests/fuzz/run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/repair.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const repair_tools_t tools = { .run_code = "run_code",
                                          .write_file = "write_file",
                                          .run = "run" };
    repair_program_t p;
    if (repair_find((const char *)data, size, &tools, &p) == 1) {
        char *r = repair_render(&p, "", 0);
        free(r);
        repair_program_free(&p);
    }
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (repair_code_verdict(text, false) == REPAIR_PASS) {
        fprintf(stderr, "fuzz_repair: a PASS from a call that did not compare\n");
        abort();
    }
    (void)repair_code_verdict(text, true);
    (void)repair_run_verdict(text);
    free(text);
    return 0;
}
