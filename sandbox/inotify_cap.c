/* inotify_cap.c -- the caps of the agent's inotify watchdog and the line
 * a result gains when it killed something (see inotify_cap.h).
 *
 * The caps are the process's configuration, set once by main.c before any
 * link to an agent exists and only read afterwards, so they need no lock.
 * Everything an EXIT says comes from the sandbox: numbers are range-checked
 * and the process name is cut to printable characters before the line
 * names it.
 */
#include "sandbox/inotify_cap.h"
#include "talk/texts.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int64_t cap_watches, cap_instances;

void icap_set(int64_t max_watches, int64_t max_instances)
{
    cap_watches = max_watches > 0 ? max_watches : 0;
    cap_instances = max_instances > 0 ? max_instances : 0;
}

void icap_hello(frame_msg_t *hello)
{
    if (cap_watches > 0)
        frame_set_num(hello, FN_INOTIFY_WATCHES, cap_watches);
    if (cap_instances > 0)
        frame_set_num(hello, FN_INOTIFY_INSTANCES, cap_instances);
}

void icap_run(frame_msg_t *run, bool wants)
{
    if (wants)
        frame_set_num(run, FN_WD_REPORT, 1);
}

void icap_take(icap_report_t *r, const frame_msg_t *m)
{
    *r = (icap_report_t){ 0 };
    int64_t killed = frame_num(m, FN_WD_KILLED, 0), pid = frame_num(m, FN_WD_PID, 0);
    int64_t w = frame_num(m, FN_WD_WATCHES, 0), i = frame_num(m, FN_WD_INSTANCES, 0);
    if (killed <= 0 || killed > 1000000 || pid <= 0 || pid > 1 << 22 || w < 0 || i < 0 ||
        w > INT32_MAX || i > INT32_MAX)
        return;
    *r = (icap_report_t){ .killed = killed, .pid = pid, .watches = w, .instances = i };
    size_t n = frame_has_str(m, FS_WD_COMM) ? m->str_len[FS_WD_COMM] : 0, o = 0;
    for (size_t k = 0; k < n && o + 1 < sizeof r->comm; k++) {
        char c = m->str[FS_WD_COMM][k];
        r->comm[o++] = c >= 0x20 && c < 0x7f && c != '`' ? c : '?';
    }
    r->comm[o] = '\0';
}

void icap_line(const icap_report_t *r, textbuf_t *t)
{
    if (!r || r->killed <= 0)
        return;
    /* The cap it was furthest past, by its own share. */
    bool by_watches = cap_watches > 0 &&
                      (cap_instances <= 0 || (double)r->watches / (double)cap_watches >=
                                                 (double)r->instances / (double)cap_instances);
    /* The agent counts a holder's watches only up to past the cap. */
    char held[96], more[64] = "";
    if (cap_watches > 0 && r->watches > cap_watches)
        snprintf(held, sizeof held, "over %" PRId64 " watches", cap_watches);
    else
        snprintf(held, sizeof held, "%" PRId64 " watches", r->watches);
    if (r->killed > 1)
        snprintf(more, sizeof more, ", and %" PRId64 " more process%s", r->killed - 1,
                 r->killed > 2 ? "es" : "");
    textbuf_printf(t, TX_SB_INOTIFY_KILLED, by_watches ? "watches" : "instances",
                   by_watches ? cap_watches : cap_instances,
                   by_watches ? "inotify_max_watches" : "inotify_max_instances", r->pid,
                   r->comm[0] ? r->comm : "?", held, r->instances, r->instances == 1 ? "" : "s",
                   more);
}
