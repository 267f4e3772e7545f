/* known.h -- the host names the hub has seen a worker on, kept in a file.
 *
 * A chat's sandbox lives on one Docker host.  When that host's sandbox
 * manager is down the hub cannot ask it whether it holds a chat, and a
 * gateway started while it is down would not even know the host exists:
 * a chat found on no live manager would get a new sandbox elsewhere and
 * its files would be silently lost.  So the hub remembers every host a
 * sandbox manager or reaper (the workers that live on a Docker host; a
 * judge's host holds no sandboxes) named in its HELLO, in a small file (config key
 * hub_hosts_file, one name a line) that outlives gateway restarts; an
 * operator who retired a host for good drops it (`talkbackctl forget`).
 *
 * Pure code apart from known_load/known_save's file access; only the hub
 * thread uses a known_t.  Unit-tested in tests/unit/test_known.c.
 */
#ifndef TALKBACK_KNOWN_H
#define TALKBACK_KNOWN_H

#include <stdbool.h>
#include <stddef.h>

/* Longest host name kept; names are cleaned as hosts_clean_name does. */
#define KNOWN_NAME_MAX 64
/* Most names kept; a HELLO naming one more is not remembered (logged). */
#define KNOWN_MAX      256

typedef struct known known_t;

/* A list read from path (NULL or "": kept in memory only); a missing
 * file reads as empty, an unreadable one is logged.  NULL when out of
 * memory. */
known_t *known_new(const char *path);
void known_destroy(known_t **self_p);

/* Remember name; true when it was new (then the file is written again).
 * Empty or unusable names are ignored. */
bool known_add(known_t *k, const char *name);
/* Forget name; true when it was there (then the file is written again). */
bool known_forget(known_t *k, const char *name);
bool known_has(const known_t *k, const char *name);
size_t known_count(const known_t *k);
/* The i-th name, in name order (i < known_count). */
const char *known_name(const known_t *k, size_t i);

/* Mark name as a host a sandbox manager said HELLO from in this life of
 * the hub (not kept in the file). */
void known_managed(known_t *k, const char *name);
/* The first remembered host no sandbox manager said HELLO from in this
 * life: the hub does not know which chats it holds.  NULL when none. */
const char *known_unmanaged(const known_t *k);

/* Parse a file's text into k (one name a line, blank lines and lines
 * starting with '#' skipped, names cleaned); the number of names added. */
size_t known_parse(known_t *k, const char *text, size_t len);

#endif
