/* capacity.h -- what a sandbox manager tells the hub about its host.
 *
 * With several Docker hosts behind one gateway, the hub places a new chat
 * on the host with the most room.  Each manager says how full its host is
 * in the data of every HELLO (proto.h): running and kept sandboxes, its
 * caps (max_running, keep_max_count), the free memory of the machine and
 * the free disk of Docker's data root, and whether the host is draining
 * (no new chats placed there).
 *
 * Counting asks Docker, which may be slow, and a HELLO must never wait, so
 * a thread of its own measures every heartbeat and the HELLO callback only
 * copies the last figures.  The draining flag is a file in state_dir, so
 * it survives a restart of the manager.
 */
#ifndef TALKBACK_SANDBOX_CAPACITY_H
#define TALKBACK_SANDBOX_CAPACITY_H

#include <stdbool.h>
#include <stdint.h>
#include "common/textbuf.h"
#include "docker/docker.h"
#include "kept/kept.h"
#include "proto/proto.h"

typedef struct capacity capacity_t;

/* The figures of one measurement. */
typedef struct {
    int64_t running;      /* talkback sandboxes running (or created, paused) */
    int64_t paused;       /* of those, paused (the paused tier) */
    int64_t kept;         /* stopped ones kept for their chat */
    int64_t spares;       /* warm, not yet a chat's (the manager's warm pool) */
    int64_t mem_free_kb;  /* MemAvailable of this machine; -1 unknown */
    int64_t disk_free_kb; /* free space of Docker's data root; -1 unknown */
    int64_t max_running;  /* the caps it runs under (config) */
    int64_t keep_max_count;
} capacity_figures_t;

/* Start measuring every interval_ms; kept (not owned) is state_dir,
 * where the draining flag is.  NULL when out of memory. */
capacity_t *capacity_new(docker_t *d, const kept_t *kept, const char *network, int interval_ms,
                         int64_t max_running, int64_t keep_max_count);
void capacity_destroy(capacity_t **self_p);

/* Where the spares figure comes from: spares(ctx), asked at every
 * measurement (e.g. manager_spares); ctx must outlive the measurer or be
 * unset (NULL) first. */
void capacity_count_spares(capacity_t *c, int (*spares)(void *ctx), void *ctx);

/* worker_hello_fn: copy the last figures into a HELLO's data. */
void capacity_hello(proto_map_t *data, void *ctx);

/* Whether this host is draining; set or clear it (kept in
 * state_dir/draining).  0, or -1 with errno when the file cannot be
 * written or removed. */
bool capacity_draining(capacity_t *c);
int capacity_set_draining(capacity_t *c, bool on);

/* Whether the Docker host has the memory to start one more sandbox: its
 * MemAvailable at or above floor bytes (floor 0, or MemAvailable unknown:
 * yes).  The sandbox manager runs on the Docker host (it is the only user
 * of its Docker, beside it), so /proc/meminfo is that host's; Docker's
 * /info says only MemTotal, and the sandboxes' memory limits add up to far
 * more than they use (an idle sandbox holds about 1 MiB of its 256).
 * Asked before a sandbox is created, claimed from the warm pool or
 * started; false with the call's text in why (may be NULL). */
bool capacity_start_room(int64_t floor, textbuf_t *why);
/* That text, for avail_kb of MemAvailable against floor (pure). */
void capacity_mem_refusal(int64_t avail_kb, int64_t floor, textbuf_t *why);

/* Write the figures, caps, version and the draining flag into data (what
 * capacity_hello sends).  Pure but for the caps read from config. */
void capacity_fill(proto_map_t *data, const capacity_figures_t *f, bool draining);

#endif
