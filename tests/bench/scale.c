/* scale.c -- talkback-bench --scale N: how the cost grows with the number
 * of chats on one host, in one run:
 *   1. run("true") p50 in one chat with 2 chats present;
 *   2. N chats made (8 first calls at a time), all idle and running: the
 *      host memory per sandbox (its cgroup's usage less inactive page
 *      cache, plus its containerd shim's PSS), run("true") p50 in the same
 *      chat, and one reaper sweep over them (nothing to do: the sweep's
 *      own cost);
 *   3. a sweep with the reaper's clock 10 minutes on: all but the measuring
 *      chat paused (the sweep's time with the pauses), the memory per
 *      sandbox again, and run("true") p50 in the measuring chat among N-1
 *      paused ones.
 * Memory is read from the host's cgroup v1 files
 * (/sys/fs/cgroup/memory/docker/<id>/); run it on the Docker host, as root,
 * with the talkback's TALKBACK_* environment (the reaper it starts reaches
 * that talkback's hub and state_dir).  Every chat is reset at the end.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/convid.h"
#include "tests/bench/bench.h"

#define SCALE_AT_ONCE 8
#define SCALE_CALLS   30

typedef struct {
    const char *u, *prefix, *tool;
    int from, to, step;
} scale_job_t;

static void chat_name(const char *prefix, int i, char *conv, size_t len)
{
    snprintf(conv, len, "%s-%d", prefix, i);
}

static void *scale_main(void *arg)
{
    scale_job_t *j = arg;
    char conv[96];
    for (int i = j->from; i < j->to; i += j->step) {
        chat_name(j->prefix, i, conv, sizeof conv);
        json_t *args = strcmp(j->tool, "run") == 0 ? json_pack("{s:s}", "command", "true")
                                                   : json_object();
        free(bench_call(j->u, conv, j->tool, args, NULL));
    }
    return NULL;
}

/* tool (run "true", or reset) in chats from..to-1, SCALE_AT_ONCE at once. */
static void scale_all(const char *u, const char *prefix, const char *tool, int from, int to)
{
    pthread_t th[SCALE_AT_ONCE];
    scale_job_t j[SCALE_AT_ONCE];
    for (int k = 0; k < SCALE_AT_ONCE; k++) {
        j[k] = (scale_job_t){ u, prefix, tool, from + k, to, SCALE_AT_ONCE };
        pthread_create(&th[k], NULL, scale_main, &j[k]);
    }
    for (int k = 0; k < SCALE_AT_ONCE; k++)
        pthread_join(th[k], NULL);
}

/* run("true") p50 in chat conv, ms. */
static double call_p50(const char *u, const char *conv)
{
    int64_t v[SCALE_CALLS];
    for (int i = 0; i < SCALE_CALLS; i++) {
        int64_t t0 = bench_now_us();
        free(bench_call(u, conv, "run", json_pack("{s:s}", "command", "true"), NULL));
        v[i] = bench_now_us() - t0;
    }
    return bench_pct(v, SCALE_CALLS, 0.5);
}

/* A cgroup v1 memory figure of container id, bytes (-1 when unreadable). */
static int64_t cg_read(const char *id, const char *file, const char *key)
{
    char path[300], line[256];
    snprintf(path, sizeof path, "/sys/fs/cgroup/memory/docker/%s/%s", id, file);
    FILE *f = fopen(path, "r");
    long long v = -1, x;
    char k[64];
    while (f && fgets(line, sizeof line, f)) {
        if (!key && sscanf(line, "%lld", &x) == 1)
            v = x;
        else if (key && sscanf(line, "%63s %lld", k, &x) == 2 && strcmp(k, key) == 0)
            v = x;
    }
    if (f)
        fclose(f);
    return v;
}

/* The host memory of chats 0..n-1 (cgroup less inactive cache, shim PSS):
 * per sandbox averages, MiB; state: how many Docker says are paused. */
static void scale_memory(docker_t *d, const char *prefix, int n, const char *when)
{
    double cg = 0, shim = 0;
    int seen = 0, paused = 0;
    for (int i = 0; i < n; i++) {
        char conv[96], name[CONVID_NAME_MAX], path[300];
        chat_name(prefix, i, conv, sizeof conv);
        convid_container_name(conv, name);
        long st;
        json_t *ans = NULL;
        snprintf(path, sizeof path, "/containers/%s/json", name);
        docker_call(d, "GET", path, NULL, &st, &ans);
        const char *id = json_string_value(json_object_get(ans, "Id"));
        int64_t usage = id ? cg_read(id, "memory.usage_in_bytes", NULL) : -1;
        int64_t cache = id ? cg_read(id, "memory.stat", "total_inactive_file") : -1;
        int64_t rss = 0, pss = 0;
        if (id)
            bench_shim_mem(id, &rss, &pss);
        paused += json_is_true(json_object_get(json_object_get(ans, "State"), "Paused"));
        if (usage >= 0) {
            cg += (double)(usage - (cache > 0 ? cache : 0)) / 1048576.0;
            shim += pss / 1024.0;
            seen++;
        }
        json_decref(ans);
    }
    if (!seen) {
        printf("memory with %d chats %s: no cgroup v1 memory files readable here\n", n, when);
        return;
    }
    printf("memory per sandbox with %d chats %s (%d paused): %.2f MiB in its cgroup + %.2f MiB "
           "its shim's PSS = %.2f MiB\n",
           n, when, paused, cg / seen, shim / seen, (cg + shim) / seen);
}

/* One reaper sweep over chats of prefix, its clock offset_s on: seconds. */
static double scale_sweep(const char *prefix, int offset_s, char *last, size_t len)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "build/talkback-reaper --once --reaper_prefix %s- --reaper_clock_offset %d "
             "2>/dev/null | tail -n 1",
             prefix, offset_s);
    int64_t t0 = bench_now_us();
    FILE *f = popen(cmd, "r");
    last[0] = '\0';
    if (f) {
        if (!fgets(last, (int)len, f))
            last[0] = '\0';
        pclose(f);
    }
    last[strcspn(last, "\n")] = '\0';
    return (bench_now_us() - t0) / 1e6;
}

void bench_tiers_scale(docker_t *d, const char *u, int n)
{
    char prefix[64], conv0[96], line[256];
    snprintf(prefix, sizeof prefix, "bench-scale-%d", (int)getpid());
    chat_name(prefix, 0, conv0, sizeof conv0);
    scale_all(u, prefix, "run", 0, 2);
    double p2 = call_p50(u, conv0);
    int64_t t0 = bench_now_us();
    scale_all(u, prefix, "run", 2, n);
    printf("made %d more chats in %.1f s (%d first calls at a time)\n", n - 2,
           (bench_now_us() - t0) / 1e6, SCALE_AT_ONCE);
    sleep(2);
    scale_memory(d, prefix, n, "idle, running");
    double pn = call_p50(u, conv0);
    double s_idle = scale_sweep(prefix, 0, line, sizeof line);
    printf("one reaper sweep over %d running chats, nothing to do: %.2f s (%s)\n", n, s_idle, line);
    double s_pause = scale_sweep(prefix, 600, line, sizeof line);
    printf("one reaper sweep pausing %d chats: %.2f s (%s)\n", n, s_pause, line);
    scale_memory(d, prefix, n, "idle, paused");
    double pp = call_p50(u, conv0); /* its first call unpauses it */
    printf("run(\"true\") p50 in one chat: %.1f ms with 2 chats | %.1f ms with %d running | "
           "%.1f ms with %d paused beside it\n",
           p2, pn, n, pp, n - 1);
    scale_all(u, prefix, "reset", 0, n);
}
