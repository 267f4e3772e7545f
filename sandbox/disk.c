/* disk.c -- the disk cap on the sandbox manager's side (see disk.h).
 *
 * Sizing a writable layer walks it (Docker's SizeRw is a du), so it is
 * never done on a call's path: calls queue their container, one thread
 * sizes them one at a time, each at most once per disk_call_interval, and
 * a container queued twice is sized once.  The queue holds only sandboxes
 * with recent calls: an entry goes once it is sized and its interval has
 * passed.
 */
#include "sandbox/disk.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "docker/kept.h"
#include "proto/proto.h"

typedef struct size_entry {
    char id[72];
    char *conv, *name;
    bool queued;
    int64_t sized_at; /* monotonic ms of the last sizing */
    struct size_entry *next;
} size_entry_t;

struct disk {
    docker_t *d;
    disk_opts_t o;
    bool enforced;
    int64_t size;    /* StorageOpt size of new sandboxes */
    char driver[32]; /* Docker's storage driver */
    pthread_t thread;
    bool running, stopping;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_entry_t *entries;
};

void disk_size_phrase(int64_t bytes, char *out, size_t outlen)
{
    static const struct {
        int64_t unit;
        const char *name;
    } units[] = {
        { 1LL << 30, "GiB" },
        { 1LL << 20, "MiB" },
        { 1LL << 10, "KiB" },
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (bytes >= units[i].unit) {
            if (bytes % units[i].unit == 0)
                snprintf(out, outlen, "%" PRId64 " %s", bytes / units[i].unit, units[i].name);
            else
                snprintf(out, outlen, "%.1f %s", (double)bytes / (double)units[i].unit,
                         units[i].name);
            return;
        }
    snprintf(out, outlen, "%" PRId64 " bytes", bytes);
}

/* Create the throwaway container `name` (StorageOpt size when size > 0);
 * Docker's answer goes to *ans. */
static docker_err_t probe_create(docker_t *d, const char *image, const char *name, int64_t size,
                                 json_t **ans)
{
    char path[160];
    json_t *body = json_pack("{s:s, s:[s], s:{s:s}, s:{s:s, s:{s:s}}}", "Image", image, "Cmd",
                             "true", "Labels", "talkback.probe", "storage", "HostConfig",
                             "NetworkMode", "none", "LogConfig", "Type", "none");
    if (!body)
        return DOCKER_ENOMEM;
    if (size > 0) {
        char v[32];
        snprintf(v, sizeof v, "%" PRId64, size);
        json_object_set_new(json_object_get(body, "HostConfig"), "StorageOpt",
                            json_pack("{s:s}", "size", v));
    }
    snprintf(path, sizeof path, "/containers/create?name=%s", name);
    long st;
    docker_err_t e = docker_call(d, "POST", path, body, &st, ans);
    json_decref(body);
    return e;
}

static void probe_remove(docker_t *d, const char *name)
{
    char path[160];
    long st;
    snprintf(path, sizeof path, "/containers/%s?force=1", name);
    docker_call(d, "DELETE", path, NULL, &st, NULL);
}

/* Can Docker cap a container's writable layer here?  Two throwaway
 * containers tell.  The first, plain, says which storage driver Docker
 * uses and how big the image is: overlay2's size counts only what the
 * container writes, but btrfs (and zfs, vfs) count the image it starts
 * from as well, so there the size asked for is the image plus disk_cap
 * (plus a sixteenth and 16 MiB for the file system's own bookkeeping).
 * The second asks for that size: Docker refuses it at create where the
 * storage cannot do it (overlay2 on ext4: "--storage-opt is supported only
 * for overlay over xfs with 'pquota' mount option").  The size to use is
 * left in k->size; why not, in why. */
static bool probe(disk_t *k, char *why, size_t whylen)
{
    char name[96], path[200];
    snprintf(name, sizeof name, "talkback-probe-%ld-%ld", (long)getpid(), (long)time(NULL));
    json_t *ans = NULL;
    docker_err_t e = probe_create(k->d, k->o.image, name, 0, &ans);
    snprintf(why, whylen, "%s", docker_message(ans));
    json_decref(ans);
    if (e != DOCKER_OK && e != DOCKER_ECONFLICT)
        return false;
    snprintf(path, sizeof path, "/containers/%s/json?size=1", name);
    long st;
    json_t *info = NULL;
    e = docker_call(k->d, "GET", path, NULL, &st, &info);
    const char *driver =
        json_string_value(json_object_get(json_object_get(info, "GraphDriver"), "Name"));
    int64_t image = (int64_t)json_integer_value(json_object_get(info, "SizeRootFs"));
    snprintf(k->driver, sizeof k->driver, "%s", driver ? driver : "?");
    json_decref(info);
    probe_remove(k->d, name);
    k->size = k->o.cap;
    if (strcmp(k->driver, "overlay2") != 0)
        k->size += image + image / 16 + (16 << 20);
    ans = NULL;
    e = probe_create(k->d, k->o.image, name, k->size, &ans);
    snprintf(why, whylen, "%s", e == DOCKER_OK ? "" : docker_message(ans));
    json_decref(ans);
    if (e == DOCKER_OK || e == DOCKER_ECONFLICT)
        probe_remove(k->d, name);
    return e == DOCKER_OK;
}

/* SizeRw of one container; -1 when Docker cannot say. */
static int64_t size_rw(docker_t *d, const char *id)
{
    char path[300];
    /* filters={"id":["<id>"]}, URL-encoded; an id is hex. */
    snprintf(path, sizeof path,
             "/containers/json?all=1&size=1&filters=%%7B%%22id%%22%%3A%%5B%%22%s%%22%%5D%%7D", id);
    long st;
    json_t *ans = NULL;
    int64_t n = -1;
    if (docker_call(d, "GET", path, NULL, &st, &ans) == DOCKER_OK && json_array_size(ans) == 1)
        n = (int64_t)json_integer_value(
            json_object_get(json_array_get(ans, 0), "SizeRw")); /* omitted when 0 */
    json_decref(ans);
    return n;
}

/* Past the cap: a tombstone, then the sandbox goes (as the reaper does). */
static void remove_over_cap(disk_t *k, const size_entry_t *e, int64_t rw)
{
    int64_t cap = k->o.cap;
    char tomb[160], path[200];
    log_info("removing sandbox %s: %" PRId64 " MiB written, over the %" PRId64 " MiB disk cap",
             e->name, rw >> 20, cap >> 20);
    snprintf(tomb, sizeof tomb, "because it grew past the %" PRId64 " MiB disk cap", cap >> 20);
    kept_tombstone_create(k->d, k->o.image, e->conv, e->name, tomb);
    snprintf(path, sizeof path, "/containers/%s?force=1&v=1", e->id);
    long st;
    json_t *ans = NULL;
    docker_err_t err = docker_call(k->d, "DELETE", path, NULL, &st, &ans);
    if (err != DOCKER_OK && err != DOCKER_ENOTFOUND)
        log_warn("could not remove %s: %s", e->name, docker_message(ans));
    json_decref(ans);
    kept_record_drop(e->id);
    if (k->o.forget)
        k->o.forget(k->o.ctx, e->conv);
}

static void entry_free(size_entry_t *e)
{
    free(e->conv);
    free(e->name);
    free(e);
}

/* The next entry due for sizing (under the lock); drops entries whose
 * interval has passed with nothing queued. */
static size_entry_t *next_due(disk_t *k, int64_t now, int64_t every)
{
    for (size_entry_t **pp = &k->entries; *pp;) {
        size_entry_t *e = *pp;
        if (e->queued && now - e->sized_at >= every)
            return e;
        if (!e->queued && now - e->sized_at >= every) {
            *pp = e->next;
            entry_free(e);
            continue;
        }
        pp = &e->next;
    }
    return NULL;
}

static void *size_thread(void *arg)
{
    disk_t *k = arg;
    pthread_mutex_lock(&k->mu);
    while (!k->stopping) {
        int64_t every = k->o.call_interval * 1000;
        size_entry_t *e = next_due(k, proto_mono_ms(), every);
        if (!e) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1;
            pthread_cond_timedwait(&k->cv, &k->mu, &ts);
            continue;
        }
        e->queued = false;
        e->sized_at = proto_mono_ms();
        size_entry_t copy = *e;
        copy.conv = strdup(e->conv);
        copy.name = strdup(e->name);
        pthread_mutex_unlock(&k->mu);
        int64_t rw = size_rw(k->d, copy.id);
        bool busy = copy.conv && k->o.busy && k->o.busy(k->o.ctx, copy.conv) > 0;
        if (rw > k->o.cap && copy.conv && copy.name && !busy)
            remove_over_cap(k, &copy, rw);
        free(copy.conv);
        free(copy.name);
        pthread_mutex_lock(&k->mu);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

disk_t *disk_new(docker_t *d, const disk_opts_t *o)
{
    disk_t *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->d = d;
    k->o = *o;
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    char why[512], cap[32];
    disk_size_phrase(k->o.cap, cap, sizeof cap);
    k->enforced = probe(k, why, sizeof why);
    if (k->enforced) {
        log_info(
            "disk_cap %s is enforced at write time (storage driver %s: StorageOpt size %" PRId64
            " on every new sandbox)",
            cap, k->driver, k->size);
        return k;
    }
    log_warn(
        "disk_cap %s is NOT enforced at write time: no container with a size limit could be made "
        "(%s); it needs a data root on xfs mounted with pquota or on btrfs with quota groups "
        "(deploy/setup: TALKBACK_QUOTA_DATA_ROOT). "
        "A sandbox past the cap is removed once it is seen: sized after its calls (at most every "
        "%" PRId64 " s) and by the reaper every disk_interval",
        cap, why, k->o.call_interval);
    if (k->o.call_interval > 0 && pthread_create(&k->thread, NULL, size_thread, k) == 0)
        k->running = true;
    return k;
}

void disk_destroy(disk_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    disk_t *k = *self_p;
    if (k->running) {
        pthread_mutex_lock(&k->mu);
        k->stopping = true;
        pthread_cond_signal(&k->cv);
        pthread_mutex_unlock(&k->mu);
        pthread_join(k->thread, NULL);
    }
    while (k->entries) {
        size_entry_t *e = k->entries;
        k->entries = e->next;
        entry_free(e);
    }
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
    free(k);
    *self_p = NULL;
}

bool disk_enforced(const disk_t *k)
{
    return k && k->enforced;
}

void disk_template(const disk_t *k, json_t *host_config)
{
    if (!disk_enforced(k) || !host_config)
        return;
    char size[32];
    snprintf(size, sizeof size, "%" PRId64, k->size);
    json_object_set_new(host_config, "StorageOpt", json_pack("{s:s}", "size", size));
}

void disk_after_call(disk_t *k, const char *id, const char *conv, const char *name)
{
    if (!k || !k->running || !kept_id_ok(id))
        return;
    pthread_mutex_lock(&k->mu);
    size_entry_t *e = k->entries;
    while (e && strcmp(e->id, id) != 0)
        e = e->next;
    if (!e && (e = calloc(1, sizeof *e))) {
        snprintf(e->id, sizeof e->id, "%s", id);
        e->conv = strdup(conv);
        e->name = strdup(name);
        e->sized_at = proto_mono_ms() - k->o.call_interval * 1000;
        if (!e->conv || !e->name) {
            entry_free(e);
            e = NULL;
        } else {
            e->next = k->entries;
            k->entries = e;
        }
    }
    if (e) {
        e->queued = true;
        pthread_cond_signal(&k->cv);
    }
    pthread_mutex_unlock(&k->mu);
}

void disk_hint(const disk_t *k, int64_t disk_cap, const char *out, size_t len, textbuf_t *t)
{
    if (!out || (!memmem(out, len, "No space left on device", 23) &&
                 !memmem(out, len, "Disk quota exceeded", 19)))
        return;
    char cap[32];
    disk_size_phrase(disk_cap, cap, sizeof cap);
    if (disk_enforced(k))
        textbuf_printf(
            t,
            "[No space left: this sandbox's disk is capped at %s (setting `disk_cap`), and this "
            "write would have passed it. Delete what is no longer needed (`du -xsh /work /root "
            "/tmp "
            "/var/cache/apt 2>/dev/null` shows what is big; `apt-get clean` drops apt's "
            "downloads), "
            "then write less.]\n",
            cap);
    else
        textbuf_printf(
            t,
            "[No space left: the sandbox host's own disk is full (this sandbox may write up to %s, "
            "and one that writes more is removed with all its files). Nothing in the sandbox can "
            "fix "
            "that: tell the user the sandbox host's disk is full.]\n",
            cap);
}
