/* install.c -- a language's toolchain installed on first use (see
 * install.h).  One exec: when the program is there, exit 0 at once; else
 * apt-get update and install, its log kept in /tmp, exit 10 when it
 * worked, 11 with the log's last lines when it did not.
 */
#include "judge/install.h"

#include <stdio.h>
#include <stdlib.h>

#include "judge/calls.h"
#include "proto/ops.h"
#include "talk/texts.h"

#define INSTALL_SCRIPT                                                                             \
    "command -v %s >/dev/null 2>&1 && exit 0\n"                                                    \
    "{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "               \
    "--no-install-recommends %s; } > /tmp/talkback-install.log 2>&1 && command -v %s "             \
    ">/dev/null && exit 10\n"                                                                      \
    "tail -n 3 /tmp/talkback-install.log | cut -c1-200\nexit 11\n"

judge_install_t judge_install(worker_job_t *job, const judge_opts_t *o, const language_t *lang,
                              textbuf_t *t, bool *noticed)
{
    if (!lang->install || !lang->needs)
        return JUDGE_INSTALL_HAD;
    char script[1024];
    snprintf(script, sizeof script, INSTALL_SCRIPT, lang->needs, lang->install, lang->needs);
    int tmo = (int)o->code_compile_timeout;
    proto_msg_t *r = judge_exec(job, o, script, tmo, false, 0);
    if (judge_failed(r)) {
        judge_failure_text(r, t);
        proto_msg_destroy(&r);
        return JUDGE_INSTALL_LOST;
    }
    judge_take_notice(t, r, noticed);
    ops_exec_t x;
    ops_exec_read(r, &x);
    judge_install_t res = JUDGE_INSTALL_FAILED;
    if (!x.timed_out && x.exit_code == 0) {
        res = JUDGE_INSTALL_HAD;
    } else if (!x.timed_out && x.exit_code == 10) {
        textbuf_printf(t, TX_JG_INSTALLED, languages_title(lang), lang->install,
                       (double)x.elapsed_ms / 1000.0);
        res = JUDGE_INSTALL_DONE;
    } else {
        /* The log's last lines, on one line, without control bytes
         * (they come from the sandbox). */
        char why[640];
        size_t n = 0;
        for (size_t i = 0; x.output && i < x.output_len && n + 1 < sizeof why; i++)
            why[n++] = (unsigned char)x.output[i] < 0x20 || x.output[i] == 0x7f ? ' ' : x.output[i];
        while (n && why[n - 1] == ' ')
            n--;
        char when[64] = "";
        if (x.timed_out)
            snprintf(when, sizeof when, ", stopped after %d s", tmo);
        textbuf_printf(t, TX_JG_INSTALL_FAILED, languages_title(lang), lang->install, when,
                       n ? ": " : "", (int)n, why);
    }
    proto_msg_destroy(&r);
    return res;
}
