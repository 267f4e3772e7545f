/* manager.h -- the sandbox manager: one kept container per chat.
 *
 * The only talkback code that creates, starts, execs into and removes
 * sandboxes.  A chat's container is found by its deterministic name
 * (convid_container_name) and checked by its label talkback.conversation;
 * Docker is the only record, so a restarted manager finds every chat's
 * container again.  The manager serves the worker kind "sandbox":
 *
 *   tool/op      args                               reply
 *   run          command, timeout                   "$ command\n<output>[exit code N]"
 *   write_file   path, content                      "Wrote N bytes to /abs/path."
 *   reset        -                                  what was removed
 *   exec         command, timeout, stdin?           output + data {exit_code,
 *                                                     timed_out, signal, cut}
 *   put          path, content, mode?               data {path, bytes}
 *   busy         -                                  data {inflight}: calls of
 *                                                     this chat running now
 *
 * exec and put are the operations judges use; run/write_file/reset are the
 * tools the model calls.
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

/* Spare sandboxes ready in the warm pool now (HELLO's `spares`). */
int manager_spares(manager_t *m);

/* The worker handler for kind "sandbox". */
proto_msg_t *manager_handle(worker_job_t *job, void *ctx);

/* Resolve a write_file path: relative paths are under /work; "." and ".."
 * are folded lexically, never above "/"; repeated slashes collapse.  Writes
 * the absolute path into out (outlen bytes).  Returns 0, or -1 when the
 * path is empty, holds a NUL, ends in '/' or names a folder ("/", "."),
 * or does not fit.  Pure, unit-tested. */
int manager_resolve_path(const char *path, size_t len, char *out, size_t outlen);

#endif
