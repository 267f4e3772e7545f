/* main.c -- talkback-judge: the run_code worker.
 *
 * Table of contents:
 *   1. configuration   (common/config.c)
 *   2. the worker loop (hub/worker.c), kind "judge", connected to the
 *                      hub -- on this host (ipc://) or another (tcp://)
 *   3. the judge       (judge/judge.c: save, compile, run, compare;
 *                      judge/languages.c: the language table;
 *                      judge/compare.c: PASS/FAIL and prompts)
 * Several judges may serve one hub; requests are spread over them and a
 * request whose judge dies is retried on another.
 */
#include <czmq.h>
#include <malloc.h>

#include "common/config.h"
#include "common/log.h"
#include "hub/worker.h"
#include "judge/judge.h"
#include "proto/ops.h"

int main(int argc, char **argv)
{
    /* Every request runs on a thread of its own; glibc would give each
     * busy thread its own malloc arena and keep their pages. */
    mallopt(M_ARENA_MAX, 2);
    if (config_load(argc, argv, "judge"))
        return 2;
    log_init("talkback-judge", log_level_parse(config_str("log_level")));
    zsys_init();
    judge_opts_t jo = {
        .code_run_timeout = config_int("code_run_timeout"),
        .code_timeout_max = config_int("code_timeout_max"),
        .code_compile_timeout = config_int("code_compile_timeout"),
        .code_output_limit = config_int("code_output_limit"),
        .call_grace = config_int("call_grace"),
        .memory = config_int("memory"),
    };
    worker_opts_t wo = {
        .endpoint = config_str("hub_endpoint"),
        .kind = KIND_JUDGE,
        .host = config_str("host_name"),
        .heartbeat_ms = (int)config_int("heartbeat_ms"),
        .insecure = config_bool("hub_insecure"),
        .keys_dir = config_str("hub_keys"),
        .cert_path = config_str("hub_cert"),
        .max_jobs = (int)config_int("max_jobs"),
        .ops = judge_ops,
        .ctx = &jo,
    };
    worker_t *w = worker_new(&wo);
    if (!w)
        return 1;
    int rc = worker_run(w);
    log_info("stopping");
    worker_destroy(&w);
    return rc;
}
