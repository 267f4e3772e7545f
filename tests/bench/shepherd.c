/* shepherd.c -- talkback-bench --agent PATH: what the agent's per-command
 * shepherd (agent/shepherd.h) costs, measured on the agent alone.
 *
 * Through MCP the difference drowns in the rest of the trip (HTTP, the
 * hub, Docker's attach stream) on a busy machine, so this starts the agent
 * program itself on this host, speaks its frames over two pipes as the
 * sandbox manager does, and times RUN -> EXIT of `true` with the shepherd
 * and without it ("shep" 0), interleaved so load hits both alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/frame.h"
#include "tests/bench/bench.h"

typedef struct {
    int in, out; /* the agent's stdin (we write), stdout (we read) */
    frame_reader_t rd;
    int64_t nonce;
} agent_t;

/* Microseconds of the monotonic clock. */
static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Write m, stamped with the link's nonce, to the agent; 0 or -1. */
static int send_frame(agent_t *a, frame_msg_t *m)
{
    textbuf_t b = { 0 };
    frame_set_num(m, FN_NONCE, a->nonce);
    int rc = frame_encode(m, &b);
    for (size_t off = 0; rc == 0 && off < b.len;) {
        ssize_t w = write(a->in, b.buf + off, b.len - off);
        if (w <= 0 && errno != EINTR)
            rc = -1;
        else if (w > 0)
            off += (size_t)w;
    }
    textbuf_free(&b);
    return rc;
}

/* The next frame of type t (and id, when not 0); 0, or -1 after 10 s. */
static int wait_frame(agent_t *a, uint32_t t, uint64_t id)
{
    char buf[65536];
    int64_t until = mono_us() + 10000000;
    for (;;) {
        frame_msg_t m;
        while (frame_reader_next(&a->rd, &m) == 1)
            if (m.type == t && (!id || m.id == id))
                return 0;
        struct pollfd p = { a->out, POLLIN, 0 };
        if (mono_us() >= until || poll(&p, 1, 1000) < 0)
            return -1;
        ssize_t n = read(a->out, buf, sizeof buf);
        if (n <= 0 || frame_reader_feed(&a->rd, buf, (size_t)n) != 0)
            return -1;
    }
}

/* One run of `true`: microseconds from RUN to EXIT, -1 on error. */
static int64_t run_true(agent_t *a, uint64_t id, bool shepherd)
{
    static const char argv[] = "true";
    frame_msg_t m = { .type = FRAME_RUN, .id = id };
    frame_set_str(&m, FS_ARGV, argv, sizeof argv);
    frame_set_str(&m, FS_ENV, "", 0);
    frame_set_str(&m, FS_CWD, "/", 1);
    frame_set_num(&m, FN_MERGE, 1);
    if (!shepherd)
        frame_set_num(&m, FN_SHEPHERD, 0);
    int64_t t0 = mono_us();
    if (send_frame(a, &m) != 0 || wait_frame(a, FRAME_EXIT, id) != 0)
        return -1;
    return mono_us() - t0;
}

/* See bench.h. */
void bench_agent_shepherd(const char *path, int n)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
        return;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        execl(path, path, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    agent_t a = { .in = in[1], .out = out[0], .nonce = 4242 };
    frame_reader_init(&a.rd, FRAME_AGENT_MAX, true);
    frame_msg_t hello = { .type = FRAME_HELLO };
    int64_t *with = calloc((size_t)n, sizeof *with), *without = calloc((size_t)n, sizeof *without);
    bool ok = with && without && send_frame(&a, &hello) == 0 && wait_frame(&a, FRAME_READY, 0) == 0;
    uint64_t id = 1;
    for (int i = 0; ok && i < 20; i++) /* warm up */
        ok = run_true(&a, id++, i & 1) >= 0;
    for (int i = 0; ok && i < n; i++) {
        with[i] = run_true(&a, id++, true);
        without[i] = run_true(&a, id++, false);
        ok = with[i] >= 0 && without[i] >= 0;
    }
    if (ok) {
        double w = bench_pct(with, n, 0.5), o = bench_pct(without, n, 0.5);
        printf("the agent alone, RUN -> EXIT of `true`, interleaved (n=%d): with the shepherd p50 "
               "%.3f ms "
               "p99 %.3f ms | without p50 %.3f ms p99 %.3f ms | p50 difference %+.3f ms\n",
               n, w, bench_pct(with, n, 0.99), o, bench_pct(without, n, 0.99), w - o);
    } else {
        fprintf(stderr, "talkback-bench: the agent %s did not answer\n", path);
    }
    free(with);
    free(without);
    frame_reader_free(&a.rd);
    close(a.in);
    close(a.out);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}
