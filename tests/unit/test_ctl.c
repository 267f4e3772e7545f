/* test_ctl.c -- what operators read: the hub's `hosts` answer
 * (hub/hosts.c), the gateway's /metrics text (gateway/metrics.c) and
 * talkbackctl's parsing and tables (ctl/show.c).  Pure functions, no
 * sockets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/show.h"
#include "gateway/metrics.h"
#include "hub/hosts.h"

/* A sandbox manager's HELLO data. */
static void manager_data(proto_map_t *d, const char *host, int running, int kept, bool draining)
{
    memset(d, 0, sizeof *d);
    proto_map_set_cstr(d, "host", host);
    proto_map_set_cstr(d, "version", "0.1.0");
    proto_map_set_int(d, "running", running);
    proto_map_set_int(d, "kept", kept);
    proto_map_set_int(d, "spares", 0);
    proto_map_set_int(d, "max_running", 100);
    proto_map_set_int(d, "keep_max_count", 50);
    proto_map_set_int(d, "mem_free_kb", 2048);
    proto_map_set_int(d, "disk_free_kb", 1048576);
    proto_map_set_bool(d, "draining", draining);
}

/* Two hosts: beta (a manager, draining, and a reaper) and alpha (a
 * manager and two judges), added out of order; plus a worker that said
 * no host. */
static void two_hosts(hosts_t *h, proto_map_t *a, proto_map_t *b, proto_map_t *j)
{
    memset(h, 0, sizeof *h);
    manager_data(a, "alpha", 3, 2, false);
    manager_data(b, "beta", 1, 7, true);
    memset(j, 0, sizeof *j);
    proto_map_set_cstr(j, "host", "alpha");
    assert_int_equal(hosts_add(h, "sandbox", b), 0);
    assert_int_equal(hosts_add(h, "judge", j), 0);
    assert_int_equal(hosts_add(h, "sandbox", a), 0);
    assert_int_equal(hosts_add(h, "reaper", b), 0);
    assert_int_equal(hosts_add(h, "judge", j), 0);
    assert_int_equal(hosts_add(h, "judge", NULL), 0);
}

static void hosts_grouping(void **state)
{
    (void)state;
    hosts_t h;
    proto_map_t a, b, j;
    two_hosts(&h, &a, &b, &j);
    assert_int_equal(h.n, 3);
    assert_string_equal(h.v[0].name, ""); /* sorted: the unnamed host first */
    assert_string_equal(h.v[1].name, "alpha");
    assert_string_equal(h.v[2].name, "beta");
    assert_int_equal(h.v[1].running, 3);
    assert_false(h.v[1].draining);
    assert_true(h.v[2].draining);
    assert_int_equal(h.v[1].n_kinds, 2);
    assert_string_equal(h.v[1].kinds[0].kind, "judge");
    assert_int_equal(h.v[1].kinds[0].n, 2);

    textbuf_t t;
    textbuf_init(&t);
    hosts_render(&h, &t);
    assert_non_null(strstr(t.buf,
                           "host=alpha\tversion=0.1.0\trunning=3\tkept=2\tspares=0\tpaused=0\t"
                           "max_running=100\tkeep_max_count=50\tmem_free_kb=2048\t"
                           "disk_free_kb=1048576\tdraining=no\tworkers=judge:2,sandbox:1\n"));
    assert_non_null(strstr(t.buf, "host=beta\t"));
    assert_non_null(strstr(t.buf, "draining=yes\tworkers=reaper:1,sandbox:1\n"));
    /* No manager on it: every manager field is "-". */
    assert_non_null(
        strstr(t.buf, "host=-\tversion=-\trunning=-\tkept=-\tspares=-\tpaused=-\tmax_running=-"));
    textbuf_free(&t);

    /* The hub's answer to hosts (what else it serves: hub/queue.c). */
    proto_msg_t *req = proto_msg_new(PROTO_REQUEST);
    proto_msg_set_kind(req, "hub");
    proto_msg_set_name(req, "hosts");
    proto_msg_t *r = hosts_answer(req, &h);
    assert_int_equal(r->status, PROTO_ST_OK);
    assert_false(r->is_error);
    assert_non_null(strstr(r->text, "host=beta"));
    proto_msg_destroy(&r);
    proto_msg_destroy(&req);
    hosts_clear(&h);
    proto_map_clear(&a);
    proto_map_clear(&b);
    proto_map_clear(&j);
}

static void hosts_hostile_names(void **state)
{
    (void)state;
    char out[HOSTS_NAME_MAX + 1];
    hosts_clean_name("a\tb=c\nd\"e\\f,g:h i\x01\xff", 19, out, sizeof out);
    assert_string_equal(out, "a?b?c?d?e?f?g?h?i??");
    char longname[200];
    memset(longname, 'x', sizeof longname);
    hosts_clean_name(longname, sizeof longname, out, sizeof out);
    assert_int_equal(strlen(out), HOSTS_NAME_MAX);

    hosts_t h = { 0 };
    proto_map_t d = { 0 };
    proto_map_set_str(&d, "host", "evil\n# TYPE x counter", 21);
    proto_map_set_cstr(&d, "running", "not a number");
    assert_int_equal(hosts_add(&h, "sandbox", &d), 0);
    textbuf_t t;
    textbuf_init(&t);
    hosts_render(&h, &t);
    assert_non_null(strstr(t.buf, "host=evil?#?TYPE?x?counter\t"));
    assert_ptr_equal(strchr(t.buf, '\n'), t.buf + t.len - 1); /* one line */
    textbuf_free(&t);
    hosts_clear(&h);
    proto_map_clear(&d);
}

/* Every line of a text exposition is a comment (# HELP / # TYPE) or a
 * sample `name{label="value",...} number`. */
static void assert_exposition(const char *text)
{
    regex_t sample, comment;
    assert_int_equal(regcomp(&sample,
                             "^[a-zA-Z_:][a-zA-Z0-9_:]*"
                             "(\\{[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"\\\\\n]*\""
                             "(,[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"\\\\\n]*\")*\\})? "
                             "[-+]?([0-9]+(\\.[0-9]+)?|\\+Inf)$",
                             REG_EXTENDED | REG_NOSUB),
                     0);
    assert_int_equal(
        regcomp(&comment, "^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$", REG_EXTENDED | REG_NOSUB),
        0);
    char *copy = strdup(text);
    assert_true(strlen(text) > 0 && text[strlen(text) - 1] == '\n');
    for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (regexec(&sample, line, 0, NULL, 0) != 0 && regexec(&comment, line, 0, NULL, 0) != 0)
            fail_msg("not a line of the text format: %s", line);
    }
    free(copy);
    regfree(&sample);
    regfree(&comment);
}

static void metrics_text(void **state)
{
    (void)state;
    metrics_t *m = metrics_new();
    const tools_def_t *run = tools_find("run");
    assert_non_null(run);
    metrics_call(m, run, METRICS_OK, 3);             /* le 0.005 */
    metrics_call(m, run, METRICS_OK, 700);           /* le 1 */
    metrics_call(m, run, METRICS_IS_ERROR, 4000000); /* past every bound: +Inf */
    metrics_call(m, run, METRICS_N_OUTCOMES, 1);     /* not counted */
    metrics_call(m, NULL, METRICS_OK, 1);            /* not counted */
    metrics_request(m, ERA_MODERN);

    hosts_t h;
    proto_map_t a, b, j;
    two_hosts(&h, &a, &b, &j);
    metrics_hub_t hub = { .hosts = &h, .queue_depth = 4 };
    textbuf_t t;
    textbuf_init(&t);
    metrics_render(m, &hub, &t);
    assert_exposition(t.buf);
    assert_non_null(strstr(t.buf, "\ntalkback_calls_total{tool=\"run\",outcome=\"ok\"} 2\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_calls_total{tool=\"run\",outcome=\"error\"} 1\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_calls_total{tool=\"run_code\",outcome=\"ok\"} 0\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_mcp_requests_total{era=\"modern\"} 1\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_mcp_requests_total{era=\"legacy\"} 0\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_call_seconds_bucket{tool=\"run\",le=\"0.005\"} 1\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_call_seconds_bucket{tool=\"run\",le=\"0.5\"} 1\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_call_seconds_bucket{tool=\"run\",le=\"1\"} 2\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_call_seconds_bucket{tool=\"run\",le=\"1800\"} 2\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_call_seconds_bucket{tool=\"run\",le=\"+Inf\"} 3\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_call_seconds_count{tool=\"run\"} 3\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_call_seconds_sum{tool=\"run\"} 4000.703000\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_workers{kind=\"judge\",host=\"alpha\"} 2\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_workers{kind=\"judge\",host=\"\"} 1\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_sandboxes{state=\"kept\",host=\"beta\"} 7\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_sandboxes{state=\"spare\",host=\"alpha\"} 0\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_hub_queue_depth 4\n"));
    assert_non_null(strstr(t.buf, "\ntalkback_hosts_draining 1\n"));
    assert_string_equal(metrics_outcome_name(METRICS_CLIENT_GONE), "client_gone");
    textbuf_free(&t);

    /* An empty hub still renders every family. */
    hosts_t none = { 0 };
    metrics_hub_t empty = { .hosts = &none };
    textbuf_init(&t);
    metrics_render(m, &empty, &t);
    assert_exposition(t.buf);
    assert_non_null(strstr(t.buf, "# TYPE talkback_workers gauge\n"));
    textbuf_free(&t);

    proto_msg_t *r = proto_msg_new(PROTO_REPLY);
    r->status = PROTO_ST_NO_WORKER;
    assert_int_equal(metrics_outcome_of(r), METRICS_NO_WORKER);
    r->status = PROTO_ST_OK;
    r->is_error = true;
    assert_int_equal(metrics_outcome_of(r), METRICS_IS_ERROR);
    proto_msg_destroy(&r);
    hosts_clear(&h);
    proto_map_clear(&a);
    proto_map_clear(&b);
    proto_map_clear(&j);
    metrics_destroy(&m);
    assert_null(m);
}

static void show_hosts(void **state)
{
    (void)state;
    const char text[] =
        "host=alpha\tversion=0.1.0\trunning=3\tkept=2\tspares=0\tpaused=4\tmax_running=100\t"
        "keep_max_count=50\tmem_free_kb=2048\tdisk_free_kb=1048576\tdraining=no\t"
        "workers=judge:2,sandbox:1\n"
        "host=gamma\tversion=-\trunning=-\tkept=-\tspares=-\tmax_running=-\tkeep_max_count=-\t"
        "mem_free_kb=-\tdisk_free_kb=-\tdraining=-\tworkers=judge:1\n"
        "garbage without fields\n";
    show_table_t t;
    show_table_init(&t);
    assert_int_equal(show_parse_hosts(&t, text, strlen(text)), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.skipped, 1);
    assert_string_equal(show_get(&t.rows[0], "workers"), "judge:2,sandbox:1");
    textbuf_t out;
    textbuf_init(&out);
    show_hosts_table(&t, &out);
    assert_non_null(strstr(out.buf, "HOST   VERSION  RUNNING  KEPT  SPARES  MEM FREE  DISK FREE  "
                                    "DRAINING  WORKERS\n"));
    assert_non_null(strstr(out.buf, "\nalpha  0.1.0    3/100    2/50  0       2.0M      1.0G       "
                                    "no        judge:2,sandbox:1\n"));
    assert_non_null(strstr(out.buf, "\ngamma  -        -        -     -       -         -          "
                                    "-         judge:1\n"));
    textbuf_free(&out);
    textbuf_init(&out);
    show_hosts_json(&t, &out);
    assert_non_null(strstr(out.buf, "\"running\": 3"));
    assert_non_null(strstr(out.buf, "\"paused\": 4"));
    assert_non_null(strstr(out.buf, "\"draining\": false"));
    assert_non_null(strstr(out.buf, "\"version\": \"0.1.0\""));
    assert_non_null(strstr(out.buf, "\"max_running\": null"));
    textbuf_free(&out);
    show_table_free(&t);
}

static void show_sandboxes(void **state)
{
    (void)state;
    const char a[] = "chat-1\tuser-1\talpha\trunning\t65\t1536\n"
                     "chat-2\t\talpha\tstopped\t93784\t3435973837\n"
                     "chat-3\ttoo\tfew\tfields\n";
    const char b[] = "chat-\x1b[2J\tu\tbeta\trunning\t7\t10\n";
    show_table_t t;
    show_table_init(&t);
    assert_int_equal(show_parse_sandboxes(&t, a, strlen(a)), 0);
    assert_int_equal(show_parse_sandboxes(&t, b, strlen(b)), 0);
    assert_int_equal(t.n, 3);
    assert_int_equal(t.skipped, 1);
    textbuf_t out;
    textbuf_init(&out);
    show_sandboxes_table(&t, &out);
    assert_non_null(strstr(out.buf, "CONVERSATION  USER    HOST   STATE    IDLE  DISK\n"));
    assert_non_null(strstr(out.buf, "\nchat-1        user-1  alpha  running  1m5s  1.5K\n"));
    assert_non_null(strstr(out.buf, "\nchat-2        -       alpha  stopped  1d2h  3.2G\n"));
    assert_non_null(strstr(out.buf, "\nchat-?[2J     u       beta   running  7s    10B\n"));
    assert_null(strchr(out.buf, 0x1b)); /* no escape reaches the terminal */
    textbuf_free(&out);
    textbuf_init(&out);
    show_sandboxes_json(&t, &out);
    assert_non_null(strstr(out.buf, "\"idle_seconds\": 93784"));
    assert_non_null(strstr(out.buf, "\"disk_bytes\": 3435973837"));
    assert_non_null(strstr(out.buf, "\"user\": \"\""));
    textbuf_free(&out);
    show_table_free(&t);

    char s[32];
    show_duration("3725", s, sizeof s);
    assert_string_equal(s, "1h2m");
    show_duration("x", s, sizeof s);
    assert_string_equal(s, "-");
    show_bytes("-5", s, sizeof s);
    assert_string_equal(s, "-");
    show_bytes("20971520", s, sizeof s);
    assert_string_equal(s, "20M");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hosts_grouping), cmocka_unit_test(hosts_hostile_names),
        cmocka_unit_test(metrics_text),   cmocka_unit_test(show_hosts),
        cmocka_unit_test(show_sandboxes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
