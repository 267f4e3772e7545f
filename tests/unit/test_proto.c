/* test_proto.c -- the wire contract: round trips, hostile frames. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

#include "proto/ops.h"
#include "proto/proto.h"

static void roundtrip_request(void **state)
{
    (void)state;
    proto_msg_t *m = proto_msg_new(PROTO_REQUEST);
    m->id = 42;
    proto_msg_set_kind(m, "sandbox");
    proto_msg_set_name(m, "run");
    proto_msg_set_conv(m, "conv-1");
    proto_msg_set_user(m, "");
    m->deadline_ms = 1700000000123;
    const char bin[] = "a\0b\xff\"'";
    proto_map_set_str(&m->args, "content", bin, sizeof bin - 1);
    proto_map_set_int(&m->args, "timeout", -7);
    proto_map_set_bool(&m->args, "flag", true);

    char *buf;
    size_t len;
    assert_int_equal(proto_encode(m, &buf, &len), PROTO_OK);
    proto_msg_t *d;
    assert_int_equal(proto_decode(buf, len, &d), PROTO_OK);
    assert_int_equal(d->type, PROTO_REQUEST);
    assert_int_equal(d->id, 42);
    assert_string_equal(d->kind, "sandbox");
    assert_string_equal(d->name, "run");
    assert_string_equal(d->conv, "conv-1");
    assert_string_equal(d->user, "");
    assert_int_equal(d->deadline_ms, 1700000000123);
    size_t cl;
    const char *c = proto_map_str(&d->args, "content", &cl);
    assert_int_equal(cl, sizeof bin - 1);
    assert_memory_equal(c, bin, cl);
    assert_int_equal(proto_map_int(&d->args, "timeout", 0), -7);
    assert_true(proto_map_has(&d->args, "flag", PROTO_V_BOOL));
    assert_int_equal(proto_map_int(&d->args, "missing", 99), 99);
    assert_null(proto_map_str(&d->args, "timeout", NULL));
    free(buf);
    proto_msg_destroy(&d);
    proto_msg_destroy(&m);
    assert_null(m);
}

static void roundtrip_reply(void **state)
{
    (void)state;
    proto_msg_t *req = proto_msg_new(PROTO_REQUEST);
    req->id = 7;
    proto_msg_t *r = proto_reply_new(req, PROTO_ST_WORKER_LOST, true, "gone");
    proto_map_set_int(&r->data, "exit_code", 137);
    char *buf;
    size_t len;
    assert_int_equal(proto_encode(r, &buf, &len), PROTO_OK);
    proto_msg_t *d;
    assert_int_equal(proto_decode(buf, len, &d), PROTO_OK);
    assert_int_equal(d->id, 7);
    assert_int_equal(d->status, PROTO_ST_WORKER_LOST);
    assert_true(d->is_error);
    assert_int_equal(d->text_len, 4);
    assert_memory_equal(d->text, "gone", 4);
    assert_int_equal(proto_map_int(&d->data, "exit_code", 0), 137);
    proto_msg_t *dup = proto_msg_dup(d);
    assert_int_equal(dup->text_len, 4);
    assert_int_equal(proto_map_int(&dup->data, "exit_code", 0), 137);
    free(buf);
    proto_msg_destroy(&dup);
    proto_msg_destroy(&d);
    proto_msg_destroy(&r);
    proto_msg_destroy(&req);
}

/* Encode a map by hand to test the decoder's checks. */
static char *pack(size_t *len, int version, int type, bool extra)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, extra ? 3 : 2);
    msgpack_pack_str(&pk, 1);
    msgpack_pack_str_body(&pk, "v", 1);
    msgpack_pack_int(&pk, version);
    msgpack_pack_str(&pk, 1);
    msgpack_pack_str_body(&pk, "t", 1);
    msgpack_pack_int(&pk, type);
    if (extra) {
        msgpack_pack_str(&pk, 6);
        msgpack_pack_str_body(&pk, "future", 6);
        msgpack_pack_array(&pk, 0);
    }
    *len = sb.size;
    return msgpack_sbuffer_release(&sb);
}

static void decode_checks(void **state)
{
    (void)state;
    size_t len;
    proto_msg_t *d;
    char *b = pack(&len, PROTO_VERSION + 1, PROTO_HELLO, false);
    assert_int_equal(proto_decode(b, len, &d), PROTO_EVERSION);
    assert_null(d);
    free(b);
    b = pack(&len, PROTO_VERSION, 99, false);
    assert_int_equal(proto_decode(b, len, &d), PROTO_ETYPE);
    free(b);
    b = pack(&len, PROTO_VERSION, PROTO_HELLO, true); /* unknown key ignored */
    assert_int_equal(proto_decode(b, len, &d), PROTO_OK);
    proto_msg_destroy(&d);
    /* Every truncation of a valid frame is refused, never a crash. */
    proto_msg_t *m = proto_msg_new(PROTO_REQUEST);
    proto_msg_set_conv(m, "abc");
    proto_map_set_cstr(&m->args, "command", "echo hi");
    char *full;
    size_t flen;
    assert_int_equal(proto_encode(m, &full, &flen), PROTO_OK);
    for (size_t cut = 0; cut < flen; cut++) {
        assert_int_not_equal(proto_decode(full, cut, &d), PROTO_OK);
        assert_null(d);
    }
    /* Trailing garbage is refused. */
    char *longer = malloc(flen + 1);
    memcpy(longer, full, flen);
    longer[flen] = 0;
    assert_int_equal(proto_decode(longer, flen + 1, &d), PROTO_EFORMAT);
    free(longer);
    free(full);
    proto_msg_destroy(&m);
    free(b);
    /* Headers claiming huge maps/arrays are refused before any allocation. */
    assert_int_equal(proto_decode("\xdf\x10\x00\x00\x00", 5, &d), PROTO_EFORMAT);
    assert_int_equal(proto_decode("\xdd\x10\x00\x00\x00", 5, &d), PROTO_EFORMAT);
    assert_int_equal(proto_decode("\x81\xa1v\xdc\xff\xff", 6, &d), PROTO_EFORMAT);
    /* Not a map at all. */
    assert_int_equal(proto_decode("\x93\x01\x02\x03", 4, &d), PROTO_EFORMAT);
    assert_int_equal(proto_decode("", 0, &d), PROTO_EFORMAT);
    assert_string_equal(proto_strerror(PROTO_EVERSION), "unsupported protocol version");
}

static void map_replace(void **state)
{
    (void)state;
    proto_map_t m = { 0 };
    proto_map_set_cstr(&m, "k", "one");
    proto_map_set_int(&m, "k", 2);
    assert_int_equal(m.n, 1);
    assert_int_equal(proto_map_int(&m, "k", 0), 2);
    proto_map_clear(&m);
    assert_int_equal(m.n, 0);
}

/* An exec reply's data read once: what is there, and the defaults every
 * reader used for what is not (no reply at all reads as all absent). */
static void exec_reply_read(void **state)
{
    (void)state;
    ops_exec_t x;
    ops_exec_read(NULL, &x);
    assert_false(x.has_exit_code);
    assert_int_equal(x.exit_code, -1);
    assert_int_equal(x.elapsed_ms, -1);
    assert_int_equal(x.cpu_ms, -1);
    assert_int_equal(x.max_rss_kb, -1);
    assert_int_equal(x.cut, 0);
    assert_false(x.timed_out || x.cancelled || x.output_limited);
    assert_null(x.output);
    assert_null(x.err);
    assert_null(x.notice);
    assert_null(x.memory);
    assert_null(x.images);

    proto_msg_t *r = proto_msg_new(PROTO_REPLY);
    assert_non_null(r);
    proto_map_set_int(&r->data, DATA_EXIT_CODE, 137);
    proto_map_set_bool(&r->data, DATA_TIMED_OUT, true);
    proto_map_set_bool(&r->data, DATA_CANCELLED, false);
    proto_map_set_bool(&r->data, DATA_OUTPUT_LIMITED, true);
    proto_map_set_int(&r->data, DATA_CUT, 12);
    proto_map_set_int(&r->data, DATA_ELAPSED_MS, 5);
    proto_map_set_int(&r->data, DATA_CPU_MS, 4);
    proto_map_set_int(&r->data, DATA_MAX_RSS_KB, 3000);
    proto_map_set_str(&r->data, DATA_OUTPUT, "a\0b", 3);
    proto_map_set_cstr(&r->data, DATA_STDERR, "oops");
    proto_map_set_cstr(&r->data, DATA_NOTICE, "woke");
    proto_map_set_cstr(&r->data, DATA_MEMORY, "256 MiB of memory");
    proto_map_set_cstr(&r->data, DATA_IMAGES, "[image]");
    ops_exec_read(r, &x);
    assert_true(x.has_exit_code);
    assert_int_equal(x.exit_code, 137);
    assert_true(x.timed_out);
    assert_false(x.cancelled);
    assert_true(x.output_limited);
    assert_int_equal(x.cut, 12);
    assert_int_equal(x.elapsed_ms, 5);
    assert_int_equal(x.cpu_ms, 4);
    assert_int_equal(x.max_rss_kb, 3000);
    assert_int_equal(x.output_len, 3);
    assert_memory_equal(x.output, "a\0b", 3);
    assert_int_equal(x.err_len, 4);
    assert_string_equal(x.err, "oops");
    assert_string_equal(x.notice, "woke");
    assert_string_equal(x.memory, "256 MiB of memory");
    assert_string_equal(x.images, "[image]");
    /* An exit code sent as a string is no exit code. */
    proto_map_set_cstr(&r->data, DATA_EXIT_CODE, "0");
    ops_exec_read(r, &x);
    assert_false(x.has_exit_code);
    assert_int_equal(x.exit_code, -1);
    proto_msg_destroy(&r);
}

/* HELLO carries the worker's host and capacity in "d"; REQUEST carries
 * an optional target host in "h", absent when not set. */
static void roundtrip_hello_and_host(void **state)
{
    (void)state;
    proto_msg_t *h = proto_msg_new(PROTO_HELLO);
    proto_msg_set_kind(h, "sandbox");
    proto_msg_set_name(h, "sandbox-1");
    proto_map_set_cstr(&h->data, "host", "alpha");
    proto_map_set_cstr(&h->data, "version", "1.2");
    proto_map_set_int(&h->data, "running", 3);
    proto_map_set_int(&h->data, "mem_free_kb", 123456789);
    proto_map_set_bool(&h->data, "draining", true);
    char *buf;
    size_t len;
    assert_int_equal(proto_encode(h, &buf, &len), PROTO_OK);
    proto_msg_t *d;
    assert_int_equal(proto_decode(buf, len, &d), PROTO_OK);
    free(buf);
    assert_int_equal(d->type, PROTO_HELLO);
    assert_string_equal(proto_map_str(&d->data, "host", NULL), "alpha");
    assert_string_equal(proto_map_str(&d->data, "version", NULL), "1.2");
    assert_int_equal(proto_map_int(&d->data, "running", -1), 3);
    assert_int_equal(proto_map_int(&d->data, "mem_free_kb", -1), 123456789);
    assert_true(proto_map_has(&d->data, "draining", PROTO_V_BOOL));
    assert_int_equal(proto_map_int(&d->data, "draining", 0), 1);
    assert_null(d->host);
    proto_msg_destroy(&d);
    proto_msg_destroy(&h);

    proto_msg_t *r = proto_msg_new(PROTO_REQUEST);
    proto_msg_set_kind(r, "sandbox");
    proto_msg_set_name(r, "busy");
    proto_msg_set_host(r, "beta");
    assert_int_equal(proto_encode(r, &buf, &len), PROTO_OK);
    assert_int_equal(proto_decode(buf, len, &d), PROTO_OK);
    assert_string_equal(d->host, "beta");
    proto_msg_t *c = proto_msg_dup(d);
    assert_string_equal(c->host, "beta");
    proto_msg_destroy(&c);
    proto_msg_destroy(&d);
    free(buf);
    proto_msg_destroy(&r);

    /* A host that is not a string, or holds a NUL, is a malformed frame. */
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 3);
    msgpack_pack_str(&pk, 1);
    msgpack_pack_str_body(&pk, "v", 1);
    msgpack_pack_int(&pk, PROTO_VERSION);
    msgpack_pack_str(&pk, 1);
    msgpack_pack_str_body(&pk, "t", 1);
    msgpack_pack_int(&pk, PROTO_REQUEST);
    msgpack_pack_str(&pk, 1);
    msgpack_pack_str_body(&pk, "h", 1);
    msgpack_pack_int(&pk, 5);
    assert_int_equal(proto_decode(sb.data, sb.size, &d), PROTO_EFORMAT);
    msgpack_sbuffer_clear(&sb);
    msgpack_pack_map(&pk, 3);
    msgpack_pack_str(&pk, 1);
    msgpack_pack_str_body(&pk, "v", 1);
    msgpack_pack_int(&pk, PROTO_VERSION);
    msgpack_pack_str(&pk, 1);
    msgpack_pack_str_body(&pk, "t", 1);
    msgpack_pack_int(&pk, PROTO_REQUEST);
    msgpack_pack_str(&pk, 1);
    msgpack_pack_str_body(&pk, "h", 1);
    msgpack_pack_str(&pk, 3);
    msgpack_pack_str_body(&pk, "a\0b", 3);
    assert_int_equal(proto_decode(sb.data, sb.size, &d), PROTO_EFORMAT);
    msgpack_sbuffer_destroy(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(roundtrip_request), cmocka_unit_test(roundtrip_reply),
        cmocka_unit_test(decode_checks),     cmocka_unit_test(map_replace),
        cmocka_unit_test(exec_reply_read),   cmocka_unit_test(roundtrip_hello_and_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
