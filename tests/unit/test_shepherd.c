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
#include <unistd.h>

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
        int got = shep_read(ctl, r);
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
        cmocka_unit_test(stop_kills_escapees),
        cmocka_unit_test(normal_end_keeps_servers),
        cmocka_unit_test(exec_error_is_failed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
