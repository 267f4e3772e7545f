/* main.c -- talkback-gateway: the MCP endpoint and the hub, in one process.
 *
 * Start-up reads the configuration, binds the hub (queue.h) that workers
 * connect to, opens the HTTP front (http.h), then waits for SIGINT or
 * SIGTERM and takes everything down in the reverse order.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/config.h"
#include "common/log.h"
#include "gateway/http.h"
#include "gateway/tools.h"
#include "hub/queue.h"

/* Block SIGINT/SIGTERM in every thread (they are taken by sigwait below)
 * and ignore SIGPIPE (a client that hangs up must not end the process). */
static void gateway_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static queue_t *gateway_hub(void)
{
    const char *bind = config_str("hub_bind");
    const char *record = config_str("record");
    queue_opts_t o = {
        .endpoint = bind[0] ? bind : config_str("hub_endpoint"),
        .heartbeat_ms = (int)config_int("heartbeat_ms"),
        .heartbeat_timeout_ms = (int)config_int("heartbeat_timeout_ms"),
        .worker_wait_ms = (int)config_int("worker_wait_ms"),
        .insecure = config_bool("hub_insecure"),
        .keys_dir = config_str("hub_keys"),
        .hwm = (int)config_int("hub_hwm"),
        .max_message = config_int("hub_max_message"),
        .peer_requests = (int)config_int("hub_peer_requests"),
        .on_host_lost = config_str("on_host_lost"),
        .locate_wait_ms = (int)config_int("locate_wait_ms"),
        .route_cache_max = config_int("route_cache_max"),
        .hosts_file = config_str("hub_hosts_file"),
        .refusal_log_ms = config_int("hub_refusal_log_ms"),
        .record_path = record[0] ? record : NULL,
    };
    return queue_new(&o);
}

static http_t *gateway_http(queue_t *q)
{
    http_opts_t o = {
        .listen = config_str("listen"),
        .queue = q,
        .mcp = {
            .conversation_header = config_str("conversation_header"),
            .user_header = config_str("user_header"),
            .list_ttl_ms = config_int("list_ttl") * 1000,
            .limits = {
                .run_timeout = config_int("run_timeout"),
                .run_timeout_max = config_int("run_timeout_max"),
                .code_run_timeout = config_int("code_run_timeout"),
                .code_timeout_max = config_int("code_timeout_max"),
                .code_compile_timeout = config_int("code_compile_timeout"),
                .call_grace = config_int("call_grace"),
                .client_timeout = config_int("client_timeout"),
                .client_margin_ms = config_int("client_margin_ms"),
                .write_file_max = config_int("write_file_max"),
            },
        },
        .max_body = (size_t)config_int("max_body"),
        .sse_keepalive_s = (int)config_int("sse_keepalive"),
        .allowed_origins = config_str("allowed_origins"),
        .auth_token = config_str("auth_token"),
        .auth_token_file = config_str("auth_token_file"),
        .allowed_hosts = config_str("allowed_hosts"),
        .limits = {
            .max_connections = (unsigned)config_int("max_connections"),
            .max_client_connections = (unsigned)config_int("max_client_connections"),
            .header_timeout_s = (unsigned)config_int("header_timeout"),
            .body_timeout_s = (unsigned)config_int("body_timeout"),
            .body_budget = (size_t)config_int("body_budget"),
        },
    };
    return http_start(&o);
}

int main(int argc, char **argv)
{
    if (config_load(argc, argv, "gateway") != 0)
        return 2;
    log_init("gateway", log_level_parse(config_str("log_level")));
    if (tools_init() != 0) {
        log_error("a tool's inputSchema in gateway/tools.c does not parse");
        return 1;
    }

    sigset_t set;
    gateway_signals(&set);

    queue_t *q = gateway_hub();
    if (!q)
        return 1;
    http_t *h = gateway_http(q);
    if (!h) {
        queue_destroy(&q);
        return 1;
    }

    int sig = 0;
    sigwait(&set, &sig);
    log_info("stopping on signal %d", sig);

    http_stop(&h);
    queue_destroy(&q);
    return 0;
}
