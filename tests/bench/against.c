/* against.c -- talkback-bench --against URL: the everyday figures of two
 * talkbacks side by side, in one run.
 *
 * The talkback at --url (after: the tree as it is) and the one at URL
 * (before: e.g. main's build on another port) are measured with their
 * calls interleaved, so the load on the machine falls on both alike:
 *   - run("true") p50 and p99 in one warm chat each;
 *   - the first call of a new chat (a claim from the warm pool when the
 *     talkback has one), p50 over n / 10 chats, each reset after;
 *   - a call that starts one background server (`python3 -m http.server`
 *     with &) and the call that stops it, p50 of the first.
 * Prints each pair and its after/before ratio.  Every chat is reset at
 * the end.  The chats of the one are named bench-after-..., those of the
 * other bench-before-...: with TALKBACK_REAPER_PREFIX set to those, the
 * reaper of each talkback keeps to its own.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/bench/bench.h"

#define AGAINST_PORT 8471 /* the background server's port, in both chats */

/* One run(cmd) at u in conv: its time in microseconds, or -1 when there
 * was no answer or the answer is not that command's. */
static int64_t against_run(const char *u, const char *conv, const char *cmd)
{
    char want[256];
    snprintf(want, sizeof want, "$ %s", cmd);
    int64_t t0 = bench_now_us();
    char *t = bench_call(u, conv, "run", json_pack("{s:s}", "command", cmd), NULL);
    int64_t us = bench_now_us() - t0;
    bool ok = t && strstr(t, want) != NULL; /* a notice may come first */
    free(t);
    return ok ? us : -1;
}

static void against_reset(const char *u, const char *conv)
{
    free(bench_call(u, conv, "reset", json_object(), NULL));
}

/* Prints one figure pair and its ratio; failed calls are said, not
 * counted. */
static void against_print(const char *what, int64_t *a, int na, int64_t *b, int nb, int n)
{
    if (na < 1 || nb < 1) {
        printf("%-44s no answers (after %d of %d, before %d of %d)\n", what, na, n, nb, n);
        return;
    }
    double pa = bench_pct(a, na, 0.5), pb = bench_pct(b, nb, 0.5);
    printf("%-44s after %8.2f ms | before %8.2f ms | ratio %.2f", what, pa, pb, pa / pb);
    if (na < n || nb < n)
        printf("  (failed: after %d, before %d)", n - na, n - nb);
    printf("\n");
}

/* n interleaved calls of cmd (then undo, untimed, when not NULL) in one
 * chat of each talkback. */
static void against_pair(const char *what, const char *ua, const char *ub, const char *ca,
                         const char *cb, const char *cmd, const char *undo, int n)
{
    int64_t *a = calloc((size_t)n, sizeof *a), *b = calloc((size_t)n, sizeof *b);
    int na = 0, nb = 0;
    for (int i = 0; a && b && i < n; i++) {
        for (int side = 0; side < 2; side++) {
            bool after = (i + side) % 2 == 0; /* who goes first alternates */
            int64_t us = against_run(after ? ua : ub, after ? ca : cb, cmd);
            if (us >= 0 && after)
                a[na++] = us;
            else if (us >= 0)
                b[nb++] = us;
            if (undo)
                free(bench_call(after ? ua : ub, after ? ca : cb, "run",
                                json_pack("{s:s}", "command", undo), NULL));
        }
    }
    against_print(what, a, na, b, nb, n);
    free(a);
    free(b);
}

/* The first call of k new chats at each talkback, interleaved. */
static void against_new_chats(const char *ua, const char *ub, int k)
{
    int64_t *a = calloc((size_t)k, sizeof *a), *b = calloc((size_t)k, sizeof *b);
    int na = 0, nb = 0;
    char conv[96];
    for (int i = 0; a && b && i < k; i++) {
        for (int side = 0; side < 2; side++) {
            bool after = (i + side) % 2 == 0;
            snprintf(conv, sizeof conv, "bench-%s-%d-new-%d", after ? "after" : "before",
                     (int)getpid(), i);
            int64_t us = against_run(after ? ua : ub, conv, "true");
            if (us >= 0 && after)
                a[na++] = us;
            else if (us >= 0)
                b[nb++] = us;
            against_reset(after ? ua : ub, conv);
            usleep(300 * 1000); /* let the pool make its next spare */
        }
    }
    against_print("first call of a new chat p50", a, na, b, nb, k);
    free(a);
    free(b);
}

void bench_against(const char *ua, const char *ub, int n)
{
    char ca[96], cb[96], serve[160], stop[160];
    snprintf(ca, sizeof ca, "bench-after-%d", (int)getpid());
    snprintf(cb, sizeof cb, "bench-before-%d", (int)getpid());
    printf("talkback-bench --against: after %s, before %s (calls interleaved)\n", ua, ub);
    if (against_run(ua, ca, "true") < 0 || against_run(ub, cb, "true") < 0) {
        printf("no answer from one of them: nothing measured\n");
        against_reset(ua, ca);
        against_reset(ub, cb);
        return;
    }
    against_pair("run(\"true\") p50", ua, ub, ca, cb, "true", NULL, n);
    snprintf(serve, sizeof serve, "python3 -m http.server %d >/dev/null 2>&1 &", AGAINST_PORT);
    snprintf(stop, sizeof stop, "pkill -f '[h]ttp.server %d'; sleep 0.2", AGAINST_PORT);
    against_pair("a call starting a background server p50", ua, ub, ca, cb, serve, stop,
                 n > 20 ? 20 : n);
    against_new_chats(ua, ub, n / 10 > 3 ? (n / 10 > 20 ? 20 : n / 10) : 3);
    against_reset(ua, ca);
    against_reset(ub, cb);
}
