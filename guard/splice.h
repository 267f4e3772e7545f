/* splice.h -- copying bytes between the client and dockerd once the guard
 * has checked a request. */
#ifndef TALKBACK_GUARD_SPLICE_H
#define TALKBACK_GUARD_SPLICE_H

#include <stddef.h>

/* Write all of buf to fd; 0 or -1. */
int gsplice_write(int fd, const void *buf, size_t len);
/* Copy from -> to until from ends (or fails) or to hangs up; then shut
 * down to's sending side. */
void gsplice_one(int from, int to);
/* Copy both ways at once (a hijacked connection): each side's end of
 * stream is passed on as a half-close, and it returns when both ended. */
void gsplice_two(int a, int b);

#endif
