/* files.h -- the agent's WRITE: a file written atomically (agent.c).
 *
 * A temporary file in the target's folder, mode and mtime set, then
 * rename.  Anything unusual (the target is a folder, a parent is a file)
 * is refused, and the manager writes through Docker's archive API
 * instead, which decides those cases as it always did.
 */
#ifndef TALKBACK_AGENT_FILES_H
#define TALKBACK_AGENT_FILES_H

#include <stddef.h>
#include <stdint.h>

/* Write data (len bytes) to the absolute path (pathlen bytes, not
 * NUL-terminated), with mode and mtime (unix s; 0: now), making its
 * parent folders.  0 when written; else an errno, with *what the step
 * that failed ("write", "create", "rename"). */
int files_write(const char *path, size_t pathlen, const void *data, size_t len, unsigned mode,
                int64_t mtime, const char **what);

#endif
