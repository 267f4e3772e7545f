/* pool.c -- the warm pool (see pool.h).
 *
 * One thread keeps the pool full: it makes a spare whenever fewer than
 * warm_pool are ready, and every warm_pool_check it lists this pool's
 * spares (label talkback.pool, this state_dir's hash) and removes those
 * that are not running, were made from another template or image, or are
 * left over from an earlier manager.  Claims run on the callers' threads;
 * the list of ready spares is the only state they share, under one lock.
 */
#include "sandbox/pool.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "common/list.h"
#include "common/log.h"
#include "kept/claim.h"
#include "kept/kept.h"
#include "proto/proto.h"
#include "sandbox/agentcopy.h"
#include "sandbox/capacity.h"
#include "sandbox/netcheck.h"

typedef struct spare {
    char id[72];
    list_node_t link; /* on the ready list, newest first */
} spare_t;

struct pool {
    docker_t *d;
    pool_opts_t o;
    agent_pool_t *agents;
    disk_t *disk;
    pthread_mutex_t mu; /* guards everything below */
    pthread_cond_t cv;
    pthread_t thread;
    bool stop;
    list_t ready;
    int n_ready;
    int64_t retry_at; /* after a failed make (monotonic ms) */
    char hash[17];    /* talkback.spare of the spares made now */
    char scope[17];   /* talkback.pool */
};

static uint64_t fnv(uint64_t h, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

void pool_template_hash(const json_t *tmpl, const char *agent_version, char out[17])
{
    json_t *t = json_deep_copy(tmpl);
    json_object_del(t, "Labels");
    char *s = t ? json_dumps(t, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    uint64_t h = fnv(1469598103934665603ULL, s ? s : "", s ? strlen(s) : 0);
    h = fnv(h, "\n", 1);
    h = fnv(h, agent_version ? agent_version : "", agent_version ? strlen(agent_version) : 0);
    free(s);
    json_decref(t);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

void pool_scope_hash(const char *state_dir, char out[17])
{
    claim_scope_hash(state_dir, out); /* the reaper's orphans are found by it too */
}

/* The body a spare is made from now (spec/sandbox.h): a sandbox's, with
 * the spare's labels instead of a chat's (hash_or_null: the template's
 * own hash; NULL, to compute it: labels are left out of it). */
static json_t *spare_template(pool_t *p, const char *hash_or_null)
{
    const spec_body_t b = { .kind = SPEC_SPARE,
                            .label = { hash_or_null ? hash_or_null : "", p->scope, NULL },
                            .agent = agent_pool_enabled(p->agents),
                            .storage = disk_storage(p->disk) };
    return spec_create_body(&p->o.tmpl, &b);
}

static void spare_remove(pool_t *p, const char *id, const char *why)
{
    char path[200];
    long st;
    snprintf(path, sizeof path, "/containers/%s?force=1&v=1", id);
    docker_err_t e = docker_call(p->d, "DELETE", path, NULL, &st, NULL);
    kept_record_drop(p->o.kept, id);
    log_info("removed spare sandbox %.12s (%s): %s", id, why, docker_strerror(e));
}

/* Make, fill and start one spare; its id into id.  0 or -1. */
static int spare_make(pool_t *p, char id[72])
{
    if (!capacity_start_room(p->o.mem_floor, NULL))
        return -1; /* no spares while the host is short of memory */
    unsigned char rnd[SPEC_SPARE_HEX / 2];
    if (!netcheck_ok(p->o.netcheck, NULL)) /* as for any sandbox (netcheck.h) */
        return -1;
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        return -1;
    char name[64], path[200];
    int o = snprintf(name, sizeof name, "%s", SPEC_SPARE_PREFIX);
    for (size_t i = 0; i < sizeof rnd; i++)
        o += snprintf(name + o, sizeof name - (size_t)o, "%02x", rnd[i]);
    json_t *t = spare_template(p, p->hash);
    json_t *ans = NULL;
    long st;
    snprintf(path, sizeof path, "/containers/create?name=%s", name);
    docker_err_t e = t ? docker_call(p->d, "POST", path, t, &st, &ans) : DOCKER_EARG;
    json_decref(t);
    snprintf(id, 72, "%s",
             e == DOCKER_OK ? json_string_value(json_object_get(ans, "Id")) ?: "" : "");
    if (e != DOCKER_OK || !kept_id_ok(id)) {
        log_warn("cannot make a spare sandbox: %s", docker_message(ans));
        json_decref(ans);
        return -1;
    }
    json_decref(ans);
    bool agent = agent_pool_enabled(p->agents);
    if (agent)
        agent_copy(p->agents, p->o.kept, id);
    snprintf(path, sizeof path, "/containers/%s/start", id);
    ans = NULL;
    int64_t t_start = proto_mono_ms();
    e = docker_call(p->d, "POST", path, NULL, &st, &ans);
    if (e != DOCKER_OK) {
        log_warn("cannot start spare sandbox %.12s: %s", id, docker_message(ans));
        json_decref(ans);
        spare_remove(p, id, "it would not start");
        return -1;
    }
    json_decref(ans);
    agent_note(p->agents, id, agent, t_start); /* attach now: the claim finds the link up */
    log_info("spare sandbox %s (%.12s) ready", name, id);
    return 0;
}

/* Whether spare id runs, from this template and the image `image` names
 * now (Docker's ancestor filter resolves the name). */
static bool spare_current(pool_t *p, const char *id)
{
    json_t *f = json_pack("{s:[s], s:[s], s:[s], s:[s]}", "id", id, "ancestor", p->o.tmpl.image,
                          "status", "running", "label", SPEC_LABEL_SPARE);
    char lab[64];
    snprintf(lab, sizeof lab, "%s=%s", SPEC_LABEL_SPARE, p->hash);
    json_array_set_new(json_object_get(f, "label"), 0, json_string(lab));
    json_t *list = f ? claim_list(p->d, f, false) : NULL;
    json_decref(f);
    bool ok = json_array_size(list) == 1;
    json_decref(list);
    return ok;
}

/* With p->mu held: take spare id off the ready list; true when it was there. */
static bool ready_take(pool_t *p, const char *id)
{
    list_for_each_item(s, &p->ready, spare_t, link) {
        if (strcmp(s->id, id) == 0) {
            list_remove(&p->ready, &s->link);
            free(s);
            p->n_ready--;
            return true;
        }
    }
    return false;
}

/* With p->mu held. */
static void ready_push(pool_t *p, const char *id)
{
    spare_t *s = calloc(1, sizeof *s);
    if (!s)
        return;
    snprintf(s->id, sizeof s->id, "%s", id);
    list_push_front(&p->ready, &s->link);
    p->n_ready++;
}

/* One spare of this pool's listing: keep, adopt (first sweep) or remove. */
static void sweep_one(pool_t *p, json_t *c, json_t *current, bool first)
{
    const char *id = json_string_value(json_object_get(c, "Id"));
    const char *name = json_string_value(json_array_get(json_object_get(c, "Names"), 0));
    json_t *labels = json_object_get(c, "Labels");
    if (!id || !kept_id_ok(id) || !claim_is_unclaimed(labels, name))
        return; /* a claimed spare: a chat's sandbox now */
    bool good = false;
    size_t i;
    json_t *x;
    json_array_foreach(current, i, x)
    {
        if (strcmp(json_string_value(json_object_get(x, "Id")) ?: "", id) == 0)
            good = true;
    }
    pthread_mutex_lock(&p->mu);
    bool mine = good ? true : ready_take(p, id);
    if (good && first && p->n_ready < p->o.warm_pool &&
        claim_record_set(p->o.kept, id, "spare-check", "") == 0) {
        claim_record_drop(p->o.kept, id); /* nobody's claim on it: adopt it */
        ready_push(p, id);
        agent_note(p->agents, id, agent_pool_enabled(p->agents), false);
        log_info("adopted spare sandbox %.12s", id);
    } else if (good && first) {
        good = false;
    }
    pthread_mutex_unlock(&p->mu);
    if (!good && (mine || first))
        spare_remove(p, id, "made from another image or template, stopped, or left over");
}

/* List this pool's spares and remove the ones that must not be handed out;
 * on the first sweep, adopt those that may (left by an earlier manager of
 * this state_dir with the same template) up to warm_pool. */
static void pool_sweep(pool_t *p, bool first)
{
    char lab[64], hl[64];
    snprintf(lab, sizeof lab, "%s=%s", SPEC_LABEL_POOL, p->scope);
    snprintf(hl, sizeof hl, "%s=%s", SPEC_LABEL_SPARE, p->hash);
    json_t *fa = json_pack("{s:[s]}", "label", lab);
    json_t *fc = json_pack("{s:[s,s], s:[s], s:[s]}", "label", lab, hl, "ancestor", p->o.tmpl.image,
                           "status", "running");
    json_t *all = fa ? claim_list(p->d, fa, false) : NULL;
    json_t *current = all && fc ? claim_list(p->d, fc, false) : NULL;
    json_decref(fa);
    json_decref(fc);
    size_t i;
    json_t *c;
    if (current) {
        json_array_foreach(all, i, c) sweep_one(p, c, current, first);
    }
    json_decref(all);
    json_decref(current);
}

static void *pool_main(void *arg)
{
    pool_t *p = arg;
    int64_t check_ms = p->o.warm_pool_check * 1000;
    if (check_ms <= 0)
        check_ms = 10000;
    pool_sweep(p, true);
    int64_t next_check = proto_mono_ms() + check_ms;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        int64_t now = proto_mono_ms();
        if (now >= next_check) {
            next_check = now + check_ms;
            pthread_mutex_unlock(&p->mu);
            pool_sweep(p, false);
            pthread_mutex_lock(&p->mu);
            continue;
        }
        if (p->n_ready < p->o.warm_pool && now >= p->retry_at) {
            pthread_mutex_unlock(&p->mu);
            char id[72];
            int rc = spare_make(p, id);
            pthread_mutex_lock(&p->mu);
            if (rc == 0)
                ready_push(p, id);
            else
                p->retry_at = proto_mono_ms() + check_ms;
            continue;
        }
        int64_t until = p->n_ready < p->o.warm_pool && p->retry_at < next_check ? p->retry_at
                                                                                : next_check;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t wait = until - now > 0 ? until - now : 1;
        ts.tv_sec += wait / 1000;
        ts.tv_nsec += (wait % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

pool_t *pool_new(docker_t *d, const pool_opts_t *o, agent_pool_t *agents, disk_t *disk)
{
    if (o->warm_pool <= 0)
        return NULL;
    pool_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->d = d;
    p->o = *o;
    p->agents = agents;
    p->disk = disk;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    pool_scope_hash(kept_state_dir(p->o.kept), p->scope);
    json_t *t = spare_template(p, NULL);
    pool_template_hash(t, agent_pool_version(agents), p->hash);
    json_decref(t);
    if (pthread_create(&p->thread, NULL, pool_main, p) != 0) {
        log_error("cannot start the warm pool's thread: new chats' sandboxes are made on their "
                  "first call");
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    log_info("warm pool: %" PRId64 " spare sandboxes (template %s, pool %s)", p->o.warm_pool,
             p->hash, p->scope);
    return p;
}

void pool_destroy(pool_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    pool_t *p = *self_p;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    list_node_t *n;
    while ((n = list_pop_front(&p->ready))) {
        spare_t *s = LIST_ITEM(n, spare_t, link);
        spare_remove(p, s->id, "the sandbox manager stops");
        free(s);
    }
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
    *self_p = NULL;
}

int pool_spares(pool_t *p)
{
    if (!p)
        return 0;
    pthread_mutex_lock(&p->mu);
    int n = p->n_ready;
    pthread_mutex_unlock(&p->mu);
    return n;
}

/* Take the next ready spare (and wake the thread to make another). */
static bool pool_pop(pool_t *p, char id[72])
{
    pthread_mutex_lock(&p->mu);
    spare_t *s = LIST_FIRST(&p->ready, spare_t, link);
    if (s) {
        list_remove(&p->ready, &s->link);
        p->n_ready--;
        snprintf(id, 72, "%s", s->id);
        free(s);
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return s != NULL;
}

pool_claim_t pool_claim(pool_t *p, const char *conv, const char *user, const char *name,
                        char id[72])
{
    char sid[72], path[CONVID_NAME_MAX + 128];
    while (p && pool_pop(p, sid)) {
        if (!spare_current(p, sid)) {
            spare_remove(p, sid, "made from another image or template, or not running");
            continue;
        }
        if (claim_record_set(p->o.kept, sid, conv, user) != 0) {
            log_warn("cannot claim spare %.12s: %s", sid, strerror(errno));
            continue; /* EEXIST: another manager's claim; else state_dir is broken */
        }
        snprintf(path, sizeof path, "/containers/%s/rename?name=%s", sid, name);
        long st;
        json_t *ans = NULL;
        docker_err_t e = docker_call(p->d, "POST", path, NULL, &st, &ans);
        if (e == DOCKER_OK) {
            json_decref(ans);
            snprintf(id, 72, "%s", sid);
            log_info("claimed spare sandbox %.12s as %s for conversation %s", sid, name, conv);
            return POOL_CLAIMED;
        }
        claim_record_drop(p->o.kept, sid);
        log_info("claiming spare %.12s as %s: %s", sid, name, docker_message(ans));
        json_decref(ans);
        if (e == DOCKER_ECONFLICT) {
            /* The chat's name is taken (a racing call made it): the spare
             * is untouched, and goes back to the pool. */
            pthread_mutex_lock(&p->mu);
            ready_push(p, sid);
            pthread_mutex_unlock(&p->mu);
            return POOL_RACED;
        }
        if (e != DOCKER_ENOTFOUND) {
            spare_remove(p, sid, "its rename failed");
            return POOL_EMPTY;
        }
    }
    return POOL_EMPTY;
}
