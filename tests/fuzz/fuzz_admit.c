/* fuzz_admit.c -- libFuzzer harness for the checks of the MCP endpoint's
 * request headers (gateway/admit.c) and talkback-proxy's request-target
 * (proxy/upstream.c, upstream_url).
 *
 * All of them take bytes straight from the network: Authorization and
 * Host header values, and the raw request-target.  Input layout: byte 0
 * picks the check, the rest is the value (cut at its first NUL, as the
 * HTTP server hands it over).  Beyond "no crash, no out-of-bounds read",
 * the harness checks the properties the callers rely on: a token check
 * passes only for "Bearer <exactly the token>"; a Host accepted on a
 * loopback bind with no allowed_hosts is a loopback name; and an upstream
 * URL, when one is made, starts with the root followed by "/".
 *
 * Built only with -DTALKBACK_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt);
 * run by tests/fuzz/run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gateway/admit.h"
#include "gateway/mcp.h"
#include "proxy/upstream.h"

#define FUZZ_TOKEN "0123456789abcdef0123456789abcdef"
#define FUZZ_ROOT  "http://127.0.0.1:8000/api"

static void fuzz_fail(const char *what, const char *input)
{
    fprintf(stderr, "fuzz_admit: %s: \"%s\"\n", what, input);
    abort();
}

static void fuzz_token(const char *v)
{
    bool ok = admit_token_ok(v, FUZZ_TOKEN);
    if (!ok)
        return;
    /* Passing means: "Bearer", spaces, the token, trailing spaces. */
    if (strncasecmp(v, "Bearer ", 7) != 0)
        fuzz_fail("a token passed without the Bearer scheme", v);
    const char *p = v + 7;
    while (*p == ' ')
        p++;
    if (strncmp(p, FUZZ_TOKEN, strlen(FUZZ_TOKEN)) != 0)
        fuzz_fail("a wrong token passed", v);
    for (p += strlen(FUZZ_TOKEN); *p; p++)
        if (*p != ' ')
            fuzz_fail("a longer token passed", v);
}

static void fuzz_host(const char *v)
{
    bool lo = admit_host_ok(v, true, "");
    if (lo && !mcp_host_allowed(v))
        fuzz_fail("a non-loopback Host passed on a loopback bind", v);
    (void)admit_host_ok(v, false, "talkback, other:8080 ,*x");
    (void)admit_host_ok(v, false, v);
}

static void fuzz_url(const char *v)
{
    char *url = NULL;
    upstream_url_err_t e = upstream_url(FUZZ_ROOT, v, &url);
    if (e == UPSTREAM_URL_OK) {
        if (!url || strncmp(url, FUZZ_ROOT "/", strlen(FUZZ_ROOT) + 1) != 0)
            fuzz_fail("an upstream URL left the root", v);
    } else if (url) {
        fuzz_fail("a refused target still gave a URL", v);
    }
    free(url);
    (void)upstream_url_strerror(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *v = malloc(size);
    if (!v)
        return 0;
    memcpy(v, data + 1, size - 1);
    v[size - 1] = '\0';
    (void)admit_bytes_clean((const char *)data + 1, size - 1);
    switch (data[0] % 3) {
    case 0: fuzz_token(v); break;
    case 1: fuzz_host(v); break;
    case 2: fuzz_url(v); break;
    }
    free(v);
    return 0;
}
