/* manager_int.h -- what the sandbox manager's files share (manager.c: the
 * tools; ensure.c: finding, making and starting a chat's container;
 * pause.c: the paused tier).  Not an interface
 * for anything outside sandbox/.
 */
#ifndef TALKBACK_SANDBOX_MANAGER_INT_H
#define TALKBACK_SANDBOX_MANAGER_INT_H

#include <pthread.h>
#include <stdbool.h>

#include "common/list.h"
#include "common/textbuf.h"
#include "docker/docker.h"
#include "sandbox/agent_link.h"
#include "sandbox/cache.h"
#include "sandbox/disk.h"
#include "hints/hints.h"
#include "sandbox/hostops.h"
#include "sandbox/manager.h"
#include "sandbox/pool.h"
#include "sandbox/run.h"
#include "sandbox/running.h"

struct manager {
    manager_opts_t o;
    hints_limits_t hints_tmpl; /* the template's limits, as hints.h says them */
    docker_t *d;
    cache_t *cache;           /* chat -> container id (cache.h) */
    running_t *running;       /* calls in flight, last-call records, caps (running.h) */
    disk_t *disk;             /* the disk cap (disk.h) */
    hints_retry_t *retry;     /* recent failed runs per chat (hints.h) */
    agent_pool_t *agents;     /* links to the agents in sandboxes (agent.h) */
    hostops_t hostops;        /* locate, list, drain, stop, rm (hostops.h) */
    run_via_t via;            /* Docker and agents, for run.h */
    pool_t *pool;             /* spare sandboxes for new chats (pool.h); NULL: none */
    pthread_mutex_t mu;       /* guards ensuring */
    pthread_cond_t ensure_cv; /* with mu: an ensure of a chat ended */
    list_t ensuring;          /* with mu: chats whose ensure runs now (ensure.c) */
};

/* ---- finding, making and starting a chat's container (ensure.c) ---- */

typedef enum { ENSURE_OK, ENSURE_REFUSED, ENSURE_FAILED } ensure_t;

/* Make sure the chat's container exists and runs.  On success id holds its
 * id and notice may hold a line for the top of the result; otherwise err
 * holds the call's text. */
ensure_t manager_ensure(manager_t *m, const char *conv, const char *user, char id[72],
                        textbuf_t *notice, textbuf_t *err);

/* ---- the paused tier (pause.c) ---- */

/* "pause" (proto/ops.h): the reaper asks to pause an idle chat's sandbox. */
proto_msg_t *pause_op(manager_t *m, worker_job_t *job);
/* Unpause container id for a call of its chat; its notice into notice.
 * False when Docker would not. */
bool pause_undo(manager_t *m, const char *id, textbuf_t *notice);

#endif
