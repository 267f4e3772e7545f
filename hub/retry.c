/* retry.c -- what becomes of a dead worker's requests (see retry.h). */
#include "hub/retry.h"
#include "hub/core.h"

#include <string.h>

#include "common/log.h"
#include "proto/ops.h"
#include "proto/optable.h"
#include "talk/texts.h"

/* Which requests may be sent again: their rows' flags (proto/optable.h);
 * an operation not in the table, never. */
retry_rule_t retry_rule(const char *kind, const char *op)
{
    const ops_row_t *row = ops_find(kind, op);
    if (row && (row->flags & OPS_RETRY))
        return RETRY_ALWAYS;
    if (row && (row->flags & OPS_RETRY_UNTIL_STARTED))
        return RETRY_UNTIL_STARTED;
    return RETRY_NEVER;
}

void retry_note_started(core_t *c, zframe_t *identity, const proto_msg_t *m)
{
    const proto_kv_t *kv = proto_map_get(&m->args, ARG_PROGRAM);
    if (!kv || kv->type != PROTO_V_INT)
        return;
    list_for_each_item(p, &c->pending, pending_t, node)
        if (p->hub_id == (uint64_t)kv->i && p->worker && zframe_eq(p->worker->identity, identity)) {
            if (!p->started)
                log_debug("request %llu: its program starts", (unsigned long long)p->hub_id);
            p->started = true;
            return;
        }
}

/* End p as worker-lost; a run_code request says whether its program had
 * started. */
static void retry_lost(core_t *c, pending_t *p, retry_rule_t rule)
{
    proto_msg_t *r = proto_reply_new(p->req, PROTO_ST_WORKER_LOST, true, TX_HUB_WORKER_LOST);
    if (!r) {
        core_fail(c, p, PROTO_ST_WORKER_LOST, TX_HUB_WORKER_STOPPED);
        return;
    }
    proto_map_set_cstr(&r->data, DATA_KIND, p->req->kind ? p->req->kind : "");
    if (rule == RETRY_UNTIL_STARTED)
        proto_map_set_bool(&r->data, DATA_STARTED, p->started);
    if (p->started)
        log_info("request %llu is not sent again: its program had started, and a second run "
                 "could repeat what it did",
                 (unsigned long long)p->hub_id);
    core_finish(c, p, r);
}

void retry_worker_lost(core_t *c, worker_entry_t *w, int64_t now)
{
    list_for_each_item_safe(p, &c->pending, pending_t, node) {
        if (p->client && zframe_eq(p->client, w->identity)) {
            /* Its own request to another worker: no one will read the
             * answer, and what it runs must not outlive the asker. */
            if (p->worker)
                core_cancel(c, p);
            else
                core_fail(c, p, PROTO_ST_WORKER_LOST, TX_HUB_CALLER_GONE);
            continue;
        }
        if (p->worker != w)
            continue;
        p->worker = NULL;
        retry_rule_t rule = retry_rule(p->req->kind, p->req->name);
        bool again = (rule == RETRY_ALWAYS || (rule == RETRY_UNTIL_STARTED && !p->started)) &&
                     p->retries < 1 && now < p->deadline;
        if (again) {
            p->retries++;
            p->wait_until = now + c->worker_wait_ms;
            log_info("retrying request %llu on another %s", (unsigned long long)p->hub_id, w->kind);
            core_dispatch(c, p);
        } else {
            retry_lost(c, p, rule);
        }
    }
}
