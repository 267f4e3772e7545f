/* kept.c -- what a kept talkback sandbox looks like in Docker (see
 * kept.h for the conventions and why each exists; its container bodies
 * are spec/sandbox.h's).
 *
 * Stamps and reasons are tiny files in state_dir on the Docker host, named
 * after the container id: a stamp is an empty file whose mtime is the
 * time, so writing one is an open and a futimens, and nothing in them is
 * ever read from inside a sandbox.
 */
#include "kept/kept.h"

#include "common/convid.h"
#include "common/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- records in state_dir ----------------------------------------------------- */

bool kept_id_ok(const char *s)
{
    size_t n = 0;
    for (; s && s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
            return false;
    return n >= 12 && n <= 64;
}

/* The records of one state_dir: its path, copied from the config key. */
struct kept {
    char dir[4096];
};

kept_t *kept_new(const char *state_dir)
{
    kept_t *k = calloc(1, sizeof *k);
    if (k)
        snprintf(k->dir, sizeof k->dir, "%s", state_dir ? state_dir : "");
    return k;
}

void kept_destroy(kept_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free(*self_p);
    *self_p = NULL;
}

const char *kept_state_dir(const kept_t *k)
{
    return k->dir;
}

/* <state_dir>/<id><suffix> into out; -1 when id is not an id. */
static int record_path(const kept_t *k, const char *id, const char *suffix, char *out,
                       size_t outlen)
{
    if (!kept_id_ok(id)) {
        errno = EINVAL;
        return -1;
    }
    int n = snprintf(out, outlen, "%s/%s%s", k->dir, id, suffix);
    if (n < 0 || (size_t)n >= outlen) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* state_dir 0700 and the files in it 0600, when this process owns them
 * and they were open to others (made by an older talkback, or by hand). */
static void kept_state_tighten(const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
        (st.st_mode & 077)) {
        if (chmod(dir, 0700) == 0)
            log_info("state_dir %s was mode %04o: made 0700 (its records name chats and users)",
                     dir, (unsigned)(st.st_mode & 07777));
    }
    DIR *d = opendir(dir);
    int fd = d ? dirfd(d) : -1;
    struct dirent *de;
    unsigned n = 0;
    while (d && (de = readdir(d))) {
        if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            st.st_uid == geteuid() && (st.st_mode & 077) && fchmodat(fd, de->d_name, 0600, 0) == 0)
            n++;
    }
    if (d)
        closedir(d);
    if (n)
        log_info("state_dir %s: %u records open to others made 0600", dir, n);
}

int kept_state_init(const kept_t *k)
{
    const char *dir = k->dir;
    char path[4096];
    if (!*dir || strlen(dir) >= sizeof path - 64) {
        errno = EINVAL;
        return -1;
    }
    /* mkdir -p */
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0755) && errno != EEXIST)
                return -1;
            *p = '/';
        }
    if (mkdir(path, 0700) && errno != EEXIST)
        return -1;
    kept_state_tighten(path);
    return access(path, W_OK | X_OK);
}

/* Open (making it when asked) and set the mtime of a record file. */
static int stamp_write(const kept_t *k, const char *id, int64_t mtime, int flags)
{
    char path[4200];
    if (record_path(k, id, KEPT_STAMP_SUFFIX, path, sizeof path))
        return -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | flags, 0600);
    if (fd < 0)
        return -1;
    struct timespec ts[2] = { { (time_t)mtime, 0 }, { (time_t)mtime, 0 } };
    int rc = futimens(fd, ts);
    close(fd);
    return rc;
}

int kept_stamp_set(const kept_t *k, const char *id, int64_t mtime)
{
    return stamp_write(k, id, mtime, 0);
}

int kept_stamp_init(const kept_t *k, const char *id, int64_t mtime)
{
    if (stamp_write(k, id, mtime, O_EXCL) == 0)
        return 1;
    return errno == EEXIST ? 0 : -1;
}

int64_t kept_stamp_get(const kept_t *k, const char *id)
{
    char path[4200];
    struct stat st;
    if (record_path(k, id, KEPT_STAMP_SUFFIX, path, sizeof path) || lstat(path, &st) ||
        !S_ISREG(st.st_mode))
        return 0;
    return (int64_t)st.st_mtime;
}

/* Read a short record and remove it: its printable text (malloc'ed) and
 * mtime, or NULL. */
static char *record_take(const kept_t *k, const char *id, const char *suffix, int64_t *mtime)
{
    char path[4200], buf[KEPT_REASON_MAX + 1];
    if (record_path(k, id, suffix, path, sizeof path))
        return NULL;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, KEPT_REASON_MAX) : -1;
    close(fd);
    unlink(path); /* used up */
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] < 0x20 || buf[i] > 0x7e)
            return NULL;
    *mtime = (int64_t)st.st_mtime;
    return strdup(buf);
}

/* Write record <id><suffix> whole (a temporary file, then rename). */
static int record_write(const kept_t *k, const char *id, const char *suffix, const char *data,
                        size_t len)
{
    char path[4200], tmp[4300];
    if (record_path(k, id, suffix, path, sizeof path))
        return -1;
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    bool ok = write(fd, data, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path)) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int kept_agent_set(const kept_t *k, const char *id, const char *version)
{
    return record_write(k, id, KEPT_AGENT_SUFFIX, version, strlen(version));
}

int kept_reason_set(const kept_t *k, const char *id, const char *reason)
{
    return record_write(k, id, KEPT_REASON_SUFFIX, reason, strlen(reason));
}

int kept_paused_set(const kept_t *k, const char *id, const char *reason)
{
    return record_write(k, id, KEPT_PAUSED_SUFFIX, reason, strlen(reason));
}

char *kept_paused_take(const kept_t *k, const char *id, int64_t *since)
{
    return record_take(k, id, KEPT_PAUSED_SUFFIX, since);
}

char *kept_reason_take(const kept_t *k, const char *id, int64_t finished_at)
{
    int64_t mtime = 0;
    char *reason = record_take(k, id, KEPT_REASON_SUFFIX, &mtime);
    /* The reaper writes the reason, then stops: a stop takes seconds. */
    if (reason && (finished_at <= 0 || mtime > finished_at + 5 || finished_at - mtime > 300)) {
        free(reason);
        return NULL;
    }
    return reason;
}

int kept_background_set(const kept_t *k, const char *id, const char *text)
{
    size_t len = strlen(text);
    if (len > KEPT_BACKGROUND_MAX) {
        errno = EFBIG;
        return -1;
    }
    if (len)
        return record_write(k, id, KEPT_BACKGROUND_SUFFIX, text, len);
    char path[4200];
    if (record_path(k, id, KEPT_BACKGROUND_SUFFIX, path, sizeof path))
        return -1;
    return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
}

char *kept_background_take(const kept_t *k, const char *id)
{
    char path[4200];
    if (record_path(k, id, KEPT_BACKGROUND_SUFFIX, path, sizeof path))
        return NULL;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *buf = malloc(KEPT_BACKGROUND_MAX + 1);
    struct stat st;
    ssize_t n =
        buf && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, KEPT_BACKGROUND_MAX) : -1;
    close(fd);
    unlink(path); /* used up: what ran before this stop is said once */
    if (n <= 0) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

bool kept_agent_is(const kept_t *k, const char *id, const char *version)
{
    char path[4200], buf[80];
    if (!version || !*version || record_path(k, id, KEPT_AGENT_SUFFIX, path, sizeof path))
        return false;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return strcmp(buf, version) == 0;
}

int64_t kept_orphan_since(const kept_t *k, const char *id, int64_t now)
{
    char path[4200];
    struct stat st;
    if (record_path(k, id, KEPT_ORPHAN_SUFFIX, path, sizeof path))
        return 0;
    if (lstat(path, &st) == 0)
        return S_ISREG(st.st_mode) ? (int64_t)st.st_mtime : 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return 0;
    struct timespec ts[2] = { { (time_t)now, 0 }, { (time_t)now, 0 } };
    futimens(fd, ts);
    close(fd);
    return now;
}

void kept_orphan_clear(const kept_t *k, const char *id)
{
    char path[4200];
    if (record_path(k, id, KEPT_ORPHAN_SUFFIX, path, sizeof path) == 0)
        unlink(path);
}

void kept_record_drop(const kept_t *k, const char *id)
{
    static const char *const suffixes[] = {
        KEPT_STAMP_SUFFIX,  KEPT_REASON_SUFFIX, KEPT_CLAIM_SUFFIX,      KEPT_AGENT_SUFFIX,
        KEPT_ORPHAN_SUFFIX, KEPT_PAUSED_SUFFIX, KEPT_BACKGROUND_SUFFIX,
    };
    char path[4200];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
        if (record_path(k, id, suffixes[i], path, sizeof path) == 0)
            unlink(path);
}

char **kept_record_ids(const kept_t *k)
{
    DIR *dir = opendir(k->dir);
    if (!dir)
        return NULL;
    size_t n = 0, cap = 16;
    char **ids = calloc(cap + 1, sizeof *ids);
    struct dirent *de;
    while (ids && (de = readdir(dir))) {
        const char *dot = strchr(de->d_name, '.');
        size_t len = dot ? (size_t)(dot - de->d_name) : 0;
        char id[72];
        if (!dot || len >= sizeof id)
            continue;
        memcpy(id, de->d_name, len);
        id[len] = '\0';
        if (!kept_id_ok(id) ||
            (strcmp(dot, KEPT_STAMP_SUFFIX) && strcmp(dot, KEPT_REASON_SUFFIX) &&
             strcmp(dot, KEPT_CLAIM_SUFFIX) && strcmp(dot, KEPT_AGENT_SUFFIX) &&
             strcmp(dot, KEPT_ORPHAN_SUFFIX) && strcmp(dot, KEPT_PAUSED_SUFFIX) &&
             strcmp(dot, KEPT_BACKGROUND_SUFFIX)))
            continue;
        if (n == cap) {
            char **more = realloc(ids, (2 * cap + 1) * sizeof *ids);
            if (!more)
                break;
            ids = more;
            cap *= 2;
        }
        if ((ids[n] = strdup(id)))
            ids[++n] = NULL;
    }
    closedir(dir);
    return ids;
}

void kept_record_ids_free(char ***ids_p)
{
    if (!ids_p || !*ids_p)
        return;
    for (char **p = *ids_p; *p; p++)
        free(*p);
    free(*ids_p);
    *ids_p = NULL;
}

/* ---- tombstones ---------------------------------------------------------------- */

void kept_tombstone_name(const char *sandbox_name, char *out, size_t outlen)
{
    size_t pre = strlen(SPEC_NAME_PREFIX);
    const char *rest = strncmp(sandbox_name, SPEC_NAME_PREFIX, pre) == 0 ? sandbox_name + pre
                                                                         : sandbox_name;
    snprintf(out, outlen, "%s%s", SPEC_TOMB_PREFIX, rest);
}

docker_err_t kept_tombstone_create(docker_t *d, const char *image, const char *conv,
                                   const char *name, const char *reason)
{
    char tname[512], path[600], at[32];
    kept_tombstone_name(name, tname, sizeof tname);
    snprintf(at, sizeof at, "%" PRId64, (int64_t)time(NULL));
    const spec_template_t t = { .image = image };
    const spec_body_t b = { .kind = SPEC_TOMBSTONE, .label = { conv, reason, at } };
    json_t *body = spec_create_body(&t, &b);
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
        /* A sandbox of the old name scheme leaves a tombstone of that name
         * (common/convid.h). */
        char old[CONVID_NAME_MAX];
        convid_container_name_v1(conv, old);
        return strcmp(old, name) != 0 ? kept_tombstone_take(d, conv, old, gone_at) : NULL;
    }
    json_t *labels = json_object_get(json_object_get(info, "Config"), "Labels");
    const char *tconv = json_string_value(json_object_get(labels, SPEC_LABEL_TOMB));
    const char *reason = json_string_value(json_object_get(labels, SPEC_LABEL_REASON));
    const char *at = json_string_value(json_object_get(labels, SPEC_LABEL_GONE_AT));
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
    if (seconds < 60) {
        v = seconds;
        unit = "second";
    } else if (seconds < 3600) {
        v = seconds / 60;
        unit = "minute";
    } else if (seconds < 86400) {
        v = seconds / 3600;
        unit = "hour";
    } else {
        v = seconds / 86400;
        unit = "day";
    }
    snprintf(out, outlen, "%" PRId64 " %s%s", v, unit, v == 1 ? "" : "s");
}
