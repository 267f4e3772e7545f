/* notices.c -- the line at the top of a result that says what happened to
 * the chat's sandbox while nobody was calling (see notices.h).
 *
 * Both are talkback's own sentences.  Nothing in them is read from a
 * sandbox: the stop reason comes from state_dir on the host, and only its
 * known forms ("idle N", "operator") are used; the removal reason is the label the
 * reaper (or the sandbox manager's disk check) put on the tombstone.
 */
#include "sandbox/notices.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <string.h>

#include "kept/kept.h"
#include "sandbox/background.h"
#include "sandbox/running.h"
#include "talk/texts.h"

/* The words for a stop that made room for another chat ("room-user 20",
 * "room-all 100": sandbox/running.h); false for any other reason. */
static bool notice_room_words(const char *reason, textbuf_t *why)
{
    long cap;
    char tail;
    if (sscanf(reason, RUNNING_REASON_USER " %ld%c", &cap, &tail) == 1 && cap > 0)
        textbuf_printf(why, TX_SB_WHY_ROOM_USER, cap);
    else if (sscanf(reason, RUNNING_REASON_ALL " %ld%c", &cap, &tail) == 1 && cap > 0)
        textbuf_printf(why, TX_SB_WHY_ROOM_ALL, cap);
    else if (sscanf(reason, KEPT_REASON_PAUSED_MAX " %ld%c", &cap, &tail) == 1 && cap > 0)
        textbuf_printf(why, TX_SB_WHY_PAUSED_MAX, cap);
    else
        return false;
    return true;
}

/* The line that tells the model its sandbox was stopped and is back. */
void notice_resumed(const kept_t *k, const char *id, int64_t finished, textbuf_t *notice)
{
    char age[64];
    int64_t now = (int64_t)time(NULL);
    kept_human_age(finished > 0 ? now - finished : 0, age, sizeof age);
    /* The reason is the reaper's, from state_dir; only its known form is
     * told, as our own words. */
    char *reason = kept_reason_take(k, id, finished);
    textbuf_t why;
    textbuf_init(&why);
    long minutes;
    char tail;
    if (reason && sscanf(reason, "idle %ld%c", &minutes, &tail) == 1 && minutes > 0)
        textbuf_printf(&why, TX_SB_WHY_IDLE, minutes);
    else if (reason && strcmp(reason, "operator") == 0)
        textbuf_puts(&why, TX_SB_WHY_OPERATOR);
    else if (reason && notice_room_words(reason, &why))
        ; /* stopped to make room (sandbox/running.h) */
    else
        textbuf_puts(&why, TX_SB_WHY_UNKNOWN);
    if (finished > 0)
        textbuf_printf(notice, TX_SB_RESUMED_AGO, age, why.buf);
    else
        textbuf_printf(notice, TX_SB_RESUMED, why.buf);
    textbuf_puts(notice, TX_SB_RESUMED_KEPT);
    /* What ran in the background before the stop: the manager's record
     * in state_dir, bounded and cleaned (background.h). */
    textbuf_t before;
    textbuf_init(&before);
    bg_resume_words(k, id, &before);
    textbuf_puts(notice, before.len ? before.buf : TX_SB_RESUMED_RESTART);
    textbuf_puts(notice, "]\n");
    textbuf_free(&before);
    textbuf_free(&why);
    free(reason);
}

/* When a new sandbox replaces one the reaper removed, say so. */
void notice_gone(docker_t *d, const char *conv, const char *name, textbuf_t *notice)
{
    int64_t gone_at = 0;
    char *reason = kept_tombstone_take(d, conv, name, &gone_at);
    if (!reason)
        return;
    char age[64];
    kept_human_age((int64_t)time(NULL) - gone_at, age, sizeof age);
    textbuf_printf(notice, TX_SB_GONE, age, reason);
    free(reason);
}

/* The line that tells the model its sandbox was paused and runs again. */
void notice_unpaused(const kept_t *k, const char *id, textbuf_t *notice)
{
    int64_t since = 0;
    char *reason = kept_paused_take(k, id, &since);
    long minutes;
    char tail, age[64];
    textbuf_puts(notice, TX_SB_UNPAUSED);
    if (reason && since > 0) {
        kept_human_age((int64_t)time(NULL) - since, age, sizeof age);
        textbuf_printf(notice, TX_SB_UNPAUSED_FOR, age);
    }
    if (reason && sscanf(reason, "idle %ld%c", &minutes, &tail) == 1 && minutes > 0)
        textbuf_printf(notice, TX_SB_UNPAUSED_IDLE, minutes, minutes == 1 ? "" : "s");
    else if (!reason)
        textbuf_puts(notice, TX_SB_UNPAUSED_NOT_US);
    textbuf_puts(notice, TX_SB_UNPAUSED_END);
    free(reason);
}
