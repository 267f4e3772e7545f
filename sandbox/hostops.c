/* hostops.c -- locate, list, drain, undrain, stop and rm (see hostops.h).
 *
 * A chat's container is looked up by its deterministic name and must be
 * the chat's, as everywhere in the manager: carry the chat in its label,
 * or be a spare the chat claimed (its claim record names the chat,
 * kept/claim.h); a container under the name that is another chat's is
 * not this chat's.  Spares nobody claimed are no chat's: list leaves them
 * out; orphans (claimed spares whose claim record is gone) are listed as
 * such, by their container name.  Labels come from
 * Docker and are printed in list's lines, so tabs and line ends in them are
 * replaced: one sandbox stays one line.
 */
#include "sandbox/hostops.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/convid.h"
#include "common/log.h"
#include "common/textbuf.h"
#include "kept/chatname.h"
#include "kept/claim.h"
#include "kept/kept.h"
#include "proto/ops.h"
#include "talk/texts.h"

/* Inspect conv's container: its JSON (caller frees) when it exists and is
 * conv's (its label, or its claim record), else NULL with *e saying why
 * (DOCKER_ENOTFOUND when not here, or not this chat's). */
static json_t *chat_container(const hostops_t *h, const char *conv, docker_err_t *e)
{
    char name[CONVID_NAME_MAX], path[CONVID_NAME_MAX + 64];
    chatname_of(h->d, h->kept, conv, name);
    snprintf(path, sizeof path, "/containers/%s/json", name);
    long st;
    json_t *info = NULL;
    *e = docker_call(h->d, "GET", path, NULL, &st, &info);
    if (*e != DOCKER_OK) {
        json_decref(info);
        return NULL;
    }
    json_t *labels = json_object_get(json_object_get(info, "Config"), "Labels");
    char owner[CONVID_MAX + 1], user[CLAIM_USER_MAX + 1];
    if (!claim_identity(h->kept, labels, json_string_value(json_object_get(info, "Id")),
                        json_string_value(json_object_get(info, "Name")), owner, user) ||
        strcmp(owner, conv) != 0) {
        json_decref(info);
        *e = DOCKER_ENOTFOUND;
        return NULL;
    }
    return info;
}

proto_msg_t *hostops_locate(const hostops_t *h, worker_job_t *job)
{
    docker_err_t e;
    json_t *info = chat_container(h, job->req->conv, &e);
    if (!info && e != DOCKER_ENOTFOUND)
        return proto_reply_new(job->req, PROTO_ST_INTERNAL, true, TX_SB_OP_NO_DOCKER);
    proto_msg_t *r = proto_reply_new(job->req, PROTO_ST_OK, false, "");
    if (r) {
        const char *state =
            json_string_value(json_object_get(json_object_get(info, "State"), "Status"));
        proto_map_set_bool(&r->data, DATA_FOUND, info != NULL);
        proto_map_set_cstr(&r->data, DATA_STATE, info ? (state ? state : "unknown") : "");
    }
    json_decref(info);
    return r;
}

/* A label printed in a list line: tabs and line ends become '?'. */
static void put_field(textbuf_t *t, const char *s)
{
    for (; s && *s; s++)
        textbuf_append(t, (*s == '\t' || *s == '\n' || *s == '\r') ? "?" : s, 1);
    textbuf_append(t, "\t", 1);
}

/* The orphans of this state_dir's pool (kept/claim.h), one line each:
 * the container's name where the conversation goes (nobody knows the
 * chat), no user, and the state "orphan-" + Docker's. */
static void list_orphans(const hostops_t *h, worker_job_t *job, textbuf_t *t)
{
    char scope[17], state[48];
    claim_scope_hash(kept_state_dir(h->kept), scope);
    json_t *ans = claim_list_orphans(h->d, h->kept, scope, true);
    int64_t now = (int64_t)time(NULL);
    size_t i;
    json_t *c;
    json_array_foreach(ans, i, c)
    {
        const char *id = json_string_value(json_object_get(c, "Id"));
        const char *name = json_string_value(json_array_get(json_object_get(c, "Names"), 0));
        int64_t last = id && kept_id_ok(id) ? kept_stamp_get(h->kept, id) : 0;
        if (!last)
            last = (int64_t)json_integer_value(json_object_get(c, "Created"));
        snprintf(state, sizeof state, "orphan-%s",
                 json_string_value(json_object_get(c, "State")) ?: "unknown");
        put_field(t, name && *name == '/' ? name + 1 : name);
        put_field(t, "");
        put_field(t, worker_host(job->worker));
        put_field(t, state);
        textbuf_printf(t, "%" PRId64 "\t%" PRId64 "\n", last && now > last ? now - last : 0,
                       (int64_t)json_integer_value(json_object_get(c, "SizeRw")));
    }
    json_decref(ans);
}

/* One line per chat's sandbox: the labelled ones and the claimed spares,
 * whose labels claim_list_chats fills in from their records. */
proto_msg_t *hostops_list(const hostops_t *h, worker_job_t *job)
{
    json_t *ans = claim_list_chats(h->d, h->kept, NULL, true);
    if (!ans) {
        return proto_reply_new(job->req, PROTO_ST_INTERNAL, true, TX_SB_OP_NO_LIST);
    }
    textbuf_t t;
    textbuf_init(&t);
    int64_t now = (int64_t)time(NULL);
    size_t i;
    json_t *c;
    json_array_foreach(ans, i, c)
    {
        json_t *labels = json_object_get(c, "Labels");
        const char *id = json_string_value(json_object_get(c, "Id"));
        int64_t last = id && kept_id_ok(id) ? kept_stamp_get(h->kept, id) : 0;
        if (!last)
            last = (int64_t)json_integer_value(json_object_get(c, "Created"));
        put_field(&t, json_string_value(json_object_get(labels, SPEC_LABEL_CONV)));
        put_field(&t, json_string_value(json_object_get(labels, SPEC_LABEL_USER)));
        put_field(&t, worker_host(job->worker));
        put_field(&t, json_string_value(json_object_get(c, "State")));
        textbuf_printf(&t, "%" PRId64 "\t%" PRId64 "\n", last && now > last ? now - last : 0,
                       (int64_t)json_integer_value(json_object_get(c, "SizeRw")));
    }
    json_decref(ans);
    list_orphans(h, job, &t);
    proto_msg_t *r = proto_reply_new(job->req, PROTO_ST_OK, false, "");
    if (r && t.len)
        proto_msg_set_text(r, t.buf, t.len);
    textbuf_free(&t);
    return r;
}

/* drain (on) or undrain: the flag kept in state_dir (capacity.h). */
static proto_msg_t *op_drain(const hostops_t *h, worker_job_t *job, bool on)
{
    const char *host = worker_host(job->worker);
    char text[512];
    if (!h->cap || capacity_set_draining(h->cap, on) != 0) {
        snprintf(text, sizeof text, TX_SB_OP_FLAG, host, on ? "drain" : "undrain",
                 kept_state_dir(h->kept));
        return proto_reply_new(job->req, PROTO_ST_OK, true, text);
    }
    if (on)
        snprintf(text, sizeof text,
                 "host %s is draining: no new chats are placed there; its chats go on "
                 "there until their sandboxes are removed",
                 host);
    else
        snprintf(text, sizeof text, "host %s takes new chats again", host);
    return proto_reply_new(job->req, PROTO_ST_OK, false, text);
}

/* stop or rm one chat's sandbox. */
static proto_msg_t *op_end(const hostops_t *h, worker_job_t *job, bool remove)
{
    const char *conv = job->req->conv, *host = worker_host(job->worker);
    char text[768], path[CONVID_NAME_MAX + 96];
    docker_err_t e;
    json_t *info = chat_container(h, conv, &e);
    if (!info) {
        snprintf(text, sizeof text,
                 e == DOCKER_ENOTFOUND ? "chat %s has no sandbox on host %s" : TX_SB_OP_CHAT_SILENT,
                 conv, host);
        return proto_reply_new(job->req, PROTO_ST_OK, e != DOCKER_ENOTFOUND, text);
    }
    char id[72], name[CONVID_NAME_MAX];
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(info, "Id")) ?: "");
    json_decref(info);
    convid_container_name(conv, name);
    if (remove) {
        kept_tombstone_create(h->d, h->image, conv, name, "because the operator removed it");
        snprintf(path, sizeof path, "/containers/%s?force=1&v=1", *id ? id : name);
    } else {
        /* The chat's next call says who stopped it (notices.c). */
        if (kept_id_ok(id) && kept_reason_set(h->kept, id, "operator") != 0)
            log_warn("cannot write the stop reason of %s in %s", name, kept_state_dir(h->kept));
        snprintf(path, sizeof path, "/containers/%s/stop?t=10", *id ? id : name);
    }
    long st;
    json_t *ans = NULL;
    e = docker_call(h->d, remove ? "DELETE" : "POST", path, NULL, &st, &ans);
    json_decref(ans);
    if (e != DOCKER_OK && e != DOCKER_ENOTFOUND && !(st == 304 && !remove)) {
        snprintf(text, sizeof text, TX_SB_OP_CHAT_REFUSED, host, remove ? "remove" : "stop", conv,
                 docker_strerror(e));
        return proto_reply_new(job->req, PROTO_ST_OK, true, text);
    }
    if (remove && kept_id_ok(id))
        kept_record_drop(h->kept, id);
    if (h->forget)
        h->forget(h->ctx, conv);
    log_info("%s the sandbox of chat %s (asked by the operator)", remove ? "removed" : "stopped",
             conv);
    if (remove)
        snprintf(text, sizeof text, "removed the sandbox of chat %s on host %s, with all its files",
                 conv, host);
    else
        snprintf(text, sizeof text,
                 "stopped the sandbox of chat %s on host %s; its files are kept and its "
                 "next call starts it again",
                 conv, host);
    return proto_reply_new(job->req, PROTO_ST_OK, false, text);
}

proto_msg_t *hostops_drain(const hostops_t *h, worker_job_t *job)
{
    return op_drain(h, job, true);
}

proto_msg_t *hostops_undrain(const hostops_t *h, worker_job_t *job)
{
    return op_drain(h, job, false);
}

proto_msg_t *hostops_stop(const hostops_t *h, worker_job_t *job)
{
    return op_end(h, job, false);
}

proto_msg_t *hostops_rm(const hostops_t *h, worker_job_t *job)
{
    return op_end(h, job, true);
}
