/* main.c -- talkback-sandbox: the sandbox manager worker.
 *
 * Table of contents:
 *   1. configuration      (common/config.c)
 *   2. Docker connection  (docker/docker.c, API version negotiated)
 *   3. the manager        (sandbox/manager.c: one kept container per chat)
 *   4. its host's room    (sandbox/capacity.c: figures for every HELLO)
 *   5. the worker loop    (hub/worker.c: HELLO, requests, replies)
 */
#include <czmq.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/config.h"
#include "common/log.h"
#include "hub/worker.h"
#include "docker/docker.h"
#include "proto/ops.h"
#include "sandbox/capacity.h"
#include "sandbox/inotify_cap.h"
#include "kept/kept.h"
#include "sandbox/manager.h"

/* The sandbox manager with its options read from the configuration. */
static manager_t *manager_from_config(docker_t *d, const kept_t *kept)
{
    manager_opts_t mo = {
        .tmpl = {
            .image = config_str("image"),
            .network = config_str("network"),
            .runtime = config_str("runtime"),
            .log_max_size = config_str("log_max_size"),
            .memory = config_int("memory"),
            .memory_swap = config_int("memory_swap"),
            .nano_cpus = config_int("nano_cpus"),
            .cpu_shares = config_int("cpu_shares"),
            .pids_limit = config_int("pids_limit"),
        },
        .run_timeout = config_int("run_timeout"),
        .run_timeout_max = config_int("run_timeout_max"),
        .job_answer_ms = config_int("job_answer_ms"),
        .job_log_cap = config_int("job_log_cap"),
        .output_cap = config_int("output_cap"),
        .write_file_max = config_int("write_file_max"),
        .agent_path = config_str("agent_path"),
        .agent_shepherd = config_bool("agent_shepherd"),
        .agent_frame_deadline = config_int("agent_frame_deadline"),
        .background_watch_ms = config_int("background_watch_ms"),
        .warm_pool = config_int("warm_pool"),
        .warm_pool_check = config_int("warm_pool_check"),
        .running = {
            .network = config_str("network"),
            .max_running = config_int("max_running"),
            .max_running_per_user = config_int("max_running_per_user"),
            .idle_stop = config_int("idle_stop"),
        },
        .disk = {
            .image = config_str("image"),
            .cap = config_int("disk_cap"),
            .call_interval = config_int("disk_call_interval"),
            .write_rate = config_int("disk_write_rate"),
            .watch_min_ms = config_int("disk_watch_min_ms"),
        },
        .egress = {
            .network = config_str("network"),
            .record = config_str("egress_record"),
            .check = config_str("egress_check"),
        },
        .mem_floor = config_int("mem_floor"),
        .pictures = {
            .max_count = config_int("image_max_count"),
            .max_bytes = config_int("image_max_bytes"),
            .max_call_bytes = config_int("image_max_call_bytes"),
        },
        .kept = kept,
    };
    return manager_new(d, &mo);
}

/* The spares figure of the HELLO: the manager's warm pool. */
static int spares_of(void *ctx)
{
    return manager_spares(ctx);
}

int main(int argc, char **argv)
{
    /* Every request runs on a thread of its own; glibc would give each
     * busy thread its own malloc arena and keep their pages. */
    mallopt(M_ARENA_MAX, 2);
    if (config_load(argc, argv, "sandbox"))
        return 2;
    log_init("talkback-sandbox", log_level_parse(config_str("log_level")));
    zsys_init();

    char errbuf[256] = "";
    docker_err_t derr;
    const char *host = *config_str("docker_host") ? config_str("docker_host") : NULL;
    docker_t *d = docker_new(host, &derr, errbuf, sizeof errbuf);
    if (!d) {
        log_error("cannot reach Docker: %s", errbuf[0] ? errbuf : docker_strerror(derr));
        return 1;
    }
    log_info("Docker API version %s", docker_api_version(d));

    icap_set(config_int("inotify_max_watches"), config_int("inotify_max_instances"));
    kept_t *kept = kept_new(config_str("state_dir"));
    manager_t *m = kept ? manager_from_config(d, kept) : NULL;
    if (!m) {
        kept_destroy(&kept);
        docker_destroy(&d);
        return 1;
    }

    capacity_t *cap = capacity_new(d, kept, config_str("network"), (int)config_int("heartbeat_ms"),
                                   config_int("max_running"), config_int("keep_max_count"));
    if (!cap) {
        manager_destroy(&m);
        kept_destroy(&kept);
        docker_destroy(&d);
        return 1;
    }
    manager_use_capacity(m, cap);
    capacity_count_spares(cap, spares_of, m);

    worker_opts_t wo = {
        .endpoint = config_str("hub_endpoint"),
        .kind = KIND_SANDBOX,
        .host = config_str("host_name"),
        .heartbeat_ms = (int)config_int("heartbeat_ms"),
        .insecure = config_bool("hub_insecure"),
        .keys_dir = config_str("hub_keys"),
        .cert_path = config_str("hub_cert"),
        .max_jobs = (int)config_int("max_jobs"),
        .ops = manager_ops,
        .ctx = m,
        .hello = capacity_hello,
        .hello_ctx = cap,
    };
    worker_t *w = worker_new(&wo);
    if (!w) {
        capacity_destroy(&cap); /* first: it asks the manager for spares */
        manager_destroy(&m);
        kept_destroy(&kept);
        docker_destroy(&d);
        return 1;
    }
    int rc = worker_run(w);
    log_info("stopping");
    worker_destroy(&w);
    if (!w) {
        capacity_destroy(&cap); /* first: it asks the manager for spares */
        manager_destroy(&m);
        kept_destroy(&kept);
        docker_destroy(&d);
    }
    return rc;
}
