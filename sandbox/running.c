/* running.c -- calls in flight, last-call records and the running caps
 * (see running.h).
 *
 * Counting running sandboxes asks Docker (one filtered container list):
 * it is done only when a sandbox is about to be created or started, never
 * on a call to a running one, and it is right after any restart of this
 * process or of Docker.  Every start under way holds a place (by the
 * container's id, or none yet while it is being created), and still
 * counts for a caller whose container list is older than its end; a
 * sandbox created but not yet started counts as running.  Places are
 * counted by chat, not by container: a chat whose sandbox is being made,
 * claimed from the warm pool or started, and is listed too, counts once.
 * So racing first calls and resumes can neither pass a cap together nor be
 * refused below it.
 *
 * At a cap, a start makes room: it stops (kept, as an idle stop would) the
 * least recently used sandbox of that user -- of anyone for max_running --
 * with no call in flight and no start under way, and goes on; the call is
 * refused only when every one is busy.  A sandbox being stopped (or paused,
 * by the reaper's request) is "parked": it no longer counts, its chat is
 * forgotten, and a call of that chat waits for the stop and finds its
 * sandbox again (stopped: started with a notice that says why).
 */
#include "sandbox/running.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/convid.h"
#include "common/list.h"
#include "common/log.h"
#include "kept/claim.h"
#include "kept/kept.h"
#include "proto/proto.h"
#include "talk/texts.h"

/* A chat with calls running. */
typedef struct call_entry {
    strmap_node_t node; /* keyed by conv */
    char *conv;
    int inflight;
    int64_t until;     /* the latest deadline of its calls */
    int64_t job_until; /* a job of it may run until then (s): busy */
} call_entry_t;

/* A start under way: of chat conv and user ("" = no user id), of
 * container id ("" while it is being created or claimed). */
typedef struct hold {
    char *conv;
    char *user;
    char id[72];
    int64_t ended;    /* 0 while under way; then when it ended */
    bool pending;     /* its chat's call has not begun yet: not to be stopped */
    list_node_t link; /* on the holds, newest first */
} hold_t;

/* A finished start still counts for a caller whose container list was
 * asked for before it ended (that list may not show it yet); after this
 * long (monotonic ms) no list can be that old, and the hold goes. */
#define HOLD_KEEP_MS 60000

/* A sandbox this manager is stopping to make room (stop) or pausing (the
 * reaper asked): its chat's calls wait for it, then find it again. */
typedef struct park {
    strmap_node_t node; /* keyed by id */
    char *conv;
    char id[72];
    bool stop;     /* stopped to make room: it no longer takes a place */
    int64_t ended; /* 0 while under way; then when it ended (monotonic ms) */
} park_t;

struct running {
    docker_t *d;
    running_opts_t o;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* with mu: a park ended, or a stopper finished */
    strmap_t calls;    /* chats with calls running */
    list_t holds;      /* starts under way, newest first */
    strmap_t parks;    /* sandboxes being stopped or paused, by container id */
    int stoppers;      /* stop threads running (running_destroy waits) */
};

static void hold_free(hold_t *h)
{
    free(h->conv);
    free(h->user);
    free(h);
}

static void park_free(park_t *p)
{
    free(p->conv);
    free(p);
}

/* Take park p (which is in c->parks) out and free it (under the lock). */
static void park_drop(running_t *c, park_t *p)
{
    strmap_del(&c->parks, &p->node);
    park_free(p);
}

running_t *running_new(docker_t *d, const running_opts_t *o)
{
    running_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->d = d;
    c->o = *o;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    return c;
}

void running_destroy(running_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    running_t *c = *self_p;
    pthread_mutex_lock(&c->mu);
    while (c->stoppers > 0)
        pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    strmap_for_each_safe(n, &c->calls) {
        call_entry_t *e = STRMAP_ITEM(n, call_entry_t, node);
        strmap_del(&c->calls, n);
        free(e->conv);
        free(e);
    }
    strmap_free(&c->calls);
    list_node_t *hn;
    while ((hn = list_pop_front(&c->holds)))
        hold_free(LIST_ITEM(hn, hold_t, link));
    strmap_for_each_safe(n, &c->parks)
        park_drop(c, STRMAP_ITEM(n, park_t, node));
    strmap_free(&c->parks);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
    *self_p = NULL;
}

/* ---- calls and stamps ------------------------------------------------------------ */

static call_entry_t *call_find(running_t *c, const char *conv)
{
    return STRMAP_ITEM(strmap_get(&c->calls, conv), call_entry_t, node);
}

static void stamp(const running_t *c, const char *id, int64_t t)
{
    if (kept_stamp_set(c->o.kept, id, t))
        log_warn("cannot write the last-call record of %.12s in %s: %s", id,
                 kept_state_dir(c->o.kept), strerror(errno));
}

/* Drop the parks no call can still need (under the lock): a call that
 * read its chat's container id before the park began reaches
 * running_call_begin within moments of it. */
static void parks_prune(running_t *c)
{
    int64_t now = proto_mono_ms();
    strmap_for_each_safe(n, &c->parks) {
        park_t *p = STRMAP_ITEM(n, park_t, node);
        if (p->ended && now - p->ended > HOLD_KEEP_MS)
            park_drop(c, p);
    }
}

static park_t *park_find(running_t *c, const char *id)
{
    return STRMAP_ITEM(strmap_get(&c->parks, id), park_t, node);
}

/* The stamp moves forward to the latest deadline of the chat's calls, so a
 * 30-minute build is never idle; written under the lock, so a call's
 * "busy until" can never land after another's "done now".  A parked
 * sandbox (being stopped or paused) takes no call: the caller waits for
 * the park to end and finds the sandbox again. */
bool running_call_begin(running_t *c, const char *conv, const char *id, int64_t deadline_s)
{
    pthread_mutex_lock(&c->mu);
    parks_prune(c);
    park_t *p = park_find(c, id);
    if (p) {
        while ((p = park_find(c, id)) && !p->ended)
            pthread_cond_wait(&c->cv, &c->mu);
        pthread_mutex_unlock(&c->mu);
        return false;
    }
    list_for_each_item(h, &c->holds, hold_t, link) {
        if (strcmp(h->conv, conv) == 0)
            h->pending = false;
    }
    call_entry_t *e = call_find(c, conv);
    if (!e && (e = calloc(1, sizeof *e))) {
        if ((e->conv = strdup(conv))) {
            strmap_put(&c->calls, &e->node, e->conv); /* none was there */
        } else {
            free(e);
            e = NULL;
        }
    }
    if (e) {
        e->inflight++;
        if (deadline_s > e->until) {
            e->until = deadline_s;
            stamp(c, id, deadline_s);
        }
    } else {
        stamp(c, id, deadline_s);
    }
    pthread_mutex_unlock(&c->mu);
    return true;
}

/* The chat's last call ended: the stamp is "now" and its entry goes. */
void running_call_end(running_t *c, const char *conv, const char *id)
{
    pthread_mutex_lock(&c->mu);
    call_entry_t *e = call_find(c, conv);
    int64_t now = (int64_t)time(NULL);
    if (!e || --e->inflight <= 0) {
        bool job = e && e->job_until > now; /* the entry stays while a job may run */
        stamp(c, id, job ? e->job_until : now);
        if (e && !job) {
            strmap_del(&c->calls, &e->node);
            free(e->conv);
            free(e);
        }
    }
    pthread_mutex_unlock(&c->mu);
}

int running_inflight(running_t *c, const char *conv)
{
    pthread_mutex_lock(&c->mu);
    call_entry_t *e = call_find(c, conv);
    int n = e ? e->inflight + (e->job_until > (int64_t)time(NULL)) : 0;
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* See running.h: the chat's entry outlives its calls until then. */
void running_job_until(running_t *c, const char *conv, const char *id, int64_t until_s)
{
    pthread_mutex_lock(&c->mu);
    call_entry_t *e = call_find(c, conv);
    if (!e && (e = calloc(1, sizeof *e)) != NULL) {
        if ((e->conv = strdup(conv))) {
            strmap_put(&c->calls, &e->node, e->conv); /* none was there */
        } else {
            free(e);
            e = NULL;
        }
    }
    if (e && until_s > e->job_until)
        e->job_until = until_s;
    stamp(c, id, e && e->until > until_s ? e->until : until_s);
    pthread_mutex_unlock(&c->mu);
}

/* ---- caps ------------------------------------------------------------------------- */

static const char *conv_of(json_t *x)
{
    return json_string_value(json_object_get(json_object_get(x, "Labels"), SPEC_LABEL_CONV)) ?: "";
}

static const char *user_of(json_t *x)
{
    return json_string_value(json_object_get(json_object_get(x, "Labels"), SPEC_LABEL_USER)) ?: "";
}

static const char *id_of(json_t *x)
{
    return json_string_value(json_object_get(x, "Id")) ?: "";
}

/* The entries of list (list_running's) whose sandbox is user's: a new
 * array. */
static json_t *of_user(json_t *list, const char *user)
{
    json_t *out = json_array();
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        if (out && strcmp(user_of(x), user) == 0)
            json_array_append(out, x);
    }
    return out;
}

/* The running chats' sandboxes on this manager's network, each with its
 * last-call stamp under RUNNING_LAST (for choosing whom to stop); NULL
 * when Docker cannot say.  Created and paused ones count too: a sandbox
 * made by a call that is about to start it is as good as running, and a
 * paused one keeps its memory and its processes. */
#define RUNNING_LAST "TalkbackLastCall"
static json_t *list_running(running_t *c)
{
    /* The chats' sandboxes: labelled ones and claimed spares (claim.h);
     * spares nobody claimed are not chats and take no place. */
    json_t *f = json_pack("{s:[s,s,s], s:[s]}", "status", "running", "created", "paused", "network",
                          c->o.network);
    json_t *ans = f ? claim_list_chats(c->d, c->o.kept, f, false) : NULL;
    json_decref(f);
    if (!ans) {
        log_warn("cannot count running sandboxes: Docker did not list them");
        return NULL;
    }
    size_t i;
    json_t *x;
    json_array_foreach(ans, i, x)
        json_object_set_new(x, RUNNING_LAST, json_integer(kept_stamp_get(c->o.kept, id_of(x))));
    return ans;
}

static bool conv_listed(json_t *list, const char *conv)
{
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        if (strcmp(conv_of(x), conv) == 0)
            return true;
    }
    return false;
}

/* Drop the holds no container list can still need (under the lock). */
static void holds_prune(running_t *c)
{
    int64_t now = proto_mono_ms();
    list_for_each_item_safe(h, &c->holds, hold_t, link) {
        if (h->ended && now - h->ended > HOLD_KEEP_MS) {
            list_remove(&c->holds, &h->link);
            hold_free(h);
        }
    }
}

/* Whether container id is being stopped to make room, or was after a list
 * asked for at asked was (that list may show it still running). */
static bool stopping(running_t *c, const char *id, int64_t asked)
{
    park_t *p = park_find(c, id);
    return p && p->stop && (!p->ended || p->ended >= asked);
}

/* Whether hold h counts (under the lock): of user when not NULL, not of
 * chat self, under way or ended after the list was asked for, its chat
 * not listed, and no earlier hold of its chat counted already. */
static bool hold_counts(running_t *c, const hold_t *h, json_t *list, const char *user,
                        const char *self, int64_t asked)
{
    if ((user && strcmp(h->user, user) != 0) || (h->ended && h->ended < asked) ||
        (self && strcmp(h->conv, self) == 0) || conv_listed(list, h->conv))
        return false;
    for (const hold_t *e = LIST_FIRST(&c->holds, hold_t, link); e != h;
         e = LIST_NEXT(e, hold_t, link))
        if (strcmp(e->conv, h->conv) == 0 && (!user || strcmp(e->user, user) == 0) &&
            !(e->ended && e->ended < asked))
            return false;
    return true;
}

/* Places taken (under the lock): the chats of the listed sandboxes, but
 * those being stopped to make room, and of the starts under way or ended
 * since the list was asked for (at asked, monotonic ms), each chat once, of
 * user when not NULL, but for chat self (the one asking).  -1 when list is
 * NULL (Docker did not say: then the cap is not applied rather than every
 * call refused). */
static int taken(running_t *c, json_t *list, const char *user, const char *self, int64_t asked)
{
    if (!list)
        return -1;
    int n = 0;
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        if (strcmp(conv_of(x), self) != 0 && !stopping(c, id_of(x), asked))
            n++;
    }
    list_for_each_item(h, &c->holds, hold_t, link) {
        if (hold_counts(c, h, list, user, self, asked))
            n++;
    }
    return n;
}

/* Whether chat conv is busy (under the lock): a call in flight, a start
 * under way or whose call has not begun yet, or being stopped or paused
 * now (a sandbox paused a while ago is not busy: it may make room). */
static bool busy(running_t *c, const char *conv, const char *id)
{
    call_entry_t *e = call_find(c, conv);
    if (e && (e->inflight > 0 || e->job_until > (int64_t)time(NULL)))
        return true;
    list_for_each_item(h, &c->holds, hold_t, link) {
        if ((!h->ended || h->pending) && strcmp(h->conv, conv) == 0)
            return true;
    }
    park_t *p = park_find(c, id);
    return p && !p->ended;
}

/* The least recently used sandbox in list that is not busy and not chat
 * self's, or NULL (under the lock). */
static json_t *least_used(running_t *c, json_t *list, const char *self)
{
    json_t *best = NULL;
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        const char *conv = conv_of(x);
        const char *state = json_string_value(json_object_get(x, "State")) ?: "";
        /* A created one is about to be started by its chat's call; one
         * stopped to make room already (this list may be older than that
         * stop) counts no more, and cannot make room twice. */
        park_t *p = park_find(c, id_of(x));
        if (!*conv || strcmp(conv, self) == 0 || strcmp(state, "created") == 0 || (p && p->stop) ||
            busy(c, conv, id_of(x)))
            continue;
        /* No last-call record in this state_dir: not this manager's to
         * stop (another talkback's on the same network). */
        int64_t t = json_integer_value(json_object_get(x, RUNNING_LAST));
        if (t <= 0)
            continue;
        if (!best || t < json_integer_value(json_object_get(best, RUNNING_LAST)))
            best = x;
    }
    return best;
}

void running_refusal_text(textbuf_t *err, bool per_user, int64_t cap, int64_t idle_stop_s)
{
    if (per_user)
        textbuf_printf(err, TX_SB_USER_FULL, cap, idle_stop_s / 60);
    else
        textbuf_printf(err, TX_SB_HOST_FULL, cap);
}

/* ---- making room ------------------------------------------------------------------ */

/* A sandbox stopped to make room (on a thread of its own, so several
 * stop at once; from the moment it is parked it no longer counts). */
typedef struct {
    running_t *c;
    char conv[CONVID_MAX + 1];
    char id[72];
    char reason[KEPT_REASON_MAX];
} victim_t;

static void *stop_thread(void *arg)
{
    victim_t *v = arg;
    running_t *c = v->c;
    /* The reason first, as the reaper does: the chat's next call is told. */
    if (kept_reason_set(c->o.kept, v->id, v->reason))
        log_warn("cannot write the stop reason of %.12s in %s", v->id, kept_state_dir(c->o.kept));
    char path[200];
    long st;
    json_t *ans = NULL;
    snprintf(path, sizeof path, "/containers/%s/stop?t=%d", v->id, RUNNING_STOP_WAIT_S);
    docker_err_t e = c->d ? docker_call(c->d, "POST", path, NULL, &st, &ans) : DOCKER_ECONNECT;
    bool ok = e == DOCKER_OK || e == DOCKER_ENOTFOUND;
    if (ok)
        log_info("stopped %.12s of chat %s to make room (%s)", v->id, v->conv, v->reason);
    else
        log_warn("could not stop %.12s of chat %s to make room: %s", v->id, v->conv,
                 docker_message(ans));
    json_decref(ans);
    pthread_mutex_lock(&c->mu);
    park_t *p = park_find(c, v->id);
    if (p && ok)
        p->ended = proto_mono_ms();
    else if (p)
        park_drop(c, p); /* it still runs: it counts again */
    c->stoppers--;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    free(v);
    return NULL;
}

/* Park x to be stopped (under the lock): a victim for stop_thread, or
 * NULL without memory. */
static victim_t *victim_new(running_t *c, json_t *x, bool per_user, int64_t cap)
{
    victim_t *v = calloc(1, sizeof *v);
    park_t *p = calloc(1, sizeof *p);
    if (!v || !p || !(p->conv = strdup(conv_of(x)))) {
        free(v);
        free(p);
        return NULL;
    }
    v->c = c;
    snprintf(v->conv, sizeof v->conv, "%s", conv_of(x));
    snprintf(v->id, sizeof v->id, "%s", id_of(x));
    snprintf(v->reason, sizeof v->reason, "%s %" PRId64,
             per_user ? RUNNING_REASON_USER : RUNNING_REASON_ALL, cap);
    snprintf(p->id, sizeof p->id, "%s", v->id);
    p->stop = true;
    /* Paused a while ago: this stop replaces that park. */
    park_t *old = STRMAP_ITEM(strmap_put(&c->parks, &p->node, p->id), park_t, node);
    if (old)
        park_free(old);
    return v;
}

/* Undo victim_new (under the lock): room could not be made after all. */
static void victim_undo(running_t *c, victim_t *v)
{
    park_t *p = park_find(c, v->id);
    if (p)
        park_drop(c, p);
    free(v);
}

/* Stop the victims (after the lock), each on a thread of its own, and wait
 * for them: the sandbox that made room starts only once they are stopped,
 * so Docker never runs more than the cap either.  Their chats are
 * forgotten now, so their next calls find them stopped. */
static void victims_stop(running_t *c, victim_t **vs, int n)
{
    char ids[RUNNING_ROOM_MAX][72];
    for (int i = 0; i < n; i++)
        snprintf(ids[i], sizeof ids[i], "%s", vs[i]->id);
    for (int i = 0; i < n; i++) {
        if (c->o.forget)
            c->o.forget(c->o.ctx, vs[i]->conv);
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        pthread_mutex_lock(&c->mu);
        c->stoppers++;
        pthread_mutex_unlock(&c->mu);
        if (pthread_create(&t, &a, stop_thread, vs[i]) != 0)
            stop_thread(vs[i]); /* no thread: stop it here */
        pthread_attr_destroy(&a);
    }
    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < n; i++) {
        park_t *p;
        while ((p = park_find(c, ids[i])) && !p->ended)
            pthread_cond_wait(&c->cv, &c->mu);
    }
    pthread_mutex_unlock(&c->mu);
}

/* The counts of one start's check (running_start_begin). */
typedef struct {
    json_t *all, *mine;
    const char *conv, *user;
    int64_t asked;
    int n_all, n_mine;
    bool over_all, over_user;
    victim_t *victims[RUNNING_ROOM_MAX];
    int n_victims;
} room_t;

static void room_over(running_t *c, room_t *r)
{
    r->over_all = c->o.max_running > 0 && r->n_all >= c->o.max_running;
    r->over_user = r->mine && c->o.max_running_per_user > 0 &&
                   r->n_mine >= c->o.max_running_per_user;
}

/* At a cap (under the lock): park the least recently used idle sandboxes
 * until the start fits, of the user for their cap, of anyone for the
 * total.  False (nothing parked) when every one is busy. */
static bool room_make(running_t *c, room_t *r)
{
    room_over(c, r);
    while ((r->over_all || r->over_user) && r->n_victims < RUNNING_ROOM_MAX) {
        bool per_user = r->over_user;
        json_t *x = least_used(c, per_user ? r->mine : r->all, r->conv);
        victim_t *v =
            x ? victim_new(c, x, per_user, per_user ? c->o.max_running_per_user : c->o.max_running)
              : NULL;
        if (!v)
            break;
        r->victims[r->n_victims++] = v;
        r->n_all--;
        if (r->mine && strcmp(user_of(x), r->user) == 0)
            r->n_mine--;
        room_over(c, r);
    }
    if (!r->over_all && !r->over_user)
        return true;
    while (r->n_victims > 0)
        victim_undo(c, r->victims[--r->n_victims]);
    return false;
}

bool running_start_begin(running_t *c, const char *conv, const char *user, const char *id,
                         textbuf_t *err)
{
    int64_t max_all = c->o.max_running, max_user = c->o.max_running_per_user;
    room_t r = { .conv = conv ? conv : "", .user = user ? user : "" };
    bool by_user = max_user > 0 && *r.user;
    r.asked = proto_mono_ms();
    /* One listing (two Docker calls: claim_list_chats) serves both caps. */
    r.all = max_all > 0 || by_user ? list_running(c) : NULL;
    r.mine = by_user && r.all ? of_user(r.all, r.user) : NULL;
    hold_t *h = calloc(1, sizeof *h);
    if (h && (!(h->user = strdup(r.user)) || !(h->conv = strdup(r.conv)))) {
        hold_free(h);
        h = NULL;
    }
    if (h) {
        snprintf(h->id, sizeof h->id, "%s", id ? id : "");
        h->pending = true;
    }
    pthread_mutex_lock(&c->mu);
    holds_prune(c);
    parks_prune(c);
    /* A start of a parked sandbox: its own call brings it back. */
    park_t *p = id ? park_find(c, id) : NULL;
    if (p && p->ended)
        park_drop(c, p);
    r.n_all = max_all > 0 ? taken(c, r.all, NULL, r.conv, r.asked) : 0;
    r.n_mine = r.mine ? taken(c, r.mine, r.user, r.conv, r.asked) : 0;
    bool ok = room_make(c, &r) && h;
    if (ok) {
        list_push_front(&c->holds, &h->link);
        h = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    victims_stop(c, r.victims, r.n_victims);
    json_decref(r.all);
    json_decref(r.mine);
    if (h)
        hold_free(h);
    if (!ok) {
        log_info("not starting a sandbox of user \"%s\" (chat %s): %d running (%d of this user), "
                 "caps %" PRId64 " and %" PRId64 " per user, all busy",
                 r.user, r.conv, r.n_all, r.n_mine, max_all, max_user);
        running_refusal_text(err, r.over_user, r.over_user ? max_user : max_all, c->o.idle_stop);
    }
    return ok;
}

void running_start_end(running_t *c, const char *conv, const char *user, const char *id,
                       const char *made)
{
    const char *u = user ? user : "", *cv = conv ? conv : "";
    pthread_mutex_lock(&c->mu);
    list_for_each_item(h, &c->holds, hold_t, link) {
        if (h->ended || strcmp(h->user, u) != 0 || strcmp(h->conv, cv) != 0 ||
            strcmp(h->id, id ? id : "") != 0)
            continue;
        if (made && kept_id_ok(made)) {
            snprintf(h->id, sizeof h->id, "%s", made);
            h->ended = proto_mono_ms();
        } else {
            list_remove(&c->holds, &h->link);
            hold_free(h);
        }
        break;
    }
    pthread_mutex_unlock(&c->mu);
}

/* ---- pausing (the reaper asks; sandbox/manager.c pauses) ---------------------------- */

bool running_park(running_t *c, const char *conv, const char *id)
{
    park_t *p = calloc(1, sizeof *p);
    if (!p || !(p->conv = strdup(conv))) {
        free(p);
        return false;
    }
    snprintf(p->id, sizeof p->id, "%s", id);
    pthread_mutex_lock(&c->mu);
    parks_prune(c);
    bool ok = !busy(c, conv, id);
    if (ok) { /* an old park of it, ended: this one replaces it */
        park_t *old = STRMAP_ITEM(strmap_put(&c->parks, &p->node, p->id), park_t, node);
        if (old)
            park_free(old);
        p = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    if (p)
        park_free(p);
    return ok;
}

void running_park_end(running_t *c, const char *id, bool done)
{
    pthread_mutex_lock(&c->mu);
    park_t *p = park_find(c, id);
    if (p && done)
        p->ended = proto_mono_ms();
    else if (p)
        park_drop(c, p);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

void running_unpark(running_t *c, const char *id)
{
    pthread_mutex_lock(&c->mu);
    park_t *p = park_find(c, id);
    if (p && p->ended)
        park_drop(c, p);
    pthread_mutex_unlock(&c->mu);
}
