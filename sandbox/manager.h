/* manager.h -- the sandbox manager: one kept container per chat.
 *
 * The only talkback code that creates, starts, execs into and removes
 * sandboxes.  A chat's container is found by its deterministic name
 * (convid_container_name) and checked by its label talkback.conversation,
 * or for a spare of the warm pool the chat claimed, by its claim record
 * (kept/claim.h, sandbox/pool.h); Docker and those records are the only
 * record, so a restarted manager finds every chat's container again.  The manager serves the worker kind "sandbox"
 * (KIND_SANDBOX); its operations, their arguments and what each reply
 * carries are listed in proto/ops.h:
 *
 *   run, write_file, reset   the tools the model calls (from the gateway)
 *   exec, put                what judges use: a command line with its bare
 *                            output in the reply data, and a file
 *   busy, forget, pause      what the reaper asks before and after it
 *                            stops or removes a chat's sandbox, and to
 *                            pause an idle one
 *   locate, list, drain, undrain, stop, rm
 *                            the host's operations (hostops.h)
 *
 * Each is one entry of manager_ops, a row of proto/optable.c.
 */
#ifndef TALKBACK_MANAGER_H
#define TALKBACK_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include "common/textbuf.h"
#include "hub/worker.h"
#include "docker/docker.h"
#include "kept/kept.h"
#include "sandbox/disk.h"
#include "sandbox/netcheck.h"
#include "sandbox/pictures.h"
#include "sandbox/running.h"
#include "spec/sandbox.h"

typedef struct manager manager_t;

/* The manager's configuration, read by main.c (common/config.c says what
 * each key means).  Strings are not copied: they must outlive the
 * manager.  disk.busy/forget/ctx and netcheck are the manager's own. */
typedef struct {
    /* the sandbox template: what every sandbox is made from (spec/sandbox.h) */
    spec_template_t tmpl;
    /* calls */
    int64_t run_timeout, run_timeout_max; /* s */
    int64_t job_answer_ms;                /* a run still running this long before
                                             its call's deadline goes on as a job */
    int64_t job_log_cap;                  /* bytes a job's file keeps (jobs.h) */
    int64_t output_cap;                   /* bytes of output a result keeps */
    int64_t write_file_max;               /* bytes */
    /* the in-sandbox agent */
    const char *agent_path;
    bool agent_shepherd;
    int64_t agent_frame_deadline; /* s */
    int64_t background_watch_ms;  /* background.h: the watch after a run; 0: none */
    /* the warm pool (pool.h) */
    int64_t warm_pool;       /* spares kept ready; 0 = none */
    int64_t warm_pool_check; /* s between checks of the spares */
    int64_t mem_floor;       /* bytes of MemAvailable below which no sandbox starts
                          (capacity.h); 0: none */
    /* the helpers' own */
    running_opts_t running;
    disk_opts_t disk;
    pictures_limits_t pictures;
    /* the sandbox network against the egress rule (netcheck.h) */
    netcheck_opts_t egress;
    struct netcheck *netcheck; /* the manager's own, made by manager_new */
    /* state_dir's records (kept/kept.h): main.c's, not owned; handed to
     * the helpers below by manager_new */
    const kept_t *kept;
} manager_opts_t;

/* Create the manager (o is copied) and make sure the sandbox network
 * exists.  NULL with a log line on failure. */
manager_t *manager_new(docker_t *d, const manager_opts_t *o);
void manager_destroy(manager_t **self_p);

/* The host's capacity measurer (capacity.h), for the draining flag the
 * host operations set.  Not owned. */
struct capacity;
void manager_use_capacity(manager_t *m, struct capacity *cap);

/* Spare sandboxes ready in the warm pool now (HELLO's `spares`). */
int manager_spares(manager_t *m);

/* The operations of kind "sandbox" (proto/optable.h), one handler each,
 * for the worker (worker_opts_t.ops, with the manager as ctx). */
extern const worker_op_t manager_ops[];

/* Resolve a write_file path: relative paths are under /work; "." and ".."
 * are folded lexically, never above "/"; repeated slashes collapse.  Writes
 * the absolute path into out (outlen bytes).  Returns 0, or -1 when the
 * path is empty, holds a NUL, ends in '/' or names a folder ("/", "."),
 * or does not fit.  Pure, unit-tested. */
int manager_resolve_path(const char *path, size_t len, char *out, size_t outlen);

#endif
