/* limits.c -- the connection table, its watchdog and the body budget of
 * the MCP endpoint (see limits.h).
 *
 * The table is a doubly linked list under one mutex.  Opening a
 * connection walks it to count that client's connections: O(n) with n at
 * most max_connections plus the refused ones, once per accepted socket,
 * which is nothing next to the thread libmicrohttpd starts for it.  The
 * watchdog walks it every LIMITS_TICK_MS.  libmicrohttpd calls
 * limits_close (NOTIFY_CLOSED) before it closes the fd, and the watchdog
 * shuts sockets down under the same mutex, so it never touches an fd that
 * was closed and reused.
 */
#include "gateway/limits.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/list.h"
#include "common/log.h"

/* How often the watchdog looks for connections past their deadline. */
#define LIMITS_TICK_MS 250

struct limits_conn {
    list_node_t link; /* on the open connections */
    int fd;
    struct sockaddr_storage addr;
    limits_over_t over;
    limits_phase_t phase;
    int64_t deadline_ms; /* monotonic; 0 = none */
    bool cut;            /* the watchdog shut it down */
};

struct limits {
    limits_opts_t o;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    list_t conns;    /* open, newest first */
    unsigned served; /* open and not over a limit */
    bool stop;
    pthread_t watchdog;
    atomic_size_t body_bytes;
};

static int64_t limits_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool limits_same_client(const struct sockaddr *a, const struct sockaddr *b)
{
    if (!a || !b || a->sa_family != b->sa_family)
        return false;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
    return false;
}

/* ---- the watchdog -------------------------------------------------------------------- */

/* Shut down every connection past its deadline, with one log line per
 * sweep (not per connection: a slowloris must not flood the log).
 * Called with mu held. */
static void limits_sweep(limits_t *l, int64_t now)
{
    unsigned cut[2] = { 0, 0 }; /* headers, body */
    list_for_each_item(c, &l->conns, limits_conn_t, link) {
        if (c->cut || !c->deadline_ms || now < c->deadline_ms)
            continue;
        c->cut = true;
        cut[c->phase == LIMITS_HEADERS ? 0 : 1]++;
        shutdown(c->fd, SHUT_RDWR);
    }
    if (cut[0] || cut[1])
        log_info("closed %u connection(s) that did not send their headers within header_timeout "
                 "and %u that did not send their body within body_timeout",
                 cut[0], cut[1]);
}

static void *limits_watchdog(void *arg)
{
    limits_t *l = arg;
    pthread_mutex_lock(&l->mu);
    while (!l->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += LIMITS_TICK_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&l->cv, &l->mu, &ts);
        if (!l->stop)
            limits_sweep(l, limits_now_ms());
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

/* ---- the table ------------------------------------------------------------------------- */

limits_t *limits_new(const limits_opts_t *o)
{
    limits_t *l = calloc(1, sizeof *l);
    if (!l) {
        log_error("limits: out of memory");
        return NULL;
    }
    l->o = *o;
    atomic_init(&l->body_bytes, 0);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&l->watchdog, NULL, limits_watchdog, l) != 0) {
        log_error("limits: cannot start the connection watchdog");
        pthread_cond_destroy(&l->cv);
        pthread_mutex_destroy(&l->mu);
        free(l);
        return NULL;
    }
    return l;
}

void limits_destroy(limits_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    limits_t *l = *self_p;
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->watchdog, NULL);
    list_node_t *n;
    while ((n = list_pop_front(&l->conns)))
        free(LIST_ITEM(n, limits_conn_t, link));
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l);
    *self_p = NULL;
}

/* The deadline of a phase entered now; 0 = none. */
static int64_t limits_deadline(const limits_t *l, limits_phase_t p)
{
    unsigned s = p == LIMITS_HEADERS ? l->o.header_timeout_s
                 : p == LIMITS_BODY  ? l->o.body_timeout_s
                                     : 0;
    return s ? limits_now_ms() + (int64_t)s * 1000 : 0;
}

/* Whether a new connection from addr is over a limit.  mu held. */
static limits_over_t limits_judge(const limits_t *l, const struct sockaddr *addr)
{
    if (l->o.max_connections && l->served >= l->o.max_connections)
        return LIMITS_OVER_TOTAL;
    unsigned mine = 0;
    list_for_each_item(c, &l->conns, const limits_conn_t, link) {
        if (c->over == LIMITS_OK && limits_same_client((const struct sockaddr *)&c->addr, addr))
            mine++;
    }
    if (l->o.max_client_connections && mine >= l->o.max_client_connections)
        return LIMITS_OVER_CLIENT;
    return LIMITS_OK;
}

limits_conn_t *limits_open(limits_t *l, int fd, const struct sockaddr *addr)
{
    limits_conn_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd;
    if (addr) {
        size_t n = addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                               : sizeof(struct sockaddr_in);
        memcpy(&c->addr, addr, n);
    }
    c->phase = LIMITS_HEADERS;
    c->deadline_ms = limits_deadline(l, LIMITS_HEADERS);
    pthread_mutex_lock(&l->mu);
    c->over = limits_judge(l, addr);
    if (c->over == LIMITS_OK)
        l->served++;
    list_push_front(&l->conns, &c->link);
    pthread_mutex_unlock(&l->mu);
    return c;
}

void limits_close(limits_t *l, limits_conn_t **cp)
{
    if (!cp || !*cp)
        return;
    limits_conn_t *c = *cp;
    pthread_mutex_lock(&l->mu);
    list_remove(&l->conns, &c->link);
    if (c->over == LIMITS_OK)
        l->served--;
    pthread_mutex_unlock(&l->mu);
    free(c);
    *cp = NULL;
}

void limits_phase(limits_t *l, limits_conn_t *c, limits_phase_t p)
{
    if (!c)
        return;
    int64_t d = limits_deadline(l, p);
    pthread_mutex_lock(&l->mu);
    c->phase = p;
    c->deadline_ms = d;
    pthread_mutex_unlock(&l->mu);
}

limits_over_t limits_over(const limits_conn_t *c)
{
    return c ? c->over : LIMITS_OK;
}

/* ---- the body budget -------------------------------------------------------------------- */

bool limits_body_take(limits_t *l, size_t n)
{
    size_t cur = atomic_load(&l->body_bytes);
    do {
        if (l->o.body_budget && (n > l->o.body_budget || cur > l->o.body_budget - n))
            return false;
    } while (!atomic_compare_exchange_weak(&l->body_bytes, &cur, cur + n));
    return true;
}

void limits_body_give(limits_t *l, size_t n)
{
    atomic_fetch_sub(&l->body_bytes, n);
}
