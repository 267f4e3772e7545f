/* response.c -- reading the head and framing of dockerd's answer (see
 * response.h).  Strict like request.c: any doubt about where the answer
 * ends is GFRAME_BAD or -1, never a splice. */
#include "guard/response.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Whether c may be in a header name (RFC 9110 token). */
static bool tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* v[0..n) without leading and trailing spaces and tabs, into *s, *sn. */
static void trim(const char *v, size_t n, const char **s, size_t *sn)
{
    while (n && (*v == ' ' || *v == '\t'))
        v++, n--;
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    *s = v;
    *sn = n;
}

/* Whether v[0..n) is, case aside, the string s. */
static bool is(const char *v, size_t n, const char *s)
{
    return strlen(s) == n && strncasecmp(v, s, n) == 0;
}

/* The status line: HTTP/1.x SP 3DIGIT [SP reason]. */
static int status_line(const char *l, size_t n, gresp_t *r)
{
    if (n < 12 || memcmp(l, "HTTP/1.", 7) || l[7] < '0' || l[7] > '9' || l[8] != ' ' ||
        strspn(l + 9, "0123456789") < 3 || (n > 12 && l[12] != ' ') || l[9] == '0')
        return -1;
    r->status = (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
    return 0;
}

/* One header line "Name: value": the framing and type it carries. */
static int header_line(const char *l, size_t n, gresp_t *r)
{
    const char *colon = memchr(l, ':', n);
    if (!colon || colon == l)
        return -1;
    for (const char *p = l; p < colon; p++)
        if (!tchar((unsigned char)*p))
            return -1;
    size_t nl = (size_t)(colon - l), vn;
    const char *v;
    trim(colon + 1, n - nl - 1, &v, &vn);
    if (is(l, nl, "content-length")) {
        if (r->content_length >= 0 || vn == 0 || vn > 18 || strspn(v, "0123456789") < vn)
            return -1;
        r->content_length = strtoll(v, NULL, 10);
    } else if (is(l, nl, "transfer-encoding")) {
        /* The last coding decides: "gzip, chunked" is chunked. */
        const char *last = v;
        for (const char *p = v; p < v + vn; p++)
            if (*p == ',')
                last = p + 1;
        const char *t;
        size_t tn;
        trim(last, vn - (size_t)(last - v), &t, &tn);
        r->has_te = true;
        r->chunked = is(t, tn, "chunked");
    } else if (is(l, nl, "content-type")) {
        const char *semi = memchr(v, ';', vn);
        const char *t;
        size_t tn;
        trim(v, semi ? (size_t)(semi - v) : vn, &t, &tn);
        r->raw_stream = is(t, tn, "application/vnd.docker.raw-stream") ||
                        is(t, tn, "application/vnd.docker.multiplexed-stream");
    }
    return 0;
}

/* The line of s[0..len) that starts at `at`: its length into *n; where
 * the next one starts (past its CRLF), or len + 1 after the last. */
static size_t next_line(const char *s, size_t len, size_t at, size_t *n)
{
    for (size_t i = at; i + 1 < len; i++)
        if (s[i] == '\r' && s[i + 1] == '\n') {
            *n = i - at;
            return i + 2;
        }
    *n = len - at;
    return len + 1;
}

int gresp_parse(const char *head, size_t len, gresp_t *r)
{
    memset(r, 0, sizeof *r);
    r->content_length = -1;
    if (memchr(head, '\0', len))
        return -1;
    size_t n;
    for (size_t at = 0, next; at <= len; at = next) {
        next = next_line(head, len, at, &n);
        const char *line = head + at;
        if (memchr(line, '\r', n) || memchr(line, '\n', n))
            return -1;
        if (at && n && (line[0] == ' ' || line[0] == '\t'))
            return -1; /* a folded line */
        if (at == 0 ? status_line(line, n, r) : header_line(line, n, r))
            return -1;
    }
    return 0;
}

gframe_t gresp_frame(const gresp_t *r, bool hijack_route, bool req_upgrade, bool head_method)
{
    if (hijack_route && r->status == 101)
        return req_upgrade ? GFRAME_SPLICE : GFRAME_BAD;
    if (hijack_route && r->status == 200 && r->raw_stream && r->content_length < 0 && !r->has_te)
        return GFRAME_SPLICE;
    if (r->status < 200)
        return GFRAME_BAD; /* an upgrade not asked for, or an interim answer */
    if (head_method || r->status == 204 || r->status == 304)
        return GFRAME_NONE;
    if (r->has_te)
        return r->chunked ? GFRAME_CHUNKED : GFRAME_CLOSE;
    return r->content_length >= 0 ? GFRAME_LENGTH : GFRAME_CLOSE;
}

size_t gresp_head(const char *head, size_t len, bool drop_length, char *out, size_t cap)
{
    static const char *const hop[] = { "connection", "keep-alive", "proxy-connection", "upgrade" };
    static const char *const framing[] = { "content-length", "transfer-encoding" };
    size_t o = 0, n;
    for (size_t at = 0, next; at < len; at = next) {
        next = next_line(head, len, at, &n);
        const char *line = head + at;
        const char *colon = memchr(line, ':', n);
        size_t nl = colon ? (size_t)(colon - line) : n;
        bool drop = false;
        for (size_t i = 0; at && i < sizeof hop / sizeof hop[0]; i++)
            drop |= is(line, nl, hop[i]);
        for (size_t i = 0; at && drop_length && i < sizeof framing / sizeof framing[0]; i++)
            drop |= is(line, nl, framing[i]);
        if (!drop) {
            if (o + n + 2 > cap)
                return 0;
            memcpy(out + o, line, n);
            memcpy(out + o + n, "\r\n", 2);
            o += n + 2;
        }
    }
    static const char tail[] = "Connection: close\r\n\r\n";
    if (o + sizeof tail - 1 > cap)
        return 0;
    memcpy(out + o, tail, sizeof tail - 1);
    return o + sizeof tail - 1;
}

/* The states of gchunk_t. */
enum {
    CS_SIZE,       /* hex digits of a chunk's size */
    CS_SIZE_WS,    /* spaces after them */
    CS_EXT,        /* a chunk extension, up to CR */
    CS_SIZE_LF,    /* the LF of the size line */
    CS_DATA,       /* the chunk's data */
    CS_DATA_CR,    /* the CRLF after it */
    CS_DATA_LF,    /* */
    CS_TRAILER,    /* the start of a trailer line, or the last CRLF */
    CS_TRAILER_IN, /* inside a trailer line */
    CS_TRAILER_LF, /* its LF */
    CS_END_LF,     /* the LF of the last line */
};

/* One byte b of the size line or what follows the data; -1 when bad. */
static int chunk_byte(gchunk_t *c, unsigned char b)
{
    int hex = (b >= '0' && b <= '9')   ? b - '0'
              : (b >= 'a' && b <= 'f') ? b - 'a' + 10
              : (b >= 'A' && b <= 'F') ? b - 'A' + 10
                                       : -1;
    if (b == '\0' || (b == '\n' && c->state != CS_SIZE_LF && c->state != CS_DATA_LF &&
                      c->state != CS_TRAILER_LF && c->state != CS_END_LF))
        return -1;
    if (++c->line > GCHUNK_LINE_MAX)
        return -1;
    switch (c->state) {
    case CS_SIZE:
        if (hex >= 0 && c->line <= 15) {
            c->left = c->left * 16 + (unsigned long long)hex;
            return 0;
        }
        if (c->line == 1)
            return -1; /* no digit */
        c->state = b == ';' ? CS_EXT : b == '\r' ? CS_SIZE_LF : CS_SIZE_WS;
        return b == ';' || b == '\r' || b == ' ' || b == '\t' ? 0 : -1;
    case CS_SIZE_WS:
        c->state = b == ';' ? CS_EXT : b == '\r' ? CS_SIZE_LF : CS_SIZE_WS;
        return b == ';' || b == '\r' || b == ' ' || b == '\t' ? 0 : -1;
    case CS_EXT: c->state = b == '\r' ? CS_SIZE_LF : CS_EXT; return 0;
    case CS_SIZE_LF:
        c->state = c->left ? CS_DATA : CS_TRAILER;
        c->line = 0;
        return b == '\n' ? 0 : -1;
    case CS_DATA_CR: c->state = CS_DATA_LF; return b == '\r' ? 0 : -1;
    case CS_DATA_LF:
        c->state = CS_SIZE;
        c->line = 0;
        return b == '\n' ? 0 : -1;
    case CS_TRAILER: c->state = b == '\r' ? CS_END_LF : CS_TRAILER_IN; return 0;
    case CS_TRAILER_IN: c->state = b == '\r' ? CS_TRAILER_LF : CS_TRAILER_IN; return 0;
    case CS_TRAILER_LF:
        c->state = CS_TRAILER;
        c->line = 0;
        return b == '\n' ? 0 : -1;
    case CS_END_LF: c->done = true; return b == '\n' ? 0 : -1;
    default: return -1;
    }
}

long long gchunk_feed(gchunk_t *c, const char *buf, size_t len, gchunk_data_fn on_data, void *ctx)
{
    size_t i = 0;
    while (i < len && !c->done) {
        if (c->state == CS_DATA) {
            size_t n = len - i < c->left ? len - i : (size_t)c->left;
            if (on_data && on_data(ctx, buf + i, n))
                return -1;
            i += n;
            c->left -= n;
            if (c->left == 0) {
                c->state = CS_DATA_CR;
                c->line = 0;
            }
            continue;
        }
        if (chunk_byte(c, (unsigned char)buf[i++]))
            return -1;
    }
    return (long long)i;
}
