/* images.h -- which image files a command wrote under /work, at no cost
 * when it wrote none (agent/images.c).
 *
 * The agent watches /work's folders with one inotify instance, set up at
 * the first command and kept up to date as folders come and go, so a
 * command pays nothing for a large /work: only the files it writes make
 * events.  A written file whose first bytes are a PNG, JPEG, GIF or WebP
 * is noted; a command's EXIT frame then names the ones noted while it ran.
 * Folders inotify cannot watch (the host's inotify used up, or the watch
 * cap reached) are walked at the command's end instead (agent/imagescan.h).
 */
#ifndef TALKBACK_AGENT_IMAGES_H
#define TALKBACK_AGENT_IMAGES_H

#include <stdint.h>

#include "proto/frame.h"

/* Where images are looked for. */
#define IMAGES_ROOT "/work"

/* A command starts: set up the watches if not yet done, take in the events
 * so far, and return the mark to give images_attach at its end. */
uint64_t images_mark(void);

/* The inotify descriptor to poll for input (-1: none), and what to call
 * when it is readable: events are taken in as they come, so a command
 * that writes many files cannot overflow the kernel's queue unnoticed. */
int images_fd(void);
void images_drain(void);

/* A command that started at mark ended: put the images written since into
 * m's FS_IMAGES (the bytes stay valid until the next call). */
void images_attach(frame_msg_t *m, uint64_t mark);

/* No command runs any more: forget what was noted. */
void images_idle(void);

#endif
