/* pause.c -- the paused tier: pausing an idle chat's sandbox when the
 * reaper asks, and unpausing it for the chat's next call (manager_int.h).
 *
 * The reaper decides (a sandbox with no call for idle_pause); the manager
 * pauses, because only the manager knows for sure that no call of the chat
 * runs and none is about to: it parks the sandbox first (running.h), so a
 * call that arrives meanwhile waits for the pause and then finds the
 * sandbox paused and unpauses it, instead of sending a command to an agent
 * that cannot answer.  A paused sandbox keeps its processes and memory
 * (the cgroup freezer) and uses no CPU; unpausing takes milliseconds.
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
#include "kept/chatname.h"
#include "kept/claim.h"
#include "kept/kept.h"
#include "proto/ops.h"
#include "sandbox/notices.h"

/* Tries at a pause before it is given up (until the next sweep). */
#define PAUSE_TRIES 3

/* Chat conv's sandbox, when it is running and not paused: its id into id.
 * Its identity is checked as a call's would be (labels, or a claimed
 * spare's record). */
static bool pause_target(manager_t *m, const char *conv, char id[72])
{
    char name[CONVID_NAME_MAX];
    json_t *info = chatname_find(m->d, m->o.kept, conv, name);
    bool ok = info != NULL;
    json_t *state = json_object_get(info, "State");
    char lconv[CONVID_MAX + 1], luser[CLAIM_USER_MAX + 1];
    ok = ok && json_is_true(json_object_get(state, "Running")) &&
         !json_is_true(json_object_get(state, "Paused")) &&
         claim_identity(m->o.kept, json_object_get(json_object_get(info, "Config"), "Labels"),
                        json_string_value(json_object_get(info, "Id")),
                        json_string_value(json_object_get(info, "Name")), lconv, luser) &&
         strcmp(lconv, conv) == 0 && kept_id_ok(json_string_value(json_object_get(info, "Id")));
    if (ok)
        snprintf(id, 72, "%s", json_string_value(json_object_get(info, "Id")));
    json_decref(info);
    return ok;
}

proto_msg_t *pause_op(manager_t *m, worker_job_t *job)
{
    const proto_msg_t *req = job->req;
    int64_t idle_s = proto_map_int(&req->args, ARG_IDLE, 0);
    char id[72];
    bool paused = false;
    int inflight = 0;
    if (pause_target(m, req->conv, id)) {
        if (running_park(m->running, req->conv, id)) {
            /* From here on its calls wait, then find it paused. */
            cache_drop(m->cache, req->conv);
            char reason[KEPT_REASON_MAX];
            snprintf(reason, sizeof reason, "idle %" PRId64, idle_s / 60);
            if (kept_paused_set(m->o.kept, id, reason))
                log_warn("cannot write the pause record of %.12s in %s", id,
                         kept_state_dir(m->o.kept));
            char path[200];
            long st;
            json_t *ans = NULL;
            snprintf(path, sizeof path, "/containers/%s/pause", id);
            /* The freezer can fail to freeze a busy cgroup in time ("unable
             * to freeze"; runc thaws it again): try again a little later. */
            docker_err_t e = DOCKER_EHTTP;
            for (int i = 0; i < PAUSE_TRIES && e != DOCKER_OK; i++) {
                if (i) {
                    json_decref(ans);
                    ans = NULL;
                    usleep(200000);
                }
                e = docker_call(m->d, "POST", path, NULL, &st, &ans);
            }
            paused = e == DOCKER_OK;
            if (paused)
                log_info("paused %.12s of chat %s (no call for over %" PRId64 " s)", id, req->conv,
                         idle_s);
            else
                log_warn("could not pause %.12s of chat %s: %s", id, req->conv,
                         docker_message(ans));
            json_decref(ans);
            if (!paused) {
                int64_t since;
                free(kept_paused_take(m->o.kept, id, &since));
            }
            running_park_end(m->running, id, paused);
        } else {
            inflight = running_inflight(m->running, req->conv);
        }
    }
    proto_msg_t *r = proto_reply_new(req, PROTO_ST_OK, false, "");
    if (r) {
        proto_map_set_bool(&r->data, DATA_PAUSED, paused);
        proto_map_set_int(&r->data, DATA_INFLIGHT, inflight);
    }
    return r;
}

bool pause_undo(manager_t *m, const char *id, textbuf_t *notice)
{
    char path[200];
    long st;
    json_t *ans = NULL;
    snprintf(path, sizeof path, "/containers/%s/unpause", id);
    int64_t t0 = proto_mono_ms();
    docker_err_t e = docker_call(m->d, "POST", path, NULL, &st, &ans);
    if (e != DOCKER_OK) {
        log_warn("could not unpause %.12s: %s", id, docker_message(ans));
        json_decref(ans);
        return false;
    }
    json_decref(ans);
    log_info("unpaused %.12s in %" PRId64 " ms", id, proto_mono_ms() - t0);
    running_unpark(m->running, id);
    notice_unpaused(m->o.kept, id, notice);
    return true;
}
