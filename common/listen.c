/* listen.c -- parsing listen addresses (see listen.h). */
#include "common/listen.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>

#include "common/log.h"

/* Split s into host ("" when absent) and port. */
static int listen_split(const char *s, char *host, size_t hostlen, char *port, size_t portlen)
{
    const char *p;
    host[0] = '\0';
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || close[1] != ':' || (size_t)(close - s - 1) >= hostlen)
            return -1;
        memcpy(host, s + 1, (size_t)(close - s - 1));
        host[close - s - 1] = '\0';
        p = close + 2;
    } else {
        const char *colon = strrchr(s, ':');
        if (colon) {
            if ((size_t)(colon - s) >= hostlen)
                return -1;
            memcpy(host, s, (size_t)(colon - s));
            host[colon - s] = '\0';
            p = colon + 1;
        } else {
            p = s; /* "PORT" alone */
        }
    }
    if (!*p || strlen(p) >= portlen)
        return -1;
    memcpy(port, p, strlen(p) + 1);
    return 0;
}

int listen_parse(const char *s, struct sockaddr_storage *ss, bool *loopback)
{
    char host[256], port[16];
    if (!s || listen_split(s, host, sizeof host, port, sizeof port) != 0) {
        log_error("listen address %s: expected HOST:PORT, [V6]:PORT, :PORT or PORT",
                  s ? s : "(none)");
        return -1;
    }
    struct addrinfo hints = { .ai_family = AF_UNSPEC,
                              .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
    struct addrinfo *ai = NULL;
    int rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
    if (rc != 0 || !ai) {
        log_error("listen address %s: %s", s, rc ? gai_strerror(rc) : "no address");
        return -1;
    }
    /* With no host, prefer IPv4 any (0.0.0.0). */
    struct addrinfo *pick = ai;
    for (struct addrinfo *a = ai; !host[0] && a; a = a->ai_next)
        if (a->ai_family == AF_INET) {
            pick = a;
            break;
        }
    memset(ss, 0, sizeof *ss);
    memcpy(ss, pick->ai_addr, pick->ai_addrlen);
    freeaddrinfo(ai);

    bool lo = false;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
        lo = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
        lo = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
             (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127);
    } else {
        return -1;
    }
    if (loopback)
        *loopback = lo;
    return 0;
}
