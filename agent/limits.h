/* limits.h -- the sandbox's limits as its cgroup says, read by the agent
 * from inside (cgroup v1 or v2), for the hints a result gains. */
#ifndef TALKBACK_AGENT_LIMITS_H
#define TALKBACK_AGENT_LIMITS_H

#include <stdint.h>

/* -1: no limit, or unknown. */
typedef struct {
    int64_t mem;  /* memory, bytes */
    int64_t swap; /* memory + the swap it can use (no more than the host has), bytes */
    int64_t pids;
    int64_t cpu_quota; /* microseconds per period */
    int64_t cpu_period;
} limits_t;

void limits_read(limits_t *out);

#endif
