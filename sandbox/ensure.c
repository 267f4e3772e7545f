/* ensure.c -- a chat's container: finding, making (from the spec's
 * body, spec/sandbox.h) and starting the container of a chat
 * (manager_int.h).
 *
 * A chat's container is found by its deterministic name and checked by its
 * labels.  Two first calls of one chat racing each other both try to
 * create the same name; Docker's 409 on the second is the lock, and the
 * loser inspects and uses the winner's container.
 */
#include "sandbox/manager_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/convid.h"
#include "common/log.h"
#include "proto/proto.h"
#include "kept/chatname.h"
#include "kept/claim.h"
#include "kept/kept.h"
#include "sandbox/agentcopy.h"
#include "sandbox/capacity.h"
#include "spec/sandbox.h"
#include "sandbox/notices.h"
#include "talk/texts.h"

/* Reconnect a container to the sandbox network by name (see the network
 * note in docs/sandbox.md). */
static void repair_network(docker_t *d, const char *net, const char *id)
{
    char path[512];
    long st;
    json_t *body = json_pack("{s:s, s:b}", "Container", id, "Force", 1);
    snprintf(path, sizeof path, "/networks/%s/disconnect", net);
    docker_call(d, "POST", path, body, &st, NULL);
    json_decref(body);
    body = json_pack("{s:s, s:{}}", "Container", id, "EndpointConfig");
    snprintf(path, sizeof path, "/networks/%s/connect", net);
    docker_err_t e = docker_call(d, "POST", path, body, &st, NULL);
    json_decref(body);
    log_info("reattached %.12s to network %s: %s", id, net, docker_strerror(e));
}

/* Why Docker would not create a sandbox, as the call's text. */
static void create_failed(const manager_opts_t *o, long status, const char *msg, textbuf_t *err)
{
    if (status == 404 && strstr(msg, "image"))
        textbuf_printf(err, TX_SB_NO_IMAGE, o->tmpl.image);
    else if (strncmp(msg, "Unknown runtime", 15) == 0)
        textbuf_printf(err, TX_SB_NO_RUNTIME, o->tmpl.runtime);
    else
        textbuf_printf(err, TX_SB_CREATE_REFUSED, msg);
}

/* Start the chat's stopped container id (inspected as info), within the
 * caps (running.h); a resumed sandbox's notice goes into notice.
 * *started_ms: when this start began, or 0 when a racing call of the same
 * chat had started it already (Docker answered 304). */
static ensure_t ensure_started(manager_t *m, const char *conv, const char *id, json_t *info,
                               const char *label_user, bool created_now, textbuf_t *notice,
                               textbuf_t *err, int64_t *started_ms)
{
    json_t *state = json_object_get(info, "State");
    int64_t finished = kept_parse_time(json_string_value(json_object_get(state, "FinishedAt")));
    int64_t t0 = proto_mono_ms();
    if (!netcheck_ok(m->o.netcheck, err)) /* never on a network the egress rule misses */
        return ENSURE_FAILED;
    if (!capacity_start_room(m->o.mem_floor, err) ||
        !running_start_begin(m->running, conv, label_user, id, err))
        return ENSURE_REFUSED;
    int64_t t1 = proto_mono_ms();
    /* Before every start: the sandbox then runs this manager's agent
     * (copied only when its record says another version is in there). */
    bool copied = agent_in_config(info) && agent_copy(m->agents, m->o.kept, id);
    char path[200];
    long status;
    snprintf(path, sizeof path, "/containers/%s/start", id);
    json_t *ans = NULL;
    int64_t t2 = proto_mono_ms();
    docker_err_t e = docker_call(m->d, "POST", path, NULL, &status, &ans);
    log_info("starting %.12s: caps %" PRId64 " ms, agent copy %" PRId64
             " ms%s, docker start %" PRId64 " ms",
             id, t1 - t0, t2 - t1, copied ? "" : " (this version is in there: skipped)",
             proto_mono_ms() - t2);
    if (e != DOCKER_OK && e != DOCKER_ENOTFOUND && agent_in_config(info) && !copied) {
        /* The agent was not copied, and the start failed: maybe the
         * sandbox removed it.  Copy it after all, and start once more. */
        json_decref(ans);
        ans = NULL;
        kept_agent_set(m->o.kept, id, ""); /* forget it: copy now */
        agent_copy(m->agents, m->o.kept, id);
        e = docker_call(m->d, "POST", path, NULL, &status, &ans);
    }
    if (e == DOCKER_ENOTFOUND && strstr(docker_message(ans), "network")) {
        /* The sandbox network was removed and made again under the same
         * name: the container still points at the old network's id.
         * Attach it to the network of that name now, then start. */
        json_decref(ans);
        ans = NULL;
        repair_network(m->d, m->o.tmpl.network, id);
        e = docker_call(m->d, "POST", path, NULL, &status, &ans);
    }
    running_start_end(m->running, conv, label_user, id, e == DOCKER_OK ? id : NULL);
    if (e != DOCKER_OK) {
        textbuf_printf(err, TX_SB_START_FAILED, docker_message(ans));
        json_decref(ans);
        return ENSURE_FAILED;
    }
    json_decref(ans);
    *started_ms = status == 304 ? 0 : t2;
    /* Never started before (a racing call made it): nothing to resume. */
    int64_t started = kept_parse_time(json_string_value(json_object_get(state, "StartedAt")));
    if (!created_now && started > 0)
        notice_resumed(m->o.kept, id, finished, notice);
    return ENSURE_OK;
}

/* The chat's container (named name) does not exist: claim a spare from
 * the warm pool (pool.h), or create it.  *created_now when this call made
 * it, *raced when a racing call did; either way the caller inspects it
 * next. */
static ensure_t ensure_make(manager_t *m, const char *conv, const char *user, const char *name,
                            bool *created_now, bool *raced, textbuf_t *err)
{
    if (!netcheck_ok(m->o.netcheck, err)) /* never on a network the egress rule misses */
        return ENSURE_FAILED;
    /* A new sandbox is one more running: the host's memory and the caps
     * first (capacity.h, running.h). */
    if (!capacity_start_room(m->o.mem_floor, err) ||
        !running_start_begin(m->running, conv, user, NULL, err))
        return ENSURE_REFUSED;
    char sid[72];
    pool_claim_t pc = pool_claim(m->pool, conv, user, name, sid);
    if (pc != POOL_EMPTY) {
        running_start_end(m->running, conv, user, NULL, pc == POOL_CLAIMED ? sid : NULL);
        *created_now = pc == POOL_CLAIMED;
        *raced = pc == POOL_RACED;
        return ENSURE_OK;
    }
    const spec_body_t b = { .kind = SPEC_SANDBOX,
                            .label = { conv, user ? user : "", NULL },
                            .agent = agent_pool_enabled(m->agents),
                            .storage = disk_storage(m->disk) };
    json_t *tmpl = spec_create_body(&m->o.tmpl, &b);
    json_t *ans = NULL;
    char path[CONVID_NAME_MAX + 64];
    long status;
    snprintf(path, sizeof path, "/containers/create?name=%s", name);
    docker_err_t e = docker_call(m->d, "POST", path, tmpl, &status, &ans);
    json_decref(tmpl);
    running_start_end(m->running, conv, user, NULL,
                      e == DOCKER_OK ? json_string_value(json_object_get(ans, "Id")) : NULL);
    if (e == DOCKER_OK) {
        *created_now = true;
        log_info("created sandbox %s for conversation %s", name, conv);
    } else if (e != DOCKER_ECONFLICT) {
        create_failed(&m->o, status, docker_message(ans), err);
        json_decref(ans);
        return ENSURE_FAILED;
    }
    if (e == DOCKER_ECONFLICT)
        *raced = true;
    json_decref(ans);
    return ENSURE_OK;
}

/* The chats whose ensure runs now in this manager: calls of one chat wait
 * for each other here, so a container is started, and its agent attached,
 * by one call at a time (calls of another manager meet Docker's 409). */
struct ensuring {
    char conv[CONVID_MAX + 1];
    list_node_t link; /* on m->ensuring */
};

/* Wait until no ensure of conv runs, then mark one as running.  True when
 * another call's ensure ran meanwhile (the cache may hold its result). */
static bool ensure_lock(manager_t *m, const char *conv, struct ensuring *me)
{
    bool waited = false;
    snprintf(me->conv, sizeof me->conv, "%s", conv);
    pthread_mutex_lock(&m->mu);
    for (bool busy = true; busy;) {
        busy = false;
        list_for_each_item(e, &m->ensuring, struct ensuring, link) {
            busy = busy || strcmp(e->conv, conv) == 0;
        }
        if (busy) {
            waited = true;
            pthread_cond_wait(&m->ensure_cv, &m->mu);
        }
    }
    list_push_front(&m->ensuring, &me->link);
    pthread_mutex_unlock(&m->mu);
    return waited;
}

static void ensure_unlock(manager_t *m, struct ensuring *me)
{
    pthread_mutex_lock(&m->mu);
    list_remove(&m->ensuring, &me->link);
    pthread_cond_broadcast(&m->ensure_cv);
    pthread_mutex_unlock(&m->mu);
}

static ensure_t ensure_one(manager_t *m, const char *conv, const char *user, char id[72],
                           textbuf_t *notice, textbuf_t *err);

/* Make sure the chat's container exists and runs.  On success id holds its
 * id and notice may hold a line for the top of the result. */
ensure_t manager_ensure(manager_t *m, const char *conv, const char *user, char id[72],
                        textbuf_t *notice, textbuf_t *err)
{
    struct ensuring me;
    char *cached_user = NULL;
    ensure_t en;
    if (ensure_lock(m, conv, &me) && cache_get(m->cache, conv, id, &cached_user)) {
        /* A call of this chat ahead of this one found or made it. */
        en = convid_owner_ok(cached_user, user) ? ENSURE_OK : ENSURE_REFUSED;
        if (en == ENSURE_REFUSED)
            textbuf_puts(err, TX_SB_OTHER_USER);
    } else {
        en = ensure_one(m, conv, user, id, notice, err);
    }
    free(cached_user);
    ensure_unlock(m, &me);
    return en;
}

/* manager_ensure, for one call at a time per chat.  It is long because a
 * chat's sandbox is found, checked and woken in one order (find it or make
 * it, racing a create; whose it is; unpause or start; attach the agent),
 * and each step's outcome decides the next and the notice. */
static ensure_t ensure_one(manager_t *m, const char *conv, const char *user, char id[72],
                           textbuf_t *notice, textbuf_t *err)
{
    char name[CONVID_NAME_MAX];
    /* The new name, or an older sandbox's; and its inspect, when found:
     * one Docker call fewer on the resume's path. */
    json_t *info = chatname_find(m->d, m->o.kept, conv, name);
    char path[CONVID_NAME_MAX + 64];
    long status;
    bool created_now = false;

    /* A call that loses the race to create gets 409, and for a moment the
     * winner's container is not yet visible by name: wait for it, up to
     * about 15 s, rather than fail the call. */
    bool raced = false;
    for (int attempt = 0; attempt < 60 && !info; attempt++) {
        if (raced)
            usleep(attempt < 10 ? 50000 : 250000);
        snprintf(path, sizeof path, "/containers/%s/json", name);
        docker_err_t e = docker_call(m->d, "GET", path, NULL, &status, &info);
        if (e == DOCKER_OK)
            break;
        json_decref(info);
        info = NULL;
        if (raced && e == DOCKER_ENOTFOUND)
            continue;
        if (e != DOCKER_ENOTFOUND) {
            textbuf_printf(err, TX_SB_DOCKER_SILENT, docker_strerror(e));
            return ENSURE_FAILED;
        }
        ensure_t en = ensure_make(m, conv, user, name, &created_now, &raced, err);
        if (en != ENSURE_OK)
            return en;
        /* Created here or by a racing call: inspect on the next turn. */
    }
    if (!info) {
        textbuf_puts(err, TX_SB_NOT_MADE);
        return ENSURE_FAILED;
    }

    /* Whose it is: its labels, or a claimed spare's record (claim.h). */
    char label_conv[CONVID_MAX + 1], label_user[CLAIM_USER_MAX + 1];
    if (!claim_identity(m->o.kept, json_object_get(json_object_get(info, "Config"), "Labels"),
                        json_string_value(json_object_get(info, "Id")),
                        json_string_value(json_object_get(info, "Name")), label_conv, label_user) ||
        strcmp(label_conv, conv) != 0) {
        log_error("container %s does not carry conversation %s: refusing", name, conv);
        textbuf_puts(err, TX_SB_NAME_TAKEN);
        json_decref(info);
        return ENSURE_REFUSED;
    }
    if (!convid_owner_ok(label_user, user)) {
        textbuf_puts(err, TX_SB_OTHER_USER);
        json_decref(info);
        return ENSURE_REFUSED;
    }
    snprintf(id, 72, "%s", json_string_value(json_object_get(info, "Id")) ?: "");
    json_t *state = json_object_get(info, "State");
    bool running = json_is_true(json_object_get(state, "Running"));
    bool paused = json_is_true(json_object_get(state, "Paused"));
    if (paused)
        pause_undo(m, id, notice); /* the paused tier (pause.c) */
    bool has_agent = agent_in_config(info);
    int64_t started_ms = 0;
    if (!running) {
        ensure_t en =
            ensure_started(m, conv, id, info, label_user, created_now, notice, err, &started_ms);
        if (en != ENSURE_OK) {
            json_decref(info);
            return en;
        }
    }
    if (created_now)
        notice_gone(m->d, conv, name, notice);
    /* Attach to its agent now: after a start, or for the first time since
     * this manager started. */
    int64_t ta = proto_mono_ms();
    agent_note(m->agents, id, has_agent, started_ms);
    if (!running)
        log_info("attached to the agent of %.12s in %" PRId64 " ms", id, proto_mono_ms() - ta);
    cache_put(m->cache, conv, id, label_user);
    json_decref(info);
    return ENSURE_OK;
}
