/* metrics.h -- GET /metrics: the gateway's counters in the Prometheus text
 * exposition format, version 0.0.4.
 *
 * Two sources.  Calls are counted on the call path: metrics_call adds one
 * finished tools/call (its tool, how it ended, how long it took) with
 * relaxed atomic adds, no lock, so thousands of connection threads never
 * wait on each other for a counter.  The cluster's state is read at scrape
 * time from the hub: live workers by kind and host, sandboxes by state and
 * host (the managers' HELLO data), the hub's open requests, draining
 * hosts.  Rendering is a pure function of a metrics_t and that snapshot,
 * so tests/unit/test_ctl.c checks the text without a socket.
 *
 *   talkback_calls_total{tool,outcome}              counter
 *   talkback_mcp_requests_total{era}                counter (legacy, modern: era.h)
 *   talkback_call_seconds_bucket{tool,le}, _sum, _count   histogram
 *   talkback_workers{kind,host}                     gauge
 *   talkback_sandboxes{state,host}                  gauge (running, kept, spare)
 *   talkback_hub_queue_depth                        gauge
 *   talkback_hosts_draining                         gauge
 */
#ifndef TALKBACK_METRICS_H
#define TALKBACK_METRICS_H

#include <stdint.h>

#include "common/textbuf.h"
#include "gateway/era.h"
#include "gateway/tools.h"
#include "hub/hosts.h"
#include "hub/queue.h"
#include "proto/proto.h"

/* The Content-Type of the text format. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* How a call ended: the `outcome` label. */
typedef enum {
    METRICS_OK = 0,      /* "ok": answered, not an error */
    METRICS_IS_ERROR,    /* "error": answered, the result is an error (exit code, refusal) */
    METRICS_NO_WORKER,   /* "no_worker" */
    METRICS_WORKER_LOST, /* "worker_lost" */
    METRICS_DEADLINE,    /* "deadline" */
    METRICS_BAD_REQUEST, /* "bad_request" */
    METRICS_INTERNAL,    /* "internal" */
    METRICS_CLIENT_GONE, /* "client_gone": the client left, the call was cancelled */
    METRICS_STOPPING,    /* "stopping": given up, the gateway was stopping */
    METRICS_NOT_QUEUED,  /* "not_queued": out of memory before the hub took it */
    METRICS_N_OUTCOMES
} metrics_outcome_t;

/* Histogram upper bounds in seconds (+Inf is added): calls take from a
 * millisecond (a cached `run`) to half an hour (run_timeout_max). */
#define METRICS_BUCKETS                                                                            \
    {                                                                                              \
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800       \
    }
#define METRICS_N_BUCKETS 17
/* Tools counted; the tool table is smaller. */
#define METRICS_MAX_TOOLS 16

typedef struct metrics metrics_t;

/* What /metrics reads from the hub at scrape time. */
typedef struct {
    const hosts_t *hosts; /* live workers by host */
    int64_t queue_depth;  /* requests the hub holds open */
} metrics_hub_t;

metrics_t *metrics_new(void);
void metrics_destroy(metrics_t **self_p);

/* The label of an outcome. */
const char *metrics_outcome_name(metrics_outcome_t o);
/* The outcome of a reply from the hub. */
metrics_outcome_t metrics_outcome_of(const proto_msg_t *reply);

/* Count one finished call of tool (a row of tools_table; NULL or another
 * pointer is not counted) that took ms milliseconds.  Lock-free. */
void metrics_call(metrics_t *m, const tools_def_t *tool, metrics_outcome_t o, int64_t ms);

/* Count one POST /mcp message answered under era's rules.  Lock-free. */
void metrics_request(metrics_t *m, era_t era);

/* The whole exposition text into out. */
void metrics_render(const metrics_t *m, const metrics_hub_t *hub, textbuf_t *out);

/* Read the hub's state now (a snapshot of its live workers, its open
 * requests) and render: what GET /metrics answers.  out->oom says whether
 * memory ran out. */
void metrics_scrape(const metrics_t *m, queue_t *q, textbuf_t *out);

#endif
