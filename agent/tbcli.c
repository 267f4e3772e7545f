/* tbcli.c -- `talkback`, the sandbox's own program: the agent's binary
 * run under that name (jobs.h puts the link on PATH).
 *
 *   talkback job N   wait for job N up to this call's answer time
 *                    (TALKBACK_ANSWER_AT, set by the manager in every
 *                    run's environment), print its output not shown yet
 *                    and, once it ended, its exit code and run time; exit
 *                    with its exit code (1 when it was killed)
 *   talkback jobs    list this sandbox's jobs
 *
 * It reads the files the agent keeps (jobs.h); they live in the sandbox,
 * so every byte is read bounded.  Its texts are the table below.
 */
#include "agent/jobs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "talk/texts.h"

/* Bytes of new output one `talkback job N` prints (the rest stays in the
 * file; the run's own output cap shows head and tail of these). */
#define TBCLI_SHOW_MAX (4 << 20)
/* How long it waits when it does not know its call's answer time. */
#define TBCLI_WAIT_S   20
/* It ends this long before its call must answer. */
#define TBCLI_LEAD_MS  2500

/* Every text `talkback` prints is in talk/texts.h (TX_AG_...). */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The first line of JOBS_DIR/n/name, at most cap-1 bytes, control bytes
 * and backticks replaced: "" when missing. */
static void read_line(int n, const char *name, char *out, size_t cap)
{
    char path[96];
    snprintf(path, sizeof path, JOBS_DIR "/%d/%s", n, name);
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    ssize_t got = read(fd, out, cap - 1);
    close(fd);
    size_t k = got > 0 ? (size_t)got : 0;
    out[k] = '\0';
    for (size_t i = 0; i < k; i++) {
        unsigned char c = (unsigned char)out[i];
        if (c == '\n' && strcmp(name, "cmd") != 0) {
            out[i] = '\0';
            break;
        }
        if (c < 0x20 || c == 0x7f || c == '`')
            out[i] = c == '`' ? '\'' : ' ';
    }
}

static int64_t read_num(int n, const char *name, int64_t dflt)
{
    char buf[32];
    read_line(n, name, buf, sizeof buf);
    char *end;
    long long v = strtoll(buf, &end, 10);
    return end == buf ? dflt : (int64_t)v;
}

/* "1 h 02 min", "3 min 05 s", "42 s". */
static void span(int64_t s, char *out, size_t cap)
{
    if (s < 0)
        s = 0;
    if (s >= 3600)
        snprintf(out, cap, "%lld h %02lld min", (long long)(s / 3600), (long long)(s / 60 % 60));
    else if (s >= 60)
        snprintf(out, cap, "%lld min %02lld s", (long long)(s / 60), (long long)(s % 60));
    else
        snprintf(out, cap, "%lld s", (long long)s);
}

/* The command, shortened for a line. */
static void short_cmd(int n, char *out, size_t cap)
{
    char cmd[256];
    read_line(n, "cmd", cmd, sizeof cmd);
    if (strlen(cmd) > 80 && cap > 84)
        memcpy(cmd + 77, "...", 4);
    size_t len = strnlen(cmd, cap - 1);
    memcpy(out, cmd, len);
    out[len] = '\0';
}

/* Print the output of job n past its shown mark, at most TBCLI_SHOW_MAX
 * bytes (the newest), and move the mark. */
static void show_new(int n, const char *outpath)
{
    int64_t shown = read_num(n, "shown", 0);
    int fd = open(outpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    off_t end = lseek(fd, 0, SEEK_END);
    if (shown < 0 || shown > end)
        shown = 0;
    if (end - shown > TBCLI_SHOW_MAX) {
        printf(TX_AG_SKIPPED, (long long)(end - shown - TBCLI_SHOW_MAX), outpath);
        shown = end - TBCLI_SHOW_MAX;
    }
    fflush(stdout);
    lseek(fd, shown, SEEK_SET);
    char buf[65536], last = '\n';
    int64_t left = end - shown;
    while (left > 0) {
        ssize_t got = read(fd, buf, left < (int64_t)sizeof buf ? (size_t)left : sizeof buf);
        if (got <= 0)
            break;
        ssize_t w = write(STDOUT_FILENO, buf, (size_t)got);
        (void)w;
        last = buf[got - 1];
        left -= got;
    }
    close(fd);
    if (last != '\n') {
        ssize_t w = write(STDOUT_FILENO, "\n", 1);
        (void)w;
    }
    if (end > shown) {
        char path[96], mark[32];
        snprintf(path, sizeof path, JOBS_DIR "/%d/shown", n);
        snprintf(mark, sizeof mark, "%lld\n", (long long)end);
        int m = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (m >= 0) {
            ssize_t w = write(m, mark, strlen(mark));
            (void)w;
            close(m);
        }
    }
}

/* Whether job n has ended; its end line in end. */
static bool ended(int n, char *end, size_t cap)
{
    read_line(n, "end", end, cap);
    return end[0] != '\0';
}

/* The answer time of this call, or now + TBCLI_WAIT_S. */
static int64_t wait_until(void)
{
    const char *at = getenv("TALKBACK_ANSWER_AT");
    int64_t now = now_ms(), until = now + TBCLI_WAIT_S * 1000;
    if (at && *at) {
        char *e;
        long long v = strtoll(at, &e, 10);
        if (*e == '\0' && v > now)
            until = v - TBCLI_LEAD_MS;
    }
    return until;
}

/* Say how job n ended (its end line e); its status. */
static int say_end(int n, const char *cmd, const char *e, const char *outpath)
{
    long long st = 0, sig = 0, tmo = 0, ms = 0, at = 0;
    char took[48];
    if (strcmp(e, "lost") == 0 ||
        sscanf(e, "%lld %lld %lld %lld %lld", &st, &sig, &tmo, &ms, &at) != 5) {
        printf(TX_AG_LOST, n, cmd, outpath);
        return 1;
    }
    span(ms / 1000, took, sizeof took);
    /* Killed: 1, not 137, whose hint would say someone sent kill -9. */
    if (tmo)
        printf(TX_AG_TIMED_OUT, n, cmd, took, outpath);
    else if (sig)
        printf(TX_AG_KILLED, n, cmd, (int)sig, took, (int)st, outpath);
    else
        printf(TX_AG_ENDED, n, cmd, (int)st, took, outpath);
    return tmo || sig ? 1 : st >= 0 && st < 256 ? (int)st : 1;
}

/* talkback job N */
static int cli_job(const char *arg)
{
    char *endp;
    long n = strtol(arg, &endp, 10);
    char dir[96], e[128], cmd[96], outpath[96];
    if (*arg == '\0' || *endp || n <= 0 || n > 999999) {
        printf(TX_AG_NO_JOB, "with that number");
        return 2;
    }
    snprintf(dir, sizeof dir, JOBS_DIR "/%ld/start", n);
    if (access(dir, F_OK) != 0) {
        printf(TX_AG_NO_JOB, arg);
        return 2;
    }
    snprintf(outpath, sizeof outpath, JOBS_DIR "/%ld/out", n);
    int64_t until = wait_until();
    while (!ended((int)n, e, sizeof e) && now_ms() < until) {
        struct timespec ts = { 0, 100 * 1000000L };
        nanosleep(&ts, NULL);
    }
    short_cmd((int)n, cmd, sizeof cmd);
    show_new((int)n, outpath);
    if (!ended((int)n, e, sizeof e)) {
        char took[48];
        span((now_ms() / 1000) - read_num((int)n, "start", now_ms() / 1000), took, sizeof took);
        printf(TX_AG_RUNNING, (int)n, cmd, took, outpath, (int)n);
        return 0;
    }
    snprintf(dir, sizeof dir, JOBS_DIR "/%ld/told", n);
    int fd = open(dir, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0)
        close(fd);
    return say_end((int)n, cmd, e, outpath);
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* talkback jobs */
static int cli_jobs(void)
{
    int nums[4096];
    size_t k = 0;
    DIR *d = opendir(JOBS_DIR);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL && k < sizeof nums / sizeof nums[0]) {
        char *endp;
        long v = strtol(de->d_name, &endp, 10);
        if (*endp == '\0' && v > 0 && v <= 999999)
            nums[k++] = (int)v;
    }
    if (d)
        closedir(d);
    if (!k) {
        printf("%s", TX_AG_NO_JOBS);
        return 0;
    }
    qsort(nums, k, sizeof nums[0], cmp_int);
    printf("JOB  STATE              STARTED (UTC)        COMMAND\n");
    for (size_t i = 0; i < k; i++) {
        char e[128], cmd[96], state[48], when[32];
        short_cmd(nums[i], cmd, sizeof cmd);
        time_t start = (time_t)read_num(nums[i], "start", 0);
        struct tm tm;
        gmtime_r(&start, &tm);
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
        long long st = 0, sig = 0, tmo = 0, ms = 0, at = 0;
        if (!ended(nums[i], e, sizeof e))
            snprintf(state, sizeof state, "running");
        else if (sscanf(e, "%lld %lld %lld %lld %lld", &st, &sig, &tmo, &ms, &at) != 5)
            snprintf(state, sizeof state, "lost");
        else if (tmo)
            snprintf(state, sizeof state, "timed out (%lld)", st);
        else
            snprintf(state, sizeof state, "exit code %lld", st);
        printf("%-4d %-18s %-20s %s\n", nums[i], state, when, cmd);
    }
    return 0;
}

int tbcli_main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "job") == 0)
        return cli_job(argv[2]);
    if (argc == 2 && strcmp(argv[1], "jobs") == 0)
        return cli_jobs();
    fputs(TX_AG_USAGE, stderr);
    return 2;
}
