/* warm.c -- talkback-bench --warm: the warm pool and the resume of a
 * stopped sandbox, each next to what Docker itself takes, in one run:
 *   1. a new chat's first run("true") (a spare ready before each) vs
 *      `docker run --rm` of the same image, interleaved: p50s and ratio;
 *      with --cold-url, the same first call on a talkback without the
 *      pool alongside;
 *   2. 8 new chats' first calls at once (the pool full before): wall time;
 *   3. a stopped chat's resume + run("true") vs `docker start` of a plain
 *      container of the same image (and the Engine API start alone),
 *      interleaved: p50s and ratio;
 *   4. the memory a spare costs: its cgroup's usage less inactive page
 *      cache, as `docker stats` shows it, and the RSS and PSS of the
 *      containerd shim Docker keeps on the host for it, per spare.
 * The image and network are the sandbox manager's defaults, or
 * TALKBACK_IMAGE / TALKBACK_NETWORK when set.  Every chat is reset at the
 * end; the plain container is removed.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/convid.h"
#include "tests/bench/bench.h"

#define WARM_AT_ONCE 8

static const char *env_or(const char *k, const char *dflt)
{
    const char *v = getenv(k);
    return v && *v ? v : dflt;
}

/* Spares nobody claimed, running now: their ids into ids (up to max). */
static int spares_ready(docker_t *d, char ids[][72], int max)
{
    long st;
    json_t *ans = NULL;
    /* filters={"label":["talkback.spare"],"status":["running"]} */
    docker_call(
        d, "GET",
        "/containers/json?filters=%7B%22label%22%3A%5B%22talkback.spare%22%5D%2C%22status%22"
        "%3A%5B%22running%22%5D%7D",
        NULL, &st, &ans);
    int n = 0;
    size_t i;
    json_t *c;
    json_array_foreach(ans, i, c)
    {
        const char *name = json_string_value(json_array_get(json_object_get(c, "Names"), 0));
        if (name && strncmp(name, "/talkback-spare-", 16) == 0 && n < max && ids)
            snprintf(ids[n], 72, "%s", json_string_value(json_object_get(c, "Id")) ?: "");
        if (name && strncmp(name, "/talkback-spare-", 16) == 0)
            n++;
    }
    json_decref(ans);
    return n;
}

/* Until want spares are ready (at most 20 s): whether they are. */
static bool wait_spares(docker_t *d, int want)
{
    for (int i = 0; i < 200; i++) {
        if (spares_ready(d, NULL, 0) >= want)
            return true;
        usleep(100000);
    }
    return false;
}

/* Until the pool is full: want spares, or a count that has not grown for
 * 4 s (a pool smaller than want); the count. */
static int wait_full(docker_t *d, int want)
{
    int last = -1, same = 0;
    for (int i = 0; i < 120; i++) {
        int n = spares_ready(d, NULL, 0);
        if (n >= want)
            return n;
        same = n == last ? same + 1 : 0;
        if (same >= 8)
            return n;
        last = n;
        usleep(500000);
    }
    return last;
}

static int64_t first_call(const char *u, const char *conv)
{
    int64_t t0 = bench_now_us();
    free(bench_call(u, conv, "run", json_pack("{s:s}", "command", "true"), NULL));
    return bench_now_us() - t0;
}

static int64_t shell_us(const char *cmd)
{
    int64_t t0 = bench_now_us();
    if (system(cmd) != 0)
        fprintf(stderr, "talkback-bench: `%s` failed\n", cmd);
    return bench_now_us() - t0;
}

typedef struct {
    const char *u;
    char conv[96];
} at_once_t;

static void *at_once_main(void *arg)
{
    at_once_t *a = arg;
    free(bench_call(a->u, a->conv, "run", json_pack("{s:s}", "command", "true"), NULL));
    return NULL;
}

/* WARM_AT_ONCE new chats' first calls at once at u: wall seconds. */
static double at_once(const char *u, const char *prefix)
{
    at_once_t a[WARM_AT_ONCE];
    pthread_t th[WARM_AT_ONCE];
    int64_t t0 = bench_now_us();
    for (int i = 0; i < WARM_AT_ONCE; i++) {
        a[i].u = u;
        snprintf(a[i].conv, sizeof a[i].conv, "%s-%d", prefix, i);
        pthread_create(&th[i], NULL, at_once_main, &a[i]);
    }
    for (int i = 0; i < WARM_AT_ONCE; i++)
        pthread_join(th[i], NULL);
    double wall = (bench_now_us() - t0) / 1e6;
    for (int i = 0; i < WARM_AT_ONCE; i++)
        free(bench_call(u, a[i].conv, "reset", json_object(), NULL));
    return wall;
}

/* 1 and 2. */
static void warm_first(docker_t *d, const char *u, const char *cold_url, int n, const char *prefix)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "docker run --rm --network %s %s true >/dev/null 2>&1",
             env_or("TALKBACK_NETWORK", "talkback-sandboxes"),
             env_or("TALKBACK_IMAGE", "talkback-sandbox:latest"));
    int64_t *fc = calloc((size_t)n, sizeof *fc), *cc = calloc((size_t)n, sizeof *cc),
            *dr = calloc((size_t)n, sizeof *dr);
    int missed = 0;
    for (int i = 0; i < n; i++) {
        char conv[96];
        missed += !wait_spares(d, 1);
        snprintf(conv, sizeof conv, "%s-f%d", prefix, i);
        fc[i] = first_call(u, conv);
        free(bench_call(u, conv, "reset", json_object(), NULL));
        dr[i] = shell_us(cmd);
        if (cold_url) {
            snprintf(conv, sizeof conv, "%s-cf%d", prefix, i);
            cc[i] = first_call(cold_url, conv);
            free(bench_call(cold_url, conv, "reset", json_object(), NULL));
        }
    }
    double f50 = bench_pct(fc, n, 0.5), d50 = bench_pct(dr, n, 0.5);
    printf("new chat's first run(\"true\"), a spare ready: p50 %.1f ms (p99 %.1f) | docker run "
           "--rm: p50 %.0f ms "
           "| ratio %.3f (target <= 0.10; n=%d, pool empty before %d of them)\n",
           f50, bench_pct(fc, n, 0.99), d50, f50 / d50, n, missed);
    if (cold_url)
        printf("  the same first call without the pool (warm_pool 0): p50 %.0f ms, ratio %.2f\n",
               bench_pct(cc, n, 0.5), bench_pct(cc, n, 0.5) / d50);
    int ready = wait_full(d, WARM_AT_ONCE);
    printf("%d new chats' first calls at once (%d spares ready): wall %.2f s\n", WARM_AT_ONCE,
           ready, at_once(u, "warm-8"));
    if (cold_url)
        printf("  the same without the pool: wall %.2f s\n", at_once(cold_url, "cold-8"));
    free(fc);
    free(cc);
    free(dr);
}

/* Stop the container named or id'd ref (kill: no grace to wait out). */
static void kill_container(docker_t *d, const char *ref)
{
    char path[512];
    long st;
    snprintf(path, sizeof path, "/containers/%s/kill", ref);
    docker_call(d, "POST", path, NULL, &st, NULL);
    snprintf(path, sizeof path, "/containers/%s/wait", ref);
    docker_call(d, "POST", path, NULL, &st, NULL);
}

/* 3. */
static void warm_resume(docker_t *d, const char *u, int n, const char *prefix)
{
    char conv[96], name[CONVID_NAME_MAX], plain[96], cmd[512], path[512];
    snprintf(conv, sizeof conv, "%s-resume", prefix);
    convid_container_name(conv, name);
    free(bench_call(u, conv, "run", json_pack("{s:s}", "command", "true"), NULL));
    snprintf(plain, sizeof plain, "%s-plain", prefix);
    snprintf(cmd, sizeof cmd,
             "docker create --init --name %s --network %s %s sleep infinity >/dev/null", plain,
             env_or("TALKBACK_NETWORK", "talkback-sandboxes"),
             env_or("TALKBACK_IMAGE", "talkback-sandbox:latest"));
    shell_us(cmd);
    int64_t *rs = calloc((size_t)n, sizeof *rs), *ds = calloc((size_t)n, sizeof *ds),
            *as = calloc((size_t)n, sizeof *as);
    long st;
    for (int i = 0; i < n; i++) {
        kill_container(d, plain);
        snprintf(cmd, sizeof cmd, "docker start %s >/dev/null", plain);
        ds[i] = shell_us(cmd);
        kill_container(d, plain);
        snprintf(path, sizeof path, "/containers/%s/start", plain);
        int64_t t0 = bench_now_us();
        docker_call(d, "POST", path, NULL, &st, NULL);
        as[i] = bench_now_us() - t0;
        kill_container(d, name);
        rs[i] = first_call(u, conv);
    }
    double r50 = bench_pct(rs, n, 0.5), d50 = bench_pct(ds, n, 0.5);
    printf("resume of a stopped chat + run(\"true\"): p50 %.0f ms | docker start: p50 %.0f ms | "
           "ratio %.2f "
           "(target <= 1.0) | Engine API start alone: p50 %.0f ms (n=%d)\n",
           r50, d50, r50 / d50, bench_pct(as, n, 0.5), n);
    free(bench_call(u, conv, "reset", json_object(), NULL));
    snprintf(cmd, sizeof cmd, "docker rm -f %s >/dev/null", plain);
    shell_us(cmd);
    free(rs);
    free(ds);
    free(as);
}

/* The host-side process Docker keeps per running container (its
 * containerd shim, found by "-id <id>" in its command line): RSS and PSS
 * in KiB into rss, pss (0 when not found). */
void bench_shim_mem(const char *id, int64_t *rss, int64_t *pss)
{
    *rss = *pss = 0;
    DIR *dir = opendir("/proc");
    struct dirent *de;
    char want[700];
    snprintf(want, sizeof want, "-id %s", id);
    while (dir && (de = readdir(dir))) {
        char path[300], cmd[4096];
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/cmdline", de->d_name);
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(cmd, 1, sizeof cmd - 1, f) : 0;
        if (f)
            fclose(f);
        for (size_t i = 0; i < n; i++)
            if (!cmd[i])
                cmd[i] = ' ';
        cmd[n] = '\0';
        if (!strstr(cmd, "containerd-shim") || !strstr(cmd, want))
            continue;
        snprintf(path, sizeof path, "/proc/%s/smaps_rollup", de->d_name);
        f = fopen(path, "r");
        char line[256];
        long long v;
        while (f && fgets(line, sizeof line, f)) {
            if (sscanf(line, "Rss: %lld", &v) == 1)
                *rss = v;
            else if (sscanf(line, "Pss: %lld", &v) == 1)
                *pss = v;
        }
        if (f)
            fclose(f);
        break;
    }
    if (dir)
        closedir(dir);
}

/* 4. */
static void warm_memory(docker_t *d)
{
    char ids[8][72];
    wait_spares(d, 2);
    int n = spares_ready(d, ids, 8);
    for (int i = 0; i < n && i < 8; i++) {
        char path[700];
        long st;
        json_t *ans = NULL;
        snprintf(path, sizeof path, "/containers/%s/stats?stream=false", ids[i]);
        docker_call(d, "GET", path, NULL, &st, &ans);
        json_t *ms = json_object_get(ans, "memory_stats");
        json_int_t usage = json_integer_value(json_object_get(ms, "usage"));
        json_t *s = json_object_get(ms, "stats");
        json_int_t cache = json_integer_value(json_object_get(s, "inactive_file"));
        if (!cache)
            cache = json_integer_value(json_object_get(s, "total_inactive_file"));
        int64_t rss, pss;
        bench_shim_mem(ids[i], &rss, &pss);
        printf("memory of spare %.12s: %.1f MiB in its cgroup (usage %.1f MiB less %.1f MiB "
               "inactive page cache); "
               "its containerd shim on the host: RSS %.1f MiB, PSS %.1f MiB\n",
               ids[i], (double)(usage - cache) / 1048576.0, (double)usage / 1048576.0,
               (double)cache / 1048576.0, rss / 1024.0, pss / 1024.0);
        json_decref(ans);
    }
    if (n == 0)
        printf("memory of a spare: no spare running (is warm_pool 0?)\n");
}

void bench_warm(docker_t *d, const char *u, const char *cold_url, int n)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "bench-warm-%d", (int)getpid());
    if (!wait_spares(d, 1))
        printf("(no spare appeared in 20 s: the figures below are of the path without the pool)\n");
    warm_first(d, u, cold_url, n, prefix);
    warm_resume(d, u, n, prefix);
    warm_memory(d);
}
