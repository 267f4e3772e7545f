/* kept.c -- what a kept talkback sandbox looks like in Docker (see
 * kept.h for the conventions and why each exists).
 *
 * Stamps and reasons are tiny files written and read through the archive
 * endpoint, not exec: it costs no process in the sandbox, works on stopped
 * containers, and a tar header carries the mtime that is the stamp.
 */
#include "docker/kept.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

docker_err_t kept_last_used(docker_t *d, const char *id, int64_t *mtime)
{
    char *data = NULL;
    size_t len;
    *mtime = 0;
    docker_err_t e = docker_get_file(d, id, KEPT_STAMP_PATH, 64, &data, &len, mtime);
    free(data);
    if (e == DOCKER_ENOTFOUND) {
        *mtime = 0;
        /* A missing file and a missing container look alike here; callers
         * that care inspect the container. */
    }
    return e;
}

docker_err_t kept_write_stop_reason(docker_t *d, const char *id, const char *reason)
{
    long st;
    json_t *ans = NULL;
    docker_err_t e = docker_put_file(d, id, KEPT_REASON_PATH, reason, strlen(reason), 0644, 0, &st, &ans);
    json_decref(ans);
    return e;
}

char *kept_stop_reason(docker_t *d, const char *id, int64_t finished_at)
{
    char *data = NULL;
    size_t len;
    int64_t mtime = 0;
    if (docker_get_file(d, id, KEPT_REASON_PATH, 256, &data, &len, &mtime) != DOCKER_OK)
        return NULL;
    /* The reaper writes the reason, then stops: a stop takes seconds. */
    if (finished_at <= 0 || mtime > finished_at + 5 || finished_at - mtime > 300 || len == 0) {
        free(data);
        return NULL;
    }
    return data;
}

void kept_tombstone_name(const char *sandbox_name, char *out, size_t outlen)
{
    const char *rest = strncmp(sandbox_name, "talkback-", 9) == 0 ? sandbox_name + 9 : sandbox_name;
    snprintf(out, outlen, "talkback-gone-%s", rest);
}

docker_err_t kept_tombstone_create(docker_t *d, const char *image, const char *conv,
                                   const char *name, const char *reason)
{
    char tname[512], path[600], at[32];
    kept_tombstone_name(name, tname, sizeof tname);
    snprintf(at, sizeof at, "%" PRId64, (int64_t)time(NULL));
    json_t *body = json_pack("{s:s, s:[s], s:{s:s, s:s, s:s}, s:{s:s, s:{s:s}}}",
                             "Image", image, "Cmd", "true",
                             "Labels", KEPT_LABEL_TOMB, conv, KEPT_LABEL_REASON, reason,
                             KEPT_LABEL_GONE_AT, at,
                             "HostConfig", "NetworkMode", "none", "LogConfig", "Type", "none");
    if (!body)
        return DOCKER_ENOMEM;
    long st;
    json_t *ans = NULL;
    snprintf(path, sizeof path, "/containers/create?name=%s", tname);
    docker_err_t e = docker_call(d, "POST", path, body, &st, &ans);
    json_decref(body);
    json_decref(ans);
    if (e == DOCKER_ECONFLICT) {
        /* An older tombstone of the same chat: replace it. */
        snprintf(path, sizeof path, "/containers/%s?force=1", tname);
        docker_call(d, "DELETE", path, NULL, &st, NULL);
        return kept_tombstone_create(d, image, conv, name, reason);
    }
    return e;
}

char *kept_tombstone_take(docker_t *d, const char *conv, const char *name, int64_t *gone_at)
{
    char tname[512], path[600];
    kept_tombstone_name(name, tname, sizeof tname);
    snprintf(path, sizeof path, "/containers/%s/json", tname);
    long st;
    json_t *info = NULL;
    if (docker_call(d, "GET", path, NULL, &st, &info) != DOCKER_OK) {
        json_decref(info);
        return NULL;
    }
    json_t *labels = json_object_get(json_object_get(info, "Config"), "Labels");
    const char *tconv = json_string_value(json_object_get(labels, KEPT_LABEL_TOMB));
    const char *reason = json_string_value(json_object_get(labels, KEPT_LABEL_REASON));
    const char *at = json_string_value(json_object_get(labels, KEPT_LABEL_GONE_AT));
    char *out = NULL;
    if (tconv && strcmp(tconv, conv) == 0 && reason) {
        out = strdup(reason);
        *gone_at = at ? strtoll(at, NULL, 10) : 0;
    }
    json_decref(info);
    if (out) {
        snprintf(path, sizeof path, "/containers/%s?force=1", tname);
        docker_call(d, "DELETE", path, NULL, &st, NULL);
    }
    return out;
}

int64_t kept_parse_time(const char *s)
{
    if (!s || strncmp(s, "0001-", 5) == 0)
        return 0;
    struct tm tm = { 0 };
    const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end)
        return 0;
    return (int64_t)timegm(&tm);
}

void kept_human_age(int64_t seconds, char *out, size_t outlen)
{
    if (seconds < 0)
        seconds = 0;
    int64_t v;
    const char *unit;
    if (seconds < 60) { v = seconds; unit = "second"; }
    else if (seconds < 3600) { v = seconds / 60; unit = "minute"; }
    else if (seconds < 86400) { v = seconds / 3600; unit = "hour"; }
    else { v = seconds / 86400; unit = "day"; }
    snprintf(out, outlen, "%" PRId64 " %s%s", v, unit, v == 1 ? "" : "s");
}
