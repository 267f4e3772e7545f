/* reaper.c -- idle stop, disk cap and eviction of kept sandboxes (see
 * reaper.h).
 *
 * Every decision is taken from what Docker reports at that moment: the
 * containers labelled talkback.conversation and the claimed spares
 * (kept/claim.h), their state, their writable
 * layer size, and each sandbox's last-call stamp (kept/kept.h).  Nothing
 * is remembered between sweeps, so restarting the reaper loses nothing.
 *
 * Costs, per sweep: one list of running (and paused) sandboxes plus one
 * stamp read per running sandbox (idle and pause; a pause is the sandbox
 * manager's, asked over the hub); one list of paused ones (max_paused); one list with sizes of running sandboxes (disk;
 * sizing is expensive, so it has its own, slower-changing interval in
 * config); one list with sizes of stopped sandboxes plus one stamp read per
 * stopped sandbox (eviction).
 */
#include "reaper/reaper.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "kept/claim.h"
#include "kept/kept.h"
#include "proto/ops.h"
#include "reaper/plan.h"

static int64_t reaper_now(const reaper_t *r)
{
    return (int64_t)time(NULL) + r->o->clock_offset;
}

/* List containers carrying a label (talkback sandboxes, or tombstones) in
 * a state -- "running", "exited", "created", or NULL for all -- with sizes
 * when asked. */
static json_t *list_labelled(reaper_t *r, const char *label, const char *status, bool size)
{
    json_t *filters = json_pack("{s:[s]}", "label", label);
    if (status)
        json_object_set_new(filters, "status", json_pack("[s]", status));
    char *f = json_dumps(filters, JSON_COMPACT);
    json_decref(filters);
    if (!f)
        return NULL;
    /* URL-encode the filter JSON. */
    char enc[1024];
    size_t o = 0;
    for (const char *p = f; *p && o + 4 < sizeof enc; p++) {
        unsigned char c = (unsigned char)*p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '.' || c == '_')
            enc[o++] = (char)c;
        else
            o += (size_t)snprintf(enc + o, sizeof enc - o, "%%%02X", c);
    }
    enc[o] = '\0';
    free(f);
    char path[1200];
    snprintf(path, sizeof path, "/containers/json?all=1&size=%d&filters=%s", size ? 1 : 0, enc);
    long st;
    json_t *out = NULL;
    r->calls++;
    if (docker_call(r->d, "GET", path, NULL, &st, &out) != DOCKER_OK || !json_is_array(out)) {
        log_warn("cannot list sandboxes: %s", docker_message(out));
        json_decref(out);
        return NULL;
    }
    return out;
}

/* Drop the containers outside reaper_prefix (several reapers, each with
 * its own policy, may share one Docker). */
static json_t *in_scope(const reaper_t *r, json_t *list, const char *label)
{
    const char *prefix = r->o->prefix ? r->o->prefix : "";
    size_t pl = strlen(prefix);
    if (!list || pl == 0)
        return list;
    for (size_t i = json_array_size(list); i-- > 0;) {
        const char *v = json_string_value(
            json_object_get(json_object_get(json_array_get(list, i), "Labels"), label));
        if (!v || strncmp(v, prefix, pl) != 0)
            json_array_remove(list, i);
    }
    return list;
}

/* The chats' sandboxes in a state: the labelled ones and the claimed
 * spares, with labels filled in from their claim records (kept/claim.h).
 * Spares nobody has claimed are not chats: never idled, sized or evicted
 * here (the sandbox manager's pool owns them). */
static json_t *list_sandboxes(reaper_t *r, const char *status, bool size)
{
    /* "running" means running or paused: a paused sandbox is one that
     * runs, frozen (docs/sandbox.md, the tiers). */
    json_t *f = !status ? json_object()
                : strcmp(status, "running") == 0
                    ? json_pack("{s:[s,s]}", "status", status, "paused")
                    : json_pack("{s:[s]}", "status", status);
    r->calls += 2;
    json_t *list = f ? claim_list_chats(r->d, r->o->kept, f, size) : NULL;
    json_decref(f);
    if (!list)
        log_warn("cannot list sandboxes: Docker did not answer");
    return in_scope(r, list, SPEC_LABEL_CONV);
}

static const char *label_of(json_t *c, const char *label)
{
    return json_string_value(json_object_get(json_object_get(c, "Labels"), label));
}

static const char *name_of(json_t *c)
{
    const char *n = json_string_value(json_array_get(json_object_get(c, "Names"), 0));
    return n && n[0] == '/' ? n + 1 : (n ? n : "?");
}

/* When was this sandbox last used: its record in state_dir (kept.h),
 * written by the sandbox manager on the host, never by the sandbox.  A
 * sandbox without one (made before records existed, or whose record was
 * lost) counts from now, the first time it is seen so: it may be idled or
 * evicted a period late, never early. */
static int64_t last_used(reaper_t *r, json_t *c)
{
    const char *id = json_string_value(json_object_get(c, "Id"));
    int64_t mtime = kept_stamp_get(r->o->kept, id);
    if (mtime > 0)
        return mtime;
    int64_t now = (int64_t)time(NULL);
    if (!r->dry_run && kept_stamp_init(r->o->kept, id, now) < 0)
        log_warn("cannot write the last-call record of %.12s in %s", id ? id : "?",
                 kept_state_dir(r->o->kept));
    return now;
}

static void report(reaper_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(reaper_t *r, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (r->dry_run)
        printf("would %s\n", line);
    else
        log_info("%s", line);
    if (r->out)
        textbuf_printf(r->out, "%s%s\n", r->dry_run ? "would " : "", line);
}

/* Ask the sandbox manager of this host (the request names this reaper's
 * host_name, so the hub sends it to no other) a question about one chat
 * ("busy", "forget"); its answer, or NULL when it cannot be asked. */
static proto_msg_t *ask_manager(reaper_t *r, const char *op, const char *conv)
{
    if (!r->hub || !conv || r->hub_silent)
        return NULL;
    proto_msg_t *q = proto_msg_new(PROTO_REQUEST);
    if (!q || proto_msg_set_kind(q, KIND_SANDBOX) || proto_msg_set_name(q, op) ||
        proto_msg_set_conv(q, conv) || proto_msg_set_user(q, "") ||
        proto_msg_set_host(q, worker_host(r->hub))) {
        proto_msg_destroy(&q);
        return NULL;
    }
    q->deadline_ms = proto_now_ms() + 3000;
    proto_msg_t *a = worker_call(r->hub, q, NULL);
    if (!a || a->status != PROTO_ST_OK) {
        proto_msg_destroy(&a);
        r->hub_silent = true; /* don't wait on it again this sweep */
    }
    return a;
}

/* The sandbox of conv went: the manager frees what it keeps of the chat. */
static void forget(reaper_t *r, const char *conv)
{
    proto_msg_t *a = ask_manager(r, OP_FORGET, conv);
    proto_msg_destroy(&a);
}

static void remove_sandbox(reaper_t *r, json_t *c, const char *why_log, const char *why_tomb)
{
    const char *id = json_string_value(json_object_get(c, "Id"));
    const char *conv = label_of(c, SPEC_LABEL_CONV);
    report(r, "remove %s (%s)", name_of(c), why_log);
    if (r->dry_run || !id || !conv)
        return;
    /* The tombstone first: if removal then fails, the chat is told
     * nothing wrong, since its sandbox is simply still there and the
     * tombstone is dropped at the next creation. */
    r->calls++;
    kept_tombstone_create(r->d, r->o->image, conv, name_of(c), why_tomb);
    char path[200];
    snprintf(path, sizeof path, "/containers/%s?force=1&v=1", id);
    long st;
    json_t *ans = NULL;
    r->calls++;
    docker_err_t e = docker_call(r->d, "DELETE", path, NULL, &st, &ans);
    if (e != DOCKER_OK && e != DOCKER_ENOTFOUND) {
        log_warn("could not remove %s: %s", name_of(c), docker_message(ans));
    } else {
        r->removed++;
        kept_record_drop(r->o->kept, id);
        forget(r, conv);
    }
    json_decref(ans);
}

/* Calls of this chat in flight, as the sandbox manager counts them; -1 when
 * it cannot be asked (then the stamp alone decides: a manager that is down
 * is running no calls). */
static int inflight(reaper_t *r, const char *conv)
{
    proto_msg_t *a = ask_manager(r, OP_BUSY, conv);
    int n = -1;
    if (a && proto_map_has(&a->data, DATA_INFLIGHT, PROTO_V_INT))
        n = (int)proto_map_int(&a->data, DATA_INFLIGHT, 0);
    proto_msg_destroy(&a);
    return n;
}

static bool is_paused(json_t *c)
{
    return strcmp(json_string_value(json_object_get(c, "State")) ?: "", "paused") == 0;
}

/* Stop sandbox c, leaving reason for its chat's next call (kept.h). */
static void stop_sandbox(reaper_t *r, json_t *c, const char *reason)
{
    const char *id = json_string_value(json_object_get(c, "Id"));
    if (r->dry_run || !id)
        return;
    if (kept_reason_set(r->o->kept, id, reason))
        log_warn("cannot write the stop reason of %s in %s", name_of(c),
                 kept_state_dir(r->o->kept));
    char path[200];
    snprintf(path, sizeof path, "/containers/%s/stop?t=5", id);
    long st;
    json_t *ans = NULL;
    r->calls++;
    docker_err_t e = docker_call(r->d, "POST", path, NULL, &st, &ans);
    if (e != DOCKER_OK) {
        log_warn("could not stop %s: %s", name_of(c), docker_message(ans));
    } else {
        r->stopped++;
        forget(r, label_of(c, SPEC_LABEL_CONV));
    }
    json_decref(ans);
}

/* Ask the sandbox manager to pause sandbox c, idle for age (it pauses
 * only when no call of the chat runs: sandbox/pause.c).  Without an
 * answer nothing is paused: a call could be on its way to it. */
static void pause_sandbox(reaper_t *r, json_t *c, const char *age)
{
    int64_t idle = r->o->idle_pause;
    report(r, "pause %s (idle: last call ended %s ago, over the %" PRId64 "-second pause limit)",
           name_of(c), age, idle);
    if (r->dry_run)
        return;
    const char *conv = label_of(c, SPEC_LABEL_CONV);
    proto_msg_t *q = NULL, *a = NULL;
    if (r->hub && conv && !r->hub_silent && (q = proto_msg_new(PROTO_REQUEST)) &&
        !proto_msg_set_kind(q, KIND_SANDBOX) && !proto_msg_set_name(q, OP_PAUSE) &&
        !proto_msg_set_conv(q, conv) && !proto_msg_set_user(q, "") &&
        !proto_msg_set_host(q, worker_host(r->hub)) &&
        !proto_map_set_int(&q->args, ARG_IDLE, idle)) {
        q->deadline_ms = proto_now_ms() + 10000;
        a = worker_call(r->hub, q, NULL);
        q = NULL;
    }
    proto_msg_destroy(&q);
    if (!a || a->status != PROTO_ST_OK)
        log_warn("%s not paused: the sandbox manager did not answer", name_of(c));
    else if (proto_map_int(&a->data, DATA_PAUSED, 0))
        r->paused++;
    else
        log_info("%s not paused: %" PRId64 " call(s) of it running, or it is not running",
                 name_of(c), proto_map_int(&a->data, DATA_INFLIGHT, 0));
    proto_msg_destroy(&a);
}

int reaper_sweep_idle(reaper_t *r)
{
    json_t *list = list_sandboxes(r, "running", false);
    if (!list)
        return -1;
    int64_t now = reaper_now(r), idle = r->o->idle_stop, pause = r->o->idle_pause;
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
    {
        int64_t used = last_used(r, c);
        bool paused = is_paused(c);
        bool to_pause = !paused && pause > 0 && pause < idle && now - used > pause;
        if (now - used <= idle && !to_pause)
            continue;
        int busy = inflight(r, label_of(c, SPEC_LABEL_CONV));
        if (busy > 0) {
            report(r, "keep %s (its stamp is old, but %d call(s) of it are running)", name_of(c),
                   busy);
            continue;
        }
        char age[64];
        kept_human_age(now - used, age, sizeof age);
        if (now - used <= idle) {
            pause_sandbox(r, c, age);
            continue;
        }
        report(r, "stop %s (idle%s: last call ended %s ago, over the %" PRId64 "-minute limit)",
               name_of(c), paused ? ", paused" : "", age, idle / 60);
        char reason[64];
        snprintf(reason, sizeof reason, "idle %" PRId64, idle / 60);
        stop_sandbox(r, c, reason);
    }
    json_decref(list);
    return 0;
}

/* The paused sandboxes in list, least recently used first: a new array. */
static json_t *paused_by_age(reaper_t *r, json_t *list)
{
    json_t *out = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
    {
        if (!out || !is_paused(c))
            continue;
        int64_t used = last_used(r, c);
        json_object_set_new(c, "TalkbackLastCall", json_integer(used));
        size_t k = 0;
        while (k < json_array_size(out) && json_integer_value(json_object_get(
                                               json_array_get(out, k), "TalkbackLastCall")) <= used)
            k++;
        json_array_insert(out, k, c);
    }
    return out;
}

int reaper_sweep_paused(reaper_t *r)
{
    int64_t max = r->o->max_paused;
    if (max <= 0)
        return 0;
    json_t *list = list_sandboxes(r, "paused", false);
    if (!list)
        return -1;
    json_t *old = paused_by_age(r, list);
    size_t n = json_array_size(old), i;
    json_t *c;
    int64_t now = reaper_now(r);
    json_array_foreach(old, i, c)
    {
        if ((int64_t)(n - i) <= max)
            break;
        if (inflight(r, label_of(c, SPEC_LABEL_CONV)) > 0)
            continue; /* its call is unpausing it */
        char age[64], reason[64];
        kept_human_age(now - json_integer_value(json_object_get(c, "TalkbackLastCall")), age,
                       sizeof age);
        report(r,
               "stop %s (paused: more than %" PRId64 " paused sandboxes, this one unused for %s)",
               name_of(c), max, age);
        snprintf(reason, sizeof reason, KEPT_REASON_PAUSED_MAX " %" PRId64, max);
        stop_sandbox(r, c, reason);
    }
    json_decref(old);
    json_decref(list);
    return 0;
}

int reaper_sweep_disk(reaper_t *r)
{
    json_t *list = list_sandboxes(r, "running", true);
    if (!list)
        return -1;
    int64_t cap = r->o->disk_cap;
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
    {
        /* SizeRw is omitted when 0. */
        int64_t rw = (int64_t)json_integer_value(json_object_get(c, "SizeRw"));
        if (rw <= cap)
            continue;
        char why[160], tomb[160];
        snprintf(why, sizeof why, "disk: %" PRId64 " MiB written, over the %" PRId64 " MiB cap",
                 rw >> 20, cap >> 20);
        snprintf(tomb, sizeof tomb, "because it grew past the %" PRId64 " MiB disk cap", cap >> 20);
        remove_sandbox(r, c, why, tomb);
    }
    json_decref(list);
    return 0;
}

/* Eviction (reaper.h).  It is long because it reads the kept sandboxes
 * once, lets plan_evictions decide, and then words each removal for its
 * reason (age, count, bytes together: one case each, the stop reason and
 * the tombstone's text side by side), then the old tombstones. */
int reaper_sweep_evict(reaper_t *r)
{
    json_t *list = list_sandboxes(r, "exited", true);
    if (!list)
        return -1;
    /* "created" (never started) sandboxes count as kept too. */
    json_t *created = list_sandboxes(r, "created", true);
    if (created) {
        json_array_extend(list, created);
        json_decref(created);
    }
    size_t n = json_array_size(list);
    plan_item_t *items = calloc(n ? n : 1, sizeof *items);
    if (!items) {
        json_decref(list);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(list, i);
        items[i].last_used = last_used(r, c);
        items[i].bytes = (int64_t)json_integer_value(json_object_get(c, "SizeRw"));
    }
    plan_limits_t lim = {
        .now = reaper_now(r),
        .max_age = r->o->keep_max_age,
        .max_count = r->o->keep_max_count,
        .max_bytes = r->o->keep_max_bytes,
    };
    plan_evictions(items, n, &lim);
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(list, i);
        char why[200], tomb[200], age[64];
        kept_human_age(lim.now - items[i].last_used, age, sizeof age);
        switch (items[i].reason) {
        case PLAN_KEEP: continue;
        case PLAN_EVICT_AGE:
            snprintf(why, sizeof why, "kept: unused for %s, over %" PRId64 " days", age,
                     lim.max_age / 86400);
            snprintf(tomb, sizeof tomb, "after it was kept unused for over %" PRId64 " days",
                     lim.max_age / 86400);
            break;
        case PLAN_EVICT_COUNT:
            snprintf(why, sizeof why,
                     "kept: more than %" PRId64 " stopped sandboxes, this one unused for %s",
                     lim.max_count, age);
            snprintf(tomb, sizeof tomb,
                     "because more than %" PRId64 " stopped sandboxes were kept, and it "
                     "was among the oldest",
                     lim.max_count);
            break;
        case PLAN_EVICT_BYTES:
            snprintf(why, sizeof why,
                     "kept: stopped sandboxes over %" PRId64 " MiB together, this one "
                     "unused for %s",
                     lim.max_bytes >> 20, age);
            snprintf(tomb, sizeof tomb,
                     "because the stopped sandboxes together passed %" PRId64 " MiB, "
                     "and it was among the oldest",
                     lim.max_bytes >> 20);
            break;
        }
        remove_sandbox(r, c, why, tomb);
    }
    free(items);
    json_decref(list);
    /* Tombstones nobody came back for go after the same age. */
    json_t *tombs = in_scope(r, list_labelled(r, SPEC_LABEL_TOMB, NULL, false), SPEC_LABEL_TOMB);
    size_t i;
    json_t *c;
    json_array_foreach(tombs, i, c)
    {
        const char *at = label_of(c, SPEC_LABEL_GONE_AT);
        int64_t gone = at ? strtoll(at, NULL, 10) : 0;
        if (lim.max_age <= 0 || lim.now - gone <= lim.max_age)
            continue;
        report(r, "remove tombstone %s (older than %" PRId64 " days)", name_of(c),
               lim.max_age / 86400);
        if (r->dry_run)
            continue;
        char path[200];
        snprintf(path, sizeof path, "/containers/%s?force=1",
                 json_string_value(json_object_get(c, "Id")));
        long st;
        r->calls++;
        docker_call(r->d, "DELETE", path, NULL, &st, NULL);
    }
    json_decref(tombs);
    return 0;
}

/* Stop (when running) or remove (past orphan_grace) one orphan. */
static void reap_orphan(reaper_t *r, json_t *c, int64_t now)
{
    const char *id = json_string_value(json_object_get(c, "Id"));
    const char *state = json_string_value(json_object_get(c, "State"));
    if (!id || !kept_id_ok(id))
        return;
    int64_t since = r->dry_run ? now : kept_orphan_since(r->o->kept, id, now);
    if (since <= 0)
        since = now; /* no record: a grace from now, every sweep */
    char path[200], age[64];
    long st;
    kept_human_age(now - since, age, sizeof age);
    if (since > 0 && now - since > r->o->orphan_grace) {
        report(r, "remove %s (orphan: a claimed spare whose claim record is gone, for %s)",
               name_of(c), age);
        if (r->dry_run)
            return;
        snprintf(path, sizeof path, "/containers/%s?force=1&v=1", id);
        json_t *ans = NULL;
        r->calls++;
        docker_err_t e = docker_call(r->d, "DELETE", path, NULL, &st, &ans);
        if (e != DOCKER_OK && e != DOCKER_ENOTFOUND) {
            log_warn("could not remove orphan %s: %s", name_of(c), docker_message(ans));
        } else {
            r->removed++;
            kept_record_drop(r->o->kept, id);
        }
        json_decref(ans);
        return;
    }
    if (!state || (strcmp(state, "running") && strcmp(state, "paused")))
        return;
    report(r, "stop %s (orphan: a claimed spare whose claim record is gone; nobody's sandbox)",
           name_of(c));
    if (r->dry_run)
        return;
    snprintf(path, sizeof path, "/containers/%s/stop?t=5", id);
    json_t *ans = NULL;
    r->calls++;
    if (docker_call(r->d, "POST", path, NULL, &st, &ans) != DOCKER_OK && st != 304)
        log_warn("could not stop orphan %s: %s", name_of(c), docker_message(ans));
    else
        r->stopped++;
    json_decref(ans);
}

int reaper_sweep_orphans(reaper_t *r)
{
    char scope[17];
    claim_scope_hash(kept_state_dir(r->o->kept), scope);
    r->calls++;
    json_t *list = claim_list_orphans(r->d, r->o->kept, scope, false);
    if (!list) {
        log_warn("cannot list orphans: Docker did not answer");
        return -1;
    }
    int64_t now = reaper_now(r);
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c) reap_orphan(r, c, now);
    /* A container that is no orphan now (its record came back) loses its
     * mark, so a later loss starts a new grace. */
    char **ids = r->dry_run ? NULL : kept_record_ids(r->o->kept);
    for (char **p = ids; p && *p; p++) {
        bool orphan = false;
        json_array_foreach(list, i, c)
        {
            if (strcmp(json_string_value(json_object_get(c, "Id")) ?: "", *p) == 0)
                orphan = true;
        }
        if (!orphan)
            kept_orphan_clear(r->o->kept, *p);
    }
    kept_record_ids_free(&ids);
    json_decref(list);
    return 0;
}

/* Records in state_dir whose container is gone (removed by hand, or by a
 * Docker that lost it) go too.  The folder is read before Docker is asked:
 * a record is written only after its container exists, so one made in
 * between is not in the listing, and one listed belongs to a container
 * that is either in Docker's answer or gone. */
int reaper_sweep_records(reaper_t *r)
{
    char **ids = kept_record_ids(r->o->kept);
    if (!ids || !ids[0]) {
        kept_record_ids_free(&ids);
        return 0;
    }
    json_t *all = list_labelled(r, SPEC_LABEL_CONV, NULL, false);
    json_t *spares = all ? list_labelled(r, SPEC_LABEL_SPARE, NULL, false) : NULL;
    if (spares)
        json_array_extend(all, spares); /* spares have records too (claim, agent) */
    if (all && !spares) {
        json_decref(all);
        all = NULL;
    }
    json_decref(spares);
    if (!all) {
        kept_record_ids_free(&ids);
        return -1;
    }
    for (char **p = ids; *p; p++) {
        bool found = false;
        size_t i;
        json_t *c;
        json_array_foreach(all, i, c)
        {
            if (!found && strcmp(json_string_value(json_object_get(c, "Id")) ?: "", *p) == 0)
                found = true;
        }
        if (found)
            continue;
        log_debug("dropping the records of %.12s: no such sandbox", *p);
        if (!r->dry_run)
            kept_record_drop(r->o->kept, *p);
    }
    json_decref(all);
    kept_record_ids_free(&ids);
    return 0;
}

int reaper_sweep(reaper_t *r)
{
    int rc = 0;
    rc |= reaper_sweep_idle(r);
    rc |= reaper_sweep_paused(r);
    rc |= reaper_sweep_disk(r);
    rc |= reaper_sweep_evict(r);
    rc |= reaper_sweep_orphans(r);
    rc |= reaper_sweep_records(r);
    return rc;
}

/* "sweep": run every sweep now and answer with what was done. */
static proto_msg_t *reaper_op_sweep(worker_job_t *job, void *ctx)
{
    const reaper_serve_t *sv = ctx;
    textbuf_t out;
    textbuf_init(&out);
    reaper_t r = { .o = sv->o,
                   .d = sv->d,
                   .hub = job->worker,
                   .out = &out,
                   .dry_run = proto_map_int(&job->req->args, ARG_DRY_RUN, 0) != 0 };
    pthread_mutex_lock(sv->mu);
    int rc = reaper_sweep(&r);
    pthread_mutex_unlock(sv->mu);
    proto_msg_t *reply = proto_reply_new(job->req, PROTO_ST_OK, rc != 0, out.buf ? out.buf : "");
    if (reply) {
        proto_map_set_int(&reply->data, DATA_CALLS, r.calls);
        proto_map_set_int(&reply->data, DATA_STOPPED, r.stopped);
        proto_map_set_int(&reply->data, DATA_REMOVED, r.removed);
        proto_map_set_int(&reply->data, DATA_PAUSED, r.paused);
    }
    textbuf_free(&out);
    return reply;
}

const worker_op_t reaper_ops[] = {
    { OP_SWEEP, reaper_op_sweep },
    { NULL, NULL },
};
