/* hubkeys.c -- key files, certificate metadata and the ipc:// folder check
 * of the hub (see hubkeys.h).
 *
 * Pure string functions on purpose: the gateway, the workers and
 * talkback-keys share them, and the unit tests can try every corner
 * without sockets.
 */
#include "hub/hubkeys.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/optable.h"

/* What each kind's key may ask of others, from the operations table
 * (proto/optable.h, a row's senders): the judge writes and runs the
 * program in the chat's sandbox; the reaper asks whether a chat is busy,
 * tells the manager to forget a chat or to pause an idle one; the sandbox
 * manager asks nothing; talkbackctl (ctl) asks the hub for its hosts and
 * the managers for their sandboxes, drains, stops and removes.  Built
 * once, in the table's order. */
static hubkeys_role_t hubkeys_rows[8];
static pthread_once_t hubkeys_once = PTHREAD_ONCE_INIT;

/* One kind's submit list: KIND:NAME of every row it may send. */
static void hubkeys_submit_of(const char *kind, char *out, size_t n)
{
    size_t nrows, len = 0;
    const ops_row_t *rows = ops_table(&nrows);
    unsigned bit = ops_sender_bit(kind);
    out[0] = '\0';
    for (size_t i = 0; bit && i < nrows; i++) {
        if (!(rows[i].senders & bit))
            continue;
        int w = snprintf(out + len, n - len, "%s%s:%s", len ? "," : "", rows[i].kind, rows[i].name);
        if (w < 0 || (size_t)w >= n - len) {
            out[len] = '\0'; /* test_ops checks that every list fits */
            return;
        }
        len += (size_t)w;
    }
}

static void hubkeys_build(void)
{
    size_t nk, j = 0;
    const ops_kind_t *kinds = ops_kinds(&nk);
    for (size_t i = 0; i < nk && j + 1 < sizeof hubkeys_rows / sizeof hubkeys_rows[0]; i++)
        if (kinds[i].flags & OPS_KIND_KEY) {
            hubkeys_rows[j].kind = kinds[i].name;
            hubkeys_submit_of(kinds[i].name, hubkeys_rows[j].submit, sizeof hubkeys_rows[j].submit);
            j++;
        }
    hubkeys_rows[j].kind = NULL;
}

const hubkeys_role_t *hubkeys_roles(void)
{
    pthread_once(&hubkeys_once, hubkeys_build);
    return hubkeys_rows;
}

const hubkeys_role_t *hubkeys_role(const char *kind)
{
    for (const hubkeys_role_t *r = hubkeys_roles(); kind && r->kind; r++)
        if (strcmp(r->kind, kind) == 0)
            return r;
    return NULL;
}

bool hubkeys_keyless(const char *endpoint)
{
    return strncmp(endpoint, "ipc://", 6) == 0 || strncmp(endpoint, "inproc://", 9) == 0;
}

/* mkdir -p with mode 0700 for every folder it makes. */
static void hubkeys_mkdirs(char *path)
{
    for (char *s = path + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(path, 0700);
            *s = '/';
        }
    mkdir(path, 0700);
}

/* The folder of an ipc:// path into dir ("." when the path has none). */
static int hubkeys_ipc_dir(const char *endpoint, char *dir, size_t n)
{
    const char *path = endpoint + 6;
    const char *slash = strrchr(path, '/');
    if (!slash)
        return snprintf(dir, n, ".") < (int)n ? 0 : -1;
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    if (len >= n)
        return -1;
    memcpy(dir, path, len);
    dir[len] = '\0';
    return 0;
}

int hubkeys_ipc_dir_check(const char *endpoint, bool create, char *err, size_t errlen)
{
    if (strncmp(endpoint, "ipc://", 6) != 0)
        return 0;
    if (endpoint[6] == '@') {
        snprintf(err, errlen,
                 "the hub endpoint %s is an abstract socket, which any local user can "
                 "open: use a path in a folder only talkback's user can open (e.g. "
                 "ipc:///run/talkback/hub.ipc)",
                 endpoint);
        return -1;
    }
    char dir[4096];
    if (hubkeys_ipc_dir(endpoint, dir, sizeof dir) < 0) {
        snprintf(err, errlen, "the hub endpoint %s is too long", endpoint);
        return -1;
    }
    struct stat st;
    if (stat(dir, &st) < 0 && errno == ENOENT && create)
        hubkeys_mkdirs(dir);
    if (stat(dir, &st) < 0) {
        if (errno == ENOENT && !create)
            return 0;
        snprintf(err, errlen, "cannot use the hub's folder %s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "the hub's folder %s is not a directory", dir);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen,
                 "the hub's folder %s belongs to uid %u, not to this process's user "
                 "(uid %u): any worker there could be someone else's; chown %u %s, or run as its "
                 "owner",
                 dir, (unsigned)st.st_uid, (unsigned)geteuid(), (unsigned)geteuid(), dir);
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen,
                 "the hub's folder %s is mode %04o: it must be 0700 (only its owner "
                 "may open it), or other local users could act as talkback's workers; chmod 700 %s",
                 dir, (unsigned)(st.st_mode & 07777), dir);
        return -1;
    }
    return 0;
}

bool hubkeys_list_has(const char *list, const char *item)
{
    if (!list || !item || !*item)
        return false;
    size_t ilen = strlen(item);
    const char *p = list;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *end = strchr(p, ',');
        const char *stop = end ? end : p + strlen(p);
        const char *e = stop;
        while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if ((size_t)(e - p) == ilen && memcmp(p, item, ilen) == 0)
            return true;
        if (!end)
            return false;
        p = end + 1;
    }
}

bool hubkeys_may_register(const char *kinds, const char *kind)
{
    return hubkeys_list_has(kinds, kind);
}

bool hubkeys_may_submit(const char *submit, const char *kind, const char *name)
{
    if (!kind || !name || !*kind || !*name)
        return false;
    char item[256];
    int n = snprintf(item, sizeof item, "%s:%s", kind, name);
    if (n < 0 || (size_t)n >= sizeof item)
        return false;
    return hubkeys_list_has(submit, item);
}

/* One item of a metadata list: a name, or KIND:NAME when pair. */
static bool hubkeys_item_valid(const char *p, size_t len, bool pair)
{
    int colons = 0;
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        char c = p[i];
        if (c == ':' && pair && run > 0) {
            colons++;
            run = 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-') {
            run++;
        } else {
            return false;
        }
    }
    return run > 0 && colons == (pair ? 1 : 0);
}

/* A comma-separated list of valid items; empty is allowed when may_empty. */
static bool hubkeys_list_valid(const char *list, bool pair, bool may_empty)
{
    if (!list || strlen(list) > HUBKEYS_META_MAX)
        return false;
    if (!*list)
        return may_empty;
    const char *p = list;
    for (;;) {
        while (*p == ' ')
            p++;
        const char *end = strchr(p, ',');
        const char *e = end ? end : p + strlen(p);
        while (e > p && e[-1] == ' ')
            e--;
        if (!hubkeys_item_valid(p, (size_t)(e - p), pair))
            return false;
        if (!end)
            return true;
        p = end + 1;
    }
}

bool hubkeys_meta_valid(const char *kinds, const char *submit)
{
    return hubkeys_list_valid(kinds, false, false) && hubkeys_list_valid(submit, true, true);
}

bool hubkeys_kind_per_host(const char *kind)
{
    return ops_kind_has(kind, OPS_KIND_PER_HOST);
}

int hubkeys_host_for(const char *kind, const char *name, char *out, size_t n)
{
    size_t kl = strlen(kind);
    const char *host = name;
    if (strncmp(name, kind, kl) == 0 && name[kl] == '-' && name[kl + 1])
        host = name + kl + 1;
    int w = snprintf(out, n, "%s", host);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

bool hubkeys_host_valid(const char *host)
{
    size_t n = host ? strlen(host) : 0;
    if (n == 0 || n > HUBKEYS_META_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = host[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

int hubkeys_path(char *out, size_t n, const char *dir, const char *file)
{
    int w = snprintf(out, n, "%s/%s", dir, file);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}
