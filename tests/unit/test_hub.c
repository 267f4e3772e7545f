/* test_hub.c -- the hub and the worker loop, in one process over a real
 * ipc:// endpoint: routing, cancel, deadline, no worker, recording. */
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

#include "common/worker.h"
#include "gateway/queue.h"
#include "gateway/record.h"

static char endpoint[128];

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
    queue_opts_t qo = { .endpoint = endpoint, .heartbeat_ms = 100, .heartbeat_timeout_ms = 400,
                        .worker_wait_ms = 300, .record_path = rec };
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

    worker_opts_t wo = { .endpoint = endpoint, .kind = "echo", .heartbeat_ms = 100,
                         .max_jobs = 4, .handler = echo_handler };
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

int main(void)
{
    zsys_init();
    zsys_handler_set(NULL);
    snprintf(endpoint, sizeof endpoint, "ipc:///tmp/talkback-test-hub-%d.ipc", (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hub_roundtrip),
        cmocka_unit_test(recording),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    zsys_shutdown();
    return rc;
}
