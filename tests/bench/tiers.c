/* tiers.c -- talkback-bench --tiers: the paused tier and the resume, each
 * next to what Docker itself takes, side by side in one run:
 *   1. run("true") in a running chat (the baseline);
 *   2. a call to a paused sandbox -- paused by its sandbox manager when a
 *      reaper sweep asks (build/talkback-reaper --once, its clock 10
 *      minutes on) -- run("true") with the unpause, vs `docker start` of a
 *      plain container of the same image: p50s and ratio (target <= 0.1);
 *   3. a resume of a stopped sandbox -- stopped by a reaper sweep, its
 *      clock 2 hours on -- + run("true"), vs the same `docker start`
 *      (target <= 1.0);
 *   4. the memory a paused idle sandbox holds: its cgroup's usage less
 *      inactive page cache, and its containerd shim's RSS and PSS.
 * Calls interleaved, one of each per round.  Run it with the TALKBACK_*
 * environment of the talkback it measures: the reaper it starts must reach
 * that talkback's hub and state_dir.  The chat is reset at the end and the
 * plain container removed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/convid.h"
#include "tests/bench/bench.h"

static const char *env_or(const char *k, const char *dflt)
{
    const char *v = getenv(k);
    return v && *v ? v : dflt;
}

static int64_t shell_us(const char *cmd)
{
    int64_t t0 = bench_now_us();
    if (system(cmd) != 0)
        fprintf(stderr, "talkback-bench: `%s` failed\n", cmd);
    return bench_now_us() - t0;
}

static int64_t call_us(const char *u, const char *conv, bool *noticed)
{
    int64_t t0 = bench_now_us();
    char *text = bench_call(u, conv, "run", json_pack("{s:s}", "command", "true"), NULL);
    int64_t us = bench_now_us() - t0;
    if (noticed)
        *noticed = text && text[0] == '[';
    free(text);
    return us;
}

/* One reaper sweep over chat conv with its clock offset_s on. */
static void sweep(const char *conv, int offset_s)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "build/talkback-reaper --once --reaper_prefix %s --reaper_clock_offset %d "
             ">/dev/null 2>&1",
             conv, offset_s);
    shell_us(cmd);
}

static void kill_container(docker_t *d, const char *ref)
{
    char path[512];
    long st;
    snprintf(path, sizeof path, "/containers/%s/kill", ref);
    docker_call(d, "POST", path, NULL, &st, NULL);
    snprintf(path, sizeof path, "/containers/%s/wait", ref);
    docker_call(d, "POST", path, NULL, &st, NULL);
}

static const char *state_of(docker_t *d, const char *name, char *out, size_t len)
{
    char path[512];
    long st;
    json_t *ans = NULL;
    snprintf(path, sizeof path, "/containers/%s/json", name);
    docker_call(d, "GET", path, NULL, &st, &ans);
    snprintf(out, len, "%s",
             json_string_value(json_object_get(json_object_get(ans, "State"), "Status")) ?: "?");
    json_decref(ans);
    return out;
}

/* 4. */
static void paused_memory(docker_t *d, const char *name)
{
    char path[700], state[32];
    long st;
    json_t *ans = NULL;
    snprintf(path, sizeof path, "/containers/%s/json", name);
    docker_call(d, "GET", path, NULL, &st, &ans);
    char id[72];
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(ans, "Id")) ?: "");
    json_decref(ans);
    ans = NULL;
    snprintf(path, sizeof path, "/containers/%s/stats?stream=false", id);
    docker_call(d, "GET", path, NULL, &st, &ans);
    json_t *ms = json_object_get(ans, "memory_stats");
    json_int_t usage = json_integer_value(json_object_get(ms, "usage"));
    json_t *s = json_object_get(ms, "stats");
    json_int_t cache = json_integer_value(json_object_get(s, "inactive_file"));
    if (!cache)
        cache = json_integer_value(json_object_get(s, "total_inactive_file"));
    int64_t rss, pss;
    bench_shim_mem(id, &rss, &pss);
    printf("memory of a paused idle sandbox (%s): %.1f MiB in its cgroup (usage %.1f MiB less "
           "%.1f MiB inactive page cache); its containerd shim on the host: RSS %.1f MiB, PSS "
           "%.1f MiB\n",
           state_of(d, name, state, sizeof state), (double)(usage - cache) / 1048576.0,
           (double)usage / 1048576.0, (double)cache / 1048576.0, rss / 1024.0, pss / 1024.0);
    json_decref(ans);
}

void bench_tiers(docker_t *d, const char *u, int n)
{
    char conv[64], name[CONVID_NAME_MAX], plain[96], cmd[512], state[32];
    snprintf(conv, sizeof conv, "bench-tiers-%d", (int)getpid());
    convid_container_name(conv, name);
    snprintf(plain, sizeof plain, "%s-plain", conv);
    call_us(u, conv, NULL);
    snprintf(cmd, sizeof cmd,
             "docker create --init --name %s --network %s %s sleep infinity >/dev/null", plain,
             env_or("TALKBACK_NETWORK", "talkback-sandboxes"),
             env_or("TALKBACK_IMAGE", "talkback-sandbox:latest"));
    shell_us(cmd);
    int64_t *base = calloc((size_t)n, sizeof *base), *paused = calloc((size_t)n, sizeof *paused),
            *resumed = calloc((size_t)n, sizeof *resumed),
            *start = calloc((size_t)n, sizeof *start);
    int missed = 0;
    for (int i = 0; i < n; i++) {
        base[i] = call_us(u, conv, NULL);
        sweep(conv, 600); /* paused by the manager */
        if (strcmp(state_of(d, name, state, sizeof state), "paused") != 0)
            missed++;
        if (i == 0)
            paused_memory(d, name);
        bool told = false;
        paused[i] = call_us(u, conv, &told);
        missed += !told;
        kill_container(d, plain);
        snprintf(cmd, sizeof cmd, "docker start %s >/dev/null", plain);
        start[i] = shell_us(cmd);
        sweep(conv, 7200); /* stopped, kept */
        if (strcmp(state_of(d, name, state, sizeof state), "exited") != 0)
            missed++;
        resumed[i] = call_us(u, conv, &told);
        missed += !told;
    }
    double b50 = bench_pct(base, n, 0.5), p50 = bench_pct(paused, n, 0.5),
           r50 = bench_pct(resumed, n, 0.5), s50 = bench_pct(start, n, 0.5);
    printf("run(\"true\") in a running chat: p50 %.1f ms (n=%d)\n", b50, n);
    printf("a call to a paused sandbox (unpause + run(\"true\")): p50 %.1f ms | docker start: p50 "
           "%.0f ms | ratio %.3f (target <= 0.1)\n",
           p50, s50, p50 / s50);
    printf("resume of a stopped sandbox + run(\"true\"): p50 %.0f ms | docker start: p50 %.0f ms | "
           "ratio %.2f (target <= 1.0)\n",
           r50, s50, r50 / s50);
    if (missed)
        printf("  (%d steps did not go as meant: a sweep that did not pause or stop, or a call "
               "without its notice)\n",
               missed);
    free(bench_call(u, conv, "reset", json_object(), NULL));
    snprintf(cmd, sizeof cmd, "docker rm -f %s >/dev/null", plain);
    shell_us(cmd);
    free(base);
    free(paused);
    free(resumed);
    free(start);
}
