/* netcheck.c -- the sandbox network against the egress rule's record (see
 * netcheck.h).
 *
 * The record is root's: a file that anyone else may write, or that is not
 * a regular file, or a symbolic link, is no record.  Its lines are
 * "key value" (network, id, subnet -- repeated --, chain, installed);
 * comments start with '#'; other keys are ignored.
 */
#include "sandbox/netcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "talk/texts.h"

#define RECORD_SUBNETS 64
#define RELOG_S        60 /* a refusing verdict is logged again after this */

/* What the operator does about each verdict (the chat's text and the log
 * line both say it).  %s: the network's name. */
#define FIX_RULE "run deploy/egress-rule on the sandbox host"
#define FIX_REMAKE                                                                                 \
    "remove the network %s and make it as talkback does (docker network create --opt "             \
    "com.docker.network.bridge.enable_icc=false --label talkback.network=sandboxes %s), then run " \
    "deploy/egress-rule on the sandbox host"
static const char *const fixes[] = {
    [NC_NO_RECORD] = FIX_RULE,
    [NC_BAD_RECORD] = FIX_RULE,
    [NC_MISSING] = "restart talkback-sandbox (it makes the network) and then " FIX_RULE,
    [NC_OTHER_ID] = FIX_RULE,
    [NC_DRIVER] = FIX_REMAKE,
    [NC_IPV6] = FIX_REMAKE,
    [NC_ICC] = FIX_REMAKE,
    [NC_SUBNET] = FIX_RULE,
};

/* The chat's text; the fix goes at the second %s. */
#define CHAT_TEXT TX_SB_NETWORK_WRONG

struct netcheck {
    docker_t *d;
    netcheck_opts_t o;
    bool required;
    char record[4096];
    pthread_mutex_t mu; /* guards the cached verdict below */
    char id[65];        /* the network's id the verdict is about */
    struct stat st;     /* the record it was judged against (st_ino 0: none) */
    bool have;
    netcheck_why_t why;
    char detail[512];
    time_t logged[2]; /* when a refusing verdict was last logged: [0] for a call, [1] the pool */
};

typedef struct {
    char network[129], id[65];
    char subnet[RECORD_SUBNETS][48];
    size_t n;
} record_t;

/* Parse the record's lines into r; 0, or -1 when it is no record. */
static int record_parse(const char *rec, size_t len, record_t *r)
{
    memset(r, 0, sizeof *r);
    if (memchr(rec, '\0', len))
        return -1;
    for (const char *p = rec, *end = rec + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char line[256];
        if (n < sizeof line && *p != '#') {
            memcpy(line, p, n);
            line[n] = '\0';
            char *v = strchr(line, ' ');
            if (v)
                *v++ = '\0';
            if (v && !strcmp(line, "network"))
                snprintf(r->network, sizeof r->network, "%s", v);
            else if (v && !strcmp(line, "id"))
                snprintf(r->id, sizeof r->id, "%s", v);
            else if (v && !strcmp(line, "subnet") && r->n < RECORD_SUBNETS && strlen(v) < 48)
                strcpy(r->subnet[r->n++], v);
        }
        p += n + 1;
    }
    return r->network[0] && strlen(r->id) == 64 ? 0 : -1;
}

/* Whether subnet s is one of the record's. */
static bool recorded(const record_t *r, const char *s)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->subnet[i], s))
            return true;
    return false;
}

/* The network's subnets against the record's: NC_OK, NC_IPV6 or NC_SUBNET. */
static netcheck_why_t judge_subnets(const json_t *inspect, const record_t *r, char *detail,
                                    size_t dlen)
{
    const json_t *cfg = json_object_get(json_object_get(inspect, "IPAM"), "Config");
    size_t i, v4 = 0;
    const json_t *c;
    if (json_is_true(json_object_get(inspect, "EnableIPv6"))) {
        snprintf(detail, dlen, "it has IPv6, which the egress rule does not cover");
        return NC_IPV6;
    }
    json_array_foreach(cfg, i, c)
    {
        const char *s = json_string_value(json_object_get(c, "Subnet"));
        if (s && strchr(s, ':')) {
            snprintf(detail, dlen,
                     "it has the IPv6 subnet %.64s, which the egress rule does not "
                     "cover",
                     s);
            return NC_IPV6;
        }
        if (!s || !recorded(r, s)) {
            snprintf(detail, dlen, "its subnet %.64s is not one the egress rule covers",
                     s ? s : "(none)");
            return NC_SUBNET;
        }
        v4++;
    }
    if (v4 == 0) {
        snprintf(detail, dlen, "it has no subnet the egress rule covers");
        return NC_SUBNET;
    }
    return NC_OK;
}

netcheck_why_t netcheck_judge(const char *network, const json_t *inspect, const char *rec,
                              size_t len, char *detail, size_t dlen)
{
    record_t r;
    *detail = '\0';
    if (!inspect) {
        snprintf(detail, dlen, "Docker has no network of that name");
        return NC_MISSING;
    }
    if (record_parse(rec, len, &r)) {
        snprintf(detail, dlen, "the egress rule's record is not one deploy/egress-rule wrote");
        return NC_BAD_RECORD;
    }
    const char *id = json_string_value(json_object_get(inspect, "Id"));
    const char *drv = json_string_value(json_object_get(inspect, "Driver"));
    const char *icc = json_string_value(json_object_get(json_object_get(inspect, "Options"),
                                                        "com.docker.network.bridge.enable_icc"));
    if (strcmp(r.network, network) != 0) {
        snprintf(detail, dlen, "the egress rule's record is for the network %.128s", r.network);
        return NC_BAD_RECORD;
    }
    if (!id || strcmp(id, r.id) != 0) {
        snprintf(detail, dlen,
                 "it was made again after the egress rule was installed: its id is %.12s, the "
                 "rule's record says %.12s",
                 id ? id : "(none)", r.id);
        return NC_OTHER_ID;
    }
    if (!drv || strcmp(drv, "bridge") != 0) {
        snprintf(detail, dlen, "it is not a bridge network (driver %.32s)", drv ? drv : "(none)");
        return NC_DRIVER;
    }
    netcheck_why_t w = judge_subnets(inspect, &r, detail, dlen);
    if (w != NC_OK)
        return w;
    if (!icc || strcmp(icc, "false") != 0) {
        snprintf(detail, dlen,
                 "it lets sandboxes reach each other "
                 "(com.docker.network.bridge.enable_icc is not false)");
        return NC_ICC;
    }
    return NC_OK;
}

netcheck_t *netcheck_new(docker_t *d, const netcheck_opts_t *o)
{
    bool off = o->check && !strcmp(o->check, "off");
    if (!off && (!o->check || strcmp(o->check, "require") != 0)) {
        log_error("egress_check is \"%s\": it must be require or off", o->check ? o->check : "");
        return NULL;
    }
    netcheck_t *nc = calloc(1, sizeof *nc);
    if (!nc)
        return NULL;
    nc->d = d;
    nc->o = *o;
    nc->required = !off;
    if (o->record && *o->record)
        snprintf(nc->record, sizeof nc->record, "%s", o->record);
    else
        snprintf(nc->record, sizeof nc->record, "%s/%s", NETCHECK_RECORD_DIR, o->network);
    pthread_mutex_init(&nc->mu, NULL);
    if (off)
        log_warn("egress_check is off: sandboxes start on network %s whatever the egress rule "
                 "covers (another firewall must keep them off the host and the LAN)",
                 o->network);
    else
        log_info("sandboxes start only on network %s as the egress rule's record %s describes it",
                 o->network, nc->record);
    return nc;
}

void netcheck_destroy(netcheck_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    pthread_mutex_destroy(&(*self_p)->mu);
    free(*self_p);
    *self_p = NULL;
}

/* Open the record: its fd with *st, or -1 with *why (none, or one that
 * cannot be trusted: not a regular file of root's or this user's that
 * only its owner may write, or too big). */
static int record_open(const netcheck_t *nc, struct stat *st, netcheck_why_t *why)
{
    int fd = open(nc->record, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    memset(st, 0, sizeof *st);
    *why = errno == ENOENT || errno == ENOTDIR ? NC_NO_RECORD : NC_BAD_RECORD;
    if (fd < 0)
        return -1;
    if (fstat(fd, st) || !S_ISREG(st->st_mode) || (st->st_uid != 0 && st->st_uid != geteuid()) ||
        (st->st_mode & 022) || st->st_size > NETCHECK_RECORD_MAX) {
        close(fd);
        *why = NC_BAD_RECORD;
        return -1;
    }
    return fd;
}

/* Whether the cached verdict is about this network id and record. */
static bool cached(const netcheck_t *nc, const char *id, const struct stat *st)
{
    return nc->have && !strcmp(nc->id, id) && nc->st.st_dev == st->st_dev &&
           nc->st.st_ino == st->st_ino && nc->st.st_size == st->st_size &&
           nc->st.st_mtim.tv_sec == st->st_mtim.tv_sec &&
           nc->st.st_mtim.tv_nsec == st->st_mtim.tv_nsec;
}

/* With nc->mu held: judge the network (inspect, NULL when missing) against
 * the record now, unless the cached verdict is about the same. */
static void judge_now(netcheck_t *nc, const json_t *inspect)
{
    const char *id = inspect ? json_string_value(json_object_get(inspect, "Id")) : NULL;
    struct stat st;
    netcheck_why_t why;
    int fd = record_open(nc, &st, &why);
    if (cached(nc, id ? id : "", &st)) {
        if (fd >= 0)
            close(fd);
        return;
    }
    netcheck_why_t before = nc->have ? nc->why : NC_OK;
    char buf[NETCHECK_RECORD_MAX];
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
    if (fd >= 0)
        close(fd);
    if (!inspect) {
        nc->why = netcheck_judge(nc->o.network, NULL, "", 0, nc->detail, sizeof nc->detail);
    } else if (n < 0) {
        nc->why = why;
        snprintf(nc->detail, sizeof nc->detail,
                 why == NC_NO_RECORD ? "the egress rule's record %s is missing: the rule was "
                                       "never installed for it, or not since this host started"
                                     : "the egress rule's record %s cannot be trusted (not a "
                                       "file that only root may write)",
                 nc->record);
    } else {
        nc->why =
            netcheck_judge(nc->o.network, inspect, buf, (size_t)n, nc->detail, sizeof nc->detail);
    }
    snprintf(nc->id, sizeof nc->id, "%s", id ? id : "");
    nc->st = st;
    nc->have = true;
    nc->logged[0] = nc->logged[1] = 0;
    if (nc->why == NC_OK && before != NC_OK)
        log_info("sandbox network %s (%.12s) is the one the egress rule's record %s describes",
                 nc->o.network, nc->id, nc->record);
}

bool netcheck_ok(netcheck_t *nc, textbuf_t *err)
{
    if (!nc || !nc->required)
        return true;
    char path[300];
    long status;
    json_t *inspect = NULL;
    snprintf(path, sizeof path, "/networks/%s", nc->o.network);
    docker_err_t e = docker_call(nc->d, "GET", path, NULL, &status, &inspect);
    if (e != DOCKER_OK && e != DOCKER_ENOTFOUND) {
        json_decref(inspect);
        if (err)
            textbuf_printf(err, TX_SB_DOCKER_SILENT, docker_strerror(e));
        return false;
    }
    pthread_mutex_lock(&nc->mu);
    judge_now(nc, e == DOCKER_OK ? inspect : NULL);
    json_decref(inspect);
    netcheck_why_t why = nc->why;
    char detail[sizeof nc->detail], fix[1024];
    snprintf(detail, sizeof detail, "%s", nc->detail);
    time_t now = time(NULL), *last = &nc->logged[err ? 0 : 1];
    bool relog = why != NC_OK && now - *last >= RELOG_S;
    if (relog)
        *last = now;
    pthread_mutex_unlock(&nc->mu);
    if (why == NC_OK)
        return true;
    snprintf(fix, sizeof fix, fixes[why], nc->o.network, nc->o.network);
    /* Loud for a chat refused; a warning for the warm pool, which also
     * tries before deploy/egress-rule has run at a start. */
    if (relog && err)
        log_error("SANDBOX NETWORK NOT PROTECTED: network %s: %s. No sandbox is made or started "
                  "on it until the operator does this: %s",
                  nc->o.network, detail, fix);
    else if (relog)
        log_warn("no spare sandbox made: network %s is not the one the egress rule protects: %s "
                 "(the operator must %s)",
                 nc->o.network, detail, fix);
    if (err)
        textbuf_printf(err, CHAT_TEXT, nc->o.network, detail, fix);
    return false;
}
