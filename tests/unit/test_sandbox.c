/* test_sandbox.c -- pure parts of the sandbox manager: write_file path
 * resolution, human ages, the warm pool's hashes, and whose a claimed spare
 * is (claim records in a temporary state_dir). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kept/claim.h"
#include "kept/kept.h"
#include "sandbox/cache.h"
#include "sandbox/manager.h"
#include "sandbox/pool.h"

static void paths(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        const char *want;
    } cases[] = {
        { "main.py", "/work/main.py" },
        { "src/app.js", "/work/src/app.js" },
        { "./a//b/./c.txt", "/work/a/b/c.txt" },
        { "../etc/hosts", "/etc/hosts" },
        { "../../../../x", "/x" },
        { "/tmp/x", "/tmp/x" },
        { "/a/b/../c", "/a/c" },
        { "//srv//shared/f", "/srv/shared/f" },
        { "/", NULL },
        { ".", NULL },
        { "..", NULL },
        { "", NULL },
        { "dir/", NULL },
        { "/..", NULL },
    };
    char out[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = manager_resolve_path(cases[i].in, strlen(cases[i].in), out, sizeof out);
        if (cases[i].want) {
            assert_int_equal(rc, 0);
            assert_string_equal(out, cases[i].want);
        } else {
            assert_int_equal(rc, -1);
        }
    }
    assert_int_equal(manager_resolve_path("a\0b", 3, out, sizeof out), -1);
    char tiny[8];
    assert_int_equal(manager_resolve_path("longer-than-eight", 17, tiny, sizeof tiny), -1);
    /* ".work" stays itself: ".." lookalikes are names. */
    assert_int_equal(manager_resolve_path("...", 3, out, sizeof out), 0);
    assert_string_equal(out, "/work/...");
}

static void ages(void **state)
{
    (void)state;
    char out[64];
    kept_human_age(1, out, sizeof out);
    assert_string_equal(out, "1 second");
    kept_human_age(59, out, sizeof out);
    assert_string_equal(out, "59 seconds");
    kept_human_age(180, out, sizeof out);
    assert_string_equal(out, "3 minutes");
    kept_human_age(3600, out, sizeof out);
    assert_string_equal(out, "1 hour");
    kept_human_age(5 * 3600 + 1000, out, sizeof out);
    assert_string_equal(out, "5 hours");
    kept_human_age(2 * 86400 + 50, out, sizeof out);
    assert_string_equal(out, "2 days");
    kept_human_age(-5, out, sizeof out);
    assert_string_equal(out, "0 seconds");
}

/* The chat -> container cache: replace, drop, and the bound (oldest out). */
static void cache(void **state)
{
    (void)state;
    cache_t *c = cache_new(3);
    assert_non_null(c);
    char id[72];
    char *user = NULL;
    assert_false(cache_get(c, "a", id, NULL));
    cache_put(c, "a", "id-a", "alice");
    assert_true(cache_get(c, "a", id, &user));
    assert_string_equal(id, "id-a");
    assert_string_equal(user, "alice");
    free(user);
    cache_put(c, "a", "id-a2", NULL);
    assert_true(cache_get(c, "a", id, &user));
    assert_string_equal(id, "id-a2");
    assert_string_equal(user, "");
    free(user);
    cache_put(c, "b", "id-b", "bob");
    cache_put(c, "c", "id-c", "carol");
    cache_put(c, "d", "id-d", "dave");
    assert_false(cache_get(c, "a", id, NULL)); /* the oldest went */
    assert_true(cache_get(c, "b", id, NULL));
    assert_true(cache_get(c, "d", id, NULL));
    cache_drop(c, "b");
    assert_false(cache_get(c, "b", id, NULL));
    cache_drop(c, "nobody");
    cache_destroy(&c);
    assert_null(c);
}

/* The template hash ignores the labels and follows everything else and
 * the agent version; the scope hash is the one tests/integration's
 * harness computes. */
static void pool_hashes(void **state)
{
    (void)state;
    char a[17], b[17], c[17], d[17];
    json_t *t = json_pack("{s:s, s:{s:s}, s:{s:I}}", "Image", "img", "Labels",
                          "talkback.conversation", "x", "HostConfig", "Memory", (json_int_t)1024);
    pool_template_hash(t, "v1", a);
    json_object_set_new(t, "Labels", json_pack("{s:s}", "talkback.spare", "y"));
    pool_template_hash(t, "v1", b);
    assert_string_equal(a, b);
    pool_template_hash(t, "v2", c);
    assert_string_not_equal(a, c);
    json_object_set_new(json_object_get(t, "HostConfig"), "Memory", json_integer(2048));
    pool_template_hash(t, "v1", d);
    assert_string_not_equal(a, d);
    json_decref(t);
    pool_scope_hash("/tmp/s", a);
    pool_scope_hash("/tmp/t", b);
    assert_int_equal(strlen(a), 16);
    assert_string_not_equal(a, b);
}

/* A spare is the chat's only when its record names the chat whose name it
 * carries; records are exclusive and checked when read. */
static void claims(void **state)
{
    (void)state;
    char dir[] = "/tmp/talkback-unit-claim-XXXXXX";
    assert_non_null(mkdtemp(dir));
    kept_t *kept = kept_new(dir);
    assert_non_null(kept);
    const char *id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    char conv[CONVID_MAX + 1], user[CLAIM_USER_MAX + 1], name[CONVID_NAME_MAX + 1];
    json_t *spare =
        json_pack("{s:s, s:s}", "talkback.spare", "0123456789abcdef", "talkback.pool", "p");
    assert_true(claim_spare_name_ok("/talkback-spare-0123456789abcdef01234567"));
    assert_false(claim_spare_name_ok("talkback-spare-x-0123456789abcdef"));
    /* Unclaimed: nobody's. */
    assert_true(claim_is_unclaimed(spare, "/talkback-spare-0123456789abcdef01234567"));
    assert_false(
        claim_identity(kept, spare, id, "/talkback-spare-0123456789abcdef01234567", conv, user));
    assert_int_equal(claim_record_set(kept, id, "chat-1", "u1"), 0);
    assert_int_equal(claim_record_set(kept, id, "chat-2", "u2"), -1); /* exclusive */
    assert_int_equal(claim_record_get(kept, id, conv, user), 0);
    assert_string_equal(conv, "chat-1");
    assert_string_equal(user, "u1");
    /* Still under its spare name (a claim under way): nobody's. */
    assert_false(
        claim_identity(kept, spare, id, "/talkback-spare-0123456789abcdef01234567", conv, user));
    name[0] = '/';
    convid_container_name("chat-1", name + 1);
    assert_true(claim_identity(kept, spare, id, name, conv, user));
    assert_string_equal(conv, "chat-1");
    convid_container_name("chat-2", name + 1);
    assert_false(
        claim_identity(kept, spare, id, name, conv, user)); /* the record names another chat */
    /* Labels say it when there are some. */
    json_t *lab = json_pack("{s:s, s:s}", "talkback.conversation", "c3", "talkback.user", "u3");
    assert_true(claim_identity(kept, lab, id, "/whatever", conv, user));
    assert_string_equal(conv, "c3");
    assert_string_equal(user, "u3");
    /* A record that is not one: refused. */
    char path[600];
    snprintf(path, sizeof path, "%s/%s.claim", dir, id);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("new\nu\n", f);
    fclose(f);
    assert_int_equal(claim_record_get(kept, id, conv, user), -1);
    claim_record_drop(kept, id);
    assert_int_equal(claim_record_get(kept, id, conv, user), -1);
    assert_int_equal(claim_record_set(kept, "../x", "chat-1", ""), -1);
    /* The agent record. */
    assert_false(kept_agent_is(kept, id, "v1"));
    assert_int_equal(kept_agent_set(kept, id, "v1"), 0);
    assert_true(kept_agent_is(kept, id, "v1"));
    assert_false(kept_agent_is(kept, id, "v2"));
    kept_record_drop(kept, id);
    assert_false(kept_agent_is(kept, id, "v1"));
    json_decref(spare);
    json_decref(lab);
    kept_destroy(&kept);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(paths),       cmocka_unit_test(cache),  cmocka_unit_test(ages),
        cmocka_unit_test(pool_hashes), cmocka_unit_test(claims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
