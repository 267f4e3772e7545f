/* known.c -- the host names the hub has seen a worker on (see known.h).
 *
 * A handful of names in a sorted array: linear search and insertion are
 * as fast as anything at this size.  The file is written whole to a
 * temporary name and renamed over, so a crash leaves the old list or the
 * new one, never half of one.
 */
#include "hub/known.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

typedef struct known_host {
    char name[KNOWN_NAME_MAX + 1];
    bool managed; /* a manager said HELLO this life */
} known_host_t;

struct known {
    char *path; /* NULL: memory only */
    size_t n;
    known_host_t h[KNOWN_MAX];
};

/* Whether name is one the list keeps: 1..KNOWN_NAME_MAX printable bytes
 * with none of the characters the hosts text uses as separators. */
static bool known_usable(const char *name, size_t len)
{
    if (!name || len == 0 || len > KNOWN_NAME_MAX || name[0] == '#')
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= ' ' || c >= 0x7f || c == '=' || c == ',' || c == ':' || c == '"' || c == '\\')
            return false;
    }
    return true;
}

/* Where name is, or where it would go (*found says which). */
static size_t known_at(const known_t *k, const char *name, bool *found)
{
    size_t i = 0;
    while (i < k->n && strcmp(k->h[i].name, name) < 0)
        i++;
    *found = i < k->n && strcmp(k->h[i].name, name) == 0;
    return i;
}

/* Insert a usable name of len bytes; true when it was new. */
static bool known_insert(known_t *k, const char *name, size_t len)
{
    char buf[KNOWN_NAME_MAX + 1];
    if (!known_usable(name, len))
        return false;
    memcpy(buf, name, len);
    buf[len] = '\0';
    bool found;
    size_t i = known_at(k, buf, &found);
    if (found)
        return false;
    if (k->n >= KNOWN_MAX) {
        log_warn("more than %d hosts seen: host %s is not remembered", KNOWN_MAX, buf);
        return false;
    }
    memmove(&k->h[i + 1], &k->h[i], (k->n - i) * sizeof k->h[0]);
    memset(&k->h[i], 0, sizeof k->h[i]);
    memcpy(k->h[i].name, buf, len + 1);
    k->n++;
    return true;
}

size_t known_parse(known_t *k, const char *text, size_t len)
{
    size_t added = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        size_t l = end - at;
        if (l && text[at + l - 1] == '\r')
            l--;
        if (known_insert(k, text + at, l))
            added++;
        at = end + 1;
    }
    return added;
}

/* Read k->path into k; a missing file is an empty list. */
static void known_load(known_t *k)
{
    FILE *f = fopen(k->path, "re");
    if (!f) {
        if (errno != ENOENT)
            log_warn("cannot read the known hosts in %s: %s", k->path, strerror(errno));
        return;
    }
    char buf[KNOWN_MAX * (KNOWN_NAME_MAX + 2)];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    known_parse(k, buf, n);
}

/* Write the list to k->path (temporary file, then rename); logged when
 * it cannot be, and kept in memory all the same. */
static void known_save(const known_t *k)
{
    if (!k->path)
        return;
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", k->path) >= (int)sizeof tmp)
        return;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", k->path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        (void)mkdir(dir, 0700); /* one level, as state folders are made */
    }
    FILE *f = fopen(tmp, "we");
    bool ok = f != NULL;
    for (size_t i = 0; ok && i < k->n; i++)
        ok = fprintf(f, "%s\n", k->h[i].name) > 0;
    if (f && fclose(f) != 0)
        ok = false;
    if (ok && rename(tmp, k->path) == 0)
        return;
    log_warn("cannot write the known hosts to %s (setting hub_hosts_file): %s", k->path,
             strerror(errno));
    if (f)
        unlink(tmp);
}

known_t *known_new(const char *path)
{
    known_t *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    if (path && *path) {
        if (!(k->path = strdup(path))) {
            free(k);
            return NULL;
        }
        known_load(k);
    }
    return k;
}

void known_destroy(known_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free((*self_p)->path);
    free(*self_p);
    *self_p = NULL;
}

bool known_add(known_t *k, const char *name)
{
    if (!name || !known_insert(k, name, strlen(name)))
        return false;
    known_save(k);
    return true;
}

bool known_forget(known_t *k, const char *name)
{
    bool found;
    if (!name)
        return false;
    size_t i = known_at(k, name, &found);
    if (!found)
        return false;
    memmove(&k->h[i], &k->h[i + 1], (k->n - i - 1) * sizeof k->h[0]);
    k->n--;
    known_save(k);
    return true;
}

bool known_has(const known_t *k, const char *name)
{
    bool found = false;
    if (name)
        known_at(k, name, &found);
    return found;
}

size_t known_count(const known_t *k)
{
    return k->n;
}

const char *known_name(const known_t *k, size_t i)
{
    return i < k->n ? k->h[i].name : NULL;
}

void known_managed(known_t *k, const char *name)
{
    bool found = false;
    size_t i = name ? known_at(k, name, &found) : 0;
    if (found)
        k->h[i].managed = true;
}

const char *known_unmanaged(const known_t *k)
{
    for (size_t i = 0; i < k->n; i++)
        if (!k->h[i].managed)
            return k->h[i].name;
    return NULL;
}
