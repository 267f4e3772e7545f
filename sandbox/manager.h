/* manager.h -- the sandbox manager: one kept container per chat.
 *
 * The only talkback code that creates, starts, execs into and removes
 * sandboxes.  A chat's container is found by its deterministic name
 * (convid_container_name) and checked by its label talkback.conversation;
 * Docker is the only record, so a restarted manager finds every chat's
 * container again.  The manager serves the worker kind "sandbox"
 * (KIND_SANDBOX); its operations, their arguments and what each reply
 * carries are listed in proto/ops.h:
 *
 *   run, write_file, reset   the tools the model calls (from the gateway)
 *   exec, put                what judges use: a command line with its bare
 *                            output in the reply data, and a file
 *   busy, forget             what the reaper asks before and after it
 *                            stops or removes a chat's sandbox
 */
#ifndef TALKBACK_MANAGER_H
#define TALKBACK_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include "common/textbuf.h"
#include "hub/worker.h"
#include "docker/docker.h"

typedef struct manager manager_t;

/* Create the manager (reads the sandbox template from config) and make
 * sure the sandbox network exists.  NULL with a log line on failure. */
manager_t *manager_new(docker_t *d);
void manager_destroy(manager_t **self_p);

/* The host's capacity measurer (capacity.h), for the draining flag the
 * host operations set.  Not owned. */
struct capacity;
void manager_use_capacity(manager_t *m, struct capacity *cap);

/* The worker handler for kind "sandbox". */
proto_msg_t *manager_handle(worker_job_t *job, void *ctx);

/* Resolve a write_file path: relative paths are under /work; "." and ".."
 * are folded lexically, never above "/"; repeated slashes collapse.  Writes
 * the absolute path into out (outlen bytes).  Returns 0, or -1 when the
 * path is empty, holds a NUL, ends in '/' or names a folder ("/", "."),
 * or does not fit.  Pure, unit-tested. */
int manager_resolve_path(const char *path, size_t len, char *out, size_t outlen);

#endif
