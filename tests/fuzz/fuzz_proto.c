/* fuzz_proto.c -- libFuzzer harness for proto_decode (proto/proto.h).
 *
 * proto_decode reads every ZeroMQ frame that reaches a talkback process:
 * the hub decodes what workers send and workers decode what the hub sends,
 * so a hostile or corrupt peer must never make it read out of bounds, leak
 * or crash.  The harness decodes the input as one frame; when that works it
 * also checks the round trip: the decoded message encodes, the encoding
 * decodes again, and encoding that second message gives the same bytes
 * (proto_encode is deterministic, so any difference means the decoder and
 * the encoder disagree about a field).  proto_msg_dup is exercised on the
 * way.  A frame that declares a huge array or map makes msgpack-c try to
 * allocate room for all of it before reading it (see tests/fuzz/run for
 * ASAN_OPTIONS that let such a run go on past one).
 *
 * Built only with -DTALKBACK_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt);
 * run by tests/fuzz/run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

static void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_proto: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    proto_msg_t *m = NULL;
    if (proto_decode(data, size, &m) != PROTO_OK)
        return 0;
    if (!m)
        fuzz_fail("proto_decode returned PROTO_OK without a message");

    /* Touch every string so ASan sees reads of their full length. */
    volatile size_t sink = 0;
    if (m->kind)
        sink += strlen(m->kind);
    if (m->name)
        sink += strlen(m->name);
    if (m->conv)
        sink += strlen(m->conv);
    if (m->user)
        sink += strlen(m->user);
    if (m->host)
        sink += strlen(m->host);
    if (m->text && m->text_len)
        sink += (unsigned char)m->text[m->text_len - 1];
    for (size_t i = 0; i < m->args.n; i++) {
        sink += strlen(m->args.kv[i].key);
        if (m->args.kv[i].type == PROTO_V_STR && m->args.kv[i].len)
            sink += (unsigned char)m->args.kv[i].s[m->args.kv[i].len - 1];
    }
    for (size_t i = 0; i < m->data.n; i++)
        sink += strlen(m->data.kv[i].key);
    (void)sink;

    proto_msg_t *copy = proto_msg_dup(m);
    if (!copy)
        fuzz_fail("proto_msg_dup failed");

    char *enc1 = NULL, *enc2 = NULL;
    size_t len1 = 0, len2 = 0;
    if (proto_encode(copy, &enc1, &len1) != PROTO_OK)
        fuzz_fail("a decoded message does not encode");
    proto_msg_t *again = NULL;
    proto_err_t e = proto_decode(enc1, len1, &again);
    if (e != PROTO_OK) {
        fprintf(stderr, "fuzz_proto: re-decode: %s\n", proto_strerror(e));
        fuzz_fail("the encoding of a decoded message does not decode");
    }
    if (proto_encode(again, &enc2, &len2) != PROTO_OK)
        fuzz_fail("a re-decoded message does not encode");
    if (len1 != len2 || memcmp(enc1, enc2, len1) != 0)
        fuzz_fail("encode(decode(encode(m))) differs from encode(m)");
    /* Status and is_error travel only in replies: a decoder may read them
     * from any frame, the encoder writes them for PROTO_REPLY alone. */
    if (again->type != m->type || again->id != m->id || again->deadline_ms != m->deadline_ms ||
        again->args.n != m->args.n || again->data.n != m->data.n ||
        again->text_len != m->text_len || again->n_images != m->n_images ||
        (m->type == PROTO_REPLY && (again->status != m->status || again->is_error != m->is_error)))
        fuzz_fail("a field changed across encode and decode");

    free(enc1);
    free(enc2);
    proto_msg_destroy(&again);
    proto_msg_destroy(&copy);
    proto_msg_destroy(&m);
    return 0;
}
