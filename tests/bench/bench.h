/* bench.h -- what the parts of talkback-bench share. */
#ifndef TALKBACK_BENCH_H
#define TALKBACK_BENCH_H

#include <stdint.h>

/* The p-th percentile (0..1) of n microsecond figures, in milliseconds
 * (sorts v). */
double bench_pct(int64_t *v, int n, double p);

/* --agent PATH: RUN -> EXIT of `true` on the agent program alone, with
 * and without its per-command shepherd (shepherd.c). */
void bench_agent_shepherd(const char *path, int n);

#endif
