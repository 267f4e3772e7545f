/* test_shepherd.c -- the agent's per-command shepherd (agent/shepherd.h),
 * on this host's real processes (no container needed): what a stopped
 * command started is gone however it left (setsid, a double fork, env -i),
 * what a command that ended normally left keeps running, the record
 * carries the command's status, CPU time and peak memory, and an exec
 * error comes as FAILED.  Nothing here forks without bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

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

#include "agent/bgkeep.h"
#include "agent/bgwatch.h"
#include "agent/shepherd.h"

extern char **environ;

/* Run sh -c script under a shepherd, stdout into a pipe we drain. */
static pid_t start(const char *script, int *ctl, int *out)
{
    char *argv[] = { "sh", "-c", (char *)script, NULL };
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    shep_cmd_t c = { .argv = argv, .envp = environ, .in = -1, .out = p[1], .err = p[1] };
    int err = 0;
    pid_t pid = shep_spawn(&c, true, ctl, &err);
    assert_true(pid > 0);
    close(p[1]);
    *out = p[0];
    return pid;
}

/* The next record, waiting up to 10 s. */
static void next_rec(int ctl, shep_rec_t *r)
{
    for (int i = 0; i < 1000; i++) {
        static char item[BG_ITEM_MAX + 1];
        int got = shep_read(ctl, r, item, sizeof item);
        assert_int_not_equal(got, -1);
        if (got == 1)
            return;
        struct pollfd p = { ctl, POLLIN, 0 };
        poll(&p, 1, 10);
    }
    fail_msg("no record from the shepherd");
}

/* The pids the script wrote to its stdout, one per line, until EOF. */
static int read_pids(int fd, pid_t *pids, int max)
{
    char buf[512];
    size_t have = 0;
    ssize_t n;
    while (have < sizeof buf - 1 && (n = read(fd, buf + have, sizeof buf - 1 - have)) > 0)
        have += (size_t)n;
    buf[have] = '\0';
    int k = 0;
    for (char *s = strtok(buf, "\n"); s && k < max; s = strtok(NULL, "\n"))
        pids[k++] = (pid_t)atoi(s);
    return k;
}

static bool alive(pid_t pid)
{
    return kill(pid, 0) == 0;
}

static void stop_kills_escapees(void **state)
{
    (void)state;
    int ctl, out;
    pid_t sh = start("exec 2>/dev/null; setsid sh -c 'sleep 301 >/dev/null & echo $!' & "
                     "(env -i setsid sleep 302 >/dev/null & echo $!) & "
                     "sh -c '(setsid env -i sleep 303 >/dev/null & echo $!) &' & "
                     "exec 1>&-; sleep 100",
                     &ctl, &out);
    pid_t pids[3];
    assert_int_equal(read_pids(out, pids, 3), 3);
    for (int i = 0; i < 3; i++)
        assert_true(alive(pids[i]));
    shep_stop(sh);
    shep_rec_t r;
    next_rec(ctl, &r);
    assert_int_equal(r.kind, SHEP_ENDED);
    assert_true(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL);
    for (int i = 0; i < 3; i++)
        assert_false(alive(pids[i]));
    waitpid(sh, NULL, 0);
    close(ctl);
    close(out);
}

static void normal_end_keeps_servers(void **state)
{
    (void)state;
    int ctl, out;
    pid_t sh = start("exec 2>/dev/null; setsid sleep 304 >/dev/null 2>&1 & echo $!; exec 1>&-; "
                     "head -c 33554432 /dev/zero | tail -c 1 >/dev/null; exit 3",
                     &ctl, &out);
    pid_t kept;
    assert_int_equal(read_pids(out, &kept, 1), 1);
    shep_rec_t r;
    next_rec(ctl, &r);
    assert_int_equal(r.kind, SHEP_EXITED);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3);
    assert_true(r.cpu_ms >= 0);
    assert_true(r.rss_kb > 0);
    shep_release(sh);
    waitpid(sh, NULL, 0);
    assert_true(alive(kept));
    kill(kept, SIGKILL);
    close(ctl);
    close(out);
}

/* The next record with its item (bgwatch.h), waiting up to 10 s. */
static void next_item(int ctl, shep_rec_t *r, char *item, size_t cap)
{
    for (int i = 0; i < 1000; i++) {
        int got = shep_read(ctl, r, item, cap);
        assert_int_not_equal(got, -1);
        if (got == 1)
            return;
        struct pollfd p = { ctl, POLLIN, 0 };
        poll(&p, 1, 10);
    }
    fail_msg("no record from the shepherd");
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Start script with a watch of watch_ms, wait for its end and release. */
static pid_t start_watched(const char *script, int64_t watch_ms, int *ctl)
{
    char *argv[] = { "sh", "-c", (char *)script, NULL };
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    shep_cmd_t c = {
        .argv = argv, .envp = environ, .in = -1, .out = p[1], .err = p[1], .watch_ms = watch_ms
    };
    int err = 0;
    pid_t sh = shep_spawn(&c, true, ctl, &err);
    assert_true(sh > 0);
    close(p[1]);
    char buf[256];
    while (read(p[0], buf, sizeof buf) > 0)
        ;
    close(p[0]);
    shep_rec_t r;
    next_rec(*ctl, &r);
    assert_int_equal(r.kind, SHEP_EXITED);
    shep_release(sh);
    return sh;
}

/* A program that ends at once is said, with its status, file and last
 * lines, and the window is over as soon as it ended. */
static void watch_says_a_quick_end(void **state)
{
    (void)state;
    char log[] = "/tmp/talkback-bgwatch-XXXXXX";
    int fd = mkstemp(log);
    assert_true(fd >= 0);
    close(fd);
    char script[256];
    snprintf(
        script, sizeof script,
        "perl -e 'select undef, undef, undef, 0.2; print \"one\\nboom\\n\"; exit 3' > %s 2>&1 &",
        log);
    int ctl;
    int64_t t0 = now_ms();
    pid_t sh = start_watched(script, 1500, &ctl);
    shep_rec_t r;
    char item[BG_ITEM_MAX + 1];
    next_item(ctl, &r, item, sizeof item);
    assert_int_equal(r.kind, SHEP_BG_LEFT);
    char want[512];
    snprintf(want, sizeof want, "\x1f%s\x1fone\nboom", log);
    if (!strstr(item, "\x1fx\x1f"
                      "3\x1f\x1fperl -e select") ||
        !strstr(item, want))
        fail_msg("item: %s", item);
    next_item(ctl, &r, item, sizeof item);
    assert_int_equal(r.kind, SHEP_BG_WATCHED);
    assert_true(now_ms() - t0 < 1200); /* over once it ended, not at 1.5 s */
    waitpid(sh, NULL, 0);              /* nothing left: the shepherd is gone */
    close(ctl);
    unlink(log);
}

/* A program still running at the end of the window is said running; its
 * end later comes as BG_DIED; nothing left -> no record at all. */
static void watch_keeps_and_tells_the_end(void **state)
{
    (void)state;
    int ctl;
    pid_t sh = start_watched("sleep 30 > /dev/null 2>&1 &", 200, &ctl);
    shep_rec_t r;
    char item[BG_ITEM_MAX + 1];
    next_item(ctl, &r, item, sizeof item);
    assert_int_equal(r.kind, SHEP_BG_LEFT);
    pid_t prog = (pid_t)atoi(item);
    assert_true(prog > 0);
    assert_non_null(strstr(item, "\x1fr\x1f"
                                 "0\x1f\x1fsleep 30\x1f\x1f"));
    next_item(ctl, &r, item, sizeof item);
    assert_int_equal(r.kind, SHEP_BG_WATCHED);
    assert_true(alive(sh)); /* it stays, as the keeper */
    kill(prog, SIGKILL);
    next_item(ctl, &r, item, sizeof item);
    assert_int_equal(r.kind, SHEP_BG_DIED);
    assert_int_equal(atoi(item), prog);
    assert_non_null(strstr(item, "\x1fk\x1f"
                                 "9\x1f"));
    waitpid(sh, NULL, 0);
    close(ctl);
    /* A command that left nothing: EXITED, then the pipe ends. */
    pid_t quiet = start_watched("true", 1500, &ctl);
    waitpid(quiet, NULL, 0);
    assert_int_equal(shep_read(ctl, &r, item, sizeof item), -1);
    close(ctl);
}

/* The worker's side (bgkeep.h): a job's items go into its EXIT; ends
 * wait for the next watched EXIT and are said once; the running set goes
 * only when it changed; at most BGK_DIED_MAX ends wait, the oldest go. */
static void keep_says_ends_once(void **state)
{
    (void)state;
    bgk_job_t a = { .watch = true };
    shep_rec_t left = { .kind = SHEP_BG_LEFT }, watched = { .kind = SHEP_BG_WATCHED };
    shep_rec_t died = { .kind = SHEP_BG_DIED }, ports = { .kind = SHEP_BG_PORTS };
    shep_rec_t exited = { .kind = SHEP_EXITED };
    assert_false(bgk_rec(&a, &exited, ""));
    assert_true(bgk_rec(&a, &left,
                        "700\x1fr\x1f"
                        "0\x1f\x1fsrv\x1f\x1f"));
    assert_true(bgk_rec(&a, &left,
                        "701\x1fx\x1f"
                        "3\x1f\x1f"
                        "crash\x1f\x1f"));
    assert_true(bgk_rec(&a, &watched, ""));
    assert_true(a.watched);
    frame_msg_t m = { .type = FRAME_EXIT };
    bgk_attach(&m, &a);
    assert_true(frame_has_str(&m, FS_BG_LEFT));
    assert_int_equal(m.str_len[FS_BG_LEFT], a.left_len);
    assert_false(frame_has_str(&m, FS_BG_DIED));
    assert_true(frame_has_str(&m, FS_BG_ALIVE)); /* srv runs: the set changed */
    assert_memory_equal(m.str[FS_BG_ALIVE], "700\x1fr\x1f", 6);
    bgk_sent(&a);
    bgk_job_free(&a);

    /* Late ports change the set; an end waits for the next EXIT, once. */
    assert_true(bgk_rec(NULL, &ports,
                        "700\x1fr\x1f"
                        "0\x1f:80 (srv, pid 700)\x1fsrv\x1f\x1f"));
    assert_true(bgk_rec(NULL, &died,
                        "700\x1fx\x1f"
                        "1\x1f\x1fsrv\x1f\x1f"));
    bgk_job_t b = { 0 };
    bgk_job_start(&b, true); /* after the end: it is said as between calls */
    frame_msg_t m2 = { .type = FRAME_EXIT };
    bgk_attach(&m2, &b);
    assert_false(frame_has_str(&m2, FS_BG_LEFT));
    assert_true(frame_has_str(&m2, FS_BG_DIED));
    assert_memory_equal(m2.str[FS_BG_DIED],
                        "700\x1fx\x1f"
                        "1\x1f",
                        8);
    assert_true(frame_has_str(&m2, FS_BG_ALIVE));
    assert_int_equal(m2.str_len[FS_BG_ALIVE], 0); /* nothing runs now */
    bgk_sent(&b);
    frame_msg_t m3 = { .type = FRAME_EXIT };
    bgk_attach(&m3, &b);
    assert_false(frame_has_str(&m3, FS_BG_DIED));  /* said once */
    assert_false(frame_has_str(&m3, FS_BG_ALIVE)); /* unchanged */
    bgk_sent(&b);

    /* An end while a job runs is that job's: its state in capitals. */
    bgk_job_t c = { 0 };
    bgk_job_start(&c, true);
    assert_true(bgk_rec(NULL, &died,
                        "702\x1fk\x1f"
                        "15\x1f\x1fsrv2\x1f\x1f"));
    frame_msg_t mc = { .type = FRAME_EXIT };
    bgk_attach(&mc, &c);
    assert_true(frame_has_str(&mc, FS_BG_DIED));
    assert_memory_equal(mc.str[FS_BG_DIED],
                        "702\x1fK\x1f"
                        "15\x1f",
                        9);
    bgk_sent(&c);

    /* Bounded: the oldest ends go first. */
    char item[64];
    for (int i = 0; i < BGK_DIED_MAX + 3; i++) {
        snprintf(item, sizeof item,
                 "%d\x1fx\x1f"
                 "1\x1f\x1fp%d\x1f\x1f",
                 800 + i, i);
        bgk_rec(NULL, &died, item);
    }
    frame_msg_t m4 = { .type = FRAME_EXIT };
    bgk_attach(&m4, &b);
    int n = 0;
    for (size_t i = 0; i < m4.str_len[FS_BG_DIED]; i++)
        n += m4.str[FS_BG_DIED][i] == '\0';
    assert_int_equal(n, BGK_DIED_MAX);
    assert_memory_equal(m4.str[FS_BG_DIED], "803\x1f", 4);
    bgk_sent(&b);
    bgk_job_free(&b);
}

static void exec_error_is_failed(void **state)
{
    (void)state;
    char *argv[] = { "/nonexistent/program", NULL };
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    shep_cmd_t c = { .argv = argv, .envp = environ, .in = -1, .out = p[1], .err = p[1] };
    int ctl, err = 0;
    pid_t sh = shep_spawn(&c, true, &ctl, &err);
    assert_true(sh > 0);
    shep_rec_t r;
    next_rec(ctl, &r);
    assert_int_equal(r.kind, SHEP_FAILED);
    assert_int_equal(r.err, ENOENT);
    waitpid(sh, NULL, 0);
    /* Without a shepherd the error comes at once. */
    assert_int_equal(shep_spawn(&c, false, &ctl, &err), -1);
    assert_int_equal(err, ENOENT);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stop_kills_escapees),           cmocka_unit_test(normal_end_keeps_servers),
        cmocka_unit_test(exec_error_is_failed),          cmocka_unit_test(watch_says_a_quick_end),
        cmocka_unit_test(watch_keeps_and_tells_the_end), cmocka_unit_test(keep_says_ends_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
