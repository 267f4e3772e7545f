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

/* The words for a stop that made room for another chat ("room-user 20",
 * "room-all 100": sandbox/running.h); false for any other reason. */
static bool notice_room_words(const char *reason, textbuf_t *why)
{
    long cap;
    char tail;
    if (sscanf(reason, RUNNING_REASON_USER " %ld%c", &cap, &tail) == 1 && cap > 0)
        textbuf_printf(why,
                       "to make room for another chat of this user: one user may have %ld "
                       "running at once, setting `max_running_per_user`, and this one was the "
                       "least recently used",
                       cap);
    else if (sscanf(reason, RUNNING_REASON_ALL " %ld%c", &cap, &tail) == 1 && cap > 0)
        textbuf_printf(why,
                       "to make room for another chat: the sandbox host runs at most %ld at once, "
                       "setting `max_running`, and this one was the least recently used",
                       cap);
    else if (sscanf(reason, KEPT_REASON_PAUSED_MAX " %ld%c", &cap, &tail) == 1 && cap > 0)
        textbuf_printf(why,
                       "idle and paused, then stopped as the least recently used of more than "
                       "%ld paused sandboxes, setting `max_paused`",
                       cap);
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
        textbuf_printf(&why, "idle for over %ld minutes", minutes);
    else if (reason && strcmp(reason, "operator") == 0)
        textbuf_puts(&why, "by the operator");
    else if (reason && notice_room_words(reason, &why))
        ; /* stopped to make room (sandbox/running.h) */
    else
        textbuf_puts(&why, "not by talkback: most likely a restart of Docker or of the host");
    if (finished > 0)
        textbuf_printf(notice, "[Resumed this chat's sandbox, stopped %s ago (%s): ", age, why.buf);
    else
        textbuf_printf(notice, "[Resumed this chat's sandbox (%s): ", why.buf);
    textbuf_puts(notice,
                 "its files and installs are as they were, but nothing it ran is running now. ");
    /* What ran in the background before the stop: the manager's record
     * in state_dir, bounded and cleaned (background.h). */
    textbuf_t before;
    textbuf_init(&before);
    bg_resume_words(k, id, &before);
    textbuf_puts(notice, before.len ? before.buf : "Start servers and background jobs again.");
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
    textbuf_printf(
        notice,
        "[This chat's previous sandbox was removed %s ago %s: its files and installs are "
        "gone, and this is a new, empty one.]\n",
        age, reason);
    free(reason);
}

/* The line that tells the model its sandbox was paused and runs again. */
void notice_unpaused(const kept_t *k, const char *id, textbuf_t *notice)
{
    int64_t since = 0;
    char *reason = kept_paused_take(k, id, &since);
    long minutes;
    char tail, age[64];
    textbuf_puts(notice, "[This chat's sandbox was paused");
    if (reason && since > 0) {
        kept_human_age((int64_t)time(NULL) - since, age, sizeof age);
        textbuf_printf(notice, " for %s", age);
    }
    if (reason && sscanf(reason, "idle %ld%c", &minutes, &tail) == 1 && minutes > 0)
        textbuf_printf(notice, " (no calls for over %ld minute%s)", minutes,
                       minutes == 1 ? "" : "s");
    else if (!reason)
        textbuf_puts(notice, " (not by talkback)");
    textbuf_puts(notice, " and runs again: its files and the programs it left running (servers, "
                         "background jobs) are as they were.]\n");
    free(reason);
}
