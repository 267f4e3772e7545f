/* admit.h -- what a request must carry before the MCP endpoint reads it.
 *
 * Three checks, all pure functions so they are unit-tested without a
 * socket: the bearer token (`auth_token` / `auth_token_file`, compared in
 * constant time), header bytes (no NUL or other control byte anywhere: a
 * NUL used to cut "sec-a\0other" down to "sec-a"), and the Host header
 * (DNS rebinding: loopback names on every bind, IP literals, and the
 * `allowed_hosts` names).  http.c calls them; the token is loaded once at
 * start by admit_token_load, which also decides whether one is required.
 */
#ifndef TALKBACK_ADMIT_H
#define TALKBACK_ADMIT_H

#include <stdbool.h>
#include <stddef.h>

/* Shortest token talkback accepts: a guessable token is no token. */
#define GUARD_TOKEN_MIN 16

/* The token to require, from auth_token or else the first line of
 * auth_token_file.  *out is malloc'ed, or NULL when none is set.  A token
 * is required when the bind is not loopback.  0, or -1 with a sentence in
 * err (both keys set, file unreadable, too short, bad bytes, missing
 * while required). */
int admit_token_load(const char *token, const char *file, bool loopback, char **out, char *err,
                     size_t errlen);

/* Whether an Authorization header value is "Bearer <token>" (scheme
 * case-insensitive, one or more spaces).  With no token configured (NULL
 * or ""), every request passes.  The comparison takes the same time
 * whatever the header holds. */
bool admit_token_ok(const char *authorization, const char *token);

/* Whether len bytes are free of control bytes (0x00-0x1f but HTAB, and
 * 0x7f): what RFC 9110 allows in a field name or value. */
bool admit_bytes_clean(const char *s, size_t len);

/* Whether a Host header is acceptable.  NULL (HTTP/1.0) is.  Always
 * accepted: localhost, 127.0.0.1 and [::1], with an optional port; on a
 * non-loopback bind also any IP literal (a rebinding attack needs a
 * name).  Anything else must be one of the comma-separated `allowed`
 * entries: "name" (any port), "name:port", or "*" (any Host). */
bool admit_host_ok(const char *host, bool loopback, const char *allowed);

#endif
