/* claim.c -- spare sandboxes, and whose a claimed spare is (see claim.h).
 *
 * A claim record is a tiny file in state_dir named after the container id:
 * "conversation\nuser\n".  It is written whole under a temporary name and
 * linked into place, so it appears complete or not at all, and the link
 * fails when a record is there already: two managers can never both claim
 * one spare.
 */
#include "kept/claim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kept/kept.h"

#define CLAIM_RECORD_MAX (CONVID_MAX + CLAIM_USER_MAX + 4)

bool claim_spare_name_ok(const char *name)
{
    if (!name)
        return false;
    if (*name == '/')
        name++;
    size_t pl = strlen(SPEC_SPARE_PREFIX);
    if (strncmp(name, SPEC_SPARE_PREFIX, pl) != 0 || strlen(name) != pl + SPEC_SPARE_HEX)
        return false;
    return strspn(name + pl, "0123456789abcdef") == SPEC_SPARE_HEX;
}

/* <state_dir>/<id>.claim into out; -1 when id is not an id. */
static int claim_path(const kept_t *k, const char *id, char *out, size_t outlen)
{
    if (!kept_id_ok(id)) {
        errno = EINVAL;
        return -1;
    }
    int n = snprintf(out, outlen, "%s/%s%s", kept_state_dir(k), id, KEPT_CLAIM_SUFFIX);
    if (n < 0 || (size_t)n >= outlen) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

int claim_record_set(const kept_t *k, const char *id, const char *conv, const char *user)
{
    char path[4200], tmp[4300], body[CLAIM_RECORD_MAX + 8];
    user = user ? user : "";
    if (convid_check(conv) != CONVID_OK || !convid_user_ok(user) || strchr(user, '\n')) {
        errno = EINVAL;
        return -1;
    }
    if (claim_path(k, id, path, sizeof path))
        return -1;
    int len = snprintf(body, sizeof body, "%s\n%s\n", conv, user);
    if (len < 0 || (size_t)len >= sizeof body) {
        errno = EINVAL;
        return -1;
    }
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    bool ok = write(fd, body, (size_t)len) == len;
    ok = close(fd) == 0 && ok;
    int rc = ok ? link(tmp, path) : -1;
    int saved = errno;
    unlink(tmp);
    errno = saved;
    return rc;
}

int claim_record_get(const kept_t *k, const char *id, char *conv, char *user)
{
    char path[4200], buf[CLAIM_RECORD_MAX + 1];
    if (claim_path(k, id, path, sizeof path))
        return -1;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, sizeof buf - 1) : -1;
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *nl = strchr(buf, '\n');
    char *nl2 = nl ? strchr(nl + 1, '\n') : NULL;
    if (!nl || !nl2 || nl2[1] != '\0')
        return -1;
    *nl = *nl2 = '\0';
    if (convid_check(buf) != CONVID_OK || !convid_user_ok(nl + 1) ||
        strlen(nl + 1) > CLAIM_USER_MAX)
        return -1;
    memcpy(conv, buf, strlen(buf) + 1); /* convid_check: at most CONVID_MAX */
    memcpy(user, nl + 1, strlen(nl + 1) + 1);
    return 0;
}

void claim_record_drop(const kept_t *k, const char *id)
{
    char path[4200];
    if (claim_path(k, id, path, sizeof path) == 0)
        unlink(path);
}

bool claim_is_unclaimed(const json_t *labels, const char *name)
{
    return json_is_string(json_object_get(labels, SPEC_LABEL_SPARE)) && claim_spare_name_ok(name);
}

bool claim_identity(const kept_t *k, const json_t *labels, const char *id, const char *name,
                    char *conv, char *user)
{
    const char *lc = json_string_value(json_object_get(labels, SPEC_LABEL_CONV));
    if (lc) {
        const char *lu = json_string_value(json_object_get(labels, SPEC_LABEL_USER));
        snprintf(conv, CONVID_MAX + 1, "%s", lc);
        snprintf(user, CLAIM_USER_MAX + 1, "%s", lu ? lu : "");
        return true;
    }
    if (!json_is_string(json_object_get(labels, SPEC_LABEL_SPARE)) || !id || !name ||
        claim_spare_name_ok(name) || claim_record_get(k, id, conv, user) != 0)
        return false;
    /* The record must name the chat whose name the spare carries now (or
     * carried, when claimed before names were SHA-256: chatname.h). */
    return convid_name_is(conv, name);
}

void claim_scope_hash(const char *state_dir, char out[17])
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a 64 */
    for (const char *p = state_dir ? state_dir : ""; *p; p++) {
        h ^= (unsigned char)*p;
        h *= 1099511628211ULL;
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

bool claim_is_orphan(const kept_t *k, const json_t *labels, const char *id, const char *name,
                     const char *scope)
{
    const char *pool = json_string_value(json_object_get(labels, SPEC_LABEL_POOL));
    char conv[CONVID_MAX + 1], user[CLAIM_USER_MAX + 1];
    return json_is_string(json_object_get(labels, SPEC_LABEL_SPARE)) &&
           !json_object_get(labels, SPEC_LABEL_CONV) && pool && scope && strcmp(pool, scope) == 0 &&
           id && name && !claim_spare_name_ok(name) &&
           !claim_identity(k, labels, id, name, conv, user);
}

json_t *claim_list(docker_t *d, const json_t *filters, bool size)
{
    char *f = json_dumps(filters, JSON_COMPACT);
    if (!f)
        return NULL;
    char path[4096];
    size_t o = (size_t)snprintf(path, sizeof path,
                                "/containers/json?all=1&size=%d&filters=", size ? 1 : 0);
    for (const unsigned char *p = (const unsigned char *)f; *p && o + 4 < sizeof path; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '.' || *p == '_' || *p == '-')
            path[o++] = (char)*p;
        else
            o += (size_t)snprintf(path + o, sizeof path - o, "%%%02X", *p);
    }
    path[o] = '\0';
    free(f);
    long st;
    json_t *ans = NULL;
    if (docker_call(d, "GET", path, NULL, &st, &ans) == DOCKER_OK && json_is_array(ans))
        return ans;
    json_decref(ans);
    return NULL;
}

json_t *claim_list_orphans(docker_t *d, const kept_t *k, const char *scope, bool size)
{
    char lab[64];
    snprintf(lab, sizeof lab, "%s=%s", SPEC_LABEL_POOL, scope);
    json_t *f = json_pack("{s:[s]}", "label", lab);
    json_t *all = f ? claim_list(d, f, size) : NULL;
    json_decref(f);
    for (size_t i = json_array_size(all); i-- > 0;) {
        json_t *c = json_array_get(all, i);
        if (!claim_is_orphan(
                k, json_object_get(c, "Labels"), json_string_value(json_object_get(c, "Id")),
                json_string_value(json_array_get(json_object_get(c, "Names"), 0)), scope))
            json_array_remove(all, i);
    }
    return all;
}

/* filters with label set to [label]: a new object. */
static json_t *with_label(const json_t *filters, const char *label)
{
    json_t *f = filters ? json_deep_copy(filters) : json_object();
    if (f)
        json_object_set_new(f, "label", json_pack("[s]", label));
    return f;
}

json_t *claim_list_chats(docker_t *d, const kept_t *k, const json_t *filters, bool size)
{
    json_t *fc = with_label(filters, SPEC_LABEL_CONV), *fs = with_label(filters, SPEC_LABEL_SPARE);
    json_t *chats = fc ? claim_list(d, fc, size) : NULL;
    json_t *spares = chats && fs ? claim_list(d, fs, size) : NULL;
    json_decref(fc);
    json_decref(fs);
    if (!spares) {
        json_decref(chats);
        return NULL;
    }
    size_t i;
    json_t *c;
    json_array_foreach(spares, i, c)
    {
        json_t *labels = json_object_get(c, "Labels");
        const char *id = json_string_value(json_object_get(c, "Id"));
        const char *name = json_string_value(json_array_get(json_object_get(c, "Names"), 0));
        char conv[CONVID_MAX + 1], user[CLAIM_USER_MAX + 1];
        if (!json_is_object(labels) || !claim_identity(k, labels, id, name, conv, user))
            continue;
        json_object_set_new(labels, SPEC_LABEL_CONV, json_string(conv));
        json_object_set_new(labels, SPEC_LABEL_USER, json_string(user));
        json_array_append(chats, c);
    }
    json_decref(spares);
    return chats;
}
