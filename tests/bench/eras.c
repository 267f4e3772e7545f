/* eras.c -- talkback-bench --eras: run("true") over both MCP eras.
 *
 * One chat, one warm sandbox, calls interleaved so load on the machine
 * falls on both alike: a legacy tools/call (no _meta, as LibreChat sends
 * it) and a 2026-07-28 one (the _meta envelope, MCP-Protocol-Version,
 * Mcp-Method, Mcp-Name), each answered as JSON and as SSE.  Prints the
 * p50 and p99 of each and the modern/legacy ratio of the p50s: the new
 * era must not cost more.  The chat is reset at the end.
 */
#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/textbuf.h"
#include "tests/bench/bench.h"

#define ERAS_META                                                                                  \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                       \
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"talkback-bench\",\"version\":\"1\"},"      \
    "\"io.modelcontextprotocol/clientCapabilities\":{}}"

static size_t eras_sink(char *p, size_t s, size_t n, void *ud)
{
    textbuf_append(ud, p, s * n);
    return s * n;
}

/* One run("true") at u in conv: modern or legacy, SSE or JSON.  The time
 * it took in microseconds, or -1 when the answer is not `$ true`. */
static int64_t eras_call(const char *u, const char *conv, bool modern, bool sse)
{
    char body[512], hdr[256];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"run\",\"arguments\":{\"command\":\"true\"}%s%s}}",
             modern ? "," : "", modern ? ERAS_META : "");
    struct curl_slist *h = NULL;
    snprintf(hdr, sizeof hdr, "X-Conversation-Id: %s", conv);
    h = curl_slist_append(h, hdr);
    h = curl_slist_append(h, "Content-Type: application/json");
    h = curl_slist_append(h, sse ? "Accept: application/json, text/event-stream"
                                 : "Accept: application/json");
    if (modern) {
        h = curl_slist_append(h, "MCP-Protocol-Version: 2026-07-28");
        h = curl_slist_append(h, "Mcp-Method: tools/call");
        h = curl_slist_append(h, "Mcp-Name: run");
    }
    textbuf_t out;
    textbuf_init(&out);
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, u);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, eras_sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    int64_t t0 = bench_now_us();
    CURLcode rc = curl_easy_perform(c);
    int64_t us = bench_now_us() - t0;
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    bool ok = rc == CURLE_OK && out.buf && strstr(out.buf, "\"$ true\\n\"") &&
              (!modern || strstr(out.buf, "\"resultType\":\"complete\""));
    textbuf_free(&out);
    return ok ? us : -1;
}

void bench_eras(const char *u, int n)
{
    static const struct {
        const char *label;
        bool modern, sse;
    } kinds[] = {
        { "2025-11-25 (legacy), JSON", false, false },
        { "2026-07-28 (modern), JSON", true, false },
        { "2025-11-25 (legacy), SSE ", false, true },
        { "2026-07-28 (modern), SSE ", true, true },
    };
    enum { K = sizeof kinds / sizeof kinds[0] };
    char conv[64];
    snprintf(conv, sizeof conv, "bench-eras-%d", (int)getpid());
    int64_t *v[K];
    int got[K] = { 0 }, bad = 0;
    for (int k = 0; k < K; k++)
        v[k] = calloc((size_t)n, sizeof *v[k]);
    for (int i = 0; i < 5; i++) /* the sandbox exists and is warm */
        for (int k = 0; k < K; k++)
            (void)eras_call(u, conv, kinds[k].modern, kinds[k].sse);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < K; k++) {
            int64_t us = eras_call(u, conv, kinds[k].modern, kinds[k].sse);
            if (us < 0)
                bad++;
            else if (v[k])
                v[k][got[k]++] = us;
        }
    printf("run(\"true\") over both MCP eras, one warm chat, %d calls each, interleaved:\n", n);
    double p50[K];
    for (int k = 0; k < K; k++) {
        p50[k] = got[k] > 0 ? bench_pct(v[k], got[k], 0.5) : 0;
        double p99 = got[k] > 0 ? bench_pct(v[k], got[k], 0.99) : 0;
        printf("  %s  p50 %7.2f ms  p99 %7.2f ms\n", kinds[k].label, p50[k], p99);
        free(v[k]);
    }
    if (p50[0] > 0 && p50[2] > 0)
        printf("  modern / legacy p50: JSON %.3f, SSE %.3f\n", p50[1] / p50[0], p50[3] / p50[2]);
    if (bad)
        printf("  %d calls did not answer `$ true` (not counted)\n", bad);
    free(bench_call(u, conv, "reset", json_object(), NULL));
}
