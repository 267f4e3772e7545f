/* rules.c -- the table of calls the Docker guard lets through (see
 * rules.h).  "{id}" stands for a container or exec id or name, "{net}" for
 * the sandbox network's name. */
#include "guard/rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/sandbox.h"

#define LEN(lit) (sizeof(lit) - 1)

typedef struct {
    const char *method, *pattern;
    gbody_kind_t body;
    gtarget_t target;
    bool tomb, probe, hijack, spare;
} grule_t;

static const grule_t rules[] = {
    { "GET", "/_ping", GB_NONE, GT_NONE, false, false, false, false },
    { "HEAD", "/_ping", GB_NONE, GT_NONE, false, false, false, false },
    { "GET", "/version", GB_NONE, GT_NONE, false, false, false, false },
    { "GET", "/containers/json", GB_NONE, GT_LIST, false, false, false, false },
    { "POST", "/containers/create", GB_CREATE, GT_NONE, false, false, false, false },
    { "GET", "/containers/{id}/json", GB_NONE, GT_CONTAINER, true, true, false, false },
    { "DELETE", "/containers/{id}", GB_NONE, GT_CONTAINER, true, true, false, false },
    { "POST", "/containers/{id}/start", GB_NONE, GT_CONTAINER, false, false, false, false },
    { "POST", "/containers/{id}/stop", GB_NONE, GT_CONTAINER, false, false, false, false },
    { "POST", "/containers/{id}/kill", GB_NONE, GT_CONTAINER, false, false, false, false },
    { "POST", "/containers/{id}/restart", GB_NONE, GT_CONTAINER, false, false, false, false },
    { "POST", "/containers/{id}/wait", GB_NONE, GT_CONTAINER, false, false, false, false },
    /* The paused tier (docs/sandbox.md): the manager pauses an idle
     * sandbox when the reaper asks, and a call unpauses it. */
    { "POST", "/containers/{id}/pause", GB_NONE, GT_CONTAINER, false, false, false, false },
    { "POST", "/containers/{id}/unpause", GB_NONE, GT_CONTAINER, false, false, false, false },
    { "POST", "/containers/{id}/attach", GB_NONE, GT_CONTAINER, false, false, true, false },
    { "PUT", "/containers/{id}/archive", GB_STREAM, GT_CONTAINER, false, false, false, false },
    { "GET", "/containers/{id}/archive", GB_NONE, GT_CONTAINER, false, false, false, false },
    { "HEAD", "/containers/{id}/archive", GB_NONE, GT_CONTAINER, false, false, false, false },
    { "POST", "/containers/{id}/exec", GB_EXEC_CREATE, GT_CONTAINER, false, false, false, false },
    { "POST", "/exec/{id}/start", GB_EXEC_START, GT_EXEC, false, false, true, false },
    { "GET", "/exec/{id}/json", GB_NONE, GT_EXEC, false, false, false, false },
    { "GET", "/networks/{net}", GB_NONE, GT_NONE, false, false, false, false },
    { "POST", "/networks/{net}/connect", GB_NET_CONNECT, GT_NONE, false, false, false, false },
    { "POST", "/networks/{net}/disconnect", GB_NET_DISCONNECT, GT_NONE, false, false, false,
      false },
    { "POST", "/networks/create", GB_NET_CREATE, GT_NONE, false, false, false, false },
    /* The warm pool's claim: a spare renamed to a chat's name (the query
     * is checked by grules_rename_query_ok). */
    { "POST", "/containers/{id}/rename", GB_NONE, GT_CONTAINER, false, false, false, true },
};

/* Whether s[0..n) is a Docker id or name: [A-Za-z0-9][A-Za-z0-9_.-]*. */
static bool is_id(const char *s, size_t n)
{
    if (n == 0 || n > 128 ||
        !strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", s[0]))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", s[i]) ||
            !s[i])
            return false;
    return true;
}

/* Match path p against pattern pat; the {id} goes into rt. */
static bool match(const char *pat, const char *p, const char *net, groute_t *rt, const char *path0)
{
    while (*pat) {
        if (!strncmp(pat, "{id}", 4) || !strncmp(pat, "{net}", 5)) {
            bool is_net = pat[1] == 'n';
            size_t n = strcspn(p, "/");
            if (is_net ? (strlen(net) != n || strncmp(p, net, n)) : !is_id(p, n))
                return false;
            if (!is_net) {
                memcpy(rt->id, p, n);
                rt->id[n] = '\0';
                rt->id_at = (size_t)(p - path0);
            }
            p += n;
            pat += is_net ? 5 : 4;
        } else if (*pat++ != *p++) {
            return false;
        }
    }
    return *p == '\0';
}

/* Skip "/vMAJOR.MINOR" (1.24 or later).  The rest of the path, or NULL. */
static const char *skip_version(const char *path, char *why, size_t whylen)
{
    if (path[0] != '/' || path[1] != 'v' || path[2] < '0' || path[2] > '9')
        return path;
    char *end;
    long major = strtol(path + 2, &end, 10);
    long minor = *end == '.' ? strtol(end + 1, &end, 10) : -1;
    if (minor < 0 || *end != '/' || major < 1 || (major == 1 && minor < 24)) {
        snprintf(why, whylen, "an API version before 1.24 or a malformed version prefix");
        return NULL;
    }
    return end;
}

int grules_match(const char *method, const char *path, const char *network, groute_t *rt, char *why,
                 size_t whylen)
{
    memset(rt, 0, sizeof *rt);
    if (strstr(path, "//") || strstr(path, "..") ||
        strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-") !=
            strlen(path)) {
        snprintf(why, whylen, "a path with an escape, a dot segment or an empty segment");
        return -1;
    }
    const char *p = skip_version(path, why, whylen);
    if (!p)
        return -1;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        if (strcmp(rules[i].method, method) || !match(rules[i].pattern, p, network, rt, path))
            continue;
        rt->body = rules[i].body;
        rt->target = rules[i].target;
        rt->tomb = rules[i].tomb;
        rt->probe = rules[i].probe;
        rt->hijack = rules[i].hijack;
        rt->spare = rules[i].spare;
        return 0;
    }
    snprintf(why, whylen, "%.10s %.200s", method, path);
    return -1;
}

bool grules_create_query_ok(const char *query)
{
    if (strncmp(query, "name=" SPEC_NAME_PREFIX, LEN("name=" SPEC_NAME_PREFIX)) != 0)
        return false;
    return is_id(query + 5, strlen(query + 5));
}

bool grules_probe_query_ok(const char *query)
{
    return strncmp(query, "name=" SPEC_PROBE_PREFIX, LEN("name=" SPEC_PROBE_PREFIX)) == 0 &&
           grules_create_query_ok(query);
}

bool grules_spare_name_ok(const char *name)
{
    static const char pre[] = SPEC_SPARE_PREFIX;
    return strncmp(name, pre, sizeof pre - 1) == 0 &&
           strlen(name) == sizeof pre - 1 + SPEC_SPARE_HEX &&
           strspn(name + sizeof pre - 1, "0123456789abcdef") == SPEC_SPARE_HEX;
}

bool grules_chat_name_ok(const char *name)
{
    const size_t pre = LEN(SPEC_NAME_PREFIX);
    size_t n = strlen(name);
    if (n < pre + 1 + 17 || n > pre + 128 + 17 || strncmp(name, SPEC_NAME_PREFIX, pre) != 0 ||
        !is_id(name, n))
        return false;
    if (name[n - 17] != '-' || strspn(name + n - 16, "0123456789abcdef") != 16)
        return false;
    return !grules_spare_name_ok(name) &&
           strncmp(name, SPEC_TOMB_PREFIX, LEN(SPEC_TOMB_PREFIX)) != 0 &&
           strncmp(name, SPEC_PROBE_PREFIX, LEN(SPEC_PROBE_PREFIX)) != 0;
}

bool grules_rename_query_ok(const char *query)
{
    return strncmp(query, "name=", 5) == 0 && grules_chat_name_ok(query + 5);
}

bool grules_create_query_fits(const char *query, bool spare_labels)
{
    bool spare_name = strncmp(query, "name=", 5) == 0 && grules_spare_name_ok(query + 5);
    return spare_labels == spare_name;
}

gowner_t grules_owner(const char *name, const json_t *labels)
{
    if (json_object_get(labels, SPEC_LABEL_TOMB) &&
        !strncmp(name, "/" SPEC_TOMB_PREFIX, LEN("/" SPEC_TOMB_PREFIX)))
        return GOWN_TOMBSTONE;
    if (json_object_get(labels, SPEC_LABEL_PROBE))
        return strncmp(name, "/" SPEC_PROBE_PREFIX, LEN("/" SPEC_PROBE_PREFIX)) ? GOWN_FOREIGN
                                                                                : GOWN_PROBE;
    if (json_is_string(json_object_get(labels, SPEC_LABEL_SPARE)) && name[0] == '/') {
        if (grules_spare_name_ok(name + 1))
            return GOWN_SPARE;
        return grules_chat_name_ok(name + 1) ? GOWN_SANDBOX : GOWN_FOREIGN;
    }
    if (json_is_string(json_object_get(labels, SPEC_LABEL_CONV)) &&
        !strncmp(name, "/" SPEC_NAME_PREFIX, LEN("/" SPEC_NAME_PREFIX)))
        return GOWN_SANDBOX;
    return GOWN_FOREIGN;
}
