/* admit.c -- the token, header-byte and Host checks of the MCP endpoint
 * (see admit.h).
 *
 * Reading order: loading the token at start, comparing it per request,
 * the byte check, the Host check.  Nothing here does I/O but the one read
 * of auth_token_file at start.
 */
#include "gateway/admit.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gateway/mcp.h"

/* ---- the token --------------------------------------------------------------------- */

/* A token goes into an HTTP header: printable ASCII, no spaces. */
static bool admit_token_bytes_ok(const char *t)
{
    for (; *t; t++)
        if (*t < 0x21 || *t > 0x7e)
            return false;
    return true;
}

/* The first line of path, trailing blanks dropped; malloc'ed or NULL. */
static char *admit_read_first_line(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read auth_token_file %s: %s", path, strerror(errno));
        return NULL;
    }
    char line[1024];
    char *s = fgets(line, sizeof line, f) ? strdup(line) : strdup("");
    fclose(f);
    if (!s) {
        snprintf(err, errlen, "out of memory reading auth_token_file");
        return NULL;
    }
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

int admit_token_load(const char *token, const char *file, bool loopback, char **out, char *err,
                     size_t errlen)
{
    *out = NULL;
    bool have_token = token && *token, have_file = file && *file;
    if (have_token && have_file) {
        snprintf(err, errlen, "set auth_token or auth_token_file, not both");
        return -1;
    }
    char *t = have_token  ? strdup(token)
              : have_file ? admit_read_first_line(file, err, errlen)
                          : NULL;
    if ((have_token || have_file) && !t) {
        if (have_token)
            snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (t && strlen(t) < GUARD_TOKEN_MIN) {
        snprintf(err, errlen, "the MCP token (%s) is shorter than %d characters",
                 have_file ? "auth_token_file" : "auth_token", GUARD_TOKEN_MIN);
        free(t);
        return -1;
    }
    if (t && !admit_token_bytes_ok(t)) {
        snprintf(err, errlen, "the MCP token (%s) must be printable ASCII without spaces",
                 have_file ? "auth_token_file" : "auth_token");
        free(t);
        return -1;
    }
    if (!t && !loopback) {
        snprintf(err, errlen,
                 "the MCP endpoint listens on a non-loopback address, so it needs a "
                 "bearer token: set auth_token or auth_token_file (e.g. "
                 "TALKBACK_AUTH_TOKEN=$(openssl rand -hex 32))");
        return -1;
    }
    *out = t;
    return 0;
}

/* Compare a (alen bytes, from the client) with the token b (blen bytes)
 * in time that depends on blen only. */
static bool admit_equal(const char *a, size_t alen, const char *b, size_t blen)
{
    volatile unsigned char diff = (unsigned char)(alen != blen);
    for (size_t i = 0; i < blen; i++) {
        unsigned char ca = alen ? (unsigned char)a[i < alen ? i : 0] : 0;
        diff |= (unsigned char)(ca ^ (unsigned char)b[i]);
    }
    return diff == 0;
}

bool admit_token_ok(const char *authorization, const char *token)
{
    if (!token || !*token)
        return true;
    const char *h = authorization ? authorization : "";
    bool bearer = strncasecmp(h, "Bearer ", 7) == 0;
    const char *v = bearer ? h + 7 : h;
    while (*v == ' ')
        v++;
    size_t vlen = strlen(v);
    while (vlen > 0 && v[vlen - 1] == ' ')
        vlen--;
    bool same = admit_equal(v, vlen, token, strlen(token));
    return bearer && same;
}

/* ---- header bytes ------------------------------------------------------------------- */

bool admit_bytes_clean(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return false;
    }
    return true;
}

/* ---- Host ----------------------------------------------------------------------------- */

/* Split "name[:port]" / "[v6][:port]" into the name (brackets kept) and
 * whether a port follows.  false when malformed. */
static bool admit_split_host(const char *host, char *name, size_t namelen, const char **port)
{
    const char *end;
    if (host[0] == '[') {
        end = strchr(host, ']');
        if (!end)
            return false;
        end++;
    } else {
        end = strchr(host, ':');
        if (!end)
            end = host + strlen(host);
    }
    size_t n = (size_t)(end - host);
    if (n == 0 || n >= namelen)
        return false;
    memcpy(name, host, n);
    name[n] = '\0';
    *port = *end == ':' ? end + 1 : NULL;
    if (*end && *end != ':')
        return false;
    if (*port) {
        size_t d = strspn(*port, "0123456789");
        if (d == 0 || d > 5 || (*port)[d])
            return false;
    }
    return true;
}

static bool admit_is_ip_literal(const char *name)
{
    unsigned char buf[16];
    size_t n = strlen(name);
    if (n > 2 && name[0] == '[' && name[n - 1] == ']') {
        char v6[64];
        if (n - 2 >= sizeof v6)
            return false;
        memcpy(v6, name + 1, n - 2);
        v6[n - 2] = '\0';
        return inet_pton(AF_INET6, v6, buf) == 1;
    }
    return inet_pton(AF_INET, name, buf) == 1;
}

/* Whether one allowed_hosts entry (len bytes at e) admits name[:port]. */
static bool admit_entry_admits(const char *e, size_t len, const char *name, const char *port)
{
    if (len == 1 && e[0] == '*')
        return true;
    size_t nl = strlen(name);
    if (len < nl || strncasecmp(e, name, nl) != 0)
        return false;
    if (len == nl)
        return true; /* "name": any port */
    if (e[nl] != ':' || !port)
        return false;
    return len - nl - 1 == strlen(port) && strncmp(e + nl + 1, port, len - nl - 1) == 0;
}

bool admit_host_ok(const char *host, bool loopback, const char *allowed)
{
    if (!host)
        return true;
    if (mcp_host_allowed(host))
        return true;
    char name[256];
    const char *port = NULL;
    if (!admit_split_host(host, name, sizeof name, &port))
        return false;
    if (!loopback && admit_is_ip_literal(name))
        return true;
    for (const char *p = allowed ? allowed : ""; *p;) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        const char *end = p;
        while (*end && *end != ',')
            end++;
        const char *last = end;
        while (last > p && isspace((unsigned char)last[-1]))
            last--;
        if (last > p && admit_entry_admits(p, (size_t)(last - p), name, port))
            return true;
        p = end;
    }
    return false;
}
