/* imagescan.h -- the image watcher's fallback where inotify cannot watch a
 * folder (agent/imagescan.c): a bounded walk for files changed since a
 * command started.
 *
 * inotify is the host's, shared by every sandbox (agent/watchdog.h): when
 * the kernel refuses the agent an instance or a watch, or the agent's own
 * cap on watches is reached, the folders it could not watch are walked at
 * the command's end instead, so no chat loses its pictures because another
 * chat took the host's inotify.  A file counts when its ctime is at or
 * after the command's start: a write, a rename into place and a copy that
 * keeps the mtime (cp -p, tar) all set it.
 */
#ifndef TALKBACK_AGENT_IMAGESCAN_H
#define TALKBACK_AGENT_IMAGESCAN_H

#include <stddef.h>
#include <time.h>

typedef struct imagescan imagescan_t;

/* A walk that looks at no more than max_entries folder entries in all and
 * keeps the max_found newest files.  NULL without memory. */
imagescan_t *imagescan_new(size_t max_entries, size_t max_found);
void imagescan_free(imagescan_t **self_p);

/* Walk root and its folders down to max_depth levels below it (0: root's
 * own files only), without following links or leaving root's file system,
 * and keep the regular files whose ctime is at or after since. */
void imagescan_walk(imagescan_t *s, const char *root, int max_depth, const struct timespec *since);

/* The files kept, oldest change first. */
void imagescan_each(const imagescan_t *s, void (*fn)(const char *path, void *ctx), void *ctx);

/* Entries looked at so far (bounded by max_entries). */
size_t imagescan_entries(const imagescan_t *s);

#endif
