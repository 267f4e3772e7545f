/* relay.h -- dockerd's answer, copied back to the client of the Docker
 * guard by the rules of response.h: spliced both ways only when dockerd
 * handed the connection over, otherwise exactly the framed answer under
 * Connection: close, and the connection ends.  A container list's answer
 * is filtered to talkback's own containers first (list.h).
 */
#ifndef TALKBACK_GUARD_RELAY_H
#define TALKBACK_GUARD_RELAY_H

#include <stdbool.h>
#include <stddef.h>

/* What the guard knows of the request the answer is to. */
typedef struct {
    bool hijack;  /* an attach or exec start route */
    bool upgrade; /* the request asked for an upgrade */
    bool head;    /* a HEAD request: no body */
    bool list;    /* a container list: keep only talkback's */
} grelay_t;

typedef enum {
    GRELAY_SENT,    /* a framed answer went back (or the client left) */
    GRELAY_SPLICED, /* a hijacked connection was spliced until both ends closed */
    GRELAY_BAD,     /* nothing was sent: dockerd's answer cannot be passed on (why) */
} grelay_rc_t;

/* Copy the answer to the request o describes from dockerd (ufd) back to
 * the client (cfd). */
grelay_rc_t grelay(int cfd, int ufd, const grelay_t *o, char *why, size_t whylen);

#endif
