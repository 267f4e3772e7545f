/* notices.h -- what the model is told when its chat's sandbox was stopped
 * and is back, or was removed and is new:
 *   [Resumed this chat's sandbox, stopped 2 days ago (idle for over 60
 *   minutes): its files and installs are as they were, ...]
 *   [This chat's previous sandbox was removed 5 minutes ago because it grew
 *   past the 2048 MiB disk cap: its files and installs are gone, ...]
 */
#ifndef TALKBACK_SANDBOX_NOTICES_H
#define TALKBACK_SANDBOX_NOTICES_H

#include <stdint.h>

#include "common/textbuf.h"
#include "docker/docker.h"
#include "kept/kept.h"

/* Container id, stopped at finished (unix s; 0 unknown), was started
 * again: its notice (and the stop reason left for it is used up). */
void notice_resumed(const kept_t *k, const char *id, int64_t finished, textbuf_t *notice);
/* Container id, paused by the manager when the reaper asked, was
 * unpaused for a call: its notice (the pause record is used up):
 *   [This chat's sandbox was paused for 12 minutes (no calls for over 5
 *   minutes) and runs again: its files and the programs it left running
 *   (servers, background jobs) are as they were.] */
void notice_unpaused(const kept_t *k, const char *id, textbuf_t *notice);
/* Chat conv's new sandbox (named name) replaces one that was removed: its
 * notice, when a tombstone says so (the tombstone is used up). */
void notice_gone(docker_t *d, const char *conv, const char *name, textbuf_t *notice);

#endif
