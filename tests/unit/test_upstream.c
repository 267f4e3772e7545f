/* test_upstream.c -- talkback-proxy's upstream URL (proxy/upstream.c,
 * upstream_url): only origin-form targets, always on the configured root. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "proxy/upstream.h"

static void url_of(const char *root, const char *target, upstream_url_err_t want, const char *url)
{
    char *out = NULL;
    assert_int_equal(upstream_url(root, target, &out), want);
    if (url)
        assert_string_equal(out, url);
    else
        assert_null(out);
    free(out);
}

static void origin_form_only(void **state)
{
    (void)state;
    const char *r = "http://127.0.0.1:8000";
    url_of(r, "/v1/chat/completions", UPSTREAM_URL_OK, "http://127.0.0.1:8000/v1/chat/completions");
    url_of(r, "/v1/models?a=1&b=%20", UPSTREAM_URL_OK, "http://127.0.0.1:8000/v1/models?a=1&b=%20");
    url_of(r, "//other/x", UPSTREAM_URL_OK, "http://127.0.0.1:8000//other/x");
    url_of(r, "@127.0.0.1:9/x", UPSTREAM_URL_NOT_ORIGIN, NULL);
    url_of(r, "http://127.0.0.1:9/x", UPSTREAM_URL_NOT_ORIGIN, NULL);
    url_of(r, "127.0.0.1:9", UPSTREAM_URL_NOT_ORIGIN, NULL);
    url_of(r, "*", UPSTREAM_URL_NOT_ORIGIN, NULL);
    url_of(r, "", UPSTREAM_URL_NOT_ORIGIN, NULL);
    url_of(r, NULL, UPSTREAM_URL_NOT_ORIGIN, NULL);
    url_of(r, "/a#frag", UPSTREAM_URL_BAD_BYTE, NULL);
    url_of(r, "/a b", UPSTREAM_URL_BAD_BYTE, NULL);
    url_of(r, "/a\\b", UPSTREAM_URL_BAD_BYTE, NULL);
    url_of(r, "/a\x01", UPSTREAM_URL_BAD_BYTE, NULL);
    url_of(r, "/caf\xc3\xa9", UPSTREAM_URL_BAD_BYTE, NULL);
    url_of(r, "/v1/../x", UPSTREAM_URL_DOT_SEGMENT, NULL);
    url_of(r, "/v1/..", UPSTREAM_URL_DOT_SEGMENT, NULL);
    url_of(r, "/./x", UPSTREAM_URL_DOT_SEGMENT, NULL);
    url_of(r, "/x?path=/../y", UPSTREAM_URL_OK, "http://127.0.0.1:8000/x?path=/../y");
    url_of(r, "/..x/y", UPSTREAM_URL_OK, "http://127.0.0.1:8000/..x/y");
}

static void root_path_kept(void **state)
{
    (void)state;
    url_of("http://h:1/api", "/v1/models", UPSTREAM_URL_OK, "http://h:1/api/v1/models");
    url_of("https://h.example/a/b/", "/v1/x?q", UPSTREAM_URL_OK, "https://h.example/a/b/v1/x?q");
    url_of("http://h:1", "/", UPSTREAM_URL_OK, "http://h:1/");
    url_of("not a url", "/", UPSTREAM_URL_NOMEM, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(origin_form_only),
        cmocka_unit_test(root_path_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
