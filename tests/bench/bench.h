/* bench.h -- what the parts of talkback-bench share. */
#ifndef TALKBACK_BENCH_H
#define TALKBACK_BENCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "docker/docker.h"

/* The p-th percentile (0..1) of n microsecond figures, in milliseconds
 * (sorts v). */
double bench_pct(int64_t *v, int n, double p);

/* --agent PATH: RUN -> EXIT of `true` on the agent program alone, with
 * and without its per-command shepherd (shepherd.c). */
void bench_agent_shepherd(const char *path, int n);

/* One tools/call at the MCP endpoint u in chat conv (args is stolen):
 * the result's first text (malloc'ed) or NULL; *is_error (may be NULL). */
char *bench_call(const char *u, const char *conv, const char *tool, json_t *args, bool *is_error);

/* --multihost DOCKER2: a gateway with sandbox managers on this machine's
 * dockerd and on DOCKER2 (multihost.c); restart_cmd may be NULL. */
int bench_multihost(const char *url, const char *docker2, const char *restart_cmd, int n);

/* A monotonic clock, microseconds. */
int64_t bench_now_us(void);

/* --warm: the warm pool and the resume at u (warm.c), next to `docker run
 * --rm` and `docker start`; cold_url (may be NULL): a talkback without the
 * pool (warm_pool 0), measured alongside. */
void bench_warm(docker_t *d, const char *u, const char *cold_url, int n);
/* The containerd shim Docker keeps on the host for container id: its RSS
 * and PSS in KiB (0 when not found; warm.c). */
void bench_shim_mem(const char *id, int64_t *rss, int64_t *pss);

/* --tiers: a call to a paused sandbox and a resume of a stopped one at u,
 * next to `docker start` (tiers.c); run with the talkback's TALKBACK_*
 * environment, for the reaper sweeps it starts. */
void bench_tiers(docker_t *d, const char *u, int n);
/* --scale N: N chats at u, idle running then paused: memory per sandbox,
 * run("true") p50 with 2 and with N, the reaper's sweep (scale.c). */
void bench_tiers_scale(docker_t *d, const char *u, int n);

/* --eras: run("true") over the legacy era and over 2026-07-28 at u,
 * interleaved, as JSON and as SSE (eras.c). */
void bench_eras(const char *u, int n);

/* --against URL: run("true"), a new chat's first call and a call that
 * starts a background server at u (after) and at before, interleaved,
 * side by side (against.c). */
void bench_against(const char *u, const char *before, int n);

#endif
