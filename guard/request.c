/* request.c -- parsing the head of a request to the Docker guard (see
 * request.h). */
#include "guard/request.h"

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

/* The request line: METHOD SP /target SP HTTP/1.x. */
static int parse_line(char *line, greq_t *r, char *why, size_t whylen)
{
    char *sp1 = strchr(line, ' ');
    char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!sp2 || strchr(sp2 + 1, ' ') ||
        (strcmp(sp2 + 1, "HTTP/1.1") && strcmp(sp2 + 1, "HTTP/1.0"))) {
        snprintf(why, whylen, "a malformed request line");
        return -1;
    }
    *sp1 = *sp2 = '\0';
    for (const char *m = line; *m; m++)
        if (*m < 'A' || *m > 'Z') {
            snprintf(why, whylen, "a malformed method");
            return -1;
        }
    char *target = sp1 + 1;
    if (target[0] != '/' || sp1 == line) {
        snprintf(why, whylen, "a request target that is not a path");
        return -1;
    }
    for (const unsigned char *p = (const unsigned char *)target; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f || *p == '#') {
            snprintf(why, whylen, "a request target with a space, control or non-ASCII byte");
            return -1;
        }
    r->method = line;
    r->path = target;
    char *q = strchr(target, '?');
    r->query = "";
    if (q) {
        *q = '\0';
        r->query = q + 1;
    }
    return 0;
}

/* Framing headers: one Content-Length of digits, no Transfer-Encoding;
 * and whether Connection asks for an upgrade. */
static int framing(greq_t *r, const char *name, const char *value, char *why, size_t whylen)
{
    if (!strcasecmp(name, "transfer-encoding")) {
        snprintf(why, whylen, "Transfer-Encoding in a request (send Content-Length)");
        return -1;
    }
    if (!strcasecmp(name, "content-length")) {
        size_t n = strspn(value, "0123456789");
        if (r->content_length >= 0 || n == 0 || n > 15 || value[n]) {
            snprintf(why, whylen, "a bad or second Content-Length");
            return -1;
        }
        r->content_length = atoll(value);
    }
    if (!strcasecmp(name, "connection") && strcasestr(value, "upgrade"))
        r->upgrade = true;
    return 0;
}

/* One header line "Name: value" (OWS trimmed). */
static int parse_header(char *line, greq_t *r, char *why, size_t whylen)
{
    char *colon = strchr(line, ':');
    if (!colon || colon == line) {
        snprintf(why, whylen, "a malformed header line");
        return -1;
    }
    for (char *p = line; p < colon; p++)
        if (!tchar((unsigned char)*p)) {
            snprintf(why, whylen, "a malformed header name");
            return -1;
        }
    *colon = '\0';
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    char *end = v + strlen(v);
    while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
        *--end = '\0';
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f) {
            snprintf(why, whylen, "a control byte in a header");
            return -1;
        }
    if (r->n_hdr == GREQ_HEADERS) {
        snprintf(why, whylen, "too many headers");
        return -1;
    }
    r->hdr[r->n_hdr].name = line;
    r->hdr[r->n_hdr++].value = v;
    return framing(r, line, v, why, whylen);
}

int greq_parse(char *head, size_t len, greq_t *r, char *why, size_t whylen)
{
    memset(r, 0, sizeof *r);
    r->content_length = -1;
    head[len] = '\0';
    if (memchr(head, '\0', len)) {
        snprintf(why, whylen, "a NUL byte in the request head");
        return -1;
    }
    char *line = head;
    for (bool first = true; line; first = false) {
        char *eol = strstr(line, "\r\n");
        if (eol)
            *eol = '\0';
        if (strchr(line, '\r') || strchr(line, '\n')) {
            snprintf(why, whylen, "a bare CR or LF in the request head");
            return -1;
        }
        if (first ? parse_line(line, r, why, whylen) : parse_header(line, r, why, whylen))
            return -1;
        line = eol ? eol + 2 : NULL;
    }
    return 0;
}

const char *greq_header(const greq_t *r, const char *name)
{
    for (size_t i = 0; i < r->n_hdr; i++)
        if (!strcasecmp(r->hdr[i].name, name))
            return r->hdr[i].value;
    return NULL;
}

bool greq_hop_header(const char *name)
{
    static const char *const hop[] = { "connection", "keep-alive",     "proxy-connection",
                                       "te",         "trailer",        "transfer-encoding",
                                       "upgrade",    "content-length", "expect",
                                       "host" };
    for (size_t i = 0; i < sizeof hop / sizeof hop[0]; i++)
        if (!strcasecmp(name, hop[i]))
            return true;
    return false;
}
