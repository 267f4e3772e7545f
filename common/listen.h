/* listen.h -- the listen addresses of talkback's HTTP fronts (the MCP
 * gateway and talkback-proxy): "HOST:PORT", "[V6]:PORT", ":PORT" or
 * "PORT", as the `listen` and `proxy_listen` settings take them.
 */
#ifndef TALKBACK_LISTEN_H
#define TALKBACK_LISTEN_H

#include <stdbool.h>
#include <sys/socket.h>

/* Resolve s into *ss (numeric port; with no host, IPv4 any is preferred).
 * *loopback (may be NULL) tells whether it is a loopback address.  0, or
 * -1 when s is malformed or does not resolve (logged). */
int listen_parse(const char *s, struct sockaddr_storage *ss, bool *loopback);

#endif
