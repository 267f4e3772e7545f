/* chatname.c -- the name of a chat's container (see chatname.h). */
#include "kept/chatname.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "kept/claim.h"

/* Inspect a container by name: DOCKER_OK with *info, or the error. */
static docker_err_t chatname_inspect(docker_t *d, const char *name, json_t **info)
{
    char path[CONVID_NAME_MAX + 32];
    long st;
    *info = NULL;
    snprintf(path, sizeof path, "/containers/%s/json", name);
    docker_err_t e = docker_call(d, "GET", path, NULL, &st, info);
    if (e != DOCKER_OK) {
        json_decref(*info);
        *info = NULL;
    }
    return e;
}

json_t *chatname_find(docker_t *d, const kept_t *k, const char *conv, char *name)
{
    convid_container_name(conv, name);
    json_t *info;
    docker_err_t e = chatname_inspect(d, name, &info);
    if (e != DOCKER_ENOTFOUND)
        return info; /* there (or Docker did not answer: the caller finds out) */
    char old[CONVID_NAME_MAX], owner[CONVID_MAX + 1], user[CLAIM_USER_MAX + 1];
    convid_container_name_v1(conv, old);
    if (chatname_inspect(d, old, &info) != DOCKER_OK)
        return NULL;
    json_t *labels = json_object_get(json_object_get(info, "Config"), "Labels");
    if (claim_identity(k, labels, json_string_value(json_object_get(info, "Id")),
                       json_string_value(json_object_get(info, "Name")), owner, user) &&
        strcmp(owner, conv) == 0) {
        snprintf(name, CONVID_NAME_MAX, "%s", old);
        log_debug("chat %s: its sandbox %s has the name of the old scheme", conv, old);
        return info;
    }
    json_decref(info);
    return NULL;
}

void chatname_of(docker_t *d, const kept_t *k, const char *conv, char *name)
{
    json_decref(chatname_find(d, k, conv, name));
}
