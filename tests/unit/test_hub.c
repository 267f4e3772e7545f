/* test_hub.c -- the hub and the worker loop, in one process over a real
 * ipc:// endpoint: routing, cancel, deadline, no worker, recording; what a
 * hub key's metadata allows (hub/hubkeys.c), the ipc:// folder check,
 * a CURVE hub over loopback tcp:// that routes only to keys allowed for
 * the kind and the host, hub_max_message, refusal lines per key
 * (refusals.h), one sandbox manager per host, and which requests of a
 * dead worker are sent again (retry.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <czmq.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hub/hubkeys.h"
#include "hub/queue.h"
#include "hub/record.h"
#include "hub/refusals.h"
#include "hub/retry.h"
#include "hub/worker.h"
#include "proto/ops.h"

static char endpoint[128];
static char tmpdir[64];

/* echo: replies with the "text" argument; "sleep" waits until cancelled. */
static proto_msg_t *echo_handler(worker_job_t *job, void *ctx)
{
    (void)ctx;
    const char *text = proto_map_str(&job->req->args, "text", NULL);
    if (text && strcmp(text, "sleep") == 0) {
        while (!worker_job_cancelled(job))
            usleep(10000);
        return proto_reply_new(job->req, PROTO_ST_OK, true, "cancelled");
    }
    return proto_reply_new(job->req, PROTO_ST_OK, false, text ? text : "");
}

static const worker_op_t echo_ops[] = { { "echo", echo_handler }, { NULL, NULL } };

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    worker_run(w);
    return NULL;
}

static proto_msg_t *request(const char *kind, const char *text, int64_t deadline_in_ms)
{
    proto_msg_t *m = proto_msg_new(PROTO_REQUEST);
    proto_msg_set_kind(m, kind);
    proto_msg_set_name(m, "echo");
    proto_msg_set_conv(m, "c1");
    proto_map_set_cstr(&m->args, "text", text);
    m->deadline_ms = proto_now_ms() + deadline_in_ms;
    return m;
}

static void hub_roundtrip(void **state)
{
    (void)state;
    char rec[64];
    snprintf(rec, sizeof rec, "/tmp/talkback-test-rec-%d", (int)getpid());
    unlink(rec);
    queue_opts_t qo = { .endpoint = endpoint,
                        .heartbeat_ms = 100,
                        .heartbeat_timeout_ms = 400,
                        .worker_wait_ms = 300,
                        .record_path = rec };
    queue_t *q = queue_new(&qo);
    assert_non_null(q);

    /* No worker yet: ends after worker_wait_ms with NO_WORKER. */
    int64_t t0 = proto_mono_ms();
    queue_ticket_t *t = queue_submit(q, request("echo", "hi", 5000), NULL);
    const proto_msg_t *r = queue_wait(t, 3000);
    assert_non_null(r);
    assert_int_equal(r->status, PROTO_ST_NO_WORKER);
    assert_true(proto_mono_ms() - t0 < 2000);
    queue_ticket_destroy(&t);

    /* An operation of kind hub the hub does not serve: the workers' one
     * unknown answer, at once. */
    t = queue_submit(q, request(KIND_HUB, "hi", 5000), NULL);
    r = queue_wait(t, 3000);
    assert_non_null(r);
    assert_int_equal(r->status, PROTO_ST_BAD_REQUEST);
    assert_non_null(strstr(r->text, "the hub has no operation \"echo\""));
    queue_ticket_destroy(&t);

    worker_opts_t wo = {
        .endpoint = endpoint, .kind = "echo", .heartbeat_ms = 100, .max_jobs = 4, .ops = echo_ops
    };
    worker_t *w = worker_new(&wo);
    assert_non_null(w);
    pthread_t th;
    pthread_create(&th, NULL, worker_main, w);
    for (int i = 0; i < 100 && queue_live_workers(q, "echo") == 0; i++)
        usleep(20000);
    assert_int_equal(queue_live_workers(q, "echo"), 1);

    t = queue_submit(q, request("echo", "hello", 5000), NULL);
    r = queue_wait(t, 3000);
    assert_non_null(r);
    assert_int_equal(r->status, PROTO_ST_OK);
    assert_string_equal(r->text, "hello");
    queue_ticket_destroy(&t);

    /* A long request does not hold up a short one. */
    queue_ticket_t *slow = queue_submit(q, request("echo", "sleep", 10000), "c1\n5");
    t = queue_submit(q, request("echo", "quick", 5000), NULL);
    r = queue_wait(t, 3000);
    assert_non_null(r);
    assert_string_equal(r->text, "quick");
    queue_ticket_destroy(&t);
    /* Cancel by key: the worker sees the flag and answers. */
    assert_true(queue_cancel(q, "c1\n5"));
    r = queue_wait(slow, 3000);
    assert_non_null(r);
    assert_string_equal(r->text, "cancelled");
    queue_ticket_destroy(&slow);

    /* Deadline: the hub ends the request by itself. */
    t0 = proto_mono_ms();
    t = queue_submit(q, request("echo", "sleep", 300), NULL);
    r = queue_wait(t, 3000);
    assert_non_null(r);
    assert_true(r->status == PROTO_ST_DEADLINE || (r->text && strcmp(r->text, "cancelled") == 0));
    assert_true(proto_mono_ms() - t0 < 2000);
    queue_ticket_destroy(&t);

    /* The worker dies mid-call: the call ends with WORKER_LOST. */
    t = queue_submit(q, request("echo", "sleep", 20000), NULL);
    usleep(100000);
    worker_stop(w);
    pthread_join(th, NULL);
    /* Leave its job running: a dead process answers nothing. */
    r = queue_wait(t, 5000);
    assert_non_null(r);
    assert_int_equal(r->status, PROTO_ST_WORKER_LOST);
    queue_ticket_destroy(&t);
    worker_destroy(&w);

    queue_destroy(&q);

    unlink(rec);
}

static int count_events(void *ctx, int64_t ts, const char *dir, proto_msg_t *m)
{
    int *c = ctx;
    (void)ts;
    if (strcmp(dir, "req") == 0)
        c[0]++;
    else
        c[1]++;
    proto_msg_destroy(&m);
    return 0;
}

static void recording(void **state)
{
    (void)state;
    char rec[64];
    snprintf(rec, sizeof rec, "/tmp/talkback-test-rec2-%d", (int)getpid());
    unlink(rec);
    record_t *r = record_open(rec);
    assert_non_null(r);
    proto_msg_t *m = request("echo", "x", 1000);
    m->id = 3;
    assert_int_equal(record_write(r, "req", m), 0);
    proto_msg_t *rep = proto_reply_new(m, PROTO_ST_OK, false, "x");
    assert_int_equal(record_write(r, "rep", rep), 0);
    record_close(&r);
    int c[2] = { 0, 0 };
    assert_int_equal(record_read(rec, count_events, c), 2);
    assert_int_equal(c[0], 1);
    assert_int_equal(c[1], 1);
    /* A torn last event (crash mid-write) is ignored. */
    FILE *f = fopen(rec, "ab");
    fwrite("\x93\x01", 1, 2, f);
    fclose(f);
    c[0] = c[1] = 0;
    assert_int_equal(record_read(rec, count_events, c), 2);
    assert_int_equal(record_read("/nonexistent/rec", count_events, c), -1);
    proto_msg_destroy(&m);
    proto_msg_destroy(&rep);
    unlink(rec);
}

/* ---- what a key's metadata allows ------------------------------------------ */

static void meta_lists(void **state)
{
    (void)state;
    assert_true(hubkeys_list_has("judge", "judge"));
    assert_true(hubkeys_list_has("sandbox, judge ,reaper", "judge"));
    assert_true(hubkeys_list_has(" reaper ", "reaper"));
    assert_false(hubkeys_list_has("judge", "judg"));
    assert_false(hubkeys_list_has("judges", "judge"));
    assert_false(hubkeys_list_has("", "judge"));
    assert_false(hubkeys_list_has(",,", ""));
    assert_false(hubkeys_list_has(NULL, "judge"));
    assert_false(hubkeys_list_has("judge", NULL));
    /* An item with a comma never matches one list element. */
    assert_false(hubkeys_list_has("a,b", "a,b"));

    assert_true(hubkeys_may_register("judge", "judge"));
    assert_false(hubkeys_may_register("judge", "sandbox"));
    assert_false(hubkeys_may_register(NULL, "sandbox"));

    const char *judge = hubkeys_role("judge")->submit;
    assert_true(hubkeys_may_submit(judge, "sandbox", "exec"));
    assert_true(hubkeys_may_submit(judge, "sandbox", "put"));
    assert_false(hubkeys_may_submit(judge, "sandbox", "run"));
    assert_false(hubkeys_may_submit(judge, "sandbox", "reset"));
    assert_false(hubkeys_may_submit(judge, "judge", "exec"));
    assert_false(hubkeys_may_submit(judge, "sandbox", "exec,sandbox:run"));
    assert_false(hubkeys_may_submit(judge, "sandbox:exec", ""));
    assert_false(hubkeys_may_submit(judge, "", "exec"));
    assert_false(hubkeys_may_submit(hubkeys_role("sandbox")->submit, "sandbox", "exec"));
    assert_true(hubkeys_may_submit(hubkeys_role("reaper")->submit, "sandbox", "busy"));
    assert_false(hubkeys_may_submit(hubkeys_role("reaper")->submit, "sandbox", "run"));
    assert_null(hubkeys_role("admin"));
    assert_null(hubkeys_role(NULL));
}

static void meta_valid(void **state)
{
    (void)state;
    for (const hubkeys_role_t *r = hubkeys_roles(); r->kind; r++)
        assert_true(hubkeys_meta_valid(r->kind, r->submit));
    assert_true(hubkeys_meta_valid("judge, sandbox", "sandbox:put, sandbox:exec"));
    assert_false(hubkeys_meta_valid("", ""));
    assert_false(hubkeys_meta_valid("Judge", ""));
    assert_false(hubkeys_meta_valid("judge,", ""));
    assert_false(hubkeys_meta_valid("ju dge", ""));
    assert_false(hubkeys_meta_valid("judge", "sandbox"));
    assert_false(hubkeys_meta_valid("judge", "sandbox:"));
    assert_false(hubkeys_meta_valid("judge", ":exec"));
    assert_false(hubkeys_meta_valid("judge", "a:b:c"));
    assert_false(hubkeys_meta_valid("judge:x", ""));
    assert_false(hubkeys_meta_valid(NULL, ""));
    char big[HUBKEYS_META_MAX + 2];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_false(hubkeys_meta_valid(big, ""));
    assert_true(hubkeys_keyless("ipc:///run/talkback/hub.ipc"));
    assert_true(hubkeys_keyless("inproc://x"));
    assert_false(hubkeys_keyless("tcp://127.0.0.1:5555"));
    assert_false(hubkeys_keyless("ws://127.0.0.1:5555"));
}

/* ---- the ipc:// folder ------------------------------------------------------ */

static void ipc_folder(void **state)
{
    (void)state;
    char dir[128], ep[160], err[512];
    snprintf(dir, sizeof dir, "%s/open", tmpdir);
    snprintf(ep, sizeof ep, "ipc://%s/hub.ipc", dir);
    /* Missing: a worker waits for it, the hub makes it 0700. */
    assert_int_equal(hubkeys_ipc_dir_check(ep, false, err, sizeof err), 0);
    assert_int_equal(hubkeys_ipc_dir_check(ep, true, err, sizeof err), 0);
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    /* Open to others: refused, with the fix in the sentence. */
    chmod(dir, 0777);
    assert_int_equal(hubkeys_ipc_dir_check(ep, true, err, sizeof err), -1);
    assert_non_null(strstr(err, "mode 0777"));
    assert_non_null(strstr(err, "chmod 700"));
    assert_int_equal(hubkeys_ipc_dir_check(ep, false, err, sizeof err), -1);
    chmod(dir, 0750);
    assert_int_equal(hubkeys_ipc_dir_check(ep, true, err, sizeof err), -1);
    chmod(dir, 0700);
    assert_int_equal(hubkeys_ipc_dir_check(ep, true, err, sizeof err), 0);
    /* /tmp itself is everybody's. */
    assert_int_equal(hubkeys_ipc_dir_check("ipc:///tmp/x.ipc", true, err, sizeof err), -1);
    assert_int_equal(hubkeys_ipc_dir_check("ipc://@talkback", true, err, sizeof err), -1);
    assert_non_null(strstr(err, "abstract"));
    assert_int_equal(hubkeys_ipc_dir_check("tcp://127.0.0.1:1", true, err, sizeof err), 0);
    /* A hub refuses to start there. */
    chmod(dir, 0777);
    queue_opts_t qo = {
        .endpoint = ep, .heartbeat_ms = 100, .heartbeat_timeout_ms = 400, .worker_wait_ms = 300
    };
    assert_null(queue_new(&qo));
    rmdir(dir);
}

/* ---- a CURVE hub ------------------------------------------------------------ */

/* A client certificate in dir/NAME.key_secret and dir/allowed/NAME.key,
 * for one host when host is not NULL. */
static void make_host_cert(const char *dir, const char *name, const char *kinds, const char *submit,
                           const char *host)
{
    char path[256];
    zcert_t *c = zcert_new();
    zcert_set_meta(c, HUBKEYS_META_NAME, "%s", name);
    zcert_set_meta(c, HUBKEYS_META_KINDS, "%s", kinds);
    zcert_set_meta(c, HUBKEYS_META_SUBMIT, "%s", submit);
    if (host)
        zcert_set_meta(c, HUBKEYS_META_HOST, "%s", host);
    snprintf(path, sizeof path, "%s/%s.key_secret", dir, name);
    assert_int_equal(zcert_save_secret(c, path), 0);
    snprintf(path, sizeof path, "%s/allowed/%s.key", dir, name);
    assert_int_equal(zcert_save_public(c, path), 0);
    zcert_destroy(&c);
}

static void make_cert(const char *dir, const char *name, const char *kinds, const char *submit)
{
    make_host_cert(dir, name, kinds, submit, NULL);
}

/* The hub_keys folder the workers of the CURVE case use. */
static const char *worker_keys = "";

/* The host the next start_worker says it runs on (NULL: the machine's). */
static const char *worker_host_next;
static const char *worker_name_next;
static const worker_op_t *worker_ops_next;

static worker_t *start_worker(const char *ep, const char *kind, const char *cert, pthread_t *th)
{
    worker_opts_t wo = { .endpoint = ep,
                         .kind = kind,
                         .heartbeat_ms = 100,
                         .max_jobs = 4,
                         .keys_dir = worker_keys,
                         .cert_path = cert,
                         .host = worker_host_next,
                         .name = worker_name_next,
                         .ops = worker_ops_next ? worker_ops_next : echo_ops };
    worker_t *w = worker_new(&wo);
    assert_non_null(w);
    pthread_create(th, NULL, worker_main, w);
    return w;
}

static void curve_hub(void **state)
{
    (void)state;
    char keys[128], path[256], ep[64];
    snprintf(keys, sizeof keys, "%s/keys", tmpdir);
    snprintf(path, sizeof path, "%s/allowed", keys);
    mkdir(keys, 0700);
    mkdir(path, 0700);
    worker_keys = keys;
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", 20000 + (int)(getpid() % 20000));
    queue_opts_t qo = { .endpoint = ep,
                        .heartbeat_ms = 100,
                        .heartbeat_timeout_ms = 400,
                        .worker_wait_ms = 1500,
                        .keys_dir = keys };
    /* No keys: the hub refuses to start. */
    assert_null(queue_new(&qo));
    zcert_t *hub = zcert_new();
    snprintf(path, sizeof path, "%s/hub.key", keys);
    assert_int_equal(zcert_save(hub, path), 0);
    zcert_destroy(&hub);
    make_cert(keys, "other", "other", "");
    make_cert(keys, "echo", "echo", "");
    queue_t *q = queue_new(&qo);
    assert_non_null(q);

    /* A key allowed only as "other" says HELLO as echo: nothing reaches it. */
    snprintf(path, sizeof path, "%s/other.key_secret", keys);
    pthread_t th1, th2;
    worker_t *w1 = start_worker(ep, "echo", path, &th1);
    queue_ticket_t *t = queue_submit(q, request("echo", "hi", 5000), NULL);
    const proto_msg_t *r = queue_wait(t, 4000);
    assert_non_null(r);
    assert_int_equal(r->status, PROTO_ST_NO_WORKER);
    queue_ticket_destroy(&t);
    assert_int_equal(queue_live_workers(q, "echo"), 0);

    /* The echo key: the call goes through. */
    snprintf(path, sizeof path, "%s/echo.key_secret", keys);
    worker_t *w2 = start_worker(ep, "echo", path, &th2);
    t = queue_submit(q, request("echo", "hello", 5000), NULL);
    r = queue_wait(t, 4000);
    assert_non_null(r);
    assert_int_equal(r->status, PROTO_ST_OK);
    assert_string_equal(r->text, "hello");
    queue_ticket_destroy(&t);
    assert_int_equal(queue_live_workers(q, "echo"), 1);

    worker_stop(w1);
    worker_stop(w2);
    pthread_join(th1, NULL);
    pthread_join(th2, NULL);
    worker_destroy(&w1);
    worker_destroy(&w2);
    queue_destroy(&q);
    worker_keys = "";
}

/* A message over hub_max_message never gets through; the next one does. */
static void max_message(void **state)
{
    (void)state;
    char ep[128];
    snprintf(ep, sizeof ep, "ipc://%s/max.ipc", tmpdir);
    queue_opts_t qo = { .endpoint = ep,
                        .heartbeat_ms = 100,
                        .heartbeat_timeout_ms = 400,
                        .worker_wait_ms = 2000,
                        .max_message = 4096 };
    queue_t *q = queue_new(&qo);
    assert_non_null(q);
    pthread_t th;
    worker_t *w = start_worker(ep, "echo", "", &th);
    for (int i = 0; i < 100 && queue_live_workers(q, "echo") == 0; i++)
        usleep(20000);
    char big[8192];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    queue_ticket_t *t = queue_submit(q, request("echo", big, 5000), NULL);
    const proto_msg_t *r = queue_wait(t, 8000);
    assert_non_null(r);
    assert_int_not_equal(r->status, PROTO_ST_OK);
    queue_ticket_destroy(&t);
    t = queue_submit(q, request("echo", "small", 5000), NULL);
    r = queue_wait(t, 8000);
    assert_non_null(r);
    assert_int_equal(r->status, PROTO_ST_OK);
    assert_string_equal(r->text, "small");
    queue_ticket_destroy(&t);
    worker_stop(w);
    pthread_join(th, NULL);
    worker_destroy(&w);
    queue_destroy(&q);
}

/* ---- refusal lines, per key ------------------------------------------------- */

static void refusal_lines(void **state)
{
    (void)state;
    refusals_t *r = refusals_new(1000);
    unsigned held = 9;
    assert_true(refusals_allow(r, "hello:a", 0, &held));
    assert_int_equal(held, 0);
    assert_false(refusals_allow(r, "hello:a", 10, &held));
    assert_false(refusals_allow(r, "hello:a", 900, &held));
    /* A noisy key hides no other. */
    assert_true(refusals_allow(r, "hello:b", 20, &held));
    assert_true(refusals_allow(r, "zap:a", 30, &held));
    assert_true(refusals_allow(r, "hello:a", 1000, &held));
    assert_int_equal(held, 2);
    assert_false(refusals_allow(r, "hello:a", 1500, &held));
    /* Past the table's size, the key refused longest ago is forgotten. */
    char key[32];
    for (int i = 0; i < REFUSALS_KEYS + 8; i++) {
        snprintf(key, sizeof key, "k%d", i);
        assert_true(refusals_allow(r, key, 2000 + i, &held));
    }
    assert_true(refusals_allow(r, "hello:b", 2500, &held));
    refusals_destroy(&r);
    assert_null(r);
    refusals_t *all = refusals_new(0);
    assert_true(refusals_allow(all, "x", 0, &held));
    assert_true(refusals_allow(all, "x", 0, &held));
    refusals_destroy(&all);
}

/* ---- keys made for one host ------------------------------------------------- */

static void host_keys(void **state)
{
    (void)state;
    char h[64];
    assert_int_equal(hubkeys_host_for("sandbox", "sandbox-beta", h, sizeof h), 0);
    assert_string_equal(h, "beta");
    assert_int_equal(hubkeys_host_for("sandbox", "host2", h, sizeof h), 0);
    assert_string_equal(h, "host2");
    assert_int_equal(hubkeys_host_for("reaper", "reaper-beta", h, sizeof h), 0);
    assert_string_equal(h, "beta");
    assert_int_equal(hubkeys_host_for("sandbox", "reaper-beta", h, sizeof h), 0);
    assert_string_equal(h, "reaper-beta");
    assert_int_equal(hubkeys_host_for("sandbox", "sandbox-", h, sizeof h), 0);
    assert_string_equal(h, "sandbox-");
    assert_int_equal(hubkeys_host_for("sandbox", "sandbox-a-very-long-name", h, 4), -1);
    assert_true(hubkeys_host_valid("vm.example-1_A"));
    assert_false(hubkeys_host_valid(""));
    assert_false(hubkeys_host_valid(NULL));
    assert_false(hubkeys_host_valid("a b"));
    assert_false(hubkeys_host_valid("a/b"));
    assert_false(hubkeys_host_valid("a,b"));
    assert_true(hubkeys_kind_per_host("sandbox"));
    assert_true(hubkeys_kind_per_host("reaper"));
    assert_false(hubkeys_kind_per_host("judge"));
    assert_false(hubkeys_kind_per_host("ctl"));
    assert_false(hubkeys_kind_per_host(NULL));
}

/* The hosts of the live sandbox managers, "a,b," in the hub's order. */
static void add_host(const char *kind, const char *name, const char *host, const proto_map_t *data,
                     void *ctx)
{
    (void)name;
    (void)data;
    if (strcmp(kind, "sandbox") == 0) {
        strcat(ctx, host);
        strcat(ctx, ",");
    }
}

static void add_name(const char *kind, const char *name, const char *host, const proto_map_t *data,
                     void *ctx)
{
    (void)host;
    (void)data;
    if (strcmp(kind, "sandbox") == 0) {
        strcat(ctx, name);
        strcat(ctx, ",");
    }
}

static void live_list(queue_t *q, queue_worker_fn fn, char *out)
{
    out[0] = '\0';
    queue_workers_each(q, fn, out);
}

/* A sandbox key made for host beta says HELLO for alpha: refused; a key
 * that names no host may serve gamma, not beta, which has a key of its
 * own. */
static void curve_hosts(void **state)
{
    (void)state;
    char keys[128], path[256], ep[64], live[512];
    snprintf(keys, sizeof keys, "%s/hostkeys", tmpdir);
    snprintf(path, sizeof path, "%s/allowed", keys);
    mkdir(keys, 0700);
    mkdir(path, 0700);
    worker_keys = keys;
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", 20000 + (int)((getpid() + 7) % 20000));
    zcert_t *hub = zcert_new();
    snprintf(path, sizeof path, "%s/hub.key", keys);
    assert_int_equal(zcert_save(hub, path), 0);
    zcert_destroy(&hub);
    make_host_cert(keys, "sandbox-beta", "sandbox", "", "beta");
    make_cert(keys, "sandbox", "sandbox", "");
    queue_opts_t qo = { .endpoint = ep,
                        .heartbeat_ms = 100,
                        .heartbeat_timeout_ms = 400,
                        .worker_wait_ms = 500,
                        .keys_dir = keys };
    queue_t *q = queue_new(&qo);
    assert_non_null(q);
    char beta[256], plain[256];
    snprintf(beta, sizeof beta, "%s/sandbox-beta.key_secret", keys);
    snprintf(plain, sizeof plain, "%s/sandbox.key_secret", keys);
    pthread_t th[4];
    worker_t *w[4];
    const char *hosts[4] = { "alpha", "beta", "gamma", "beta" };
    const char *certs[4] = { beta, plain, plain, beta };
    for (int i = 0; i < 4; i++) {
        worker_host_next = hosts[i];
        w[i] = start_worker(ep, "sandbox", certs[i], &th[i]);
    }
    worker_host_next = NULL;
    for (int i = 0; i < 100; i++) {
        live_list(q, add_host, live);
        if (strlen(live) >= strlen("gamma,beta,"))
            break;
        usleep(20000);
    }
    usleep(500000); /* long enough for a refused one to show up, too */
    live_list(q, add_host, live);
    assert_true(strcmp(live, "gamma,beta,") == 0 || strcmp(live, "beta,gamma,") == 0);
    /* A call for alpha finds no manager there. */
    proto_msg_t *m = request("sandbox", "hi", 3000);
    proto_msg_set_host(m, "alpha");
    queue_ticket_t *t = queue_submit(q, m, NULL);
    const proto_msg_t *r = queue_wait(t, 3000);
    assert_non_null(r);
    assert_int_equal(r->status, PROTO_ST_NO_WORKER);
    queue_ticket_destroy(&t);
    for (int i = 0; i < 4; i++) {
        worker_stop(w[i]);
        pthread_join(th[i], NULL);
        worker_destroy(&w[i]);
    }
    queue_destroy(&q);
    worker_keys = "";
}

/* Two managers say HELLO for one host: the newer is refused while the
 * older is connected, and joins once it is gone; no flapping between. */
static void one_manager(void **state)
{
    (void)state;
    char ep[128], live[512];
    snprintf(ep, sizeof ep, "ipc://%s/one.ipc", tmpdir);
    queue_opts_t qo = {
        .endpoint = ep, .heartbeat_ms = 100, .heartbeat_timeout_ms = 400, .worker_wait_ms = 500
    };
    queue_t *q = queue_new(&qo);
    assert_non_null(q);
    pthread_t t1, t2;
    worker_host_next = "vm";
    worker_name_next = "older";
    worker_t *w1 = start_worker(ep, "sandbox", "", &t1);
    for (int i = 0; i < 100 && queue_live_workers(q, "sandbox") == 0; i++)
        usleep(20000);
    worker_name_next = "newer";
    worker_t *w2 = start_worker(ep, "sandbox", "", &t2);
    for (int i = 0; i < 10; i++) {
        usleep(100000);
        live_list(q, add_name, live);
        assert_string_equal(live, "older,");
    }
    /* The older one's process ends (its socket closes): the newer joins. */
    worker_stop(w1);
    pthread_join(t1, NULL);
    worker_destroy(&w1);
    for (int i = 0; i < 100; i++) {
        live_list(q, add_name, live);
        if (strcmp(live, "newer,") == 0)
            break;
        usleep(20000);
    }
    assert_string_equal(live, "newer,");
    worker_stop(w2);
    pthread_join(t2, NULL);
    worker_destroy(&w2);
    worker_host_next = worker_name_next = NULL;
    queue_destroy(&q);
}

/* ---- which requests of a dead worker are sent again ------------------------ */

static atomic_int programs_run, programs_cancelled, judge_calls;
static atomic_bool judge_slow; /* the judge waits before starting the program */
static worker_t *holder;       /* the judge that got the last call */
static bool killed[3];         /* judges stopped by kill_holder */

/* A sandbox manager: exec "sleep" runs until cancelled, else replies. */
static proto_msg_t *sandbox_handler(worker_job_t *job, void *ctx)
{
    (void)ctx;
    const char *text = proto_map_str(&job->req->args, "text", NULL);
    if (strcmp(job->req->name, OP_EXEC) != 0) /* the hub's own locate */
        return proto_reply_new(job->req, PROTO_ST_OK, false, "");
    atomic_fetch_add(&programs_run, 1);
    if (text && strcmp(text, "sleep") == 0) {
        while (!worker_job_cancelled(job))
            usleep(10000);
        atomic_fetch_add(&programs_cancelled, 1);
        return proto_reply_new(job->req, PROTO_ST_OK, true, "cancelled");
    }
    return proto_reply_new(job->req, PROTO_ST_OK, false, "ran");
}

/* A judge: run_code asks the manager to run the program (ARG_PROGRAM),
 * after a while when judge_slow; history sleeps on its first call. */
static proto_msg_t *judge_handler(worker_job_t *job, void *ctx)
{
    (void)ctx;
    int n = atomic_fetch_add(&judge_calls, 1);
    holder = job->worker;
    const char *text = proto_map_str(&job->req->args, "text", NULL);
    if (strcmp(job->req->name, OP_HISTORY) == 0) {
        while (n == 0 && !worker_job_cancelled(job))
            usleep(10000);
        return proto_reply_new(job->req, PROTO_ST_OK, false, "history");
    }
    if (atomic_exchange(&judge_slow, false)) {
        while (!worker_job_cancelled(job))
            usleep(10000);
        return proto_reply_new(job->req, PROTO_ST_OK, true, "cancelled");
    }
    /* Short: a dead judge's call waits out its deadline (+2 s) before its
     * thread ends. */
    proto_msg_t *m = request("sandbox", text ? text : "", 1000);
    proto_msg_set_name(m, OP_EXEC);
    proto_map_set_int(&m->args, ARG_PROGRAM, (int64_t)job->req->id);
    proto_msg_t *r = worker_call(job->worker, m, job);
    proto_msg_t *out = proto_reply_new(job->req, PROTO_ST_OK, false, r && r->text ? r->text : "");
    proto_msg_destroy(&r);
    return out;
}

static const worker_op_t sandbox_ops[] = {
    { OP_EXEC, sandbox_handler },
    { OP_LOCATE, sandbox_handler },
    { NULL, NULL },
};
static const worker_op_t judge_ops[] = {
    { OP_RUN_CODE, judge_handler },
    { OP_HISTORY, judge_handler },
    { NULL, NULL },
};

static proto_msg_t *judge_request(const char *op, const char *text)
{
    proto_msg_t *m = request("judge", text, 15000);
    proto_msg_set_name(m, op);
    return m;
}

/* Stop the judge holding the last call, as if its process died. */
static void kill_holder(worker_t **w, pthread_t *th)
{
    for (int i = 0; i < 3; i++)
        if (w[i] && w[i] == holder) {
            killed[i] = true;
            worker_stop(w[i]);
            pthread_join(th[i], NULL);
            return;
        }
    fail_msg("no judge holds the call");
}

static void retry_rules(void **state)
{
    (void)state;
    assert_int_equal(retry_rule("judge", "run_code"), RETRY_UNTIL_STARTED);
    assert_int_equal(retry_rule("judge", "history"), RETRY_ALWAYS);
    assert_int_equal(retry_rule("judge", "other"), RETRY_NEVER);
    assert_int_equal(retry_rule("sandbox", "run"), RETRY_NEVER);
    assert_int_equal(retry_rule("sandbox", "exec"), RETRY_NEVER);
    assert_int_equal(retry_rule("reaper", "sweep"), RETRY_NEVER);
    assert_int_equal(retry_rule(NULL, "run_code"), RETRY_NEVER);

    char ep[128];
    snprintf(ep, sizeof ep, "ipc://%s/retry.ipc", tmpdir);
    queue_opts_t qo = {
        .endpoint = ep, .heartbeat_ms = 100, .heartbeat_timeout_ms = 400, .worker_wait_ms = 1500
    };
    queue_t *q = queue_new(&qo);
    assert_non_null(q);
    pthread_t ts, tj[3];
    worker_ops_next = sandbox_ops;
    worker_t *sb = start_worker(ep, "sandbox", "", &ts);
    worker_ops_next = judge_ops;
    worker_t *j[3];
    for (int i = 0; i < 3; i++)
        j[i] = start_worker(ep, "judge", "", &tj[i]);
    worker_ops_next = NULL;
    for (int i = 0;
         i < 100 && (queue_live_workers(q, "judge") < 3 || !queue_live_workers(q, "sandbox")); i++)
        usleep(20000);

    /* The program started, then its judge died: not sent again, said so,
     * and the program is stopped. */
    queue_ticket_t *t = queue_submit(q, judge_request(OP_RUN_CODE, "sleep"), NULL);
    for (int i = 0; i < 200 && atomic_load(&programs_run) == 0; i++)
        usleep(10000);
    assert_int_equal(atomic_load(&programs_run), 1);
    kill_holder(j, tj);
    const proto_msg_t *r = queue_wait(t, 5000);
    assert_non_null(r);
    assert_int_equal(r->status, PROTO_ST_WORKER_LOST);
    assert_true(proto_map_has(&r->data, DATA_STARTED, PROTO_V_BOOL));
    assert_int_equal(proto_map_int(&r->data, DATA_STARTED, 0), 1);
    queue_ticket_destroy(&t);
    for (int i = 0; i < 200 && atomic_load(&programs_cancelled) == 0; i++)
        usleep(10000);
    assert_int_equal(atomic_load(&programs_cancelled), 1);
    assert_int_equal(atomic_load(&programs_run), 1); /* never a second run */
    assert_int_equal(atomic_load(&judge_calls), 1);

    /* Its judge dies before the program starts: sent to another judge,
     * where the program runs once. */
    atomic_store(&judge_slow, true);
    t = queue_submit(q, judge_request(OP_RUN_CODE, "quick"), NULL);
    for (int i = 0; i < 200 && atomic_load(&judge_calls) < 2; i++)
        usleep(10000);
    assert_int_equal(atomic_load(&judge_calls), 2);
    assert_int_equal(atomic_load(&programs_run), 1);
    worker_t *second = holder;
    kill_holder(j, tj);
    r = queue_wait(t, 8000);
    assert_non_null(r);
    assert_int_equal(r->status, PROTO_ST_OK);
    assert_string_equal(r->text, "ran");
    assert_ptr_not_equal(holder, second);
    assert_int_equal(atomic_load(&judge_calls), 3);
    assert_int_equal(atomic_load(&programs_run), 2);
    queue_ticket_destroy(&t);

    usleep(3500000); /* the dead judges' calls run out (see judge_handler) */
    for (int i = 0; i < 3; i++) {
        if (!killed[i]) {
            worker_stop(j[i]);
            pthread_join(tj[i], NULL);
        }
        worker_destroy(&j[i]);
    }
    worker_stop(sb);
    pthread_join(ts, NULL);
    worker_destroy(&sb);
    queue_destroy(&q);
}

int main(void)
{
    zsys_init();
    zsys_handler_set(NULL);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/talkback-test-hub-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    snprintf(endpoint, sizeof endpoint, "ipc://%s/hub.ipc", tmpdir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hub_roundtrip), cmocka_unit_test(recording),
        cmocka_unit_test(meta_lists),    cmocka_unit_test(meta_valid),
        cmocka_unit_test(ipc_folder),    cmocka_unit_test(curve_hub),
        cmocka_unit_test(max_message),   cmocka_unit_test(refusal_lines),
        cmocka_unit_test(host_keys),     cmocka_unit_test(curve_hosts),
        cmocka_unit_test(one_manager),   cmocka_unit_test(retry_rules),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    zsys_shutdown();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
