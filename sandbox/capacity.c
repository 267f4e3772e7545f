/* capacity.c -- measure this host's room for sandboxes, for the HELLO
 * (see capacity.h).
 *
 * One thread asks Docker for the chats' sandboxes (by their conversation
 * label, and the claimed spares: kept/claim.h) and counts running and
 * kept ones, asks the manager how many spares its warm pool holds ready,
 * reads MemAvailable from /proc/meminfo and statvfs of Docker's data root
 * (state_dir when that path is not known or not visible here), then
 * sleeps one interval.  The data root is read off a sandbox's inspect (its
 * ResolvConfPath lies in <root>/containers/<id>/), not asked of /info,
 * which the Docker guard refuses.  Figures are kept under a mutex; the HELLO callback copies
 * them.  A measurement that fails keeps the previous figure.
 */
#include "sandbox/capacity.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "kept/claim.h"
#include "kept/kept.h"
#include "proto/ops.h"
#include "sandbox/disk.h"
#include "talk/texts.h"

#ifndef TALKBACK_VERSION
#define TALKBACK_VERSION "dev"
#endif

#define CAPACITY_DRAIN_FILE "draining"

struct capacity {
    docker_t *d;
    const kept_t *kept; /* state_dir: the draining flag's folder */
    int interval_ms;
    int64_t max_running, keep_max_count; /* the caps it reports */
    char network[256];                   /* the sandbox network: whose sandboxes count */
    pthread_t thread;
    pthread_mutex_t mu; /* guards everything below */
    pthread_cond_t cv;
    bool stop;
    bool started;
    bool draining;
    int (*spares)(void *ctx); /* the warm pool's ready spares; NULL: 0 */
    void *spares_ctx;
    capacity_figures_t fig;
    char root[1024]; /* Docker's data root, "" until known */
};

/* <state_dir>/draining into out. */
static int drain_path(const capacity_t *c, char *out, size_t len)
{
    int n = snprintf(out, len, "%s/%s", kept_state_dir(c->kept), CAPACITY_DRAIN_FILE);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Count the chats' sandboxes by state (spares nobody claimed are not
 * chats'); -1 figures when Docker cannot say.  Only those on this
 * manager's sandbox network, as max_running counts them: another talkback
 * on the same Docker (its own network) is not in this host's load.  The
 * id of one of them into one ("" with none). */
static void count_sandboxes(capacity_t *c, capacity_figures_t *f, char one[72])
{
    one[0] = '\0';
    json_t *filters = c->network[0] ? json_pack("{s:[s]}", "network", c->network) : NULL;
    json_t *ans = claim_list_chats(c->d, c->kept, filters, false);
    json_decref(filters);
    int64_t *running = &f->running, *kept = &f->kept;
    *running = *kept = f->paused = -1;
    if (!ans) {
        log_debug("capacity: cannot list sandboxes: Docker did not answer");
        return;
    }
    *running = *kept = f->paused = 0;
    size_t i;
    json_t *x;
    json_array_foreach(ans, i, x)
    {
        const char *state = json_string_value(json_object_get(x, "State"));
        if (!one[0] && kept_id_ok(json_string_value(json_object_get(x, "Id")) ?: ""))
            snprintf(one, 72, "%s", json_string_value(json_object_get(x, "Id")));
        if (state && (!strcmp(state, "exited") || !strcmp(state, "dead")))
            (*kept)++;
        else
            (*running)++; /* a paused one too: it holds a place under max_running */
        if (state && !strcmp(state, "paused"))
            f->paused++;
    }
    json_decref(ans);
}

/* MemAvailable of this machine in KiB, or -1. */
static int64_t mem_free_kb(void)
{
    FILE *f = fopen("/proc/meminfo", "re");
    if (!f)
        return -1;
    char line[256];
    long long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

void capacity_mem_refusal(int64_t avail_kb, int64_t floor, textbuf_t *why)
{
    char have[32], keep[32];
    disk_size_phrase(avail_kb * 1024, have, sizeof have);
    disk_size_phrase(floor, keep, sizeof keep);
    textbuf_printf(why, TX_SB_MEM_FLOOR, have, keep);
}

bool capacity_start_room(int64_t floor, textbuf_t *why)
{
    if (floor <= 0)
        return true;
    int64_t kb = mem_free_kb();
    if (kb < 0 || kb * 1024 >= floor)
        return true;
    log_warn("not starting a sandbox: MemAvailable %" PRId64 " KiB is below mem_floor %" PRId64
             " KiB",
             kb, floor / 1024);
    if (why)
        capacity_mem_refusal(kb, floor, why);
    return false;
}

/* Free KiB of the file system holding path, or -1. */
static int64_t disk_free_kb(const char *path)
{
    struct statvfs sv;
    if (!*path || statvfs(path, &sv) != 0)
        return -1;
    return (int64_t)((unsigned long long)sv.f_bavail * sv.f_frsize / 1024);
}

/* Docker's data root, learnt once (it changes only with a dockerd
 * restart) from sandbox id's ResolvConfPath, <root>/containers/<id>/...:
 * the guard lets a sandbox's inspect through, and refuses /info. */
static void learn_root(capacity_t *c, const char *id)
{
    char path[200];
    long st;
    json_t *info = NULL;
    snprintf(path, sizeof path, "/containers/%s/json", id);
    if (docker_call(c->d, "GET", path, NULL, &st, &info) == DOCKER_OK) {
        const char *rc = json_string_value(json_object_get(info, "ResolvConfPath"));
        char want[100];
        snprintf(want, sizeof want, "/containers/%s/", id);
        const char *at = rc ? strstr(rc, want) : NULL;
        if (at && at > rc && (size_t)(at - rc) < sizeof c->root) {
            pthread_mutex_lock(&c->mu);
            snprintf(c->root, sizeof c->root, "%.*s", (int)(at - rc), rc);
            pthread_mutex_unlock(&c->mu);
        }
    }
    json_decref(info);
}

/* One measurement, stored. */
static void measure(capacity_t *c)
{
    capacity_figures_t f = { .spares = 0 };
    char one[72];
    count_sandboxes(c, &f, one);
    if (!c->root[0] && one[0])
        learn_root(c, one);
    pthread_mutex_lock(&c->mu);
    int (*spares)(void *) = c->spares;
    void *spares_ctx = c->spares_ctx;
    pthread_mutex_unlock(&c->mu);
    f.spares = spares ? spares(spares_ctx) : 0;
    f.mem_free_kb = mem_free_kb();
    f.disk_free_kb = disk_free_kb(c->root);
    if (f.disk_free_kb < 0)
        f.disk_free_kb = disk_free_kb(kept_state_dir(c->kept));
    pthread_mutex_lock(&c->mu);
    if (f.running < 0) {
        f.running = c->fig.running;
        f.kept = c->fig.kept;
        f.paused = c->fig.paused;
    }
    c->fig = f;
    pthread_mutex_unlock(&c->mu);
}

static void *capacity_thread(void *arg)
{
    capacity_t *c = arg;
    for (;;) {
        measure(c);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += c->interval_ms / 1000;
        ts.tv_nsec += (long)(c->interval_ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&c->mu);
        while (!c->stop && pthread_cond_timedwait(&c->cv, &c->mu, &ts) == 0)
            ;
        bool stop = c->stop;
        pthread_mutex_unlock(&c->mu);
        if (stop)
            return NULL;
    }
}

capacity_t *capacity_new(docker_t *d, const kept_t *kept, const char *network, int interval_ms,
                         int64_t max_running, int64_t keep_max_count)
{
    capacity_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->d = d;
    c->kept = kept;
    c->max_running = max_running;
    snprintf(c->network, sizeof c->network, "%s", network ? network : "");
    c->keep_max_count = keep_max_count;
    c->interval_ms = interval_ms > 0 ? interval_ms : 1000;
    c->fig.mem_free_kb = c->fig.disk_free_kb = -1;
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    char path[4200];
    c->draining = drain_path(c, path, sizeof path) == 0 && access(path, F_OK) == 0;
    if (c->draining)
        log_info("this host is draining (%s exists): no new chats are placed here", path);
    measure(c); /* the first HELLO already carries figures */
    c->started = pthread_create(&c->thread, NULL, capacity_thread, c) == 0;
    if (!c->started)
        log_warn(
            "capacity: cannot start the measuring thread; HELLO figures stay as first measured");
    return c;
}

void capacity_destroy(capacity_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    capacity_t *c = *self_p;
    pthread_mutex_lock(&c->mu);
    c->stop = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (c->started)
        pthread_join(c->thread, NULL);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
    *self_p = NULL;
}

void capacity_count_spares(capacity_t *c, int (*spares)(void *ctx), void *ctx)
{
    pthread_mutex_lock(&c->mu);
    c->spares = spares;
    c->spares_ctx = ctx;
    pthread_mutex_unlock(&c->mu);
}

void capacity_fill(proto_map_t *data, const capacity_figures_t *f, bool draining)
{
    proto_map_set_cstr(data, DATA_VERSION, TALKBACK_VERSION);
    proto_map_set_int(data, DATA_RUNNING, f->running);
    proto_map_set_int(data, DATA_KEPT, f->kept);
    proto_map_set_int(data, DATA_PAUSED, f->paused);
    proto_map_set_int(data, DATA_SPARES, f->spares);
    proto_map_set_int(data, DATA_MAX_RUNNING, f->max_running);
    proto_map_set_int(data, DATA_KEEP_MAX_COUNT, f->keep_max_count);
    proto_map_set_int(data, DATA_MEM_FREE_KB, f->mem_free_kb);
    proto_map_set_int(data, DATA_DISK_FREE_KB, f->disk_free_kb);
    proto_map_set_bool(data, DATA_DRAINING, draining);
}

void capacity_hello(proto_map_t *data, void *ctx)
{
    capacity_t *c = ctx;
    pthread_mutex_lock(&c->mu);
    capacity_figures_t f = c->fig;
    f.max_running = c->max_running;
    f.keep_max_count = c->keep_max_count;
    bool draining = c->draining;
    pthread_mutex_unlock(&c->mu);
    capacity_fill(data, &f, draining);
}

bool capacity_draining(capacity_t *c)
{
    pthread_mutex_lock(&c->mu);
    bool on = c->draining;
    pthread_mutex_unlock(&c->mu);
    return on;
}

int capacity_set_draining(capacity_t *c, bool on)
{
    char path[4200];
    if (drain_path(c, path, sizeof path) < 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (on) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (fd >= 0 && !f)
            close(fd);
        if (!f || fputs("draining: no new chats are placed on this host\n", f) < 0) {
            int e = errno;
            if (f)
                fclose(f);
            errno = e;
            return -1;
        }
        if (fclose(f) != 0)
            return -1;
    } else if (unlink(path) != 0 && errno != ENOENT) {
        return -1;
    }
    pthread_mutex_lock(&c->mu);
    c->draining = on;
    pthread_mutex_unlock(&c->mu);
    log_info("this host %s",
             on ? "is draining: no new chats are placed here" : "takes new chats again");
    return 0;
}
