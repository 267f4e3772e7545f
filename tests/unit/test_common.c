/* test_common.c -- conversation ids, container names, the output cap,
 * config parsing. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/convid.h"
#include "common/listen.h"
#include "common/sha256.h"
#include "common/textbuf.h"

static void convid_table(void **state)
{
    (void)state;
    static const struct {
        const char *id;
        convid_err_t want;
    } cases[] = {
        { NULL, CONVID_MISSING },
        { "", CONVID_MISSING },
        { "new", CONVID_RESERVED },
        { "NULL", CONVID_RESERVED },
        { "undefined", CONVID_RESERVED },
        { "{{LIBRECHAT_BODY_CONVERSATIONID}}", CONVID_PLACEHOLDER },
        { "abc{{x", CONVID_PLACEHOLDER },
        { "a b", CONVID_BAD_CHAR },
        { "a/b", CONVID_BAD_CHAR },
        { "é", CONVID_BAD_CHAR },
        { "0f6c4a1e-7b9d-4c2e-9a53-0c1d2e3f4a5b", CONVID_OK },
        { "chat.1:part_2-x", CONVID_OK },
        { "newer", CONVID_OK },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(convid_check(cases[i].id), cases[i].want);
    char long_id[CONVID_MAX + 2];
    memset(long_id, 'a', sizeof long_id);
    long_id[CONVID_MAX] = '\0';
    assert_int_equal(convid_check(long_id), CONVID_OK);
    long_id[CONVID_MAX] = 'a';
    long_id[CONVID_MAX + 1] = '\0';
    assert_int_equal(convid_check(long_id), CONVID_TOO_LONG);
    assert_true(convid_user_ok(""));
    assert_true(convid_user_ok("64f0c0ffee"));
    assert_false(convid_user_ok("{{LIBRECHAT_USER_ID}}"));
    assert_false(convid_user_ok("a b"));
}

static void container_names(void **state)
{
    (void)state;
    char a[CONVID_NAME_MAX], b[CONVID_NAME_MAX];
    convid_container_name("chat:1", a);
    convid_container_name("chat_1", b);
    /* ':' is not allowed in Docker names; the hash keeps the two apart. */
    assert_string_not_equal(a, b);
    assert_memory_equal(a, "talkback-chat_1-", 16);
    assert_int_equal(strlen(a), 9 + 6 + 1 + 16);
    /* The first 64 bits of SHA-256("chat:1"). */
    uint8_t d[SHA256_LEN];
    char hex[65];
    sha256("chat:1", 6, d);
    for (int i = 0; i < 8; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    assert_string_equal(a + 16, hex);
    assert_true(convid_name_is("chat:1", a));
    assert_true(convid_name_is("chat:1", b) == false);
    char slash[CONVID_NAME_MAX + 1] = "/";
    strcat(slash, a);
    assert_true(convid_name_is("chat:1", slash));
    /* The old scheme: 16 hex digits of FNV-1a, still recognised. */
    convid_container_name_v1("chat:1", b);
    assert_int_equal(strlen(b), 9 + 6 + 1 + 16);
    assert_string_not_equal(a, b);
    assert_true(convid_name_is("chat:1", b));
    assert_false(convid_name_is("chat_1", b));
    char long_id[CONVID_MAX + 1];
    memset(long_id, 'z', CONVID_MAX);
    long_id[CONVID_MAX] = '\0';
    convid_container_name(long_id, a);
    assert_int_equal(strlen(a), CONVID_NAME_MAX - 1);
}

/* Two ids that shared a container name under the old scheme (FNV-1a 64
 * over ids whose ':' and '_' Docker names fold together) have two names
 * now. */
/* Two ids with one name under FNV-1a 64 (both "talkback-c_..._-7830d317714a24ed"),
 * found with a distinguished-point search over ids of ':' and '_';
 * tests/integration/names.test.mjs uses them too. */
#define COLLIDE_A "c____:::::::_:___:_::_:_:::__::___::_:___:_:__::_____:__:::_::__:"
#define COLLIDE_B "c__:______:___:_____:_:__::_:___:::::__:__:_::___::_::::_:::::_:_"
static void colliding_ids(void **state)
{
    (void)state;
    char a[CONVID_NAME_MAX], b[CONVID_NAME_MAX];
    convid_container_name_v1(COLLIDE_A, a);
    convid_container_name_v1(COLLIDE_B, b);
    assert_string_not_equal(COLLIDE_A, COLLIDE_B);
    assert_string_equal(a, b); /* the collision the old hash had */
    convid_container_name(COLLIDE_A, a);
    convid_container_name(COLLIDE_B, b);
    assert_string_not_equal(a, b);
    assert_false(convid_name_is(COLLIDE_B, a));
}

/* SHA-256 against FIPS 180-4's examples (one block, two blocks, empty). */
static void sha256_vectors(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } v[] = {
        { "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
        { "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
        { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
        { "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqr"
          "lmnopqrsmnopqrstnopqrstu",
          "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint8_t d[SHA256_LEN];
        char hex[65];
        sha256(v[i].in, strlen(v[i].in), d);
        for (int j = 0; j < SHA256_LEN; j++)
            snprintf(hex + 2 * j, 3, "%02x", d[j]);
        assert_string_equal(hex, v[i].out);
    }
    /* 55, 56 and 64 bytes: the padding's edges. */
    char buf[65];
    memset(buf, 'a', sizeof buf);
    uint8_t d[SHA256_LEN];
    sha256(buf, 55, d);
    assert_int_equal(d[0], 0x9f);
    sha256(buf, 56, d);
    assert_int_equal(d[0], 0xb3);
    sha256(buf, 64, d);
    assert_int_equal(d[0], 0xff);
}

static void capbuf_small_and_big(void **state)
{
    (void)state;
    capbuf_t c;
    textbuf_t t;
    assert_int_equal(capbuf_init(&c, 10), 0);
    capbuf_append(&c, "0123456789", 10);
    textbuf_init(&t);
    capbuf_render(&c, &t);
    assert_string_equal(t.buf, "0123456789");
    assert_int_equal(capbuf_cut(&c), 0);
    textbuf_free(&t);
    /* 26 letters through a 10-byte cap in uneven pieces: head abcde, tail
     * vwxyz, 16 cut. */
    capbuf_free(&c);
    capbuf_init(&c, 10);
    const char *abc = "abcdefghijklmnopqrstuvwxyz";
    size_t pieces[] = { 3, 1, 7, 2, 13 };
    size_t off = 0;
    for (size_t i = 0; i < 5; i++) {
        capbuf_append(&c, abc + off, pieces[i]);
        off += pieces[i];
    }
    assert_int_equal(capbuf_cut(&c), 16);
    textbuf_init(&t);
    capbuf_render(&c, &t);
    assert_string_equal(t.buf,
                        "abcde\n[... 16 bytes cut from the middle of the output ...]\nvwxyz");
    textbuf_free(&t);
    capbuf_free(&c);
    /* Byte at a time. */
    capbuf_init(&c, 6);
    for (size_t i = 0; i < 26; i++)
        capbuf_append(&c, abc + i, 1);
    textbuf_init(&t);
    capbuf_render(&c, &t);
    assert_string_equal(t.buf, "abc\n[... 20 bytes cut from the middle of the output ...]\nxyz");
    textbuf_free(&t);
    capbuf_free(&c);
}

static void textbuf_basics(void **state)
{
    (void)state;
    textbuf_t t;
    textbuf_init(&t);
    textbuf_printf(&t, "%d-%s", 7, "x");
    textbuf_append(&t, "\0y", 2);
    assert_int_equal(t.len, 5);
    size_t len;
    char *s = textbuf_take(&t, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(s, "7-x\0y", 5);
    assert_null(t.buf);
    free(s);
}

static void config_parsers(void **state)
{
    (void)state;
    int64_t v;
    assert_int_equal(config_parse_size("64K", &v), 0);
    assert_int_equal(v, 65536);
    assert_int_equal(config_parse_size("2GiB", &v), 0);
    assert_int_equal(v, 2LL << 30);
    assert_int_equal(config_parse_size("256m", &v), 0);
    assert_int_equal(v, 256LL << 20);
    assert_int_equal(config_parse_size("12", &v), 0);
    assert_int_equal(v, 12);
    assert_int_equal(config_parse_size("x", &v), -1);
    assert_int_equal(config_parse_size("-1", &v), -1);
    assert_int_equal(config_parse_size("5Q", &v), -1);
    assert_int_equal(config_parse_duration("60m", &v), 0);
    assert_int_equal(v, 3600);
    assert_int_equal(config_parse_duration("14d", &v), 0);
    assert_int_equal(v, 14 * 86400);
    assert_int_equal(config_parse_duration("300", &v), 0);
    assert_int_equal(v, 300);
    assert_int_equal(config_parse_duration("3x", &v), -1);
    assert_int_equal(config_set("run_timeout", "10m"), 0);
    assert_int_equal(config_int("run_timeout"), 600);
    assert_int_equal(config_set("run_timeout", "soon"), -1);
    assert_int_equal(config_int("run_timeout"), 600);
    assert_int_equal(config_set("no_such_key", "1"), -1);
    assert_string_equal(config_str("conversation_header"), "X-Conversation-Id");
}

/* The listen forms the gateway and the proxy take, and what they refuse. */
static void listen_addresses(void **state)
{
    (void)state;
    struct sockaddr_storage ss;
    bool lo = false;
    assert_int_equal(listen_parse("127.0.0.1:8080", &ss, &lo), 0);
    assert_int_equal(ss.ss_family, AF_INET);
    assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 8080);
    assert_true(lo);
    assert_int_equal(listen_parse("0.0.0.0:9", &ss, &lo), 0);
    assert_false(lo);
    assert_int_equal(listen_parse(":8081", &ss, &lo), 0);
    assert_int_equal(ss.ss_family, AF_INET); /* no host: IPv4 any */
    assert_false(lo);
    assert_int_equal(listen_parse("8082", &ss, NULL), 0);
    assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 8082);
    assert_int_equal(listen_parse("[::1]:8083", &ss, &lo), 0);
    assert_int_equal(ss.ss_family, AF_INET6);
    assert_true(lo);
    const char *bad[] = { "",     "127.0.0.1:", "[::1]8080",
                          "[::1", "host:port",  "1.2.3.4:123456789012345678",
                          NULL };
    for (size_t i = 0; bad[i]; i++)
        assert_int_not_equal(listen_parse(bad[i], &ss, &lo), 0);
    assert_int_not_equal(listen_parse(NULL, &ss, &lo), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(convid_table),         cmocka_unit_test(container_names),
        cmocka_unit_test(colliding_ids),        cmocka_unit_test(sha256_vectors),
        cmocka_unit_test(capbuf_small_and_big), cmocka_unit_test(textbuf_basics),
        cmocka_unit_test(config_parsers),       cmocka_unit_test(listen_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
