/* bench.h -- what the parts of talkback-bench share. */
#ifndef TALKBACK_BENCH_H
#define TALKBACK_BENCH_H

#include <stdint.h>
#include <jansson.h>

#include "docker/docker.h"

/* The p-th percentile (0..1) of n microsecond figures, in milliseconds
 * (sorts v). */
double bench_pct(int64_t *v, int n, double p);

/* --agent PATH: RUN -> EXIT of `true` on the agent program alone, with
 * and without its per-command shepherd (shepherd.c). */
void bench_agent_shepherd(const char *path, int n);

/* One tools/call at MCP endpoint u for chat conv (args taken): the
 * result's text (malloc'ed), or NULL. */
char *bench_call_at(const char *u, const char *conv, const char *tool, json_t *args);
/* A monotonic clock, microseconds. */
int64_t bench_now_us(void);

/* --warm: the warm pool and the resume at u (warm.c), next to `docker run
 * --rm` and `docker start`; cold_url (may be NULL): a talkback without the
 * pool (warm_pool 0), measured alongside. */
void bench_warm(docker_t *d, const char *u, const char *cold_url, int n);

#endif
