/* stats.c -- a run's time and memory, in words (see stats.h). */
#include "judge/stats.h"

#include <inttypes.h>

/* Seconds with three decimals under a second, two above. */
static void put_seconds(textbuf_t *out, int64_t ms)
{
    if (ms < 1000)
        textbuf_printf(out, "%" PRId64 ".%03" PRId64 " s", ms / 1000, ms % 1000);
    else
        textbuf_printf(out, "%" PRId64 ".%02" PRId64 " s", ms / 1000, (ms % 1000) / 10);
}

static void put_mib(textbuf_t *out, int64_t kb)
{
    textbuf_printf(out, "%" PRId64 ".%" PRId64 " MiB", kb / 1024, (kb % 1024) * 10 / 1024);
}

judge_time_kind_t judge_stats_kind(const judge_stats_t *s)
{
    if (s->cpu_ms < 0 || s->wall_ms <= 0)
        return JUDGE_TIME_UNKNOWN;
    if (s->cpu_ms * 10 >= s->wall_ms * 7)
        return JUDGE_TIME_COMPUTING;
    if (s->cpu_ms * 20 < s->wall_ms)
        return JUDGE_TIME_WAITING;
    return JUDGE_TIME_MIXED;
}

/* What a timeout means, by how the time was spent. */
static void put_timeout(const judge_stats_t *s, int timeout_s, textbuf_t *out)
{
    textbuf_printf(out, " Over the %d s time limit: stopped after ", timeout_s);
    put_seconds(out, s->wall_ms >= 0 ? s->wall_ms : timeout_s * 1000LL);
    textbuf_puts(out, ", so it needed more than that.");
    switch (judge_stats_kind(s)) {
    case JUDGE_TIME_COMPUTING:
        textbuf_puts(
            out, " It was computing the whole time (CPU time close to wall time): an endless loop, "
                 "or an algorithm too slow for this input.");
        break;
    case JUDGE_TIME_WAITING:
        textbuf_puts(
            out, " It was waiting, not computing (little CPU time): a sleep, a read of more input "
                 "than was given, a lock, or the network (which the sandbox may not reach).");
        break;
    case JUDGE_TIME_MIXED:
        textbuf_puts(
            out,
            " It was computing, with less CPU time than wall time (the machine was busy, or "
            "part of the time went to waiting): most likely an endless loop, or an algorithm too "
            "slow for this input.");
        break;
    case JUDGE_TIME_UNKNOWN: break;
    }
}

void judge_stats_line(const char *label, const judge_stats_t *s, bool timed_out, int timeout_s,
                      bool oom, int64_t memory_bytes, textbuf_t *out)
{
    textbuf_printf(out, "%s: ", label);
    const char *sep = "";
    if (s->wall_ms >= 0) {
        put_seconds(out, s->wall_ms);
        textbuf_puts(out, " wall time");
        sep = ", ";
    }
    if (s->cpu_ms >= 0) {
        textbuf_puts(out, sep);
        put_seconds(out, s->cpu_ms);
        textbuf_puts(out, " CPU time");
        sep = ", ";
    }
    if (s->rss_kb >= 0) {
        textbuf_puts(out, sep);
        put_mib(out, s->rss_kb);
        textbuf_puts(out, " peak memory");
        sep = ", ";
    }
    if (!*sep)
        textbuf_puts(out, "time and memory unknown");
    textbuf_puts(out, ".");
    if (timed_out)
        put_timeout(s, timeout_s, out);
    if (oom && memory_bytes > 0) {
        textbuf_puts(out, " Over the memory limit: the sandbox has ");
        put_mib(out, memory_bytes / 1024);
        if (s->rss_kb >= 0) {
            textbuf_puts(out, " in all and the program alone had reached ");
            put_mib(out, s->rss_kb);
        }
        textbuf_puts(out, " when it was killed, so it needed more than that.");
    }
    textbuf_puts(out, "\n");
}
