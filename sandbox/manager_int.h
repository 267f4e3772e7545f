/* manager_int.h -- what the sandbox manager's files share (manager.c: the
 * tools and the cache of chat -> container; ensure.c: the sandbox template
 * and finding, making and starting a chat's container).  Not an interface
 * for anything outside sandbox/.
 */
#ifndef TALKBACK_SANDBOX_MANAGER_INT_H
#define TALKBACK_SANDBOX_MANAGER_INT_H

#include <pthread.h>
#include <stdbool.h>

#include "common/textbuf.h"
#include "docker/docker.h"
#include "sandbox/agent_link.h"
#include "sandbox/disk.h"
#include "sandbox/hints.h"
#include "sandbox/manager.h"
#include "sandbox/pool.h"
#include "sandbox/running.h"

typedef struct cache_entry {
    char *conv;
    char *user;
    char id[72];
    struct cache_entry *next;
} cache_entry_t;

struct manager {
    docker_t *d;
    pthread_mutex_t mu;       /* guards cache */
    cache_entry_t *cache;
    running_t *running;       /* calls in flight, last-call records, caps (running.h) */
    disk_t *disk;             /* the disk cap (disk.h) */
    hints_retry_t *retry;     /* recent failed runs per chat (hints.h) */
    agent_pool_t *agents;     /* links to the agents in sandboxes (agent.h) */
    pool_t *pool;             /* spare sandboxes for new chats (pool.h); NULL: none */
    pthread_cond_t ensure_cv; /* with mu: an ensure of a chat ended */
    struct ensuring *ensuring; /* with mu: chats whose ensure runs now (ensure.c) */
};

/* ---- the cache of chat -> running container (manager.c) ---- */

/* The cached container of conv into id (and its owner, malloc'ed, into
 * *user when user is not NULL); false on a miss. */
bool manager_cache_get(manager_t *m, const char *conv, char id[72], char **user);
void manager_cache_put(manager_t *m, const char *conv, const char *id, const char *user);
void manager_cache_drop(manager_t *m, const char *conv);

/* ---- finding, making and starting a chat's container (ensure.c) ---- */

/* The sandbox template (a new JSON object): labels for chat conv of user;
 * with the agent as its main process when agent. */
json_t *manager_template(const char *conv, const char *user, bool agent);

/* Copy the agent into container id (created or stopped) unless its record
 * in state_dir says this version is in there already; true when it was
 * copied (or tried). */
bool manager_agent_copy(agent_pool_t *agents, const char *id);

typedef enum { ENSURE_OK, ENSURE_REFUSED, ENSURE_FAILED } ensure_t;

/* Make sure the chat's container exists and runs.  On success id holds its
 * id and notice may hold a line for the top of the result; otherwise err
 * holds the call's text. */
ensure_t manager_ensure(manager_t *m, const char *conv, const char *user,
                        char id[72], textbuf_t *notice, textbuf_t *err);

#endif
