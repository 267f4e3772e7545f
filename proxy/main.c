/* main.c -- talkback-proxy: the reply repair between LibreChat and the
 * model server.
 *
 * An MCP server cannot touch the model's reply, so this small proxy does:
 * when the model ran a program in this turn and its final reply holds no
 * code block, the reply ends with that program, labelled -- the last one
 * that passed, or if none did, the last one that ran.
 *
 *   server.c    the OpenAI-compatible front (libmicrohttpd), every path
 *               passed through to proxy_upstream
 *   upstream.c  one request to the model server (libcurl, own thread)
 *   repair.c    pure: finding the turn's programs, deciding, rendering
 *
 * Start-up reads the configuration (proxy_* keys in common/config.c),
 * starts the front, then waits for SIGINT or SIGTERM.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

#include "common/config.h"
#include "common/log.h"
#include "proxy/server.h"
#include "proxy/upstream.h"

/* SIGINT/SIGTERM are taken by sigwait below; a client that hangs up must
 * not end the process (SIGPIPE). */
static void proxy_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static server_t *proxy_server(void)
{
    server_opts_t o = {
        .listen = config_str("proxy_listen"),
        .upstream = config_str("proxy_upstream"),
        .tools = {
            .run_code = config_str("proxy_tool_run_code"),
            .write_file = config_str("proxy_tool_write_file"),
            .run = config_str("proxy_tool_run"),
        },
        .max_body = (size_t)config_int("proxy_max_body"),
        .connect_timeout_s = (long)config_int("proxy_connect_timeout"),
    };
    return server_start(&o);
}

int main(int argc, char **argv)
{
    if (config_load(argc, argv, "proxy") != 0)
        return 2;
    log_init("proxy", log_level_parse(config_str("log_level")));

    sigset_t set;
    proxy_signals(&set);
    if (upstream_global_init() != 0) {
        log_error("libcurl could not be initialised");
        return 1;
    }
    server_t *s = proxy_server();
    if (!s) {
        upstream_global_cleanup();
        return 1;
    }

    int sig = 0;
    sigwait(&set, &sig);
    log_info("signal %d: stopping", sig);

    server_stop(&s);
    upstream_global_cleanup();
    return 0;
}
