/* test_guard.c -- unit tests of the Docker guard's pure parts: the field
 * folding of Go's JSON decoder, the body checks against the sandbox
 * template (with its StorageOpt size, and the storage probe: bodies
 * built by spec/sandbox.h, as the manager builds them; tests/unit/
 * test_spec.c feeds every kind and mutates every field), the request-head
 * parser and the path rules. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "guard/body.h"
#include "guard/fields.h"
#include "guard/request.h"
#include "guard/rules.h"

static const gtemplate_t tpl = {
    .s = {
        .image = "img:1",
        .network = "net",
        .runtime = "",
        .log_max_size = "1m",
        .memory = 256,
        .memory_swap = 1024,
        .nano_cpus = 1000,
        .cpu_shares = 256,
        .pids_limit = 512,
    },
    .disk_cap = 1 << 30,
};

/* The body the spec builds for b (spec/sandbox.h: what the manager, the
 * pool, the reaper and the probe send) with HOST inserted into its
 * HostConfig and TOP at the top level (each "" or a ",\"Key\":value"
 * fragment): the spec puts HostConfig last. */
static char *spec_body(const spec_body_t *sb, const char *top, const char *host)
{
    static char b[4096];
    json_t *j = spec_create_body(&tpl.s, sb);
    char *s = json_dumps(j, JSON_COMPACT);
    assert_non_null(s);
    size_t n = strlen(s);
    assert_true(n > 2 && s[n - 1] == '}' && s[n - 2] == '}');
    s[n - 2] = '\0';
    snprintf(b, sizeof b, "%s%s}%s}", s, host, top);
    free(s);
    json_decref(j);
    return b;
}

/* The storage probe of sandbox/disk.c. */
static char *probe_body(const char *top, const char *host)
{
    const spec_body_t sb = { .kind = SPEC_PROBE };
    return spec_body(&sb, top, host);
}

/* The manager's sandbox of chat "c" (no agent). */
static char *body(const char *top, const char *host)
{
    const spec_body_t sb = { .kind = SPEC_SANDBOX, .label = { "c", "", "t" } };
    return spec_body(&sb, top, host);
}

/* A tombstone (kept/kept.c). */
static char *tomb_body(const char *top, const char *host)
{
    const spec_body_t sb = { .kind = SPEC_TOMBSTONE, .label = { "c", "r", "1" } };
    return spec_body(&sb, top, host);
}

static int passes(const char *b)
{
    char why[256];
    json_t *j = gbody_create(b, strlen(b), &tpl, why, sizeof why);
    json_decref(j);
    return j != NULL;
}

static void test_fold(void **state)
{
    char out[32];
    (void)state;
    assert_int_equal(fields_fold("PrivIleged", out, sizeof out), 0);
    assert_string_equal(out, "privileged");
    assert_int_equal(fields_fold("Bind\xc5\xbf", out, sizeof out), 0);
    assert_string_equal(out, "binds");
    assert_int_equal(fields_fold("\xe2\x84\xaa", out, sizeof out), 0);
    assert_string_equal(out, "k");
    assert_int_equal(fields_fold("caf\xc3\xa9", out, sizeof out), -1);
}

static void test_template(void **state)
{
    (void)state;
    assert_true(passes(body("", "")));
    assert_false(passes(body("", ",\"Privileged\":true")));
    assert_false(passes(body("", ",\"privileged\":false")));
    assert_false(passes(body("", ",\"Privil\\u0065ged\":true")));
    assert_false(passes(body("", ",\"Bind\xc5\xbf\":[\"/:/h\"]")));
    assert_false(passes(body("", ",\"NetworkMode\":\"host\""))); /* the last one wins */
    assert_false(passes(body("", ",\"memory\":0")));             /* folded duplicate */
    assert_false(passes(body(",\"Image\":\"other\"", "")));
    assert_false(passes(body(",\"Volumes\":{\"/x\":{}}", "")));
    assert_false(passes(body("", ",\"CapAdd\":[\"ALL\"]")));
    assert_false(passes(body("", ",\"SecurityOpt\":[\"seccomp=unconfined\"]")));
    /* The reaper's tombstone (kept/kept.c) passes; with a limit it does not. */
    assert_true(passes(tomb_body("", "")));
    assert_false(passes(tomb_body("", ",\"Privileged\":true")));
    assert_false(passes("[]"));
    assert_false(passes("{"));
}

static void test_rebuilt(void **state)
{
    char why[256];
    (void)state;
    /* Exact duplicates: jansson keeps the last, as Go does, and the rebuilt
     * body has only that one. */
    const char *b = body("", ",\"NetworkMode\":\"net\"");
    json_t *j = gbody_create(b, strlen(b), &tpl, why, sizeof why);
    assert_non_null(j);
    char *s = json_dumps(j, JSON_COMPACT);
    assert_non_null(strstr(s, "\"NetworkMode\":\"net\""));
    assert_null(strstr(strstr(s, "\"NetworkMode\"") + 1, "\"NetworkMode\""));
    free(s);
    json_decref(j);
    const char *nb = "{\"Name\":\"net\",\"Driver\":\"bridge\"}";
    json_t *n = gbody_net_create(nb, strlen(nb), &tpl, why, sizeof why);
    assert_non_null(n);
    assert_string_equal(json_string_value(json_object_get(json_object_get(n, "Options"),
                                                          "com.docker.network.bridge.enable_icc")),
                        "false");
    json_decref(n);
    const char *eb = "{\"Cmd\":[\"id\"],\"Privileged\":true}";
    assert_null(gbody_exec_create(eb, strlen(eb), why, sizeof why));
}

/* The StorageOpt size the rebuilt body of b carries ("" when none). */
static const char *rebuilt_size(const char *b)
{
    static char out[64];
    char why[256];
    json_t *j = gbody_create(b, strlen(b), &tpl, why, sizeof why);
    assert_non_null(j);
    const char *v = json_string_value(
        json_object_get(json_object_get(json_object_get(j, "HostConfig"), "StorageOpt"), "size"));
    snprintf(out, sizeof out, "%s", v ? v : "");
    json_decref(j);
    return out;
}

static void test_storage(void **state)
{
    (void)state;
    assert_string_equal(rebuilt_size(body("", "")), "");
    assert_string_equal(rebuilt_size(body("", ",\"StorageOpt\":{\"size\":\"1073741824\"}")),
                        "1073741824");
    assert_string_equal(rebuilt_size(body("", ",\"StorageOpt\":{\"size\":\"2G\"}")), "2147483648");
    assert_string_equal(rebuilt_size(body("", ",\"storageopt\":{\"size\":\"1gib\"}")),
                        "1073741824");
    assert_string_equal(rebuilt_size(body("", ",\"StorageOpt\":{\"size\":\"1\",\"size\":\"2GB\"}")),
                        "2147483648"); /* the last one wins */
    assert_false(passes(body("", ",\"StorageOpt\":{\"size\":\"2G\",\"size\":\"1\"}")));
    assert_false(
        passes(body("", ",\"StorageOpt\":{\"size\":\"1073741823\"}"))); /* below disk_cap */
    assert_false(passes(body("", ",\"StorageOpt\":{\"size\":\"512M\"}")));
    assert_false(passes(body("", ",\"StorageOpt\":{\"size\":\"1P\"}"))); /* past the bound */
    assert_false(passes(body("", ",\"StorageOpt\":{\"size\":\"99999999999999999999\"}")));
    assert_false(passes(body("", ",\"StorageOpt\":{\"size\":1073741824}"))); /* not a string */
    assert_false(passes(body("", ",\"StorageOpt\":{\"size\":\"2G\",\"dm.basesize\":\"1\"}")));
    assert_false(passes(body("", ",\"StorageOpt\":{\"Size\":\"2G\"}"))); /* a driver folds it */
    assert_false(passes(body("", ",\"StorageOpt\":{\"size\":\"2G\",\"Size\":\"1\"}")));
    assert_false(passes(body("", ",\"StorageOpt\":{}")));
    assert_false(passes(body("", ",\"StorageOpt\":{\"size\":\"1.5G\"}")));
    assert_false(passes(body("", ",\"StorageOpt\":{\"size\":\"2 G\"}")));
    assert_false(passes(body("", ",\"StorageOpt\":{\"size\":\"2G\\u0000\"}")));
    assert_false(passes(body("", ",\"StorageOpt\":{\"size\":\"\"}")));
    assert_false(passes(body("", ",\"StorageOpt\":{\"size\":\"-2G\"}")));
    assert_false(
        passes(body("", ",\"StorageOpt\":{\"size\":\"2G\"},\"storageOpt\":{\"size\":\"2G\"}")));
    assert_false(passes(body("", ",\"StorageOpt\":[\"size=2G\"]")));
}

/* Whether the probe's body passes with member key of object `in` (NULL:
 * the top level) set to v (taken). */
static int probe_with(const char *in, const char *key, json_t *v)
{
    const spec_body_t sb = { .kind = SPEC_PROBE };
    json_t *j = spec_create_body(&tpl.s, &sb);
    json_object_set_new(in ? json_object_get(j, in) : j, key, v);
    char *b = json_dumps(j, JSON_COMPACT);
    int ok = passes(b);
    free(b);
    json_decref(j);
    return ok;
}

static void test_probe(void **state)
{
    (void)state;
    assert_string_equal(rebuilt_size(probe_body("", "")), "");
    assert_string_equal(rebuilt_size(probe_body("", ",\"StorageOpt\":{\"size\":\"1073741824\"}")),
                        "1073741824");
    assert_false(passes(probe_body("", ",\"StorageOpt\":{\"size\":\"1\"}")));
    assert_false(passes(probe_body("", ",\"StorageOpt\":{\"size\":\"2G\",\"x\":\"1\"}")));
    assert_false(passes(probe_body("", ",\"Privileged\":true")));
    assert_false(passes(probe_body("", ",\"Binds\":[\"/:/h\"]")));
    assert_false(passes(probe_body(",\"Entrypoint\":[\"sh\"]", "")));
    assert_false(passes(probe_body(",\"OpenStdin\":true", "")));
    assert_false(probe_with(NULL, "Cmd", json_pack("[s]", "sh")));
    assert_false(probe_with("Labels", SPEC_LABEL_CONV, json_string("c")));
    assert_false(probe_with("HostConfig", "NetworkMode", json_string("net")));
    /* A tombstone takes no StorageOpt. */
    assert_false(passes(tomb_body("", ",\"StorageOpt\":{\"size\":\"2G\"}")));
}

static void test_request(void **state)
{
    char why[256], h[256];
    greq_t r;
    (void)state;
    strcpy(
        h,
        "POST /v1.41/containers/create?name=talkback-x HTTP/1.1\r\nHost: d\r\nContent-Length: 2");
    assert_int_equal(greq_parse(h, strlen(h), &r, why, sizeof why), 0);
    assert_string_equal(r.path, "/v1.41/containers/create");
    assert_string_equal(r.query, "name=talkback-x");
    assert_int_equal(r.content_length, 2);
    strcpy(h, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked");
    assert_int_equal(greq_parse(h, strlen(h), &r, why, sizeof why), -1);
    strcpy(h, "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1");
    assert_int_equal(greq_parse(h, strlen(h), &r, why, sizeof why), -1);
    strcpy(h, "GET / HTTP/1.1\r\n folded: x");
    assert_int_equal(greq_parse(h, strlen(h), &r, why, sizeof why), -1);
    strcpy(h, "GET / HTTP/1.1\nHost: x");
    assert_int_equal(greq_parse(h, strlen(h), &r, why, sizeof why), -1);
}

/* Exec start: never detached (dockerd would keep the connection for more
 * requests after its plain 200). */
static void test_exec_start(void **state)
{
    char why[256];
    (void)state;
    static const char *const ok[] = { "{\"Detach\":false,\"Tty\":false}", "{}", "{\"Tty\":true}" };
    static const char *const bad[] = { "{\"Detach\":true,\"Tty\":false}", "{\"detach\":true}",
                                       "{\"Detach\":false,\"Detach\":true}",
                                       "{\"Det\\u0061ch\":true}", "{\"Detach\":1}" };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        json_t *j = gbody_exec_start(ok[i], strlen(ok[i]), why, sizeof why);
        assert_non_null(j);
        assert_false(json_is_true(json_object_get(j, "Detach")));
        json_decref(j);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_null(gbody_exec_start(bad[i], strlen(bad[i]), why, sizeof why));
}

static void test_rules(void **state)
{
    char why[256];
    groute_t rt;
    (void)state;
    assert_int_equal(
        grules_match("POST", "/v1.41/containers/abc/restart", "net", &rt, why, sizeof why), 0);
    assert_int_equal(rt.target, GT_CONTAINER);
    assert_string_equal(rt.id, "abc");
    /* The paused tier: pause and unpause, of talkback's own sandboxes only
     * (a per-container call: the owner check follows). */
    assert_int_equal(
        grules_match("POST", "/v1.41/containers/abc/pause", "net", &rt, why, sizeof why), 0);
    assert_int_equal(rt.target, GT_CONTAINER);
    assert_int_equal(
        grules_match("POST", "/v1.41/containers/abc/unpause", "net", &rt, why, sizeof why), 0);
    assert_int_equal(rt.target, GT_CONTAINER);
    assert_int_equal(
        grules_match("POST", "/v1.23/containers/abc/start", "net", &rt, why, sizeof why), -1);
    assert_int_equal(grules_match("GET", "/containers/a%2f/json", "net", &rt, why, sizeof why), -1);
    assert_int_equal(grules_match("POST", "/containers/abc/update", "net", &rt, why, sizeof why),
                     -1);
    assert_int_equal(grules_match("GET", "/networks/other", "net", &rt, why, sizeof why), -1);
    assert_int_equal(grules_match("POST", "/networks/net/connect", "net", &rt, why, sizeof why), 0);
    /* A container list is filtered (guard/list.h). */
    assert_int_equal(grules_match("GET", "/v1.41/containers/json", "net", &rt, why, sizeof why), 0);
    assert_int_equal(rt.target, GT_LIST);
    assert_true(grules_create_query_ok("name=talkback-abc"));
    assert_false(grules_create_query_ok("name=other"));
    assert_false(grules_create_query_ok("name=talkback-a&platform=x"));
    assert_true(grules_probe_query_ok("name=talkback-probe-12-1700000000"));
    assert_false(grules_probe_query_ok("name=talkback-abc"));
    assert_false(grules_probe_query_ok("name=talkback-probe-1&x=y"));
    /* A probe may be inspected and removed, nothing else. */
    assert_int_equal(
        grules_match("GET", "/containers/talkback-probe-1-2/json", "net", &rt, why, sizeof why), 0);
    assert_true(rt.probe);
    assert_int_equal(
        grules_match("DELETE", "/containers/talkback-probe-1-2", "net", &rt, why, sizeof why), 0);
    assert_true(rt.probe);
    static const char *const not_probe[][2] = {
        { "POST", "/containers/p/start" },  { "POST", "/containers/p/exec" },
        { "POST", "/containers/p/attach" }, { "PUT", "/containers/p/archive" },
        { "GET", "/containers/p/archive" }, { "POST", "/containers/p/kill" },
    };
    for (size_t i = 0; i < sizeof not_probe / sizeof not_probe[0]; i++) {
        assert_int_equal(
            grules_match(not_probe[i][0], not_probe[i][1], "net", &rt, why, sizeof why), 0);
        assert_false(rt.probe);
    }
}

/* The warm pool's calls: a spare's create (its own labels, its own kind of
 * name), and its claim, a rename of a spare to a chat's name -- nothing
 * else is renamed, and to nothing else. */
static void test_spare(void **state)
{
    char why[256], b[4096];
    groute_t rt;
    (void)state;
    const char *conv =
        "\"talkback.conversation\":\"c\",\"talkback.user\":\"\",\"talkback.created\":\"t\"";
    const char *spare =
        "\"talkback.spare\":\"0123456789abcdef\",\"talkback.pool\":\"fedcba9876543210\","
        "\"talkback.created\":\"t\"";
    snprintf(b, sizeof b, "%s", body("", ""));
    char *at = strstr(b, conv);
    assert_non_null(at);
    char sb[4096];
    snprintf(sb, sizeof sb, "%.*s%s%s", (int)(at - b), b, spare, at + strlen(conv));
    assert_true(passes(sb));
    /* A spare's labels and a chat's together, or a spare's without its pool: refused. */
    snprintf(sb, sizeof sb, "%.*s%s,%s%s", (int)(at - b), b, spare, "\"talkback.user\":\"\"",
             at + strlen(conv));
    assert_false(passes(sb));
    snprintf(sb, sizeof sb, "%.*s%s%s", (int)(at - b), b,
             "\"talkback.spare\":\"0123456789abcdef\",\"talkback.created\":\"t\"",
             at + strlen(conv));
    assert_false(passes(sb));

    /* Names: a spare's is never a chat's, and the other way round. */
    assert_true(grules_spare_name_ok("talkback-spare-0123456789abcdef01234567"));
    assert_false(grules_spare_name_ok("talkback-spare-0123456789abcdef0123456"));
    assert_false(grules_spare_name_ok("talkback-spare-0123456789ABCDEF01234567"));
    assert_false(grules_spare_name_ok("talkback-spare-x-0123456789abcdef"));
    assert_true(grules_chat_name_ok("talkback-it-1-chat-0-0123456789abcdef"));
    assert_true(grules_chat_name_ok("talkback-spare-x-0123456789abcdef"));
    assert_false(grules_chat_name_ok("talkback-spare-0123456789abcdef01234567"));
    assert_false(grules_chat_name_ok("talkback-gone-c-0123456789abcdef"));
    assert_false(grules_chat_name_ok("talkback-probe-c-0123456789abcdef"));
    assert_false(grules_chat_name_ok("talkback-c-0123456789abcdeg"));
    assert_false(grules_chat_name_ok("talkback-c_0123456789abcdef"));
    assert_false(grules_chat_name_ok("other-c-0123456789abcdef"));
    assert_false(grules_chat_name_ok("talkback--0123456789abcdef"));

    /* The rename rule: only with a chat's name, only of a spare. */
    assert_int_equal(
        grules_match("POST", "/v1.41/containers/abc/rename", "net", &rt, why, sizeof why), 0);
    assert_true(rt.spare);
    assert_int_equal(rt.target, GT_CONTAINER);
    assert_true(grules_rename_query_ok("name=talkback-c-0123456789abcdef"));
    assert_false(grules_rename_query_ok("name=talkback-spare-0123456789abcdef01234567"));
    assert_false(grules_rename_query_ok("name=talkback-c-0123456789abcdef&x=1"));
    assert_false(grules_rename_query_ok("name=evil"));
    assert_false(grules_rename_query_ok(""));
    assert_int_equal(grules_match("POST", "/containers/abc/start", "net", &rt, why, sizeof why), 0);
    assert_false(rt.spare);
    assert_int_equal(grules_match("POST", "/containers/abc/update", "net", &rt, why, sizeof why),
                     -1);
    assert_int_equal(grules_match("POST", "/containers/abc/commit", "net", &rt, why, sizeof why),
                     -1);

    /* A create's name fits its labels. */
    assert_true(grules_create_query_fits("name=talkback-spare-0123456789abcdef01234567", true));
    assert_false(grules_create_query_fits("name=talkback-c-0123456789abcdef", true));
    assert_false(grules_create_query_fits("name=talkback-spare-0123456789abcdef01234567", false));
    assert_true(grules_create_query_fits("name=talkback-c-0123456789abcdef", false));

    /* Whose: a spare under its own name, claimed under a chat's; the spare
     * label under any other name is not talkback's. */
    json_t *sl = json_pack("{s:s, s:s, s:s}", "talkback.spare", "0123456789abcdef", "talkback.pool",
                           "p", "talkback.created", "t");
    json_t *cl = json_pack("{s:s}", "talkback.conversation", "c");
    assert_int_equal(grules_owner("/talkback-spare-0123456789abcdef01234567", sl), GOWN_SPARE);
    assert_int_equal(grules_owner("/talkback-c-0123456789abcdef", sl), GOWN_SANDBOX);
    assert_int_equal(grules_owner("/postgres", sl), GOWN_FOREIGN);
    assert_int_equal(grules_owner("/talkback-gone-c-0123456789abcdef", sl), GOWN_FOREIGN);
    assert_int_equal(grules_owner("/talkback-c-0123456789abcdef", cl), GOWN_SANDBOX);
    assert_int_equal(grules_owner("/postgres", cl), GOWN_FOREIGN);
    json_decref(sl);
    json_decref(cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fold),       cmocka_unit_test(test_template),
        cmocka_unit_test(test_rebuilt),    cmocka_unit_test(test_storage),
        cmocka_unit_test(test_probe),      cmocka_unit_test(test_request),
        cmocka_unit_test(test_rules),      cmocka_unit_test(test_spare),
        cmocka_unit_test(test_exec_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
