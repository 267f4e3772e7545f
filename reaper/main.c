/* main.c -- talkback-reaper: idle stop, disk cap, eviction.
 *
 * Table of contents:
 *   1. configuration     (common/config.c: idle_stop, disk_cap, keep_*, ...)
 *   2. Docker connection (docker/docker.c)
 *   3. the hub link (hub/worker.c, kind "reaper"): answers "sweep"
 *      requests, and lets a sweep ask the sandbox manager which chats have
 *      calls in flight
 *   4. --dry-run / --once: one sweep (reaper/reaper.c), print, exit
 *   5. otherwise: a clock thread sweeping every reaper_interval (idle,
 *      eviction) and disk_interval (disk cap) beside the hub link
 */
#include <czmq.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "hub/worker.h"
#include "docker/docker.h"
#include "proto/ops.h"
#include "kept/kept.h"
#include "reaper/reaper.h"
#include "talk/texts.h"

static docker_t *docker;
static worker_t *hub;
static pthread_mutex_t sweep_mu = PTHREAD_MUTEX_INITIALIZER; /* one sweep at a time */
static volatile bool stopping;
static reaper_opts_t policy; /* read from config once, in main */
static int64_t disk_interval_s, reaper_interval_s;

static void *clock_thread(void *arg)
{
    (void)arg;
    int64_t next_idle = 0, next_disk = 0;
    while (!stopping) {
        int64_t now = proto_mono_ms();
        reaper_t r = { .o = &policy, .d = docker, .hub = hub };
        pthread_mutex_lock(&sweep_mu);
        if (now >= next_disk) {
            reaper_sweep_disk(&r);
            next_disk = now + disk_interval_s * 1000;
        }
        if (now >= next_idle) {
            reaper_sweep_idle(&r);
            reaper_sweep_paused(&r);
            reaper_sweep_evict(&r);
            reaper_sweep_records(&r);
            next_idle = now + reaper_interval_s * 1000;
        }
        pthread_mutex_unlock(&sweep_mu);
        for (int i = 0; i < 10 && !stopping; i++)
            usleep(100000);
    }
    return NULL;
}

static void *hub_thread(void *arg)
{
    (void)arg;
    worker_run(hub);
    return NULL;
}

/* The reaper's table of contents: the settings, Docker, the hub, then a
 * sweep every reaper_interval until a signal.  It is long because it reads
 * every setting it hands on, one line each, in the one place that reads
 * the configuration. */
int main(int argc, char **argv)
{
    /* Every request runs on a thread of its own; glibc would give each
     * busy thread its own malloc arena and keep their pages. */
    mallopt(M_ARENA_MAX, 2);
    if (config_load(argc, argv, "reaper"))
        return 2;
    log_init("talkback-reaper", log_level_parse(config_str("log_level")));
    kept_t *kept = kept_new(config_str("state_dir"));
    if (!kept)
        return 1;
    /* Made 0700 (its records 0600) here too: the reaper may start first. */
    if (kept_state_init(kept) != 0)
        log_warn("cannot use state_dir %s (%s): sandboxes' last calls and stop reasons are kept "
                 "there",
                 kept_state_dir(kept), strerror(errno));
    policy = (reaper_opts_t){
        .idle_stop = config_int("idle_stop"),
        .idle_pause = config_int("idle_pause"),
        .max_paused = config_int("max_paused"),
        .disk_cap = config_int("disk_cap"),
        .keep_max_age = config_int("keep_max_age"),
        .keep_max_count = config_int("keep_max_count"),
        .keep_max_bytes = config_int("keep_max_bytes"),
        .orphan_grace = config_int("orphan_grace"),
        .clock_offset = config_int("reaper_clock_offset"),
        .prefix = config_str("reaper_prefix"),
        .image = config_str("image"),
        .kept = kept,
    };
    disk_interval_s = config_int("disk_interval");
    reaper_interval_s = config_int("reaper_interval");
    char errbuf[256] = "";
    docker_err_t derr;
    const char *host = *config_str("docker_host") ? config_str("docker_host") : NULL;
    docker = docker_new(host, &derr, errbuf, sizeof errbuf);
    if (!docker) {
        log_error("cannot reach Docker: %s", errbuf[0] ? errbuf : docker_strerror(derr));
        kept_destroy(&kept);
        return 1;
    }
    zsys_init();
    reaper_serve_t serve = { .o = &policy, .d = docker, .mu = &sweep_mu };
    worker_opts_t wo = {
        .endpoint = config_str("hub_endpoint"),
        .kind = KIND_REAPER,
        .host = config_str("host_name"),
        .heartbeat_ms = (int)config_int("heartbeat_ms"),
        .insecure = config_bool("hub_insecure"),
        .keys_dir = config_str("hub_keys"),
        .cert_path = config_str("hub_cert"),
        .max_jobs = 4,
        .ops = reaper_ops,
        .ctx = &serve,
    };
    hub = worker_new(&wo);
    if (!hub) {
        docker_destroy(&docker);
        kept_destroy(&kept);
        return 1;
    }
    if (config_bool("dry_run") || config_bool("once")) {
        /* One sweep; the hub link runs beside it to ask what is busy. */
        pthread_t link;
        pthread_create(&link, NULL, hub_thread, NULL);
        reaper_t r = { .o = &policy, .d = docker, .hub = hub, .dry_run = config_bool("dry_run") };
        int rc = reaper_sweep(&r);
        printf("%s: %d stopped, %d removed, %d paused, %d Docker calls\n",
               r.dry_run ? "dry run" : "sweep", r.stopped, r.removed, r.paused, r.calls);
        worker_stop(hub);
        pthread_join(link, NULL);
        worker_destroy(&hub);
        docker_destroy(&docker);
        kept_destroy(&kept);
        return rc ? 1 : 0;
    }
    pthread_t clock;
    pthread_create(&clock, NULL, clock_thread, NULL);
    int rc = worker_run(hub);
    stopping = true;
    pthread_join(clock, NULL);
    worker_destroy(&hub);
    docker_destroy(&docker);
    kept_destroy(&kept);
    return rc;
}
