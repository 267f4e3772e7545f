/* conn.h -- one client connection of the Docker guard: one request,
 * checked, forwarded, answered. */
#ifndef TALKBACK_GUARD_CONN_H
#define TALKBACK_GUARD_CONN_H

#include "guard/body.h"

typedef struct {
    const char *docker_socket; /* dockerd's unix socket */
    gtemplate_t tpl;           /* the sandbox template */
} guard_t;

/* Serve the one request of client fd cfd, then close it. */
void gconn_serve(const guard_t *g, int cfd);

#endif
