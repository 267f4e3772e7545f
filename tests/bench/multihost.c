/* multihost.c -- talkback-bench --multihost DOCKER2: figures of one gateway
 * with sandbox managers on two Docker hosts, side by side in one run.
 *
 * The gateway at --url has a manager on this machine's dockerd (the
 * "local" host: $DOCKER_HOST or the unix default) and one on the dockerd at
 * DOCKER2 (tests/tools/dockerd2 makes one in a network namespace;
 * tests/bench/multihost.mjs starts the whole set-up and this).  The host
 * that holds a chat is read from Docker itself: the chat's container, by
 * its deterministic name, on one daemon or the other.
 *   a. run("true") p50 and p99 in a chat on each host, interleaved call by
 *      call so load hits both alike: what a chat on the other host costs;
 *   b. placement: 40 new chats one after another, then 40 at once: how
 *      many each host got;
 *   c. with --restart-cmd CMD: CMD restarts the gateway (and returns once
 *      it is back with its workers), then the first call of a chat on each
 *      host (the hub's route cache is empty: it asks the managers where the
 *      chat is) against the next one (cached); the difference is the time
 *      the hub takes to find a chat.
 * Every chat it makes is reset at the end.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/convid.h"
#include "docker/docker.h"
#include "tests/bench/bench.h"

#define MH_SPREAD 40 /* new chats placed, one after another and at once */
#define MH_ROUNDS 5  /* gateway restarts for the find figure */
#define MH_TRIES  20 /* new chats tried to get one on a given host */

typedef struct {
    const char *url;
    docker_t *d[2];   /* 0: the local dockerd, 1: DOCKER2 */
    char (*made)[96]; /* every chat made, for the reset at the end */
    int nmade, cap;
    char prefix[48];
} mh_t;

static const char *host_label[2] = { "local dockerd", "second dockerd" };

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A new conversation id of this run into out (96 bytes), remembered. */
static const char *mh_new_chat(mh_t *m, const char *what, char *out)
{
    snprintf(out, 96, "%s-%s-%d", m->prefix, what, m->nmade);
    if (m->nmade == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->made = realloc(m->made, (size_t)m->cap * sizeof *m->made);
    }
    snprintf(m->made[m->nmade++], 96, "%s", out);
    return out;
}

/* Which host holds conv's container: 0, 1, -1 for none, 2 for both. */
static int mh_where(mh_t *m, const char *conv)
{
    char name[CONVID_NAME_MAX], path[CONVID_NAME_MAX + 32];
    convid_container_name(conv, name);
    snprintf(path, sizeof path, "/containers/%s/json", name);
    int at = -1;
    for (int k = 0; k < 2; k++) {
        long st = 0;
        docker_call(m->d[k], "GET", path, NULL, &st, NULL);
        if (st == 200)
            at = at == -1 ? k : 2;
    }
    return at;
}

/* run("true") in conv: microseconds; *ok: it answered without error. */
static int64_t mh_run(mh_t *m, const char *conv, bool *ok)
{
    bool err = true;
    int64_t t0 = now_us();
    char *t = bench_call(m->url, conv, "run", json_pack("{s:s}", "command", "true"), &err);
    int64_t us = now_us() - t0;
    if (ok)
        *ok = t && !err;
    free(t);
    return us;
}

/* A chat on host k into conv: new chats until one lands there. */
static bool mh_chat_on(mh_t *m, int k, char *conv)
{
    for (int i = 0; i < MH_TRIES; i++) {
        mh_new_chat(m, "on", conv);
        mh_run(m, conv, NULL);
        if (mh_where(m, conv) == k)
            return true;
    }
    return false;
}

/* a. run("true") in a chat on each host, interleaved. */
static void mh_latency(mh_t *m, char conv[2][96], int n)
{
    int64_t *v[2] = { calloc((size_t)n, sizeof(int64_t)), calloc((size_t)n, sizeof(int64_t)) };
    int bad = 0;
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 2; k++)
            mh_run(m, conv[k], NULL);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) {
            bool ok;
            v[k][i] = mh_run(m, conv[k], &ok);
            bad += !ok;
        }
    double p50[2], p99[2];
    for (int k = 0; k < 2; k++) {
        p50[k] = bench_pct(v[k], n, 0.5);
        p99[k] = bench_pct(v[k], n, 0.99);
        free(v[k]);
    }
    printf("run(\"true\") via MCP by host, interleaved (n=%d): "
           "%s p50 %.2f ms p99 %.2f ms | %s p50 %.2f ms p99 %.2f ms: %+.2f ms p50%s\n",
           n, host_label[0], p50[0], p99[0], host_label[1], p50[1], p99[1], p50[1] - p50[0],
           bad ? " (some calls failed)" : "");
}

typedef struct {
    mh_t *m;
    const char *conv;
} mh_job_t;

static void *mh_thread(void *arg)
{
    mh_job_t *j = arg;
    mh_run(j->m, j->conv, NULL);
    return NULL;
}

/* Count where the chats convs[0..n) are: {local, second, none or both}. */
static void mh_count(mh_t *m, char (*convs)[96], int n, int c[3])
{
    c[0] = c[1] = c[2] = 0;
    for (int i = 0; i < n; i++) {
        int w = mh_where(m, convs[i]);
        c[w == 0 || w == 1 ? w : 2]++;
    }
}

/* b. MH_SPREAD new chats one after another, then MH_SPREAD at once. */
static void mh_spread(mh_t *m)
{
    char convs[MH_SPREAD][96];
    int c[3];
    for (int i = 0; i < MH_SPREAD; i++) {
        mh_new_chat(m, "seq", convs[i]);
        mh_run(m, convs[i], NULL);
    }
    mh_count(m, convs, MH_SPREAD, c);
    printf("placement of %d new chats one after another: %s %d, %s %d (no sandbox or two: %d)\n",
           MH_SPREAD, host_label[0], c[0], host_label[1], c[1], c[2]);
    pthread_t th[MH_SPREAD];
    mh_job_t jobs[MH_SPREAD];
    for (int i = 0; i < MH_SPREAD; i++) {
        jobs[i] = (mh_job_t){ m, mh_new_chat(m, "par", convs[i]) };
        pthread_create(&th[i], NULL, mh_thread, &jobs[i]);
    }
    for (int i = 0; i < MH_SPREAD; i++)
        pthread_join(th[i], NULL);
    mh_count(m, convs, MH_SPREAD, c);
    printf("placement of %d new chats at once: %s %d, %s %d (no sandbox or two: %d)\n", MH_SPREAD,
           host_label[0], c[0], host_label[1], c[1], c[2]);
}

/* c. The first call of a known chat after a gateway restart vs the next. */
static void mh_find(mh_t *m, char conv[2][96], const char *restart_cmd)
{
    int64_t first[2][MH_ROUNDS], next[2][MH_ROUNDS];
    for (int r = 0; r < MH_ROUNDS; r++) {
        if (system(restart_cmd) != 0) {
            printf("after a gateway restart: --restart-cmd failed (%s)\n", restart_cmd);
            return;
        }
        for (int k = 0; k < 2; k++) {
            first[k][r] = mh_run(m, conv[k], NULL);
            next[k][r] = mh_run(m, conv[k], NULL);
        }
    }
    double f[2], x[2];
    for (int k = 0; k < 2; k++) {
        f[k] = bench_pct(first[k], MH_ROUNDS, 0.5);
        x[k] = bench_pct(next[k], MH_ROUNDS, 0.5);
    }
    printf("after a gateway restart (p50 of %d): first call of a known chat %s %.1f ms, "
           "%s %.1f ms | the next call %.1f ms, %.1f ms: the hub finds a chat in about %.1f ms\n",
           MH_ROUNDS, host_label[0], f[0], host_label[1], f[1], x[0], x[1],
           ((f[0] - x[0]) + (f[1] - x[1])) / 2);
}

/* --multihost DOCKER2 (see the top); returns the exit status. */
int bench_multihost(const char *url, const char *docker2, const char *restart_cmd, int n)
{
    mh_t m = { .url = url };
    char errbuf[256], conv[2][96];
    docker_err_t derr;
    snprintf(m.prefix, sizeof m.prefix, "bench-%d", (int)getpid());
    m.d[0] = docker_new(NULL, &derr, errbuf, sizeof errbuf);
    m.d[1] = m.d[0] ? docker_new(docker2, &derr, errbuf, sizeof errbuf) : NULL;
    if (!m.d[0] || !m.d[1]) {
        fprintf(stderr, "talkback-bench: cannot reach Docker: %s\n", errbuf);
        docker_destroy(&m.d[0]);
        return 1;
    }
    printf("talkback-bench --multihost against %s: hosts %s and %s (%s)\n", url, host_label[0],
           host_label[1], docker2);
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++)
        if (!mh_chat_on(&m, k, conv[k])) {
            fprintf(stderr, "talkback-bench: no new chat of %d landed on the %s\n", MH_TRIES,
                    host_label[k]);
            rc = 1;
        }
    if (rc == 0) {
        mh_latency(&m, conv, n);
        if (restart_cmd)
            mh_find(&m, conv, restart_cmd);
        mh_spread(&m);
    }
    for (int i = 0; i < m.nmade; i++)
        free(bench_call(url, m.made[i], "reset", json_object(), NULL));
    free(m.made);
    docker_destroy(&m.d[0]);
    docker_destroy(&m.d[1]);
    return rc;
}
