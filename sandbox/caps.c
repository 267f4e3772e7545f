/* caps.c -- calls in flight, last-call records and the running caps (see
 * caps.h).
 *
 * Counting running sandboxes asks Docker (one filtered container list):
 * it is done only when a sandbox is about to be created or started, never
 * on a call to a running one, and it is right after any restart of this
 * process or of Docker.  Two starts racing each other both hold a place
 * while they start, so together they cannot pass a cap; a sandbox that
 * just started may be counted twice for that moment, which errs on the
 * side of the cap.
 */
#include "sandbox/caps.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/config.h"
#include "common/log.h"
#include "docker/kept.h"

/* A chat with calls running. */
typedef struct call_entry {
    char *conv;
    int inflight;
    int64_t until;            /* the latest deadline of its calls */
    struct call_entry *next;
} call_entry_t;

/* Starts under way, per user ("" = all users without an id). */
typedef struct start_entry {
    char *user;
    int n;
    struct start_entry *next;
} start_entry_t;

struct caps {
    docker_t *d;
    pthread_mutex_t mu;
    call_entry_t *calls;
    start_entry_t *starts;
    int starting;             /* starts under way, all users */
};

caps_t *caps_new(docker_t *d)
{
    caps_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->d = d;
    pthread_mutex_init(&c->mu, NULL);
    return c;
}

void caps_destroy(caps_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    caps_t *c = *self_p;
    while (c->calls) {
        call_entry_t *e = c->calls;
        c->calls = e->next;
        free(e->conv);
        free(e);
    }
    while (c->starts) {
        start_entry_t *s = c->starts;
        c->starts = s->next;
        free(s->user);
        free(s);
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
    *self_p = NULL;
}

/* ---- calls and stamps ------------------------------------------------------------ */

static call_entry_t **call_find(caps_t *c, const char *conv)
{
    call_entry_t **pp = &c->calls;
    while (*pp && strcmp((*pp)->conv, conv) != 0)
        pp = &(*pp)->next;
    return pp;
}

static void stamp(const char *id, int64_t t)
{
    if (kept_stamp_set(id, t))
        log_warn("cannot write the last-call record of %.12s in %s: %s", id, config_str("state_dir"),
                 strerror(errno));
}

/* The stamp moves forward to the latest deadline of the chat's calls, so a
 * 30-minute build is never idle; written under the lock, so a call's
 * "busy until" can never land after another's "done now". */
void caps_call_begin(caps_t *c, const char *conv, const char *id, int64_t deadline_s)
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
void caps_call_end(caps_t *c, const char *conv, const char *id)
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

int caps_inflight(caps_t *c, const char *conv)
{
    pthread_mutex_lock(&c->mu);
    call_entry_t *e = *call_find(c, conv);
    int n = e ? e->inflight : 0;
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* ---- caps ------------------------------------------------------------------------- */

/* Running talkback sandboxes on this manager's network, of user when not
 * NULL; -1 when Docker cannot say. */
static int count_running(caps_t *c, const char *user)
{
    json_t *f = json_pack("{s:[s], s:[s], s:[s]}", "label", KEPT_LABEL_CONV, "status", "running",
                          "network", config_str("network"));
    if (f && user) {
        char lab[600];
        snprintf(lab, sizeof lab, "%s=%s", KEPT_LABEL_USER, user);
        json_array_append_new(json_object_get(f, "label"), json_string(lab));
    }
    char *fs = f ? json_dumps(f, JSON_COMPACT) : NULL;
    json_decref(f);
    if (!fs)
        return -1;
    char path[2048];
    size_t o = (size_t)snprintf(path, sizeof path, "/containers/json?filters=");
    for (const unsigned char *p = (const unsigned char *)fs; *p && o + 4 < sizeof path; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
            *p == '_' || *p == '-')
            path[o++] = (char)*p;
        else
            o += (size_t)snprintf(path + o, sizeof path - o, "%%%02X", *p);
    }
    path[o] = '\0';
    free(fs);
    long st;
    json_t *ans = NULL;
    int n = -1;
    if (docker_call(c->d, "GET", path, NULL, &st, &ans) == DOCKER_OK && json_is_array(ans))
        n = (int)json_array_size(ans);
    else
        log_warn("cannot count running sandboxes: %s", docker_message(ans));
    json_decref(ans);
    return n;
}

void caps_refusal_text(textbuf_t *err, bool per_user, int64_t cap)
{
    if (per_user)
        textbuf_printf(err, "[talkback: this user already has %" PRId64 " sandboxes running, the most one user "
                       "may have (setting `max_running_per_user`), so this chat's sandbox was not started and "
                       "nothing ran. Tell the user: a chat's sandbox stops after %" PRId64 " minutes without "
                       "calls, and `reset` in a chat they no longer need frees one at once; then try again.]",
                       cap, config_int("idle_stop") / 60);
    else
        textbuf_printf(err, "[talkback: the sandbox host already runs %" PRId64 " sandboxes, its limit (setting "
                       "`max_running`), so this chat's sandbox was not started and nothing ran. Try again in a "
                       "few minutes, when idle sandboxes have stopped; if it keeps failing, tell the user the "
                       "sandbox host is full.]", cap);
}

static start_entry_t **start_find(caps_t *c, const char *user)
{
    start_entry_t **pp = &c->starts;
    while (*pp && strcmp((*pp)->user, user) != 0)
        pp = &(*pp)->next;
    return pp;
}

/* Hold a place for a start of user (under the lock). */
static void start_hold(caps_t *c, const char *user)
{
    c->starting++;
    start_entry_t **pp = start_find(c, user);
    if (!*pp) {
        start_entry_t *s = calloc(1, sizeof *s);
        if (!s || !(s->user = strdup(user))) {
            free(s);
            return;
        }
        *pp = s;
    }
    (*pp)->n++;
}

bool caps_start_begin(caps_t *c, const char *user, textbuf_t *err)
{
    int64_t max_all = config_int("max_running"), max_user = config_int("max_running_per_user");
    const char *u = user ? user : "";
    bool by_user = max_user > 0 && *u;
    int all = max_all > 0 ? count_running(c, NULL) : 0;
    int mine = by_user ? count_running(c, u) : 0;
    pthread_mutex_lock(&c->mu);
    start_entry_t *s = *start_find(c, u);
    int my_starting = s ? s->n : 0;
    bool over_all = max_all > 0 && all >= 0 && all + c->starting >= max_all;
    bool over_user = by_user && mine >= 0 && mine + my_starting >= max_user;
    if (!over_all && !over_user)
        start_hold(c, u);
    pthread_mutex_unlock(&c->mu);
    if (over_user || over_all) {
        log_info("not starting a sandbox of user \"%s\": %d running (%d of this user), caps %" PRId64
                 " and %" PRId64 " per user", u, all, mine, max_all, max_user);
        caps_refusal_text(err, over_user, over_user ? max_user : max_all);
        return false;
    }
    return true;
}

void caps_start_end(caps_t *c, const char *user)
{
    const char *u = user ? user : "";
    pthread_mutex_lock(&c->mu);
    if (c->starting > 0)
        c->starting--;
    start_entry_t **pp = start_find(c, u);
    if (*pp && --(*pp)->n <= 0) {
        start_entry_t *s = *pp;
        *pp = s->next;
        free(s->user);
        free(s);
    }
    pthread_mutex_unlock(&c->mu);
}
