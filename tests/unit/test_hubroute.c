/* test_hubroute.c -- the hub routing sandbox requests over two hosts, in
 * one process over a real ipc:// endpoint: two "sandbox" workers say they
 * run on hosts alpha and beta and answer locate from the chats they hold.
 * A new chat is placed on the host with the most room and sticks there,
 * a known chat is found on its host, a request naming a host goes there
 * only, a chat whose host went silent gets the clear text, and the hub
 * keeps each worker's HELLO data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <czmq.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "hub/queue.h"
#include "hub/worker.h"

static char endpoint[128];
static char tmpdir[64];

/* A fake sandbox manager: the chats it holds, and how full it says it is. */
typedef struct {
    const char *host;
    int running, max_running;
    pthread_mutex_t mu;
    char chats[16][64];
    int n;
} fake_t;

static bool fake_holds(fake_t *f, const char *conv)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->chats[i], conv) == 0)
            return true;
    return false;
}

/* locate answers from the held chats; every other op makes the chat held
 * here (as a first run would) and answers with this host's name. */
static proto_msg_t *fake_handler(worker_job_t *job, void *ctx)
{
    fake_t *f = ctx;
    const proto_msg_t *req = job->req;
    pthread_mutex_lock(&f->mu);
    bool held = req->conv && fake_holds(f, req->conv);
    if (strcmp(req->name, "locate") != 0 && req->conv && !held && f->n < 16) {
        snprintf(f->chats[f->n++], 64, "%s", req->conv);
        f->running++;
    }
    pthread_mutex_unlock(&f->mu);
    if (strcmp(req->name, "locate") == 0) {
        proto_msg_t *r = proto_reply_new(req, PROTO_ST_OK, false, "");
        proto_map_set_bool(&r->data, "found", held);
        proto_map_set_cstr(&r->data, "state", held ? "running" : "");
        return r;
    }
    return proto_reply_new(req, PROTO_ST_OK, false, f->host);
}

/* Every operation the hub may send a manager here goes to fake_handler. */
static const worker_op_t fake_ops[] = {
    { "run", fake_handler },        { "exec", fake_handler },
    { "write_file", fake_handler }, { "reset", fake_handler },
    { "locate", fake_handler },     { "list", fake_handler },
    { "busy", fake_handler },       { "stop", fake_handler },
    { "rm", fake_handler },         { NULL, NULL },
};

static void fake_hello(proto_map_t *data, void *ctx)
{
    fake_t *f = ctx;
    pthread_mutex_lock(&f->mu);
    proto_map_set_int(data, "running", f->running);
    proto_map_set_int(data, "max_running", f->max_running);
    proto_map_set_bool(data, "draining", false);
    pthread_mutex_unlock(&f->mu);
}

static void *worker_main(void *arg)
{
    worker_run(arg);
    return NULL;
}

static const proto_msg_t *call(queue_t *q, queue_ticket_t **t, const char *op, const char *conv,
                               const char *host)
{
    proto_msg_t *m = proto_msg_new(PROTO_REQUEST);
    proto_msg_set_kind(m, "sandbox");
    proto_msg_set_name(m, op);
    proto_msg_set_conv(m, conv);
    proto_msg_set_user(m, "");
    proto_msg_set_host(m, host);
    m->deadline_ms = proto_now_ms() + 5000;
    *t = queue_submit(q, m, NULL);
    return queue_wait(*t, 5000);
}

/* The host a call of conv ran on (its reply's text). */
static char *ran_on(queue_t *q, const char *op, const char *conv, const char *host)
{
    queue_ticket_t *t;
    const proto_msg_t *r = call(q, &t, op, conv, host);
    assert_non_null(r);
    char *s = strdup(r->status == PROTO_ST_OK && r->text ? r->text : "(none)");
    queue_ticket_destroy(&t);
    return s;
}

typedef struct {
    int sandboxes;
    bool alpha_data;
} seen_t;

static void count_worker(const char *kind, const char *name, const char *host,
                         const proto_map_t *data, void *ctx)
{
    seen_t *s = ctx;
    (void)name;
    if (strcmp(kind, "sandbox") == 0)
        s->sandboxes++;
    if (strcmp(host, "alpha") == 0 && proto_map_int(data, "max_running", 0) == 100 &&
        strcmp(proto_map_str(data, "host", NULL), "alpha") == 0)
        s->alpha_data = true;
}

static void two_hosts(void **state)
{
    (void)state;
    queue_opts_t qo = { .endpoint = endpoint,
                        .heartbeat_ms = 100,
                        .heartbeat_timeout_ms = 400,
                        .worker_wait_ms = 300 };
    queue_t *q = queue_new(&qo);
    assert_non_null(q);
    /* beta is fuller: new chats go to alpha first. */
    static fake_t fa = {
        .host = "alpha", .running = 0, .max_running = 100, .mu = PTHREAD_MUTEX_INITIALIZER
    };
    static fake_t fb = {
        .host = "beta", .running = 3, .max_running = 100, .mu = PTHREAD_MUTEX_INITIALIZER
    };
    snprintf(fb.chats[fb.n++], 64, "old-on-beta");
    worker_t *w[2];
    pthread_t th[2];
    fake_t *f[2] = { &fa, &fb };
    for (int i = 0; i < 2; i++) {
        worker_opts_t wo = { .endpoint = endpoint,
                             .kind = "sandbox",
                             .heartbeat_ms = 100,
                             .max_jobs = 8,
                             .ops = fake_ops,
                             .ctx = f[i],
                             .host = f[i]->host,
                             .hello = fake_hello,
                             .hello_ctx = f[i] };
        w[i] = worker_new(&wo);
        assert_non_null(w[i]);
        pthread_create(&th[i], NULL, worker_main, w[i]);
    }
    for (int i = 0; i < 100 && queue_live_workers(q, "sandbox") < 2; i++)
        usleep(20000);
    assert_int_equal(queue_live_workers(q, "sandbox"), 2);
    seen_t seen = { 0 };
    queue_workers_each(q, count_worker, &seen);
    assert_int_equal(seen.sandboxes, 2);
    assert_true(seen.alpha_data);

    /* A chat beta holds is found there; a new one goes to the emptier
     * alpha and stays; the reaper's host-named call goes to its host. */
    char *s;
    assert_string_equal((s = ran_on(q, "run", "old-on-beta", NULL)), "beta");
    free(s);
    assert_string_equal((s = ran_on(q, "run", "new-1", NULL)), "alpha");
    free(s);
    assert_string_equal((s = ran_on(q, "exec", "new-1", NULL)), "alpha");
    free(s);
    assert_string_equal((s = ran_on(q, "busy", "new-1", "beta")), "beta");
    free(s);
    assert_string_equal((s = ran_on(q, "busy", "x", "gamma")), "(none)");
    free(s);

    /* Two racing first calls of one chat land on one host. */
    proto_msg_t *m[2];
    queue_ticket_t *t[2];
    for (int i = 0; i < 2; i++) {
        m[i] = proto_msg_new(PROTO_REQUEST);
        proto_msg_set_kind(m[i], "sandbox");
        proto_msg_set_name(m[i], "run");
        proto_msg_set_conv(m[i], "race");
        m[i]->deadline_ms = proto_now_ms() + 5000;
        t[i] = queue_submit(q, m[i], NULL);
    }
    const proto_msg_t *r0 = queue_wait(t[0], 5000), *r1 = queue_wait(t[1], 5000);
    assert_non_null(r0);
    assert_non_null(r1);
    assert_string_equal(r0->text, r1->text);
    assert_int_equal(fake_holds(&fa, "race") + fake_holds(&fb, "race"), 1);
    queue_ticket_destroy(&t[0]);
    queue_ticket_destroy(&t[1]);

    /* beta goes silent: its chat gets the clear text, alpha's go on. */
    worker_stop(w[1]);
    pthread_join(th[1], NULL);
    worker_destroy(&w[1]);
    for (int i = 0; i < 100 && queue_live_workers(q, "sandbox") > 1; i++)
        usleep(20000);
    queue_ticket_t *tk;
    const proto_msg_t *r = call(q, &tk, "run", "old-on-beta", NULL);
    assert_non_null(r);
    assert_int_equal(r->status, PROTO_ST_OK);
    assert_true(r->is_error);
    const char *lost =
        "[talkback: this chat's machine is on host beta, which is not reachable now.";
    assert_memory_equal(r->text, lost, strlen(lost));
    queue_ticket_destroy(&tk);
    assert_string_equal((s = ran_on(q, "run", "new-1", NULL)), "alpha");
    free(s);

    worker_stop(w[0]);
    pthread_join(th[0], NULL);
    worker_destroy(&w[0]);
    queue_destroy(&q);
}

/* Start a fake manager on host; its thread into *th. */
static worker_t *fake_start(fake_t *f, pthread_t *th)
{
    worker_opts_t wo = { .endpoint = endpoint,
                         .kind = "sandbox",
                         .heartbeat_ms = 100,
                         .max_jobs = 8,
                         .ops = fake_ops,
                         .ctx = f,
                         .host = f->host,
                         .hello = fake_hello,
                         .hello_ctx = f };
    worker_t *w = worker_new(&wo);
    assert_non_null(w);
    pthread_create(th, NULL, worker_main, w);
    return w;
}

/* A full cluster names the cap; on_host_lost = place: a chat whose host
 * went silent starts over on another, and the reply's first line says
 * so. */
static void place_and_full(void **state)
{
    (void)state;
    queue_opts_t qo = { .endpoint = endpoint,
                        .heartbeat_ms = 100,
                        .heartbeat_timeout_ms = 400,
                        .worker_wait_ms = 300,
                        .on_host_lost = "place" };
    queue_t *q = queue_new(&qo);
    assert_non_null(q);
    static fake_t fa = {
        .host = "alpha", .running = 2, .max_running = 2, .mu = PTHREAD_MUTEX_INITIALIZER
    };
    static fake_t fb = {
        .host = "beta", .running = 2, .max_running = 2, .mu = PTHREAD_MUTEX_INITIALIZER
    };
    snprintf(fb.chats[fb.n++], 64, "on-beta");
    pthread_t ta, tb;
    worker_t *wa = fake_start(&fa, &ta), *wb = fake_start(&fb, &tb);
    for (int i = 0; i < 100 && queue_live_workers(q, "sandbox") < 2; i++)
        usleep(20000);
    char *s;
    assert_string_equal((s = ran_on(q, "run", "on-beta", NULL)), "beta");
    free(s);
    /* Both hosts hold two of their two: a new chat finds no room. */
    queue_ticket_t *t;
    const proto_msg_t *r = call(q, &t, "run", "brand-new", NULL);
    assert_non_null(r);
    assert_int_equal(r->status, PROTO_ST_OK);
    assert_true(r->is_error);
    assert_non_null(strstr(r->text, "no sandbox host has room"));
    assert_non_null(strstr(r->text, "`max_running`"));
    queue_ticket_destroy(&t);
    worker_stop(wb);
    pthread_join(tb, NULL);
    worker_destroy(&wb);
    for (int i = 0; i < 100 && queue_live_workers(q, "sandbox") > 1; i++)
        usleep(20000);
    s = ran_on(q, "run", "on-beta", NULL);
    const char *moved =
        "[talkback: this chat's machine was on host beta, which is not reachable now, "
        "so this chat starts over on host alpha";
    assert_memory_equal(s, moved, strlen(moved));
    assert_non_null(strstr(s, "]\nalpha"));
    free(s);
    worker_stop(wa);
    pthread_join(ta, NULL);
    worker_destroy(&wa);
    queue_destroy(&q);
}

int main(void)
{
    zsys_init();
    zsys_handler_set(NULL);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/talkback-test-hubroute-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    snprintf(endpoint, sizeof endpoint, "ipc://%s/hub.ipc", tmpdir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_hosts),
        cmocka_unit_test(place_and_full),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    zsys_shutdown();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
