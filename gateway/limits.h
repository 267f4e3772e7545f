/* limits.h -- what one client may make the MCP endpoint hold.
 *
 * A table of open connections (one entry per socket, made when
 * libmicrohttpd accepts it and dropped when it closes) that knows, per
 * connection, which phase its current request is in and by when that
 * phase must end:
 *
 *   LIMITS_HEADERS  waiting for a request's headers (a new connection, or
 *                   a kept-alive one between requests): header_timeout
 *   LIMITS_BODY     headers in, reading the body: body_timeout
 *   LIMITS_BUSY     the request is whole; talkback is answering (a
 *                   tools/call may wait as long as its command runs)
 *
 * A watchdog thread shuts down the socket of a connection past its
 * deadline (slowloris: headers or a body dribbled in a byte at a time),
 * which libmicrohttpd then closes.  The table also counts connections per
 * client address and in total, so a connection past max_client_connections
 * or max_connections is marked when it opens and its request is answered
 * 429 / 503 instead of served (GET /healthz is still answered).  Last, a
 * budget of request-body bytes held in memory at once (body_budget):
 * a body that would go past it is read and dropped, and answered 503.
 */
#ifndef TALKBACK_LIMITS_H
#define TALKBACK_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

typedef struct limits limits_t;
typedef struct limits_conn limits_conn_t;

typedef struct {
    unsigned max_connections;        /* served at once, all clients */
    unsigned max_client_connections; /* served at once from one address */
    unsigned header_timeout_s;       /* 0 = no deadline */
    unsigned body_timeout_s;         /* 0 = no deadline */
    size_t body_budget;              /* body bytes held at once, all requests */
} limits_opts_t;

typedef enum { LIMITS_HEADERS, LIMITS_BODY, LIMITS_BUSY } limits_phase_t;

/* Why a connection is over a limit. */
typedef enum { LIMITS_OK, LIMITS_OVER_CLIENT, LIMITS_OVER_TOTAL } limits_over_t;

/* Start the table and its watchdog.  NULL (logged) on failure. */
limits_t *limits_new(const limits_opts_t *o);
/* Stop the watchdog and free the table (every connection must be closed
 * by then).  NULL-safe. */
void limits_destroy(limits_t **self_p);

/* A connection was accepted on fd from addr: its entry, in the HEADERS
 * phase, or NULL when out of memory.  Counted whether or not it is over a
 * limit (limits_over says). */
limits_conn_t *limits_open(limits_t *l, int fd, const struct sockaddr *addr);
/* The connection closed (before libmicrohttpd closes its fd). */
void limits_close(limits_t *l, limits_conn_t **c);
/* Enter a phase; its deadline starts now.  NULL-safe. */
void limits_phase(limits_t *l, limits_conn_t *c, limits_phase_t p);
/* Whether the connection was over a limit when it opened.  NULL-safe. */
limits_over_t limits_over(const limits_conn_t *c);

/* Take n more body bytes from the budget: false (nothing taken) when that
 * would pass body_budget. */
bool limits_body_take(limits_t *l, size_t n);
/* Give n body bytes back. */
void limits_body_give(limits_t *l, size_t n);

/* Pure helper, exposed for unit tests: whether two socket addresses are
 * the same client (same family and IP; ports ignored). */
bool limits_same_client(const struct sockaddr *a, const struct sockaddr *b);

#endif
