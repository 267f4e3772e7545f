/* running.c -- calls in flight, last-call records and the running caps
 * (see running.h).
 *
 * Counting running sandboxes asks Docker (one filtered container list):
 * it is done only when a sandbox is about to be created or started, never
 * on a call to a running one, and it is right after any restart of this
 * process or of Docker.  Every start under way holds a place (by the
 * container's id, or none yet while it is being created), and still
 * counts for a caller whose container list is older than its end; a
 * sandbox created but not yet started counts as
 * running; a container both listed and held counts once.  So racing first
 * calls and resumes cannot pass a cap together.
 */
#include "sandbox/running.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "docker/claim.h"
#include "docker/kept.h"
#include "proto/proto.h"

/* A chat with calls running. */
typedef struct call_entry {
    char *conv;
    int inflight;
    int64_t until; /* the latest deadline of its calls */
    struct call_entry *next;
} call_entry_t;

/* A start under way: of user ("" = no user id), of container id ("" while
 * it is being created). */
typedef struct hold {
    char *user;
    char id[72];
    int64_t ended; /* 0 while under way; then when it ended */
    struct hold *next;
} hold_t;

/* A finished start still counts for a caller whose container list was
 * asked for before it ended (that list may not show it yet); after this
 * long (monotonic ms) no list can be that old, and the hold goes. */
#define HOLD_KEEP_MS 60000

struct running {
    docker_t *d;
    running_opts_t o;
    pthread_mutex_t mu;
    call_entry_t *calls;
    hold_t *holds; /* starts under way */
};

running_t *running_new(docker_t *d, const running_opts_t *o)
{
    running_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->d = d;
    c->o = *o;
    pthread_mutex_init(&c->mu, NULL);
    return c;
}

void running_destroy(running_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    running_t *c = *self_p;
    while (c->calls) {
        call_entry_t *e = c->calls;
        c->calls = e->next;
        free(e->conv);
        free(e);
    }
    while (c->holds) {
        hold_t *h = c->holds;
        c->holds = h->next;
        free(h->user);
        free(h);
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
    *self_p = NULL;
}

/* ---- calls and stamps ------------------------------------------------------------ */

static call_entry_t **call_find(running_t *c, const char *conv)
{
    call_entry_t **pp = &c->calls;
    while (*pp && strcmp((*pp)->conv, conv) != 0)
        pp = &(*pp)->next;
    return pp;
}

static void stamp(const char *id, int64_t t)
{
    if (kept_stamp_set(id, t))
        log_warn("cannot write the last-call record of %.12s in %s: %s", id, kept_state_dir(),
                 strerror(errno));
}

/* The stamp moves forward to the latest deadline of the chat's calls, so a
 * 30-minute build is never idle; written under the lock, so a call's
 * "busy until" can never land after another's "done now". */
void running_call_begin(running_t *c, const char *conv, const char *id, int64_t deadline_s)
{
    pthread_mutex_lock(&c->mu);
    call_entry_t **pp = call_find(c, conv);
    if (!*pp) {
        call_entry_t *e = calloc(1, sizeof *e);
        if (e && !(e->conv = strdup(conv))) {
            free(e);
            e = NULL;
        }
        *pp = e;
    }
    call_entry_t *e = *pp;
    if (e) {
        e->inflight++;
        if (deadline_s > e->until) {
            e->until = deadline_s;
            stamp(id, deadline_s);
        }
    } else {
        stamp(id, deadline_s);
    }
    pthread_mutex_unlock(&c->mu);
}

/* The chat's last call ended: the stamp is "now" and its entry goes. */
void running_call_end(running_t *c, const char *conv, const char *id)
{
    pthread_mutex_lock(&c->mu);
    call_entry_t **pp = call_find(c, conv);
    call_entry_t *e = *pp;
    if (!e || --e->inflight <= 0) {
        stamp(id, (int64_t)time(NULL));
        if (e) {
            *pp = e->next;
            free(e->conv);
            free(e);
        }
    }
    pthread_mutex_unlock(&c->mu);
}

int running_inflight(running_t *c, const char *conv)
{
    pthread_mutex_lock(&c->mu);
    call_entry_t *e = *call_find(c, conv);
    int n = e ? e->inflight : 0;
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* ---- caps ------------------------------------------------------------------------- */

/* The entries of list (list_running's) whose sandbox is user's: a new
 * array. */
static json_t *of_user(json_t *list, const char *user)
{
    json_t *out = json_array();
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        json_t *labels = json_object_get(x, "Labels");
        if (out &&
            strcmp(json_string_value(json_object_get(labels, KEPT_LABEL_USER)) ?: "", user) == 0)
            json_array_append(out, x);
    }
    return out;
}

/* The running chats' sandboxes on this manager's network; NULL when
 * Docker cannot say.  Created and paused ones count too: a sandbox made by
 * a call that is about to start it is as good as running, and a racing
 * start must see it. */
static json_t *list_running(running_t *c)
{
    /* The chats' sandboxes: labelled ones and claimed spares (claim.h);
     * spares nobody claimed are not chats and take no place. */
    json_t *f = json_pack("{s:[s,s,s], s:[s]}", "status", "running", "created", "paused", "network",
                          c->o.network);
    json_t *ans = f ? claim_list_chats(c->d, f, false) : NULL;
    json_decref(f);
    if (!ans) {
        log_warn("cannot count running sandboxes: Docker did not list them");
        return NULL;
    }
    return ans;
}

static bool listed(json_t *list, const char *id)
{
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        if (strcmp(json_string_value(json_object_get(x, "Id")) ?: "", id) == 0)
            return true;
    }
    return false;
}

/* Drop the holds no container list can still need (under the lock). */
static void holds_prune(running_t *c)
{
    int64_t now = proto_mono_ms();
    for (hold_t **pp = &c->holds; *pp;) {
        hold_t *h = *pp;
        if (h->ended && now - h->ended > HOLD_KEEP_MS) {
            *pp = h->next;
            free(h->user);
            free(h);
            continue;
        }
        pp = &h->next;
    }
}

/* Places taken (under the lock): the listed sandboxes, and the starts
 * under way or ended since the list was asked for (at asked, monotonic
 * ms), each once, of user when not NULL, but for container self (the one
 * asking; NULL for a new one).  -1 when list is NULL (Docker did not say:
 * then the cap is not applied rather than every call refused). */
static int taken(running_t *c, json_t *list, const char *user, const char *self, int64_t asked)
{
    if (!list)
        return -1;
    int n = 0;
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        const char *id = json_string_value(json_object_get(x, "Id"));
        if (!self || !id || strcmp(id, self) != 0)
            n++;
    }
    for (hold_t *h = c->holds; h; h = h->next) {
        if ((user && strcmp(h->user, user) != 0) || (h->ended && h->ended < asked))
            continue;
        if (!h->id[0] || ((!self || strcmp(h->id, self) != 0) && !listed(list, h->id)))
            n++;
    }
    return n;
}

void running_refusal_text(textbuf_t *err, bool per_user, int64_t cap, int64_t idle_stop_s)
{
    if (per_user)
        textbuf_printf(
            err,
            "[talkback: this user already has %" PRId64 " sandboxes running, the most one user "
            "may have (setting `max_running_per_user`), so this chat's sandbox was not started and "
            "nothing ran. Tell the user: a chat's sandbox stops after %" PRId64 " minutes without "
            "calls, and `reset` in a chat they no longer need frees one at once; then try again.]",
            cap, idle_stop_s / 60);
    else
        textbuf_printf(
            err,
            "[talkback: the sandbox host already runs %" PRId64 " sandboxes, its limit (setting "
            "`max_running`), so this chat's sandbox was not started and nothing ran. Try again in "
            "a "
            "few minutes, when idle sandboxes have stopped; if it keeps failing, tell the user the "
            "sandbox host is full.]",
            cap);
}

bool running_start_begin(running_t *c, const char *user, const char *id, textbuf_t *err)
{
    int64_t max_all = c->o.max_running, max_user = c->o.max_running_per_user;
    const char *u = user ? user : "";
    bool by_user = max_user > 0 && *u;
    int64_t asked = proto_mono_ms();
    /* One listing (two Docker calls: claim_list_chats) serves both caps. */
    json_t *all = max_all > 0 || by_user ? list_running(c) : NULL;
    json_t *mine = by_user && all ? of_user(all, u) : NULL;
    hold_t *h = calloc(1, sizeof *h);
    if (h && !(h->user = strdup(u))) {
        free(h);
        h = NULL;
    }
    if (h)
        snprintf(h->id, sizeof h->id, "%s", id ? id : "");
    pthread_mutex_lock(&c->mu);
    holds_prune(c);
    int n_all = taken(c, all, NULL, id, asked), n_mine = taken(c, mine, u, id, asked);
    bool over_all = max_all > 0 && n_all >= max_all;
    bool over_user = by_user && n_mine >= max_user;
    if (!over_all && !over_user && h) {
        h->next = c->holds;
        c->holds = h;
        h = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    json_decref(all);
    json_decref(mine);
    if (h) {
        free(h->user);
        free(h);
    }
    if (over_user || over_all) {
        log_info(
            "not starting a sandbox of user \"%s\": %d running (%d of this user), caps %" PRId64
            " and %" PRId64 " per user",
            u, n_all, n_mine, max_all, max_user);
        running_refusal_text(err, over_user, over_user ? max_user : max_all, c->o.idle_stop);
        return false;
    }
    return true;
}

void running_start_end(running_t *c, const char *user, const char *id, const char *made)
{
    const char *u = user ? user : "";
    pthread_mutex_lock(&c->mu);
    for (hold_t **pp = &c->holds; *pp; pp = &(*pp)->next) {
        hold_t *h = *pp;
        if (h->ended || strcmp(h->user, u) != 0 || strcmp(h->id, id ? id : "") != 0)
            continue;
        if (made && kept_id_ok(made)) {
            snprintf(h->id, sizeof h->id, "%s", made);
            h->ended = proto_mono_ms();
        } else {
            *pp = h->next;
            free(h->user);
            free(h);
        }
        break;
    }
    pthread_mutex_unlock(&c->mu);
}
