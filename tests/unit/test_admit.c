/* test_admit.c -- the MCP endpoint's request checks (gateway/admit.c),
 * its limits table (gateway/limits.c) and the sandbox owner rule
 * (common/convid.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/convid.h"
#include "gateway/admit.h"
#include "gateway/limits.h"

#define TOKEN "0123456789abcdef0123"

static void token_compare(void **state)
{
    (void)state;
    assert_true(admit_token_ok(NULL, NULL));
    assert_true(admit_token_ok(NULL, ""));
    assert_true(admit_token_ok("Bearer " TOKEN, TOKEN));
    assert_true(admit_token_ok("bearer " TOKEN, TOKEN));
    assert_true(admit_token_ok("Bearer   " TOKEN " ", TOKEN));
    assert_false(admit_token_ok(NULL, TOKEN));
    assert_false(admit_token_ok("", TOKEN));
    assert_false(admit_token_ok(TOKEN, TOKEN)); /* no scheme */
    assert_false(admit_token_ok("Basic " TOKEN, TOKEN));
    assert_false(admit_token_ok("Bearer " TOKEN "x", TOKEN));          /* longer */
    assert_false(admit_token_ok("Bearer 0123456789abcdef012", TOKEN)); /* shorter */
    assert_false(admit_token_ok("Bearer 0123456789abcdef0124", TOKEN));
    assert_false(admit_token_ok("Bearer ", TOKEN));
}

static void token_load(void **state)
{
    (void)state;
    char *t = NULL, err[256];
    assert_int_equal(admit_token_load("", "", true, &t, err, sizeof err), 0);
    assert_null(t);
    /* Off loopback a token is required, and the message says how. */
    assert_int_equal(admit_token_load("", "", false, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "auth_token"));
    assert_int_equal(admit_token_load("short", "", true, &t, err, sizeof err), -1);
    assert_int_equal(admit_token_load("has a space in it ok", "", true, &t, err, sizeof err), -1);
    assert_int_equal(admit_token_load(TOKEN, "/x", true, &t, err, sizeof err), -1);
    assert_int_equal(admit_token_load(TOKEN, "", false, &t, err, sizeof err), 0);
    assert_string_equal(t, TOKEN);
    free(t);

    char path[] = "/tmp/test_admit_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, TOKEN "\n", sizeof TOKEN), (ssize_t)sizeof TOKEN);
    close(fd);
    assert_int_equal(admit_token_load("", path, false, &t, err, sizeof err), 0);
    assert_string_equal(t, TOKEN);
    free(t);
    unlink(path);
    assert_int_equal(admit_token_load("", path, false, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, path));
}

static void header_bytes(void **state)
{
    (void)state;
    assert_true(admit_bytes_clean("sec-a", 5));
    assert_true(admit_bytes_clean("a\tb", 3));
    assert_true(admit_bytes_clean("caf\xc3\xa9", 5));
    assert_false(admit_bytes_clean("sec-a\0other", 11));
    assert_false(admit_bytes_clean("a\rb", 3));
    assert_false(admit_bytes_clean("a\nb", 3));
    assert_false(admit_bytes_clean("a\x01", 2));
    assert_false(admit_bytes_clean("a\x7f", 2));
}

static void host_header(void **state)
{
    (void)state;
    /* Loopback names everywhere; nothing else on a loopback bind. */
    assert_true(admit_host_ok(NULL, true, ""));
    assert_true(admit_host_ok("localhost:8080", true, ""));
    assert_true(admit_host_ok("127.0.0.1", true, NULL));
    assert_true(admit_host_ok("[::1]:8080", false, ""));
    assert_false(admit_host_ok("evil.example.com", true, ""));
    assert_false(admit_host_ok("10.0.0.5:8080", true, ""));
    /* Off loopback: IP literals, and names only from allowed_hosts. */
    assert_true(admit_host_ok("10.0.0.5:8080", false, ""));
    assert_true(admit_host_ok("[fd00::5]:8080", false, ""));
    assert_false(admit_host_ok("talkback:8080", false, ""));
    assert_false(admit_host_ok("evil.example.com", false, "talkback"));
    assert_true(admit_host_ok("talkback:8080", false, "talkback"));
    assert_true(admit_host_ok("TalkBack", false, " other , talkback "));
    assert_true(admit_host_ok("talkback:8080", false, "talkback:8080"));
    assert_false(admit_host_ok("talkback:9090", false, "talkback:8080"));
    assert_false(admit_host_ok("talkback", false, "talkback:8080"));
    assert_false(admit_host_ok("talkbackx", false, "talkback"));
    assert_true(admit_host_ok("anything.example", false, "*"));
    assert_false(admit_host_ok("talkback:80x", false, "talkback"));
    assert_false(admit_host_ok("talkback:", false, "talkback"));
    assert_true(admit_host_ok("talkback", true, "talkback"));
}

static void owner_rule(void **state)
{
    (void)state;
    assert_true(convid_owner_ok(NULL, NULL));
    assert_true(convid_owner_ok("", NULL));
    assert_true(convid_owner_ok("", "bob"));
    assert_true(convid_owner_ok("alice", "alice"));
    assert_false(convid_owner_ok("alice", "bob"));
    assert_false(convid_owner_ok("alice", NULL)); /* no user: refused */
    assert_false(convid_owner_ok("alice", ""));
}

static struct sockaddr_in v4(const char *ip, int port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    inet_pton(AF_INET, ip, &a.sin_addr);
    return a;
}

static void limits_clients(void **state)
{
    (void)state;
    struct sockaddr_in a1 = v4("127.0.0.2", 1000), a2 = v4("127.0.0.2", 2000),
                       b = v4("127.0.0.3", 1000);
    assert_true(limits_same_client((struct sockaddr *)&a1, (struct sockaddr *)&a2));
    assert_false(limits_same_client((struct sockaddr *)&a1, (struct sockaddr *)&b));

    limits_opts_t o = { .max_connections = 3, .max_client_connections = 2, .body_budget = 100 };
    limits_t *l = limits_new(&o);
    assert_non_null(l);
    limits_conn_t *c1 = limits_open(l, -1, (struct sockaddr *)&a1);
    limits_conn_t *c2 = limits_open(l, -1, (struct sockaddr *)&a2);
    limits_conn_t *c3 = limits_open(l, -1, (struct sockaddr *)&a1);
    limits_conn_t *c4 = limits_open(l, -1, (struct sockaddr *)&b);
    limits_conn_t *c5 = limits_open(l, -1, (struct sockaddr *)&b);
    assert_int_equal(limits_over(c1), LIMITS_OK);
    assert_int_equal(limits_over(c2), LIMITS_OK);
    assert_int_equal(limits_over(c3), LIMITS_OVER_CLIENT);
    assert_int_equal(limits_over(c4), LIMITS_OK);
    assert_int_equal(limits_over(c5), LIMITS_OVER_TOTAL);
    limits_close(l, &c1);
    assert_null(c1);
    limits_conn_t *c6 = limits_open(l, -1, (struct sockaddr *)&a1);
    assert_int_equal(limits_over(c6), LIMITS_OK); /* a slot came free */

    assert_true(limits_body_take(l, 60));
    assert_false(limits_body_take(l, 41));
    assert_true(limits_body_take(l, 40));
    assert_false(limits_body_take(l, 1));
    limits_body_give(l, 100);
    assert_true(limits_body_take(l, 100));
    limits_body_give(l, 100);
    limits_destroy(&l);
    assert_null(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(token_compare), cmocka_unit_test(token_load),
        cmocka_unit_test(header_bytes),  cmocka_unit_test(host_header),
        cmocka_unit_test(owner_rule),    cmocka_unit_test(limits_clients),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
