/* request.h -- the head of one HTTP/1.1 request to the Docker guard.
 *
 * Strict on purpose: the guard rebuilds the head it sends to dockerd from
 * what it parsed here, so any doubt about framing is a refusal (lines end
 * in CRLF; no folded lines, control bytes, Transfer-Encoding, or second
 * Content-Length).  Pure, fuzzed with the body checks.
 */
#ifndef TALKBACK_GUARD_REQUEST_H
#define TALKBACK_GUARD_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#define GREQ_HEAD_MAX 65536 /* largest request head */
#define GREQ_HEADERS  64    /* most header lines */

typedef struct {
    const char *name, *value;
} gheader_t;

typedef struct {
    const char *method;
    const char *path;  /* up to '?' */
    const char *query; /* after '?', "" when none */
    gheader_t hdr[GREQ_HEADERS];
    size_t n_hdr;
    long long content_length; /* -1: none */
    bool upgrade;             /* Connection: upgrade */
} greq_t;

/* Parse head[0..len) (the request line and headers, without the blank line
 * that ends them), in place: head must hold len + 1 bytes.  0, or -1 with
 * a sentence in why. */
int greq_parse(char *head, size_t len, greq_t *r, char *why, size_t whylen);

/* The value of header name (case-insensitive), or NULL. */
const char *greq_header(const greq_t *r, const char *name);

/* Whether a header is one the guard drops and sets itself (hop-by-hop,
 * framing, Host, Expect). */
bool greq_hop_header(const char *name);

#endif
