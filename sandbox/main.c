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
#include "sandbox/capacity.h"
#include "sandbox/manager.h"

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

    manager_t *m = manager_new(d);
    if (!m) {
        docker_destroy(&d);
        return 1;
    }

    capacity_t *cap = capacity_new(d, (int)config_int("heartbeat_ms"));
    if (!cap) {
        manager_destroy(&m);
        docker_destroy(&d);
        return 1;
    }
    manager_use_capacity(m, cap);

    worker_opts_t wo = {
        .endpoint = config_str("hub_endpoint"),
        .kind = "sandbox",
        .heartbeat_ms = (int)config_int("heartbeat_ms"),
        .max_jobs = (int)config_int("max_jobs"),
        .handler = manager_handle,
        .ctx = m,
        .hello = capacity_hello,
        .hello_ctx = cap,
    };
    worker_t *w = worker_new(&wo);
    if (!w) {
        manager_destroy(&m);
        capacity_destroy(&cap);
        docker_destroy(&d);
        return 1;
    }
    int rc = worker_run(w);
    log_info("stopping");
    worker_destroy(&w);
    if (!w) {
        manager_destroy(&m);
        capacity_destroy(&cap);
        docker_destroy(&d);
    }
    return rc;
}
