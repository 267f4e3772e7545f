/* report.c -- pieces of what run_code's result says about a program's
 * end (see report.h): a signal's name, compiler messages trimmed. */
#include "judge/report.h"

#include <signal.h>
#include <string.h>

#include "talk/texts.h"

const char *judge_signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV (invalid memory access: a bad pointer, an index out of range, or a stack "
               "overflow from deep recursion)";
    case SIGABRT:
        return "SIGABRT (the program aborted: a failed assert, an uncaught exception, or a "
               "corrupted heap)";
    case SIGFPE: return "SIGFPE (arithmetic error: most often a division by zero)";
    case SIGKILL: return "SIGKILL";
    case SIGBUS: return "SIGBUS (bad memory access)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGPIPE: return "SIGPIPE (wrote to a closed pipe)";
    case SIGTERM: return "SIGTERM";
    default: return NULL;
    }
}

void judge_trim_compiler_output(const char *s, size_t len, size_t max_lines, size_t max_bytes,
                                textbuf_t *out)
{
    size_t lines = 0, i = 0, keep = 0;
    while (i < len && lines < max_lines && i < max_bytes) {
        const char *nl = memchr(s + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - s) + 1 : len;
        if (end > max_bytes && lines > 0)
            break;
        i = end;
        keep = end;
        lines++;
    }
    if (keep == 0 && len)
        keep = len < max_bytes ? len : max_bytes;
    textbuf_append(out, s, keep);
    if (keep && s[keep - 1] != '\n')
        textbuf_puts(out, "\n");
    if (keep < len) {
        size_t rest_lines = 0;
        for (size_t j = keep; j < len; j++)
            if (s[j] == '\n')
                rest_lines++;
        if (len && s[len - 1] != '\n')
            rest_lines++;
        textbuf_printf(out, TX_JG_COMPILER_LEFT_OUT, rest_lines);
    }
}
