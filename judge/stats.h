/* stats.h -- the line a run's time and memory are read from, as pure
 * functions (unit-tested in tests/unit/test_compare.c).
 *
 *   Run: 0.012 s wall time, 0.008 s CPU time, 3.4 MiB peak memory.
 *
 * A run over a limit adds which limit and by how much; a timeout adds
 * whether the program was computing (CPU time close to wall time) or
 * waiting (little CPU time: sleep, input, a lock, the network), and what
 * that usually means.  A figure the sandbox did not report is left out.
 */
#ifndef TALKBACK_JUDGE_STATS_H
#define TALKBACK_JUDGE_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/textbuf.h"

typedef struct {
    int64_t wall_ms; /* -1: unknown */
    int64_t cpu_ms;  /* -1: unknown */
    int64_t rss_kb;  /* -1: unknown */
} judge_stats_t;

typedef enum {
    JUDGE_TIME_UNKNOWN,   /* no CPU time: cannot tell */
    JUDGE_TIME_COMPUTING, /* CPU time at least 70% of wall time */
    JUDGE_TIME_WAITING,   /* CPU time under 5% of wall time: a program
                           * that waits spends next to none after its
                           * start, while a loop on a busy shared machine
                           * was measured at 12% */
    JUDGE_TIME_MIXED      /* in between: computing, slowed down */
} judge_time_kind_t;

/* Computing or waiting, from CPU time against wall time. */
judge_time_kind_t judge_stats_kind(const judge_stats_t *s);

/* Append "<label>: 0.012 s wall time, ... peak memory." and, when the run
 * was stopped at the time limit (timeout_s) or killed at the memory limit
 * (memory_bytes), what that says, then a newline. */
void judge_stats_line(const char *label, const judge_stats_t *s, bool timed_out, int timeout_s,
                      bool oom, int64_t memory_bytes, textbuf_t *out);

#endif
