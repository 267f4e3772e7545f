/* fuzz_ctl.c -- libFuzzer harness for what the operator's tools read from
 * other machines: a worker's HELLO data folded into hosts and rendered as
 * the hub's `hosts` answer and the gateway's /metrics text (hub/hosts.c,
 * gateway/metrics.c), and talkbackctl's parsing and printing of the
 * `hosts` and `list` answers (ctl/show.c).
 *
 * Input layout: the first byte picks the target (even: a proto frame whose
 * HELLO data is folded and rendered; odd: text parsed as a `hosts` answer
 * when bit 1 is clear, as a `list` answer when set).  What comes out must
 * hold no control byte but tab and newline: it goes to terminals, and to
 * Prometheus, whose text format is line-based.
 *
 * Built only with -DTALKBACK_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt);
 * run by tests/fuzz/run.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/show.h"
#include "gateway/metrics.h"
#include "hub/hosts.h"
#include "proto/proto.h"

/* Crash (so libFuzzer saves the input) on a control byte in t. */
static void check_clean(const textbuf_t *t)
{
    for (size_t i = 0; i < t->len; i++) {
        unsigned char c = (unsigned char)t->buf[i];
        if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
            abort();
    }
}

/* HELLO data of a decoded frame, twice (so a host is met again), into
 * hosts; then the hub's answer and the metrics text. */
static void fuzz_hello(const uint8_t *data, size_t size)
{
    proto_msg_t *m = NULL;
    if (proto_decode(data, size, &m) != PROTO_OK)
        return;
    hosts_t h = { 0 };
    hosts_add(&h, m->kind ? m->kind : "sandbox", &m->data);
    hosts_add(&h, "sandbox", &m->data);
    textbuf_t t;
    textbuf_init(&t);
    hosts_render(&h, &t);
    check_clean(&t);
    /* Every line has the twelve fields of hosts.h. */
    size_t tabs = 0;
    for (size_t i = 0; i < t.len; i++) {
        if (t.buf[i] == '\t')
            tabs++;
        else if (t.buf[i] == '\n') {
            if (tabs != 11)
                abort();
            tabs = 0;
        }
    }
    textbuf_free(&t);
    static metrics_t *mx;
    if (!mx)
        mx = metrics_new();
    metrics_hub_t hub = { .hosts = &h, .queue_depth = 1 };
    textbuf_init(&t);
    metrics_render(mx, &hub, &t);
    check_clean(&t);
    textbuf_free(&t);
    hosts_clear(&h);
    proto_msg_destroy(&m);
}

/* Text as a `hosts` or `list` answer, parsed and printed both ways. */
static void fuzz_show(const uint8_t *data, size_t size, bool list)
{
    show_table_t tab;
    show_table_init(&tab);
    int rc = list ? show_parse_sandboxes(&tab, (const char *)data, size)
                  : show_parse_hosts(&tab, (const char *)data, size);
    if (rc == 0) {
        textbuf_t t;
        textbuf_init(&t);
        if (list)
            show_sandboxes_table(&tab, &t);
        else
            show_hosts_table(&tab, &t);
        check_clean(&t);
        textbuf_free(&t);
        textbuf_init(&t);
        if (list)
            show_sandboxes_json(&tab, &t);
        else
            show_hosts_json(&tab, &t);
        textbuf_free(&t);
    }
    show_table_free(&tab);
}

/* The first byte picks the target (see the top of the file). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        fuzz_show(data + 1, size - 1, (data[0] & 2) != 0);
    else
        fuzz_hello(data + 1, size - 1);
    return 0;
}
