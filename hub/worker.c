/* worker.c -- the worker side of the hub (see worker.h).
 *
 * The main thread owns the DEALER socket and does three things: says HELLO
 * every heartbeat, starts a thread per REQUEST (at most max_jobs at once,
 * the rest wait in arrival order), and sends whatever job threads put in
 * the outbox (replies, and requests made with worker_call).  Job threads
 * never touch ZeroMQ: they hand frames to the main thread through the
 * outbox, a mailbox (common/mailbox.h), as the hub does.
 *
 * On a tcp:// hub the socket is a CURVE client: it checks the hub's public
 * key and presents the worker's own certificate (hubkeys.h), so it talks
 * only to the real hub and the hub knows what it may do.  On an ipc://
 * hub, the socket's folder must be this user's and closed to others.
 * libzmq gives up on a connection whose handshake failed (the hub did not
 * know the key, or the key is not the hub's), so a monitor watches the
 * handshake: a failure is logged with what to check, and the socket is
 * made again, keys re-read, WORKER_REDIAL_MS later.
 */
#include "hub/worker.h"

#include <czmq.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/convid.h"
#include "common/list.h"
#include "common/log.h"
#include "common/mailbox.h"
#include "hub/hubkeys.h"
#include "proto/ops.h"
#include "proto/optable.h"
#include "talk/texts.h"

#define WORKER_REDIAL_MS 5000 /* after a failed handshake */

typedef struct job_entry {
    worker_job_t job; /* first: handlers get &entry->job */
    proto_msg_t *req;
    pthread_t thread;
    list_node_t link; /* on jobs or waiting */
} job_entry_t;

typedef struct call_entry {
    uint64_t id;
    proto_msg_t *reply;
    pthread_cond_t cv;
    list_node_t link; /* on calls */
} call_entry_t;

typedef struct out_item {
    char *frame;
    size_t len;
    bool job_done; /* a reply: one job slot is free again */
} out_item_t;

struct worker {
    worker_opts_t opts;
    char *endpoint, *kind, *name, *host;
    char *keys_dir, *cert_path; /* copies of the options' */
    zsock_t *dealer;
    zsock_t *monitor;   /* handshake events of a CURVE dealer, or NULL */
    int64_t redial_at;  /* monotonic ms; 0 = connected or trying */
    mailbox_t *outbox;  /* out_item_t from job threads */
    pthread_mutex_t mu; /* guards everything below */
    list_t jobs;        /* running */
    list_t waiting;     /* to start, oldest first */
    list_t calls;       /* worker_call's waiting for their reply */
    int running;
    uint64_t next_call_id;
    bool stop;
};

/* A frame that was never sent (out of memory, or the worker stopped). */
static void out_item_free(void *item)
{
    out_item_t *it = item;
    free(it->frame);
    free(it);
}

/* Free a job slot when not even a reply could be made. */
static void outbox_push_done(worker_t *w)
{
    out_item_t *it = calloc(1, sizeof *it);
    if (!it)
        return;
    it->job_done = true;
    if (mailbox_post(w->outbox, it) < 0)
        free(it);
}

static void outbox_push(worker_t *w, const proto_msg_t *m, bool job_done)
{
    out_item_t *it = calloc(1, sizeof *it);
    if (!it || proto_encode(m, &it->frame, &it->len) != PROTO_OK) {
        free(it);
        log_error("cannot encode a frame (out of memory)");
        if (job_done)
            outbox_push_done(w);
        return;
    }
    it->job_done = job_done;
    if (mailbox_post(w->outbox, it) < 0) {
        out_item_free(it);
        log_error("cannot queue a frame (out of memory)");
        if (job_done)
            outbox_push_done(w);
    }
}

void worker_host_name(const char *configured, char *out, size_t len)
{
    if (configured && *configured) {
        snprintf(out, len, "%s", configured);
        return;
    }
    if (gethostname(out, len) != 0 || !*out)
        snprintf(out, len, "localhost");
    out[len - 1] = '\0';
}

const char *worker_host(const worker_t *w)
{
    return w->host;
}

bool worker_job_cancelled(worker_job_t *job)
{
    if (atomic_load(&job->cancelled))
        return true;
    if (job->req->deadline_ms && proto_now_ms() >= job->req->deadline_ms) {
        atomic_store(&job->cancelled, true);
        return true;
    }
    return false;
}

proto_msg_t *worker_unknown_op(const char *kind, const proto_msg_t *req)
{
    char text[200];
    snprintf(text, sizeof text, TX_WK_UNKNOWN_OP, ops_kind_label(kind), req->name ? req->name : "");
    return proto_reply_new(req, PROTO_ST_BAD_REQUEST, true, text);
}

proto_msg_t *worker_check_ids(const char *kind, const proto_msg_t *req)
{
    if (!ops_has(kind, req->name, OPS_CONV))
        return NULL;
    if (convid_check(req->conv) != CONVID_OK)
        return proto_reply_new(req, PROTO_ST_OK, true, TX_SB_BAD_CONV);
    if (req->user && !convid_user_ok(req->user))
        return proto_reply_new(req, PROTO_ST_OK, true, TX_SB_BAD_USER);
    return NULL;
}

worker_handler_fn worker_op_find(const worker_op_t *ops, const char *op)
{
    for (; ops && op && ops->op; ops++)
        if (strcmp(ops->op, op) == 0)
            return ops->fn;
    return NULL;
}

/* The reply to one request: unknown, refused for its ids, or its handler's. */
static proto_msg_t *job_reply(worker_t *w, worker_job_t *job)
{
    worker_handler_fn fn = worker_op_find(w->opts.ops, job->req->name);
    if (!fn)
        return worker_unknown_op(w->kind, job->req);
    proto_msg_t *refused = worker_check_ids(w->kind, job->req);
    return refused ? refused : fn(job, w->opts.ctx);
}

static void *job_thread(void *arg)
{
    job_entry_t *e = arg;
    worker_t *w = e->job.worker;
    proto_msg_t *reply = job_reply(w, &e->job);
    if (!reply)
        reply = proto_reply_new(e->req, PROTO_ST_INTERNAL, true, TX_HUB_WORKER_FAILED);
    if (!reply && (reply = proto_msg_new(PROTO_REPLY)))
        reply->status = PROTO_ST_INTERNAL;
    if (reply) {
        reply->id = e->req->id;
        reply->type = PROTO_REPLY;
        outbox_push(w, reply, true);
        proto_msg_destroy(&reply);
    } else {
        outbox_push_done(w);
    }
    /* Unlink and free this job. */
    pthread_mutex_lock(&w->mu);
    list_remove(&w->jobs, &e->link);
    pthread_mutex_unlock(&w->mu);
    proto_msg_destroy(&e->req);
    free(e);
    return NULL;
}

/* Start waiting jobs while there is room.  Called with mu held. */
static void start_jobs_locked(worker_t *w)
{
    while (!list_empty(&w->waiting) && w->running < w->opts.max_jobs) {
        job_entry_t *e = LIST_ITEM(list_pop_front(&w->waiting), job_entry_t, link);
        list_push_front(&w->jobs, &e->link);
        w->running++;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 512 * 1024);
        if (pthread_create(&e->thread, &attr, job_thread, e) != 0) {
            log_error("cannot start a thread: %s", strerror(errno));
            list_remove(&w->jobs, &e->link);
            w->running--;
            proto_msg_t *r = proto_reply_new(e->req, PROTO_ST_INTERNAL, true, TX_HUB_NO_THREADS);
            pthread_mutex_unlock(&w->mu);
            if (r) {
                outbox_push(w, r, false);
                proto_msg_destroy(&r);
            }
            pthread_mutex_lock(&w->mu);
            proto_msg_destroy(&e->req);
            free(e);
        }
        pthread_attr_destroy(&attr);
    }
}

static void on_frame(worker_t *w, zframe_t *body)
{
    proto_msg_t *m = NULL;
    proto_err_t err = proto_decode(zframe_data(body), zframe_size(body), &m);
    if (err != PROTO_OK) {
        log_warn("dropping a frame from the hub: %s", proto_strerror(err));
        return;
    }
    pthread_mutex_lock(&w->mu);
    switch (m->type) {
    case PROTO_REQUEST: {
        job_entry_t *e = calloc(1, sizeof *e);
        if (!e)
            break;
        e->req = m;
        m = NULL;
        e->job.req = e->req;
        e->job.worker = w;
        atomic_init(&e->job.cancelled, false);
        list_push_back(&w->waiting, &e->link);
        start_jobs_locked(w);
        break;
    }
    case PROTO_CANCEL:
        list_for_each_item(e, &w->jobs, job_entry_t, link) {
            if (e->req->id == m->id)
                atomic_store(&e->job.cancelled, true);
        }
        list_for_each_item(e, &w->waiting, job_entry_t, link) {
            if (e->req->id == m->id) {
                /* Never started: answer at once. */
                list_remove(&w->waiting, &e->link);
                proto_msg_t *r = proto_reply_new(e->req, PROTO_ST_OK, true,
                                                 "[Cancelled before it started: nothing ran.]");
                pthread_mutex_unlock(&w->mu);
                if (r) {
                    outbox_push(w, r, false);
                    proto_msg_destroy(&r);
                }
                pthread_mutex_lock(&w->mu);
                proto_msg_destroy(&e->req);
                free(e);
                break;
            }
        }
        break;
    case PROTO_REPLY:
        list_for_each_item(c, &w->calls, call_entry_t, link) {
            if (c->id == m->id && !c->reply) {
                c->reply = m;
                m = NULL;
                pthread_cond_broadcast(&c->cv);
                break;
            }
        }
        break;
    case PROTO_HELLO: break;
    }
    pthread_mutex_unlock(&w->mu);
    proto_msg_destroy(&m);
}

static void send_frame(worker_t *w, const char *frame, size_t len)
{
    if (!w->dealer)
        return; /* between two dials: lost, as below */
    zframe_t *f = zframe_new(frame, len);
    if (zframe_send(&f, w->dealer, ZFRAME_DONTWAIT) < 0) {
        /* The hub is away (not yet connected): the frame is lost, as a
         * reply to a hub that restarted would be anyway. */
        zframe_destroy(&f);
    }
}

/* One frame from a job thread: send it; a reply frees a job slot. */
static void on_out_item(void *item, void *arg)
{
    worker_t *w = arg;
    out_item_t *it = item;
    if (it->frame)
        send_frame(w, it->frame, it->len);
    if (it->job_done) {
        pthread_mutex_lock(&w->mu);
        w->running--;
        start_jobs_locked(w);
        pthread_mutex_unlock(&w->mu);
    }
    out_item_free(it);
}

/* Everything job threads posted since the last time, in order. */
static void on_outbox(worker_t *w)
{
    mailbox_drain(w->outbox, on_out_item, w);
}

static void send_hello(worker_t *w)
{
    proto_msg_t *h = proto_msg_new(PROTO_HELLO);
    if (!h)
        return;
    proto_msg_set_kind(h, w->kind);
    proto_msg_set_name(h, w->name);
    proto_map_set_cstr(&h->data, DATA_HOST, w->host);
    if (w->opts.hello)
        w->opts.hello(&h->data, w->opts.hello_ctx);
    char *buf;
    size_t len;
    if (proto_encode(h, &buf, &len) == PROTO_OK) {
        send_frame(w, buf, len);
        free(buf);
    }
    proto_msg_destroy(&h);
}

/* Load a certificate file; NULL (logged, with what to do) when it cannot. */
static zcert_t *worker_cert_load(const char *path, const char *what)
{
    zcert_t *c = access(path, R_OK) == 0 ? zcert_load(path) : NULL;
    if (!c)
        log_error("cannot read %s %s (%s): make the keys with `talkback-keys DIR` on the gateway's "
                  "host, copy %s and this worker's KIND.key_secret into hub_keys here "
                  "(docs/security.md), "
                  "or set hub_insecure",
                  what, path, access(path, R_OK) == 0 ? "not a certificate" : strerror(errno),
                  HUBKEYS_SERVER_PUBLIC);
    return c;
}

/* Say early what the hub would refuse later without a word.  -1 when the
 * certificate has no secret key (a public one was named by mistake). */
static int worker_cert_check(worker_t *w, zcert_t *mine, const char *path)
{
    static const byte zero[32];
    if (memcmp(zcert_secret_key(mine), zero, sizeof zero) == 0) {
        log_error("%s has no secret key: name this worker's KIND.key_secret, not a public "
                  "certificate",
                  path);
        return -1;
    }
    struct stat st;
    if (stat(path, &st) == 0 && (st.st_mode & 077))
        log_warn("%s is mode %04o: a secret key should be readable by its owner only (chmod 600)",
                 path, (unsigned)(st.st_mode & 07777));
    const char *kinds = zcert_meta(mine, HUBKEYS_META_KINDS);
    if (!hubkeys_may_register(kinds, w->kind))
        log_error("the certificate %s allows the kinds \"%s\", not %s: the hub will not send this "
                  "worker anything",
                  path, kinds ? kinds : "", w->kind);
    const char *host = zcert_meta(mine, HUBKEYS_META_HOST);
    if (host && *host && strcmp(host, w->host) != 0)
        log_error("the certificate %s is made for host %s, and this worker says it runs on host %s "
                  "(host_name): the hub will refuse it; set host_name to %s, or use this host's "
                  "own key",
                  path, host, w->host, host);
    return 0;
}

/* Make the socket a CURVE client of a tcp:// hub, or check the folder of
 * an ipc:// one.  -1 (logged) when this worker must not start. */
static int worker_secure(worker_t *w)
{
    char err[1024], server[4096], own[4096];
    if (hubkeys_keyless(w->endpoint)) {
        if (hubkeys_ipc_dir_check(w->endpoint, false, err, sizeof err) < 0) {
            log_error("%s", err);
            return -1;
        }
        return 0;
    }
    if (w->opts.insecure) {
        log_warn("connecting to the hub at %s without keys (hub_insecure): any peer that reaches "
                 "it can act as talkback",
                 w->endpoint);
        return 0;
    }
    const char *dir = w->keys_dir;
    const char *path = w->cert_path;
    if (hubkeys_path(server, sizeof server, dir, HUBKEYS_SERVER_PUBLIC) < 0)
        return -1;
    if (!*path) {
        if (snprintf(own, sizeof own, "%s/%s%s", dir, w->kind, HUBKEYS_SECRET_SUFFIX) >=
            (int)sizeof own)
            return -1;
        path = own;
    }
    zcert_t *hub = worker_cert_load(server, "the hub's public key");
    zcert_t *mine = hub ? worker_cert_load(path, "this worker's certificate") : NULL;
    if (!mine) {
        zcert_destroy(&hub);
        return -1;
    }
    if (worker_cert_check(w, mine, path) < 0) {
        zcert_destroy(&hub);
        zcert_destroy(&mine);
        return -1;
    }
    zcert_apply(mine, w->dealer);
    zsock_set_curve_serverkey(w->dealer, zcert_public_txt(hub));
    log_info("hub keys: the hub's %s, this worker's %s", server, path);
    zcert_destroy(&hub);
    zcert_destroy(&mine);
    return 0;
}

/* Watch the dealer's handshakes (CURVE only: ipc:// has none to fail). */
static int worker_monitor(worker_t *w)
{
    static int serial;
    char ep[96];
    snprintf(ep, sizeof ep, "inproc://talkback-worker-monitor-%d-%d", (int)getpid(),
             __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED));
    int events = ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                 ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
    if (zmq_socket_monitor(zsock_resolve(w->dealer), ep, events) < 0)
        return -1;
    w->monitor = zsock_new_pair(ep); /* ">" by default for PAIR: connects */
    return w->monitor ? 0 : -1;
}

/* The DEALER socket: made, secured, watched and connected. */
static int worker_socket(worker_t *w)
{
    w->dealer = zsock_new(ZMQ_DEALER);
    if (!w->dealer)
        return -1;
    zsock_set_linger(w->dealer, 0);
    zsock_set_sndhwm(w->dealer, 0);
    zsock_set_rcvhwm(w->dealer, 0);
    zsock_set_reconnect_ivl(w->dealer, 100);
    zsock_set_reconnect_ivl_max(w->dealer, 1000);
    /* No ZMQ_MAXMSGSIZE here: the hub is trusted (its key is checked), and
     * libzmq does not reconnect after an oversized message, so a limit
     * would cut a worker off for good. */
    if (worker_secure(w) < 0)
        return -1;
    if (zsock_mechanism(w->dealer) == ZMQ_CURVE && worker_monitor(w) < 0) {
        log_error("cannot watch the connection to the hub at %s", w->endpoint);
        return -1;
    }
    if (zsock_connect(w->dealer, "%s", w->endpoint) < 0) {
        log_error("cannot connect to the hub at %s", w->endpoint);
        return -1;
    }
    return 0;
}

/* Make the socket again after a failed handshake, keys read afresh. */
static void worker_redial(worker_t *w)
{
    w->redial_at = 0;
    if (worker_socket(w) < 0) {
        zsock_destroy(&w->monitor);
        zsock_destroy(&w->dealer);
        w->redial_at = proto_mono_ms() + WORKER_REDIAL_MS;
    }
}

/* One handshake event: say what failed and what to check. */
static void worker_on_monitor(worker_t *w)
{
    zmsg_t *ev = zmsg_recv(w->monitor);
    zframe_t *f = ev ? zmsg_first(ev) : NULL;
    if (!f || zframe_size(f) < 6) {
        zmsg_destroy(&ev);
        return;
    }
    uint16_t event;
    memcpy(&event, zframe_data(f), sizeof event);
    zmsg_destroy(&ev);
    if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
        log_info("%s: the hub at %s took this worker's key", w->name, w->endpoint);
        return;
    }
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        log_error("the hub at %s refused this worker's key: its public certificate is not in the "
                  "gateway's allow list (HUB_KEYS/%s/; `talkback-keys DIR %s NAME` makes one); "
                  "trying again in %d s",
                  w->endpoint, HUBKEYS_ALLOWED, w->kind, WORKER_REDIAL_MS / 1000);
    else
        log_error("no secure handshake with the hub at %s: check that hub_keys has this hub's %s "
                  "(and that the hub has keys); trying again in %d s",
                  w->endpoint, HUBKEYS_SERVER_PUBLIC, WORKER_REDIAL_MS / 1000);
    /* Close now: libzmq would otherwise try again every few hundred ms,
     * with the same keys and the same answer. */
    zsock_destroy(&w->monitor);
    zsock_destroy(&w->dealer);
    w->redial_at = proto_mono_ms() + WORKER_REDIAL_MS;
}

worker_t *worker_new(const worker_opts_t *opts)
{
    worker_t *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->opts = *opts;
    if (w->opts.max_jobs <= 0)
        w->opts.max_jobs = 64;
    if (w->opts.heartbeat_ms <= 0)
        w->opts.heartbeat_ms = 1000;
    pthread_mutex_init(&w->mu, NULL);
    char name[128];
    if (!opts->name)
        snprintf(name, sizeof name, "%s-%d", opts->kind, (int)getpid());
    w->endpoint = strdup(opts->endpoint);
    w->kind = strdup(opts->kind);
    w->name = strdup(opts->name ? opts->name : name);
    char host[256];
    worker_host_name(opts->host, host, sizeof host);
    w->host = strdup(host);
    w->keys_dir = strdup(opts->keys_dir ? opts->keys_dir : "");
    w->cert_path = strdup(opts->cert_path ? opts->cert_path : "");
    if (!w->endpoint || !w->kind || !w->name || !w->host || !w->keys_dir || !w->cert_path)
        goto err;
    w->outbox = mailbox_new(out_item_free);
    if (!w->outbox)
        goto err;
    if (worker_socket(w) < 0)
        goto err;
    w->opts.endpoint = w->endpoint;
    w->opts.kind = w->kind;
    w->opts.name = w->name;
    w->opts.host = w->host;
    w->opts.keys_dir = w->keys_dir;
    w->opts.cert_path = w->cert_path;
    return w;
err:
    worker_destroy(&w);
    return NULL;
}

int worker_run(worker_t *w)
{
    int64_t next_hello = 0;
    log_info("%s connecting to the hub at %s", w->name, w->endpoint);
    for (;;) {
        pthread_mutex_lock(&w->mu);
        bool stop = w->stop;
        pthread_mutex_unlock(&w->mu);
        if (stop || zsys_interrupted)
            break;
        int64_t now = proto_mono_ms();
        if (w->redial_at && now >= w->redial_at)
            worker_redial(w);
        if (now >= next_hello && w->dealer) {
            send_hello(w);
            next_hello = now + w->opts.heartbeat_ms;
        }
        /* With no socket (a redial that failed), only the outbox is watched. */
        zmq_pollitem_t items[3] = {
            { NULL, mailbox_fd(w->outbox), ZMQ_POLLIN, 0 },
            { w->dealer ? zsock_resolve(w->dealer) : NULL, -1, ZMQ_POLLIN, 0 },
            { w->monitor ? zsock_resolve(w->monitor) : NULL, -1, ZMQ_POLLIN, 0 },
        };
        int n = w->monitor ? 3 : w->dealer ? 2 : 1;
        /* Until the next HELLO, or with no socket until the next dial. */
        int64_t until = w->dealer ? next_hello : w->redial_at;
        if (w->redial_at && w->redial_at < until)
            until = w->redial_at;
        long wait = (long)(until - proto_mono_ms());
        if (wait < 0)
            wait = 0;
        int rc = zmq_poll(items, n, wait);
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (n > 2 && (items[2].revents & ZMQ_POLLIN))
            worker_on_monitor(w);
        if (n > 1 && (items[1].revents & ZMQ_POLLIN) && w->dealer) {
            for (int i = 0; i < 256 && (zsock_events(w->dealer) & ZMQ_POLLIN); i++) {
                zframe_t *f = zframe_recv(w->dealer);
                if (!f)
                    break;
                on_frame(w, f);
                zframe_destroy(&f);
            }
        }
        if (items[0].revents & ZMQ_POLLIN)
            on_outbox(w);
    }
    return 0;
}

void worker_stop(worker_t *w)
{
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_mutex_unlock(&w->mu);
    mailbox_kick(w->outbox);
}

void worker_destroy(worker_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    worker_t *w = *self_p;
    /* Running jobs are told to stop and given a moment; a process that is
     * exiting does not wait for a 30-minute build. */
    pthread_mutex_lock(&w->mu);
    list_for_each_item(e, &w->jobs, job_entry_t, link) {
        atomic_store(&e->job.cancelled, true);
    }
    pthread_mutex_unlock(&w->mu);
    for (int i = 0; i < 50; i++) {
        pthread_mutex_lock(&w->mu);
        bool idle = list_empty(&w->jobs);
        pthread_mutex_unlock(&w->mu);
        if (idle)
            break;
        usleep(20000);
    }
    pthread_mutex_lock(&w->mu);
    bool idle = list_empty(&w->jobs);
    list_node_t *n;
    while ((n = list_pop_front(&w->waiting))) {
        job_entry_t *e = LIST_ITEM(n, job_entry_t, link);
        proto_msg_destroy(&e->req);
        free(e);
    }
    pthread_mutex_unlock(&w->mu);
    if (!idle) {
        /* Job threads still hold w: leak it rather than free under them. */
        *self_p = NULL;
        return;
    }
    zsock_destroy(&w->dealer);
    zsock_destroy(&w->monitor);
    mailbox_destroy(&w->outbox);
    pthread_mutex_destroy(&w->mu);
    free(w->endpoint);
    free(w->kind);
    free(w->name);
    free(w->host);
    free(w->keys_dir);
    free(w->cert_path);
    free(w);
    *self_p = NULL;
}

proto_msg_t *worker_call(worker_t *w, proto_msg_t *req, worker_job_t *job)
{
    call_entry_t c = { 0 };
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c.cv, &ca);
    pthread_condattr_destroy(&ca);

    pthread_mutex_lock(&w->mu);
    c.id = ++w->next_call_id;
    list_push_front(&w->calls, &c.link);
    pthread_mutex_unlock(&w->mu);

    req->id = c.id;
    req->type = PROTO_REQUEST;
    outbox_push(w, req, false);

    bool sent_cancel = false;
    pthread_mutex_lock(&w->mu);
    while (!c.reply) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 100 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&c.cv, &w->mu, &ts);
        if (c.reply)
            break;
        bool late = req->deadline_ms && proto_now_ms() >= req->deadline_ms + 2000;
        bool cancelled = job && atomic_load(&job->cancelled);
        if (cancelled && !sent_cancel) {
            /* Ask the hub to cancel; its reply still ends the wait. */
            proto_msg_t *cm = proto_msg_new(PROTO_CANCEL);
            if (cm) {
                cm->id = c.id;
                pthread_mutex_unlock(&w->mu);
                outbox_push(w, cm, false);
                pthread_mutex_lock(&w->mu);
                proto_msg_destroy(&cm);
            }
            sent_cancel = true;
        }
        if (late)
            break;
    }
    list_remove(&w->calls, &c.link);
    pthread_mutex_unlock(&w->mu);
    pthread_cond_destroy(&c.cv);

    proto_msg_t *reply = c.reply;
    if (!reply)
        reply = proto_reply_new(req, PROTO_ST_DEADLINE, true, TX_HUB_DEADLINE);
    proto_msg_destroy(&req);
    return reply;
}
