/* metrics.c -- the gateway's counters and their Prometheus text (see
 * metrics.h).
 *
 * Counters are fixed arrays of atomics indexed by the tool's row in the
 * tool table and the outcome, so counting a call is three relaxed atomic
 * adds and never allocates or locks.  A histogram keeps one count per
 * bucket (not cumulative): a call touches one bucket, and the render adds
 * them up, so _count always equals the +Inf bucket even while calls are
 * counted during a scrape.  The sum is kept in microseconds.
 */
#include "gateway/metrics.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static const double metrics_bounds[METRICS_N_BUCKETS] = METRICS_BUCKETS;

static const char *const metrics_outcomes[METRICS_N_OUTCOMES] = {
    [METRICS_OK] = "ok",
    [METRICS_IS_ERROR] = "error",
    [METRICS_NO_WORKER] = "no_worker",
    [METRICS_WORKER_LOST] = "worker_lost",
    [METRICS_DEADLINE] = "deadline",
    [METRICS_BAD_REQUEST] = "bad_request",
    [METRICS_INTERNAL] = "internal",
    [METRICS_CLIENT_GONE] = "client_gone",
    [METRICS_STOPPING] = "stopping",
    [METRICS_NOT_QUEUED] = "not_queued",
};

struct metrics {
    atomic_uint_fast64_t calls[METRICS_MAX_TOOLS][METRICS_N_OUTCOMES];
    atomic_uint_fast64_t buckets[METRICS_MAX_TOOLS][METRICS_N_BUCKETS + 1]; /* last: +Inf */
    atomic_uint_fast64_t sum_us[METRICS_MAX_TOOLS];
    atomic_uint_fast64_t eras[2]; /* by era_t */
};

metrics_t *metrics_new(void)
{
    metrics_t *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    for (size_t t = 0; t < METRICS_MAX_TOOLS; t++) {
        for (size_t o = 0; o < METRICS_N_OUTCOMES; o++)
            atomic_init(&m->calls[t][o], 0);
        for (size_t b = 0; b <= METRICS_N_BUCKETS; b++)
            atomic_init(&m->buckets[t][b], 0);
        atomic_init(&m->sum_us[t], 0);
    }
    atomic_init(&m->eras[ERA_LEGACY], 0);
    atomic_init(&m->eras[ERA_MODERN], 0);
    return m;
}

void metrics_destroy(metrics_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free(*self_p);
    *self_p = NULL;
}

const char *metrics_outcome_name(metrics_outcome_t o)
{
    return (unsigned)o < METRICS_N_OUTCOMES ? metrics_outcomes[o] : "?";
}

metrics_outcome_t metrics_outcome_of(const proto_msg_t *r)
{
    if (!r)
        return METRICS_NOT_QUEUED;
    switch (r->status) {
    case PROTO_ST_OK: return r->is_error ? METRICS_IS_ERROR : METRICS_OK;
    case PROTO_ST_NO_WORKER: return METRICS_NO_WORKER;
    case PROTO_ST_WORKER_LOST: return METRICS_WORKER_LOST;
    case PROTO_ST_DEADLINE: return METRICS_DEADLINE;
    case PROTO_ST_BAD_REQUEST: return METRICS_BAD_REQUEST;
    case PROTO_ST_INTERNAL: return METRICS_INTERNAL;
    }
    return METRICS_INTERNAL;
}

/* The row of tool in the tool table, or -1. */
static int metrics_tool_index(const tools_def_t *tool)
{
    size_t n = 0;
    const tools_def_t *table = tools_table(&n);
    if (!tool || tool < table || tool >= table + n)
        return -1;
    size_t i = (size_t)(tool - table);
    return i < METRICS_MAX_TOOLS ? (int)i : -1;
}

void metrics_call(metrics_t *m, const tools_def_t *tool, metrics_outcome_t o, int64_t ms)
{
    int t = metrics_tool_index(tool);
    if (!m || t < 0 || (unsigned)o >= METRICS_N_OUTCOMES)
        return;
    if (ms < 0)
        ms = 0;
    size_t b = 0;
    while (b < METRICS_N_BUCKETS && (double)ms > metrics_bounds[b] * 1000.0)
        b++;
    atomic_fetch_add_explicit(&m->calls[t][o], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->buckets[t][b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->sum_us[t], (uint_fast64_t)ms * 1000u, memory_order_relaxed);
}

void metrics_request(metrics_t *m, era_t era)
{
    if (m && (era == ERA_LEGACY || era == ERA_MODERN))
        atomic_fetch_add_explicit(&m->eras[era], 1, memory_order_relaxed);
}

/* A counter's value now (relaxed: a scrape needs no ordering). */
static uint64_t metrics_load(const atomic_uint_fast64_t *a)
{
    return (uint64_t)atomic_load_explicit((atomic_uint_fast64_t *)a, memory_order_relaxed);
}

/* talkback_calls_total: every enabled tool, every outcome (zeros too, so a
 * rate() has its series from the first scrape). */
static void metrics_render_calls(const metrics_t *m, textbuf_t *out)
{
    size_t n = 0;
    const tools_def_t *table = tools_table(&n);
    textbuf_puts(out,
                 "# HELP talkback_calls_total Finished tools/call requests, by tool and outcome.\n"
                 "# TYPE talkback_calls_total counter\n");
    for (size_t t = 0; t < n && t < METRICS_MAX_TOOLS; t++) {
        if (!table[t].enabled)
            continue;
        for (size_t o = 0; o < METRICS_N_OUTCOMES; o++)
            textbuf_printf(out, "talkback_calls_total{tool=\"%s\",outcome=\"%s\"} %" PRIu64 "\n",
                           table[t].name, metrics_outcomes[o], metrics_load(&m->calls[t][o]));
    }
}

/* talkback_mcp_requests_total: the messages each MCP era answered. */
static void metrics_render_eras(const metrics_t *m, textbuf_t *out)
{
    textbuf_printf(out,
                   "# HELP talkback_mcp_requests_total POST /mcp messages answered, by the MCP "
                   "era whose rules served them.\n"
                   "# TYPE talkback_mcp_requests_total counter\n"
                   "talkback_mcp_requests_total{era=\"legacy\"} %" PRIu64 "\n"
                   "talkback_mcp_requests_total{era=\"modern\"} %" PRIu64 "\n",
                   metrics_load(&m->eras[ERA_LEGACY]), metrics_load(&m->eras[ERA_MODERN]));
}

/* talkback_call_seconds: one histogram per enabled tool. */
static void metrics_render_seconds(const metrics_t *m, textbuf_t *out)
{
    size_t n = 0;
    const tools_def_t *table = tools_table(&n);
    textbuf_puts(out,
                 "# HELP talkback_call_seconds Time from a tools/call's arrival to its answer.\n"
                 "# TYPE talkback_call_seconds histogram\n");
    for (size_t t = 0; t < n && t < METRICS_MAX_TOOLS; t++) {
        if (!table[t].enabled)
            continue;
        const char *tool = table[t].name;
        uint64_t cum = 0;
        for (size_t b = 0; b < METRICS_N_BUCKETS; b++) {
            cum += metrics_load(&m->buckets[t][b]);
            textbuf_printf(out, "talkback_call_seconds_bucket{tool=\"%s\",le=\"%g\"} %" PRIu64 "\n",
                           tool, metrics_bounds[b], cum);
        }
        cum += metrics_load(&m->buckets[t][METRICS_N_BUCKETS]);
        uint64_t us = metrics_load(&m->sum_us[t]);
        textbuf_printf(out,
                       "talkback_call_seconds_bucket{tool=\"%s\",le=\"+Inf\"} %" PRIu64 "\n"
                       "talkback_call_seconds_sum{tool=\"%s\"} %" PRIu64 ".%06" PRIu64 "\n"
                       "talkback_call_seconds_count{tool=\"%s\"} %" PRIu64 "\n",
                       tool, cum, tool, us / 1000000u, us % 1000000u, tool, cum);
    }
}

/* The gauges read from the hub. */
static void metrics_render_hub(const metrics_hub_t *hub, textbuf_t *out)
{
    const hosts_t *h = hub ? hub->hosts : NULL;
    size_t nh = h ? h->n : 0;
    textbuf_puts(out,
                 "# HELP talkback_workers Live workers connected to the hub, by kind and host.\n"
                 "# TYPE talkback_workers gauge\n");
    for (size_t i = 0; i < nh; i++)
        for (size_t k = 0; k < h->v[i].n_kinds; k++)
            textbuf_printf(out, "talkback_workers{kind=\"%s\",host=\"%s\"} %d\n",
                           h->v[i].kinds[k].kind, h->v[i].name, h->v[i].kinds[k].n);
    textbuf_puts(out, "# HELP talkback_sandboxes Sandboxes by state and host, as each host's "
                      "sandbox manager reports them.\n"
                      "# TYPE talkback_sandboxes gauge\n");
    int draining = 0;
    for (size_t i = 0; i < nh; i++) {
        const hosts_entry_t *e = &h->v[i];
        if (!e->has_manager)
            continue;
        /* The manager's running figure counts paused ones (they hold a
         * place under max_running); here the states are apart. */
        textbuf_printf(out,
                       "talkback_sandboxes{state=\"running\",host=\"%s\"} %" PRId64 "\n"
                       "talkback_sandboxes{state=\"paused\",host=\"%s\"} %" PRId64 "\n"
                       "talkback_sandboxes{state=\"kept\",host=\"%s\"} %" PRId64 "\n"
                       "talkback_sandboxes{state=\"spare\",host=\"%s\"} %" PRId64 "\n",
                       e->name, e->running - e->paused, e->name, e->paused, e->name, e->kept,
                       e->name, e->spares);
        draining += e->draining;
    }
    textbuf_printf(out,
                   "# HELP talkback_hub_queue_depth Requests the hub holds open (waiting "
                   "for a worker or being served).\n"
                   "# TYPE talkback_hub_queue_depth gauge\n"
                   "talkback_hub_queue_depth %" PRId64 "\n"
                   "# HELP talkback_hosts_draining Hosts whose sandbox manager is draining "
                   "(no new chats placed there).\n"
                   "# TYPE talkback_hosts_draining gauge\n"
                   "talkback_hosts_draining %d\n",
                   hub ? hub->queue_depth : 0, draining);
}

void metrics_render(const metrics_t *m, const metrics_hub_t *hub, textbuf_t *out)
{
    metrics_render_calls(m, out);
    metrics_render_eras(m, out);
    metrics_render_seconds(m, out);
    metrics_render_hub(hub, out);
}

void metrics_scrape(const metrics_t *m, queue_t *q, textbuf_t *out)
{
    hosts_t hosts = { 0 };
    queue_workers_each(q, hosts_add_worker, &hosts);
    if (hosts.oom)
        out->oom = 1;
    metrics_hub_t hub = { .hosts = &hosts, .queue_depth = queue_open_requests(q) };
    metrics_render(m, &hub, out);
    hosts_clear(&hosts);
}
