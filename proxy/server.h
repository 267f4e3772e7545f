/* server.h -- talkback-proxy's HTTP side (libmicrohttpd).
 *
 * Serves everything the model server serves: POST .../chat/completions
 * goes through the reply repair (repair.h) when the turn ran a program;
 * every other request, and every answer that needs no repair, is passed
 * through untouched, headers, status codes and errors included.  Each
 * connection has its own thread, so waiting for the model server blocks
 * only that connection.
 */
#ifndef TALKBACK_PROXY_SERVER_H
#define TALKBACK_PROXY_SERVER_H

#include <stddef.h>

#include "proxy/repair.h"

typedef struct {
    const char *listen;   /* HOST:PORT, [V6]:PORT or PORT */
    const char *upstream; /* the model server's root URL (no /v1) */
    repair_tools_t tools;
    size_t max_body; /* largest request body; larger gets 413 */
    long connect_timeout_s;
} server_opts_t;

typedef struct server server_t;

server_t *server_start(const server_opts_t *o);
int server_port(const server_t *s);
void server_stop(server_t **s);

/* "http://h:8000/v1/" -> "http://h:8000": the client's path already
 * starts with /v1, so a base ending in /v1 is cut back to the root.
 * Returns a new string (caller frees) or NULL. */
char *server_upstream_root(const char *url);

#endif
