/* disk.c -- the disk cap on the sandbox manager's side (see disk.h).
 *
 * Sizing a writable layer walks it (Docker's SizeRw is a du), so it is
 * never done on a call's path: calls register their container, one thread
 * sizes them one at a time, and a container asked for twice is sized once.
 * After a call, a sandbox is sized at most once per disk_call_interval;
 * while a call runs, again when, writing at disk_write_rate (or the
 * fastest it was seen to grow, if faster) from the last size, it could
 * reach the cap (never sooner than disk_watch_min_ms or
 * four times the last sizing's cost, never later than
 * disk_call_interval).  The list holds only sandboxes with calls running
 * or recent: an entry goes once it is sized and its interval has passed.
 *
 * A sandbox past the cap with calls running is marked: the calls poll
 * disk_over with their cancel check and stop, and the last one's
 * disk_after_call removes the sandbox on its own thread, so the call's
 * answer can say so.  Only the sizing thread frees entries.
 */
#include "sandbox/disk.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/list.h"
#include "common/log.h"
#include "kept/kept.h"
#include "proto/proto.h"
#include "spec/sandbox.h"
#include "talk/texts.h"

typedef struct size_entry {
    strmap_node_t node; /* keyed by id */
    char id[72];
    char *conv, *name;
    bool queued;      /* a sizing after a call is asked for */
    int active;       /* calls running in it now */
    bool over;        /* found past the cap while calls ran */
    int64_t sized_at; /* monotonic ms of the last sizing */
    int64_t next_ms;  /* the next sizing while calls run */
    int64_t rw;       /* its size then, -1: not known */
    int64_t rate;     /* the fastest it was seen to grow, bytes/s */
    int64_t cost_ms;  /* what that sizing took */
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
    strmap_t entries; /* the sandboxes with calls running or recent */
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
    const spec_template_t t = { .image = image };
    const spec_body_t b = { .kind = SPEC_PROBE, .storage = size };
    json_t *body = spec_create_body(&t, &b);
    if (!body)
        return DOCKER_ENOMEM;
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
    snprintf(name, sizeof name, SPEC_PROBE_PREFIX "%ld-%ld", (long)getpid(), (long)time(NULL));
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
static void remove_over_cap(disk_t *k, const char *id, const char *conv, const char *name,
                            int64_t rw)
{
    int64_t cap = k->o.cap;
    char tomb[160], path[200];
    log_info("removing sandbox %s: %" PRId64 " MiB written, over the %" PRId64 " MiB disk cap",
             name, rw >> 20, cap >> 20);
    snprintf(tomb, sizeof tomb, "because it grew past the %" PRId64 " MiB disk cap", cap >> 20);
    kept_tombstone_create(k->d, k->o.image, conv, name, tomb);
    snprintf(path, sizeof path, "/containers/%s?force=1&v=1", id);
    long st;
    json_t *ans = NULL;
    docker_err_t err = docker_call(k->d, "DELETE", path, NULL, &st, &ans);
    if (err != DOCKER_OK && err != DOCKER_ENOTFOUND)
        log_warn("could not remove %s: %s", name, docker_message(ans));
    json_decref(ans);
    kept_record_drop(k->o.kept, id);
    if (k->o.forget)
        k->o.forget(k->o.ctx, conv);
}

static void entry_free(size_entry_t *e)
{
    free(e->conv);
    free(e->name);
    free(e);
}

/* When entry e is due for sizing: while calls run, at next_ms; after a
 * call, one interval after the last sizing; else never. */
static int64_t entry_due(const size_entry_t *e, int64_t every)
{
    if (e->active > 0 && !e->over)
        return e->next_ms;
    if (e->queued && !e->over)
        return e->sized_at + every;
    return INT64_MAX;
}

/* The entry due first (under the lock), when it is due by now; else NULL
 * and *wait_ms until the first one is.  Drops entries with no call
 * running, nothing asked for and their interval passed. */
static size_entry_t *next_due(disk_t *k, int64_t now, int64_t every, int64_t *wait_ms)
{
    size_entry_t *best = NULL;
    int64_t best_due = INT64_MAX;
    strmap_for_each_safe(n, &k->entries) {
        size_entry_t *e = STRMAP_ITEM(n, size_entry_t, node);
        if (e->active == 0 && !e->queued && !e->over && now - e->sized_at >= every) {
            strmap_del(&k->entries, n);
            entry_free(e);
            continue;
        }
        int64_t due = entry_due(e, every);
        if (due < best_due) {
            best_due = due;
            best = e;
        }
    }
    *wait_ms = best_due == INT64_MAX ? 1000 : best_due - now;
    return best && best_due <= now ? best : NULL;
}

/* The next sizing of e while calls run, from its size rw now (see the top
 * of the file). */
static int64_t next_gap(const disk_t *k, const size_entry_t *e, int64_t rw)
{
    int64_t gap = k->o.call_interval * 1000;
    int64_t rate = e->rate > k->o.write_rate ? e->rate : k->o.write_rate;
    if (rate > 0 && rw >= 0) {
        int64_t head = k->o.cap > rw ? k->o.cap - rw : 0;
        int64_t g = head / rate * 1000 + head % rate * 1000 / rate;
        if (g < gap)
            gap = g;
    }
    if (gap < k->o.watch_min_ms)
        gap = k->o.watch_min_ms;
    if (gap < 4 * e->cost_ms)
        gap = 4 * e->cost_ms;
    return gap;
}

/* Size entry e (under the lock, which is let go meanwhile) and act on it:
 * past the cap, its calls are stopped, or with none running it goes. */
static void size_one(disk_t *k, size_entry_t *e)
{
    e->queued = false;
    char id[72];
    snprintf(id, sizeof id, "%s", e->id);
    pthread_mutex_unlock(&k->mu);
    int64_t t0 = proto_mono_ms();
    int64_t rw = size_rw(k->d, id);
    int64_t now = proto_mono_ms();
    pthread_mutex_lock(&k->mu);
    if (e->active > 0 && e->rw >= 0 && rw > e->rw && t0 > e->sized_at) {
        int64_t r = (rw - e->rw) / (t0 - e->sized_at) * 1000; /* faster than the setting says */
        if (r > e->rate)
            e->rate = r;
    }
    e->sized_at = now;
    e->cost_ms = now - t0;
    e->rw = rw;
    e->next_ms = now + next_gap(k, e, rw);
    log_debug("sized %s: %" PRId64 " MiB in %" PRId64 " ms (%d calls running); next in %" PRId64
              " ms",
              e->name, rw >> 20, e->cost_ms, e->active, e->next_ms - now);
    if (rw <= k->o.cap || e->over)
        return;
    if (e->active > 0) {
        e->over = true; /* the calls stop; the last one's end removes it */
        pthread_cond_broadcast(&k->cv);
        log_info("stopping the calls in sandbox %s: %" PRId64 " MiB written, past the %" PRId64
                 " MiB disk cap",
                 e->name, rw >> 20, k->o.cap >> 20);
        return;
    }
    char *conv = strdup(e->conv), *name = strdup(e->name);
    pthread_mutex_unlock(&k->mu);
    if (conv && name)
        remove_over_cap(k, id, conv, name, rw);
    free(conv);
    free(name);
    pthread_mutex_lock(&k->mu);
}

static void *size_thread(void *arg)
{
    disk_t *k = arg;
    pthread_mutex_lock(&k->mu);
    while (!k->stopping) {
        int64_t every = k->o.call_interval * 1000, wait_ms;
        size_entry_t *e = next_due(k, proto_mono_ms(), every, &wait_ms);
        if (e) {
            size_one(k, e);
            continue;
        }
        if (wait_ms > 1000)
            wait_ms = 1000;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += wait_ms / 1000;
        ts.tv_nsec += (wait_ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&k->cv, &k->mu, &ts);
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
    char why[512], cap[32], rate[32];
    disk_size_phrase(k->o.cap, cap, sizeof cap);
    disk_size_phrase(k->o.write_rate, rate, sizeof rate);
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
        "A sandbox is sized while its calls run (again before it could reach the cap writing "
        "%s a second, at most every %" PRId64 " s) and after them: a call past the cap is "
        "stopped and the sandbox removed; the reaper sizes them every disk_interval",
        cap, why, rate, k->o.call_interval);
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
    strmap_for_each_safe(n, &k->entries) {
        strmap_del(&k->entries, n);
        entry_free(STRMAP_ITEM(n, size_entry_t, node));
    }
    strmap_free(&k->entries);
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
    free(k);
    *self_p = NULL;
}

bool disk_enforced(const disk_t *k)
{
    return k && k->enforced;
}

int64_t disk_storage(const disk_t *k)
{
    return disk_enforced(k) ? k->size : 0;
}

/* The entry of container id, made when missing (under the lock); NULL
 * without memory. */
static size_entry_t *entry_get(disk_t *k, const char *id, const char *conv, const char *name)
{
    size_entry_t *e = STRMAP_ITEM(strmap_get(&k->entries, id), size_entry_t, node);
    if (e || !(e = calloc(1, sizeof *e)))
        return e;
    snprintf(e->id, sizeof e->id, "%s", id);
    e->conv = strdup(conv);
    e->name = strdup(name);
    e->rw = -1;
    e->sized_at = proto_mono_ms() - k->o.call_interval * 1000;
    if (!e->conv || !e->name) {
        entry_free(e);
        return NULL;
    }
    strmap_put(&k->entries, &e->node, e->id); /* none was there */
    return e;
}

void disk_call_begin(disk_t *k, const char *id, const char *conv, const char *name)
{
    if (!k || !k->running || !kept_id_ok(id) || !conv || !name)
        return;
    pthread_mutex_lock(&k->mu);
    size_entry_t *e = entry_get(k, id, conv, name);
    if (e && e->active++ == 0) {
        /* The first sizing under this call: from the last size when it is
         * recent, else soon (calls shorter than that are sized after). */
        int64_t now = proto_mono_ms(), soon = now + k->o.watch_min_ms;
        int64_t from = e->rw >= 0 && now - e->sized_at < k->o.call_interval * 1000
                           ? e->sized_at + next_gap(k, e, e->rw)
                           : soon;
        e->next_ms = from > soon ? from : soon;
        pthread_cond_signal(&k->cv);
    }
    pthread_mutex_unlock(&k->mu);
}

bool disk_over(disk_t *k, const char *id, int64_t *written)
{
    if (!k || !k->running || !id)
        return false;
    pthread_mutex_lock(&k->mu);
    size_entry_t *e = STRMAP_ITEM(strmap_get(&k->entries, id), size_entry_t, node);
    bool over = e && e->over;
    if (over && written)
        *written = e->rw;
    pthread_mutex_unlock(&k->mu);
    return over;
}

void disk_after_call(disk_t *k, const char *id, const char *conv, const char *name)
{
    if (!k || !k->running || !kept_id_ok(id))
        return;
    pthread_mutex_lock(&k->mu);
    size_entry_t *e = entry_get(k, id, conv, name);
    if (!e) {
        pthread_mutex_unlock(&k->mu);
        return;
    }
    if (e->active > 0)
        e->active--;
    if (e->over && e->active == 0) {
        /* Its calls were stopped for the cap: it goes now, here. */
        int64_t rw = e->rw;
        e->over = false;
        e->rw = -1;
        char *c = strdup(e->conv), *n = strdup(e->name);
        pthread_mutex_unlock(&k->mu);
        if (c && n)
            remove_over_cap(k, id, c, n, rw);
        free(c);
        free(n);
        return;
    }
    e->queued = true;
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

void disk_capped_line(int64_t disk_cap, int64_t written, textbuf_t *t)
{
    char cap[32], wrote[32];
    disk_size_phrase(disk_cap, cap, sizeof cap);
    snprintf(wrote, sizeof wrote, "%" PRId64 " MiB",
             (written > disk_cap ? written : disk_cap) >> 20);
    textbuf_printf(t, TX_SB_DISK_REMOVED, wrote, cap, cap);
}

void disk_hint(const disk_t *k, int64_t disk_cap, const char *out, size_t len, textbuf_t *t)
{
    if (!out || (!memmem(out, len, "No space left on device", 23) &&
                 !memmem(out, len, "Disk quota exceeded", 19)))
        return;
    char cap[32];
    disk_size_phrase(disk_cap, cap, sizeof cap);
    if (disk_enforced(k))
        textbuf_printf(t, TX_SB_DISK_CAPPED, cap);
    else
        textbuf_printf(t, TX_SB_DISK_HOST_FULL, cap);
}
