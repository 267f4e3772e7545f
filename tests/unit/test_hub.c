/* test_hub.c -- the hub and the worker loop, in one process over a real
 * ipc:// endpoint: routing, cancel, deadline, no worker, recording; what a
 * hub key's metadata allows (hub/hubkeys.c), the ipc:// folder check,
 * a CURVE hub over loopback tcp:// that routes only to keys allowed for
 * the kind, and hub_max_message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <czmq.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hub/hubkeys.h"
#include "hub/worker.h"
#include "hub/queue.h"
#include "hub/record.h"

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

    worker_opts_t wo = { .endpoint = endpoint,
                         .kind = "echo",
                         .heartbeat_ms = 100,
                         .max_jobs = 4,
                         .handler = echo_handler };
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
    for (const hubkeys_role_t *r = hubkeys_roles; r->kind; r++)
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

/* A client certificate in dir/NAME.key_secret and dir/allowed/NAME.key. */
static void make_cert(const char *dir, const char *name, const char *kinds, const char *submit)
{
    char path[256];
    zcert_t *c = zcert_new();
    zcert_set_meta(c, HUBKEYS_META_NAME, "%s", name);
    zcert_set_meta(c, HUBKEYS_META_KINDS, "%s", kinds);
    zcert_set_meta(c, HUBKEYS_META_SUBMIT, "%s", submit);
    snprintf(path, sizeof path, "%s/%s.key_secret", dir, name);
    assert_int_equal(zcert_save_secret(c, path), 0);
    snprintf(path, sizeof path, "%s/allowed/%s.key", dir, name);
    assert_int_equal(zcert_save_public(c, path), 0);
    zcert_destroy(&c);
}

/* The hub_keys folder the workers of the CURVE case use. */
static const char *worker_keys = "";

static worker_t *start_worker(const char *ep, const char *kind, const char *cert, pthread_t *th)
{
    worker_opts_t wo = { .endpoint = ep,
                         .kind = kind,
                         .heartbeat_ms = 100,
                         .max_jobs = 4,
                         .keys_dir = worker_keys,
                         .cert_path = cert,
                         .handler = echo_handler };
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

int main(void)
{
    zsys_init();
    zsys_handler_set(NULL);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/talkback-test-hub-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    snprintf(endpoint, sizeof endpoint, "ipc://%s/hub.ipc", tmpdir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hub_roundtrip), cmocka_unit_test(recording),  cmocka_unit_test(meta_lists),
        cmocka_unit_test(meta_valid),    cmocka_unit_test(ipc_folder), cmocka_unit_test(curve_hub),
        cmocka_unit_test(max_message),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    zsys_shutdown();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
