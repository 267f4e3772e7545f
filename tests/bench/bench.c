/* bench.c -- talkback-bench: figures, not a pass/fail test.
 *
 * Against a running talkback (default http://127.0.0.1:8080/mcp) and the
 * same dockerd, in one run:
 *   1. run("true") through the MCP endpoint vs a raw Docker Engine API exec
 *      of `true` (create + start + inspect) on the same warm container:
 *      p50, p99 and their ratio;
 *   2. the first call of a new chat vs `docker run --rm` of the same image;
 *   3. 64 chats calling run("sleep 1") at once: wall time;
 *   4. resident memory of every talkback process, idle and under (3);
 *   5. with --judge: run_code of a trivial PASS program per language (p50),
 *      and a bits/stdc++.h C++ compile with and without the PCH;
 *   6. with --reaper N: resume of a stopped sandbox + run("true") (p50), and
 *      one reaper sweep (dry run) over N kept sandboxes: time, Docker calls.
 *   7. with --exec-url URL: a second talkback whose sandbox manager has no
 *      agent (TALKBACK_AGENT_PATH=/nonexistent), so the fast path (URL) and
 *      the Docker exec path (--exec-url) are measured side by side, calls
 *      interleaved: run("true") on both next to the raw API exec; 64 chats x
 *      sleep 1 on both; with --judge, run_code of a Python and a C++ PASS
 *      program on both (the exec instance needs a judge of its own).
 *   8. with --judge (or alone, --judge-only): the compile cache (the same C++
 *      and Kotlin program run twice: second / first) and a 10-case `tests`
 *      call against 10 single calls (Python, C++).
 *   9. the agent's memory: RSS and PSS of its two processes per sandbox
 *      (measured from the host, over every sandbox running it).
 *  10. with --guard-url URL: a second talkback whose sandbox manager
 *      reaches Docker through the Docker guard (deploy/docker-proxy), so a
 *      new chat's first call and a resume of a stopped sandbox are measured
 *      through the guard (URL) and straight to dockerd (--url) side by
 *      side, calls interleaved (run itself goes through the agent, not the
 *      guard: it is the container calls around it that cross it).
 *  11. with --pictures (alone: the other figures are skipped): what finding
 *      the images a command drew costs.  run("true") in a chat whose /work
 *      holds 50 000 files next to a bare chat, calls interleaved; then, in
 *      the bare chat, the same copy of a 640x480 plot to /tmp (no image),
 *      to /work under a name and bytes that are no image, and to /work as
 *      the PNG it is (returned with the result): the added cost per call
 *      without and with an image.  Needs a sandbox image with matplotlib.
 *      With --plain-url URL, a second talkback whose sandboxes run an agent
 *      that finds no images (one built without agent/images.c, given as
 *      TALKBACK_AGENT_PATH): run("true") on both, interleaved, is what
 *      finding images adds to a call that draws nothing.
 *  12. with --no-shepherd-url URL, instead of all the above: a second
 *      talkback whose sandbox manager runs commands without the agent's
 *      per-command shepherd (TALKBACK_AGENT_SHEPHERD=false), and
 *      run("true") on both, interleaved call by call: p50 and p99 side by
 *      side -- what killing everything a command started costs per call.
 *  13. with --agent PATH, instead of all the above (no talkback, no
 *      Docker needed): the same on the agent program alone, started on
 *      this host (shepherd.c).
 *  14. with --multihost DOCKER2 [--restart-cmd CMD], instead of all the
 *      above: a gateway with sandbox managers on this dockerd and on
 *      DOCKER2 (multihost.c; tests/bench/multihost.mjs sets it up): run
 *      ("true") by host, placement of 40 new chats, and how long the hub
 *      takes to find a chat after a gateway restart.
 *  15. with --warm, instead of all the above: the warm pool and the resume
 *      (warm.c), side by side in one run.
 *  16. with --eras, instead of all the above: run("true") over the legacy
 *      MCP era and over 2026-07-28, interleaved, JSON and SSE (eras.c).
 *  17. with --tiers, instead of all the above: a call to a paused sandbox
 *      and a resume of a stopped one, next to `docker start`, and the
 *      memory a paused sandbox holds (tiers.c).
 *  18. with --scale N, instead of all the above: N chats on this host, idle
 *      running then paused: memory per sandbox, run("true") p50 with 2 and
 *      with N, the reaper's sweep time (scale.c).
 *  19. with --against URL, instead of all the above: this talkback (--url,
 *      after a change) and the one at URL (before it) side by side, calls
 *      interleaved: run("true"), a new chat's first call, a call that
 *      starts a background server (against.c).
 * Every chat it makes is reset at the end.
 *
 * usage: talkback-bench [--url URL] [--exec-url URL] [--guard-url URL] [--n N] [--chats N] [--judge]
 *                       [--reaper N] [--pictures [--plain-url URL]] [--judge-only]
 *                       [--no-shepherd-url URL] [--agent PATH]
 *                       [--multihost DOCKER2 [--restart-cmd CMD]] [--warm [--cold-url URL]] [--eras]
 *                       [--tiers] [--scale N] [--against URL]
 * (run it from the repository root: --reaper runs build/talkback-reaper)
 */
#include <curl/curl.h>
#include <dirent.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/convid.h"
#include "common/textbuf.h"
#include "docker/docker.h"
#include "proto/proto.h"
#include "tests/bench/bench.h"

static const char *url = "http://127.0.0.1:8080/mcp";
static const char *exec_url;   /* --exec-url: the instance without the agent */
static const char *guard_url;  /* --guard-url: the instance behind the Docker guard */
static const char *plain_url;  /* --plain-url: an agent that finds no images */
static const char *noshep_url; /* --no-shepherd-url: the instance without the shepherd */
static const char *agent_path; /* --agent: the agent program, measured alone */
static char prefix[64];

static size_t sink(char *p, size_t s, size_t n, void *ud)
{
    textbuf_append(ud, p, s * n);
    return s * n;
}

/* One tools/call at endpoint u; returns the result text (malloc'ed) or NULL. */
static char *call_tool_at(const char *u, const char *conv, const char *tool, json_t *args,
                          bool *is_error)
{
    json_t *body = json_pack("{s:s, s:i, s:s, s:{s:s, s:o}}", "jsonrpc", "2.0", "id", 1, "method",
                             "tools/call", "params", "name", tool, "arguments", args);
    char *s = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    CURL *c = curl_easy_init();
    struct curl_slist *h = NULL;
    char hdr[256];
    snprintf(hdr, sizeof hdr, "X-Conversation-Id: %s", conv);
    h = curl_slist_append(h, hdr);
    h = curl_slist_append(h, "Content-Type: application/json");
    h = curl_slist_append(h, "Accept: application/json");
    textbuf_t out;
    textbuf_init(&out);
    curl_easy_setopt(c, CURLOPT_URL, u);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, s);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    CURLcode rc = curl_easy_perform(c);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    free(s);
    char *text = NULL;
    if (rc == CURLE_OK && out.buf) {
        json_t *ans = json_loads(out.buf, 0, NULL);
        json_t *res = json_object_get(ans, "result");
        json_t *c0 = json_array_get(json_object_get(res, "content"), 0);
        const char *t = json_string_value(json_object_get(c0, "text"));
        if (t)
            text = strdup(t);
        if (is_error)
            *is_error = json_is_true(json_object_get(res, "isError"));
        json_decref(ans);
    }
    textbuf_free(&out);
    return text;
}

char *bench_call(const char *u, const char *conv, const char *tool, json_t *args, bool *is_error)
{
    return call_tool_at(u, conv, tool, args, is_error);
}

static char *call_tool(const char *conv, const char *tool, json_t *args, bool *is_error)
{
    return call_tool_at(url, conv, tool, args, is_error);
}

static char *run_cmd(const char *conv, const char *cmd)
{
    return call_tool(conv, "run", json_pack("{s:s}", "command", cmd), NULL);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

double bench_pct(int64_t *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    int i = (int)(p * (n - 1) + 0.5);
    return v[i] / 1000.0;
}

static double pct(int64_t *v, int n, double p)
{
    return bench_pct(v, n, p);
}

int64_t bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t now_us(void)
{
    return bench_now_us();
}

/* ---- resident memory of talkback processes ---------------------------------- */

/* Sum a field ("Rss:" or "Pss:", kB) of /proc/PID/smaps_rollup. */
static int64_t smaps_field(const char *pid, const char *field)
{
    char path[300], line[256];
    snprintf(path, sizeof path, "/proc/%s/smaps_rollup", pid);
    FILE *f = fopen(path, "r");
    int64_t v = 0;
    size_t fl = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, fl) == 0)
            v = strtoll(line + fl, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

/* Visit every talkback process but this one and the agents in sandboxes
 * (agents false), or the agents only (agents true): fn(ctx, pid, comm). */
static void each_process(bool agents, void (*fn)(void *, const char *, const char *), void *ctx)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (!fgets(comm, sizeof comm, f))
            comm[0] = '\0';
        fclose(f);
        comm[strcspn(comm, "\n")] = '\0';
        bool agent = strcmp(comm, "talkback-agent") == 0;
        if (agents ? !agent
                   : strncmp(comm, "talkback-", 9) != 0 ||
                         strncmp(comm, "talkback-bench", 14) == 0 || agent)
            continue;
        fn(ctx, e->d_name, comm);
    }
    if (d)
        closedir(d);
}

typedef struct {
    int64_t rss, pss;
    bool print;
} mem_t;

static void add_mem(void *ctx, const char *pid, const char *comm)
{
    mem_t *m = ctx;
    int64_t rss = smaps_field(pid, "Rss:"), pss = smaps_field(pid, "Pss:");
    m->rss += rss;
    m->pss += pss;
    if (m->print)
        printf("    %-16s pid %-7s RSS %5.1f MiB  PSS %5.1f MiB\n", comm, pid, rss / 1024.0,
               pss / 1024.0);
}

static int64_t rss_kib(void)
{
    mem_t m = { 0 };
    each_process(false, add_mem, &m);
    return m.rss;
}

/* RSS counts the shared libraries (libc, libzmq, libcurl, OpenSSL) once
 * per process; PSS splits them among the processes that share them, so
 * the PSS total is what the processes together cost the machine. */
static void print_rss(const char *when)
{
    mem_t m = { .print = true };
    printf("  memory of talkback processes %s:\n", when);
    each_process(false, add_mem, &m);
    printf("    total             RSS %5.1f MiB  PSS %5.1f MiB\n", m.rss / 1024.0, m.pss / 1024.0);
}

/* The agents in sandboxes: two processes each (supervisor and worker). */
static void add_agent(void *ctx, const char *pid, const char *comm)
{
    (void)comm;
    int64_t *v = ctx;
    v[0] += smaps_field(pid, "Rss:");
    v[1] += smaps_field(pid, "Pss:");
    v[2]++;
}

static void print_agent_mem(const char *when)
{
    int64_t v[3] = { 0 };
    each_process(true, add_agent, v);
    if (v[2] < 2) {
        printf("  agent memory %s: no agent running\n", when);
        return;
    }
    double per = (double)v[2] / 2.0;
    printf("  agent memory per sandbox %s (%" PRId64
           " agent processes): RSS %.0f KiB, PSS %.0f KiB\n",
           when, v[2], v[0] / per, v[1] / per);
}

static volatile int sampling;
static int64_t peak_rss;

static void *rss_sampler(void *arg)
{
    (void)arg;
    while (sampling) {
        int64_t r = rss_kib();
        if (r > peak_rss)
            peak_rss = r;
        usleep(20000);
    }
    return NULL;
}

/* ---- 64 chats at once --------------------------------------------------------- */

typedef struct {
    char conv[96];
    const char *cmd;
    const char *at; /* endpoint, NULL = url */
    bool ok;
    int64_t start_us, end_us; /* when its call was sent and answered */
} chat_t;

static void *chat_thread(void *arg)
{
    chat_t *c = arg;
    c->start_us = now_us();
    char *t = call_tool_at(c->at ? c->at : url, c->conv, "run",
                           json_pack("{s:s}", "command", c->cmd), NULL);
    c->ok = t != NULL;
    c->end_us = now_us();
    free(t);
    return NULL;
}

static double parallel(chat_t *chats, int n)
{
    pthread_t th[256];
    int64_t t0 = now_us();
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, chat_thread, &chats[i]);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    return (now_us() - t0) / 1e6;
}

/* The floor of the 64 x sleep 1 figure on this machine: the same bash
 * commands forked at once on the host, with no talkback and no Docker.
 * On a VM where a fork + exec costs milliseconds of kernel time, starting
 * 64 bash processes alone takes a good part of a second. */
static double host_floor(int n)
{
    int64_t t0 = now_us();
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p == 0) {
            execlp("bash", "bash", "-c", "sleep 1", (char *)NULL);
            _exit(127);
        }
    }
    while (wait(NULL) > 0)
        ;
    return (now_us() - t0) / 1e6;
}

/* What the wall time of parallel() is made of: how late the last call
 * was sent, and each call's own latency. */
static void parallel_spread(const chat_t *chats, int n)
{
    int64_t first = INT64_MAX, last = 0, lat[256];
    for (int i = 0; i < n; i++) {
        first = chats[i].start_us < first ? chats[i].start_us : first;
        last = chats[i].start_us > last ? chats[i].start_us : last;
        lat[i] = chats[i].end_us - chats[i].start_us;
    }
    printf("  last call sent %.0f ms after the first; per call p50 %.0f ms, max %.0f ms\n",
           (last - first) / 1000.0, pct(lat, n, 0.5), pct(lat, n, 1.0));
}

/* ---- the Docker guard ---------------------------------------------------------------- */

#define GUARD_N 10

/* Stop the sandbox of conv (straight to dockerd), so its next call resumes. */
static void stop_sandbox(docker_t *d, const char *conv)
{
    char name[CONVID_NAME_MAX], path[512];
    long st;
    convid_container_name(conv, name);
    snprintf(path, sizeof path, "/containers/%s/stop?t=1", name);
    docker_call(d, "POST", path, NULL, &st, NULL);
}

/* A new chat's first call and a resume, through the guard (gurl) and
 * straight to dockerd (url), interleaved; every chat reset at the end. */
static void bench_guard(docker_t *d, const char *gurl)
{
    int64_t first[2][GUARD_N], resume[2][GUARD_N];
    const char *urls[2] = { url, gurl };
    char conv[2][GUARD_N][96];
    for (int i = 0; i < GUARD_N; i++)
        for (int k = 0; k < 2; k++) {
            snprintf(conv[k][i], sizeof conv[k][i], "%s-g%d-%d", prefix, k, i);
            int64_t t0 = now_us();
            free(call_tool_at(urls[k], conv[k][i], "run", json_pack("{s:s}", "command", "true"),
                              NULL));
            first[k][i] = now_us() - t0;
        }
    for (int i = 0; i < GUARD_N; i++)
        for (int k = 0; k < 2; k++) {
            stop_sandbox(d, conv[k][i]);
            int64_t t0 = now_us();
            free(call_tool_at(urls[k], conv[k][i], "run", json_pack("{s:s}", "command", "true"),
                              NULL));
            resume[k][i] = now_us() - t0;
        }
    printf("Docker guard (n=%d, interleaved): new chat's first call p50 %.0f ms direct | %.0f ms "
           "through "
           "the guard; resume of a stopped sandbox + run(\"true\") p50 %.0f ms direct | %.0f ms "
           "through "
           "the guard\n",
           GUARD_N, pct(first[0], GUARD_N, 0.5), pct(first[1], GUARD_N, 0.5),
           pct(resume[0], GUARD_N, 0.5), pct(resume[1], GUARD_N, 0.5));
    for (int i = 0; i < GUARD_N; i++)
        for (int k = 0; k < 2; k++)
            free(call_tool_at(urls[k], conv[k][i], "reset", json_object(), NULL));
}

/* ---- reaper figures ------------------------------------------------------------------- */

static void bench_reaper(docker_t *d, const char *conv, int n)
{
    char name[CONVID_NAME_MAX], path[512];
    convid_container_name(conv, name);
    long st;
    int64_t v[10];
    for (int i = 0; i < 10; i++) {
        snprintf(path, sizeof path, "/containers/%s/stop?t=1", name);
        docker_call(d, "POST", path, NULL, &st, NULL);
        int64_t t0 = now_us();
        free(run_cmd(conv, "true"));
        v[i] = now_us() - t0;
    }
    printf("resume of a stopped sandbox + run(\"true\"): p50 %.0f ms (n=10)\n", pct(v, 10, 0.5));

    /* N kept sandboxes, made as never-started containers with the labels. */
    char prefix_r[96];
    snprintf(prefix_r, sizeof prefix_r, "%s-reap-", prefix);
    int64_t t0 = now_us();
    for (int i = 0; i < n; i++) {
        char cname[200], cconv[160];
        snprintf(cconv, sizeof cconv, "%s%d", prefix_r, i);
        convid_container_name(cconv, cname);
        json_t *body = json_pack(
            "{s:s, s:[s], s:{s:s}, s:{s:s}}", "Image", "talkback-sandbox:latest", "Cmd", "true",
            "Labels", "talkback.conversation", cconv, "HostConfig", "NetworkMode", "none");
        snprintf(path, sizeof path, "/containers/create?name=%s", cname);
        docker_call(d, "POST", path, body, &st, NULL);
        json_decref(body);
    }
    printf("  (made %d kept sandboxes in %.1f s)\n", n, (now_us() - t0) / 1e6);
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "build/talkback-reaper --dry-run --reaper_prefix %s --hub_endpoint "
             "ipc:///tmp/talkback-bench-nohub/x.ipc 2>/dev/null | tail -n 1",
             prefix_r);
    t0 = now_us();
    FILE *f = popen(cmd, "r");
    char line[256] = "";
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        pclose(f);
    }
    line[strcspn(line, "\n")] = '\0';
    printf("one reaper sweep over %d kept sandboxes: %.2f s (%s)\n", n, (now_us() - t0) / 1e6,
           line);
    for (int i = 0; i < n; i++) {
        char cname[200], cconv[160];
        snprintf(cconv, sizeof cconv, "%s%d", prefix_r, i);
        convid_container_name(cconv, cname);
        snprintf(path, sizeof path, "/containers/%s?force=1", cname);
        docker_call(d, "DELETE", path, NULL, &st, NULL);
    }
}

/* ---- judge figures ------------------------------------------------------------------ */

static const struct {
    const char *lang;
    const char *code;
} trivial[] = {
    { "c", "#include <stdio.h>\nint main(void){int a,b;scanf(\"%d "
           "%d\",&a,&b);printf(\"%d\\n\",a+b);return 0;}\n" },
    { "cpp",
      "#include <bits/stdc++.h>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<\"\\n\";}\n" },
    { "python", "a,b=map(int,input().split())\nprint(a+b)\n" },
    { "javascript", "const "
                    "[a,b]=require('fs').readFileSync(0,'utf8').trim().split(/\\s+/"
                    ").map(Number);console.log(a+b);\n" },
    { "bash", "read a b\necho $((a+b))\n" },
    { "rust", "use std::io::*;\nfn main(){let mut s=String::new();stdin().read_to_string(&mut "
              "s).unwrap();let "
              "v:Vec<i64>=s.split_whitespace().map(|x|x.parse().unwrap()).collect();println!(\"{}"
              "\",v[0]+v[1]);}\n" },
    { "go", "package main\nimport \"fmt\"\nfunc main(){var a,b "
            "int\nfmt.Scan(&a,&b)\nfmt.Println(a+b)}\n" },
    { "java", "import java.util.*;\npublic class Main{public static void main(String[] x){Scanner "
              "s=new Scanner(System.in);System.out.println(s.nextLong()+s.nextLong());}}\n" },
    { "kotlin",
      "fun main(){val (a,b)=readLine()!!.trim().split(\" \").map{it.toLong()}\nprintln(a+b)}\n" },
    { "csharp", "using System;\nclass P{static void Main(){var p=Console.ReadLine().Split(' "
                "');Console.WriteLine(long.Parse(p[0])+long.Parse(p[1]));}}\n" },
    { "haskell",
      "main = do\n  [a, b] <- fmap (map read . words) getLine :: IO [Integer]\n  print (a + b)\n" },
    { "lua", "local a,b=io.read('n','n')\nprint(math.floor(a+b))\n" },
};

static void bench_judge(int n)
{
    char conv[96];
    snprintf(conv, sizeof conv, "%s-judge", prefix);
    printf("run_code, trivial PASS program (a+b), end to end, %d runs each:\n", n);
    for (size_t l = 0; l < sizeof trivial / sizeof trivial[0]; l++) {
        int64_t v[64];
        int ok = 0;
        for (int i = 0; i < n && i < 64; i++) {
            int64_t t0 = now_us();
            bool err = true;
            char *t =
                call_tool(conv, "run_code",
                          json_pack("{s:s, s:s, s:s, s:s}", "language", trivial[l].lang, "code",
                                    trivial[l].code, "input", "2 3\n", "expected", "5\n"),
                          &err);
            v[i] = now_us() - t0;
            if (t && !err && strstr(t, "PASS"))
                ok++;
            else if (i == 0)
                printf("  (%s did not pass: %.300s)\n", trivial[l].lang, t ? t : "no answer");
            free(t);
        }
        printf("  %-10s p50 %8.1f ms   (%d/%d PASS)\n", trivial[l].lang, pct(v, n, 0.5), ok, n);
    }
    /* PCH: the same program compiled with and without the precompiled header. */
    char *pch = NULL, *nopch = NULL;
    int64_t with[5], without[5];
    for (int i = 0; i < 5; i++) {
        int64_t t0 = now_us();
        free(pch);
        pch = run_cmd(conv, "cd /work && g++ -O2 -std=c++17 -pipe -I/opt/talkback/pch "
                            "-Winvalid-pch -o main main.cpp 2>&1 && echo compiled");
        with[i] = now_us() - t0;
        t0 = now_us();
        free(nopch);
        nopch = run_cmd(
            conv, "cd /work && g++ -O2 -std=c++17 -pipe -o main main.cpp 2>&1 && echo compiled");
        without[i] = now_us() - t0;
    }
    call_tool(conv, "run_code", json_pack("{s:s, s:s}", "language", "cpp", "code", trivial[1].code),
              NULL);
    double w = pct(with, 5, 0.5), wo = pct(without, 5, 0.5);
    printf("C++ with #include <bits/stdc++.h>: compile with PCH p50 %.0f ms, without %.0f ms: "
           "%.2fx faster\n",
           w, wo, wo / w);
    free(pch);
    free(nopch);
}

/* One run_code call: its time in microseconds; *reused: the build was
 * reused; *passed: it said PASS. */
static int64_t judge_call(const char *conv, json_t *args, bool *reused, bool *passed)
{
    int64_t t0 = now_us();
    bool err = true;
    char *t = call_tool(conv, "run_code", args, &err);
    int64_t us = now_us() - t0;
    if (reused)
        *reused = t && strstr(t, "\nBuild reused: ");
    if (passed)
        *passed = t && !err && strstr(t, "PASS");
    free(t);
    return us;
}

/* The compile cache: the same C++ and Kotlin program twice (a new source
 * each round, so the first call compiles), second / first; and a 10-case
 * `tests` call against 10 single calls of the same (already built)
 * program, in Python and C++. */
static void bench_judge_cache(int n)
{
    char conv[96];
    snprintf(conv, sizeof conv, "%s-jcache", prefix);
    free(run_cmd(conv, "true"));
    printf("run_code compile cache, the same program twice, %d rounds (p50):\n", n);
    static const char *langs[] = { "cpp", "kotlin" };
    for (size_t k = 0; k < 2; k++) {
        const char *code = NULL;
        for (size_t l = 0; l < sizeof trivial / sizeof trivial[0]; l++)
            if (strcmp(trivial[l].lang, langs[k]) == 0)
                code = trivial[l].code;
        int64_t first[32], second[32];
        int hits = 0;
        for (int i = 0; i < n && i < 32; i++) {
            char src[2048];
            snprintf(src, sizeof src, "%s// round %s-%d\n", code, prefix, i);
            bool reused = false, passed = false;
            first[i] = judge_call(conv,
                                  json_pack("{s:s, s:s, s:s, s:s}", "language", langs[k], "code",
                                            src, "input", "2 3\n", "expected", "5\n"),
                                  NULL, &passed);
            second[i] = judge_call(conv,
                                   json_pack("{s:s, s:s, s:s, s:s}", "language", langs[k], "code",
                                             src, "input", "2 3\n", "expected", "5\n"),
                                   &reused, &passed);
            hits += reused && passed;
        }
        double f = pct(first, n, 0.5), sc = pct(second, n, 0.5);
        printf("  %-6s first %7.0f ms, second %7.0f ms: second / first %.2f (%d/%d reused and "
               "passed)\n",
               langs[k], f, sc, sc / f, hits, n);
    }
    printf("run_code with tests: one call of 10 cases vs 10 single calls, %d rounds (p50):\n", n);
    static const char *tlangs[] = { "python", "cpp" };
    for (size_t k = 0; k < 2; k++) {
        const char *code = NULL;
        for (size_t l = 0; l < sizeof trivial / sizeof trivial[0]; l++)
            if (strcmp(trivial[l].lang, tlangs[k]) == 0)
                code = trivial[l].code;
        int64_t one[32], ten[32];
        int ok = 0;
        for (int i = 0; i < n && i < 32; i++) {
            json_t *tests = json_array();
            int64_t t0 = now_us();
            for (int c = 0; c < 10; c++) {
                char in[32], exp[32];
                snprintf(in, sizeof in, "%d %d\n", c, c + 1);
                snprintf(exp, sizeof exp, "%d\n", 2 * c + 1);
                json_array_append_new(tests, json_pack("{s:s, s:s}", "input", in, "expected", exp));
                bool passed = false;
                judge_call(conv,
                           json_pack("{s:s, s:s, s:s, s:s}", "language", tlangs[k], "code", code,
                                     "input", in, "expected", exp),
                           NULL, &passed);
                ok += passed;
            }
            ten[i] = now_us() - t0;
            bool passed = false;
            one[i] = judge_call(
                conv,
                json_pack("{s:s, s:s, s:o}", "language", tlangs[k], "code", code, "tests", tests),
                NULL, &passed);
            ok += passed;
        }
        double a = pct(one, n, 0.5), b = pct(ten, n, 0.5);
        printf("  %-6s tests call %7.0f ms, 10 single calls %7.0f ms: ratio %.2f (%d/%d PASS)\n",
               tlangs[k], a, b, a / b, ok, 11 * n);
    }
    free(call_tool(conv, "reset", json_object(), NULL));
}

/* run_code of a Python and a C++ PASS program, agent vs exec, interleaved. */
static void bench_judge_vs(int n)
{
    char ca[96], ce[96];
    snprintf(ca, sizeof ca, "%s-jagent", prefix);
    snprintf(ce, sizeof ce, "%s-jexec", prefix);
    printf("run_code PASS program (a+b), agent vs exec, %d runs each:\n", n);
    const char *langs[] = { "python", "cpp" };
    for (size_t k = 0; k < 2; k++) {
        const char *code = NULL;
        for (size_t l = 0; l < sizeof trivial / sizeof trivial[0]; l++)
            if (strcmp(trivial[l].lang, langs[k]) == 0)
                code = trivial[l].code;
        int64_t va[64], ve[64];
        int oka = 0, oke = 0;
        for (int i = 0; i < n && i < 64; i++)
            for (int side = 0; side < 2; side++) {
                int64_t t0 = now_us();
                bool err = true;
                char *t = call_tool_at(side ? exec_url : url, side ? ce : ca, "run_code",
                                       json_pack("{s:s, s:s, s:s, s:s}", "language", langs[k],
                                                 "code", code, "input", "2 3\n", "expected", "5\n"),
                                       &err);
                (side ? ve : va)[i] = now_us() - t0;
                if (t && !err && strstr(t, "PASS"))
                    (*(side ? &oke : &oka))++;
                free(t);
            }
        printf("  %-6s agent p50 %7.1f ms (%d/%d PASS)   exec p50 %7.1f ms (%d/%d PASS)\n",
               langs[k], pct(va, n, 0.5), oka, n, pct(ve, n, 0.5), oke, n);
    }
    free(call_tool_at(url, ca, "reset", json_object(), NULL));
    free(call_tool_at(exec_url, ce, "reset", json_object(), NULL));
}

/* 64 chats x sleep 1 through the exec instance, for comparison. */
static void bench_parallel_exec(int nchats)
{
    chat_t *chats = calloc((size_t)nchats, sizeof *chats);
    for (int i = 0; i < nchats; i++) {
        snprintf(chats[i].conv, sizeof chats[i].conv, "%s-x%d", prefix, i);
        chats[i].cmd = "true";
        chats[i].at = exec_url;
    }
    double made = parallel(chats, nchats);
    for (int i = 0; i < nchats; i++)
        chats[i].cmd = "sleep 1";
    double wall = parallel(chats, nchats);
    int ok = 0;
    for (int i = 0; i < nchats; i++)
        ok += chats[i].ok;
    printf("exec path: %d new chats created at once: %.2f s; %d chats x run(\"sleep 1\") at once: "
           "wall %.2f s "
           "(%d answered)\n",
           nchats, made, nchats, wall, ok);
    parallel_spread(chats, nchats);
    for (int i = 0; i < nchats; i++)
        free(call_tool_at(exec_url, chats[i].conv, "reset", json_object(), NULL));
    free(chats);
}

/* 9. (see the top) */
static void bench_pictures(int n)
{
    char bare[96], big[96];
    snprintf(bare, sizeof bare, "%s-pbare", prefix);
    snprintf(big, sizeof big, "%s-pfiles", prefix);
    free(run_cmd(bare, "true"));
    free(run_cmd(big, "true"));
    int64_t t0 = now_us();
    char *t = run_cmd(big, "mkdir -p files && cd files && for d in $(seq 500); do mkdir d$d && "
                           "(cd d$d && touch $(seq -f f%g 100)); done; find /work -type f | wc -l");
    printf("pictures: /work of one chat filled in %.1f s; %s", (now_us() - t0) / 1e6,
           t ? t : "(no answer)\n");
    free(t);
    int64_t *a = calloc((size_t)n, sizeof *a), *b = calloc((size_t)n, sizeof *b);
    for (int i = 0; i < 5; i++) {
        free(run_cmd(bare, "true"));
        free(run_cmd(big, "true"));
    }
    for (int i = 0; i < n; i++) {
        /* Alternate which goes first, so neither always follows the other. */
        const char *first = i % 2 ? big : bare, *second = i % 2 ? bare : big;
        int64_t *fv = i % 2 ? b : a, *sv = i % 2 ? a : b;
        t0 = now_us();
        free(run_cmd(first, "true"));
        fv[i] = now_us() - t0;
        t0 = now_us();
        free(run_cmd(second, "true"));
        sv[i] = now_us() - t0;
    }
    double ap = pct(a, n, 0.5), bp = pct(b, n, 0.5);
    printf("run(\"true\") (n=%d): bare chat p50 %.1f ms p99 %.1f ms | /work with 50 000 files p50 "
           "%.1f ms "
           "p99 %.1f ms | p50 %+.1f%%\n",
           n, ap, pct(a, n, 0.99), bp, pct(b, n, 0.99), (bp - ap) * 100 / ap);
    free(a);
    free(b);
    t = run_cmd(bare, "python3 -c \"import matplotlib.pyplot as plt; plt.plot([1, 3, 2, 4]); "
                      "plt.savefig('/tmp/pic.png')\" && tr -c x y < /tmp/pic.png > /tmp/pic.bin && "
                      "stat -c %s /tmp/pic.png");
    const char *nl = t ? strchr(t, '\n') : NULL;
    long psize = nl ? strtol(nl + 1, NULL, 10) : 0;
    printf("pictures: a 640x480 plot of %ld bytes (0: no matplotlib in the image?), copied:\n",
           psize);
    free(t);
    /* The three interleaved call by call, so load hits all alike. */
    static const char *const cmds[3] = { "cp /tmp/pic.png /tmp/out.png",
                                         "cp /tmp/pic.bin /work/out.bin",
                                         "cp /tmp/pic.png /work/out.png" };
    int64_t *v[3];
    int shown = 0;
    for (int k = 0; k < 3; k++)
        v[k] = calloc((size_t)n, sizeof *v[k]);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            t0 = now_us();
            char *r = run_cmd(bare, cmds[k]);
            v[k][i] = now_us() - t0;
            shown += k == 2 && r && strstr(r, "[image /work/out.png: 640x480 PNG") != NULL;
            free(r);
        }
    double tmp = pct(v[0], n, 0.5), other = pct(v[1], n, 0.5), image = pct(v[2], n, 0.5);
    printf("  to /tmp (no image): p50 %.1f ms | to /work, not an image: p50 %.1f ms (%+.1f ms) | "
           "to /work as a PNG, returned (%d of %d): p50 %.1f ms (%+.1f ms) (n=%d, interleaved)\n",
           tmp, other, other - tmp, shown, n, image, image - tmp, n);
    for (int k = 0; k < 3; k++)
        free(v[k]);
    if (plain_url) {
        char pconv[96];
        snprintf(pconv, sizeof pconv, "%s-pplain", prefix);
        int64_t *mine = calloc((size_t)n, sizeof *mine), *plain = calloc((size_t)n, sizeof *plain);
        for (int i = 0; i < 5; i++) {
            free(run_cmd(bare, "true"));
            free(
                call_tool_at(plain_url, pconv, "run", json_pack("{s:s}", "command", "true"), NULL));
        }
        for (int i = 0; i < n; i++) {
            t0 = now_us();
            free(run_cmd(bare, "true"));
            mine[i] = now_us() - t0;
            t0 = now_us();
            free(
                call_tool_at(plain_url, pconv, "run", json_pack("{s:s}", "command", "true"), NULL));
            plain[i] = now_us() - t0;
        }
        double mp = pct(mine, n, 0.5), pp = pct(plain, n, 0.5);
        printf("run(\"true\") (n=%d): agent finding images p50 %.1f ms p99 %.1f ms | agent without "
               "it p50 %.1f ms "
               "p99 %.1f ms | p50 %+.1f ms\n",
               n, mp, pct(mine, n, 0.99), pp, pct(plain, n, 0.99), mp - pp);
        free(call_tool_at(plain_url, pconv, "reset", json_object(), NULL));
        free(mine);
        free(plain);
    }
    free(call_tool(bare, "reset", json_object(), NULL));
    free(call_tool(big, "reset", json_object(), NULL));
}

/* 11. run("true") with the shepherd (url) and without it (noshep_url),
 * interleaved so the machine's load hits both alike. */
static void bench_shepherd(int n)
{
    char a[96], b[96];
    snprintf(a, sizeof a, "%s-shep", prefix);
    snprintf(b, sizeof b, "%s-noshep", prefix);
    int64_t *with = calloc((size_t)n, sizeof *with), *without = calloc((size_t)n, sizeof *without);
    for (int i = 0; i < 10; i++) {
        free(call_tool_at(url, a, "run", json_pack("{s:s}", "command", "true"), NULL));
        free(call_tool_at(noshep_url, b, "run", json_pack("{s:s}", "command", "true"), NULL));
    }
    for (int i = 0; i < n; i++) {
        int64_t t0 = now_us();
        free(call_tool_at(url, a, "run", json_pack("{s:s}", "command", "true"), NULL));
        with[i] = now_us() - t0;
        t0 = now_us();
        free(call_tool_at(noshep_url, b, "run", json_pack("{s:s}", "command", "true"), NULL));
        without[i] = now_us() - t0;
    }
    double w50 = pct(with, n, 0.5), o50 = pct(without, n, 0.5);
    printf("run(\"true\") via MCP, interleaved (n=%d): with the shepherd p50 %.2f ms p99 %.2f ms | "
           "without "
           "p50 %.2f ms p99 %.2f ms | p50 difference %+.2f ms\n",
           n, w50, pct(with, n, 0.99), o50, pct(without, n, 0.99), w50 - o50);
    free(call_tool_at(url, a, "reset", json_object(), NULL));
    free(call_tool_at(noshep_url, b, "reset", json_object(), NULL));
    free(with);
    free(without);
}

int main(int argc, char **argv)
{
    int n = 100, nchats = 64, reap = 0, scale = 0;
    bool judge = false, pictures = false, judge_only = false, warm_only = false, eras = false,
         tiers = false;
    const char *docker2 = NULL, *restart_cmd = NULL, *cold_url = NULL, *before_url = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--url") && i + 1 < argc)
            url = argv[++i];
        else if (!strcmp(argv[i], "--exec-url") && i + 1 < argc)
            exec_url = argv[++i];
        else if (!strcmp(argv[i], "--guard-url") && i + 1 < argc)
            guard_url = argv[++i];
        else if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--chats") && i + 1 < argc)
            nchats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--judge"))
            judge = true;
        else if (!strcmp(argv[i], "--pictures"))
            pictures = true;
        else if (!strcmp(argv[i], "--plain-url") && i + 1 < argc)
            plain_url = argv[++i];
        else if (!strcmp(argv[i], "--judge-only"))
            judge_only = true;
        else if (!strcmp(argv[i], "--no-shepherd-url") && i + 1 < argc)
            noshep_url = argv[++i];
        else if (!strcmp(argv[i], "--agent") && i + 1 < argc)
            agent_path = argv[++i];
        else if (!strcmp(argv[i], "--reaper") && i + 1 < argc)
            reap = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--multihost") && i + 1 < argc)
            docker2 = argv[++i];
        else if (!strcmp(argv[i], "--restart-cmd") && i + 1 < argc)
            restart_cmd = argv[++i];
        else if (!strcmp(argv[i], "--warm"))
            warm_only = true;
        else if (!strcmp(argv[i], "--tiers"))
            tiers = true;
        else if (!strcmp(argv[i], "--scale") && i + 1 < argc)
            scale = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--eras"))
            eras = true;
        else if (!strcmp(argv[i], "--against") && i + 1 < argc)
            before_url = argv[++i];
        else if (!strcmp(argv[i], "--cold-url") && i + 1 < argc)
            cold_url = argv[++i];
        else {
            fprintf(
                stderr,
                "usage: talkback-bench [--url URL] [--exec-url URL] [--guard-url URL] [--n N] "
                "[--chats N] [--judge] [--reaper N] [--pictures [--plain-url URL]] [--judge-only] "
                "[--no-shepherd-url URL] [--agent PATH] "
                "[--multihost DOCKER2 [--restart-cmd CMD]] [--warm [--cold-url URL]] [--eras] "
                "[--tiers] [--scale N] [--against URL]\n");
            return 2;
        }
    }
    if (n < 2)
        n = 2;
    if (n > 1000)
        n = 1000;
    if (agent_path) {
        bench_agent_shepherd(agent_path, n);
        return 0;
    }
    if (nchats > 256)
        nchats = 256;
    curl_global_init(CURL_GLOBAL_ALL);
    if (before_url) {
        bench_against(url, before_url, n);
        curl_global_cleanup();
        return 0;
    }
    if (eras) {
        bench_eras(url, n);
        curl_global_cleanup();
        return 0;
    }
    if (docker2) {
        int rc = bench_multihost(url, docker2, restart_cmd, n);
        curl_global_cleanup();
        return rc;
    }
    snprintf(prefix, sizeof prefix, "bench-%d", (int)getpid());
    docker_err_t derr;
    char errbuf[256];
    docker_t *d = docker_new(NULL, &derr, errbuf, sizeof errbuf);
    if (!d) {
        fprintf(stderr, "talkback-bench: cannot reach Docker: %s\n", errbuf);
        return 1;
    }
    printf("talkback-bench against %s (Docker API %s)\n", url, docker_api_version(d));
    if (noshep_url) {
        bench_shepherd(n);
        docker_destroy(&d);
        curl_global_cleanup();
        return 0;
    }
    if (pictures) {
        bench_pictures(n);
        docker_destroy(&d);
        curl_global_cleanup();
        return 0;
    }
    if (scale > 2) {
        bench_tiers_scale(d, url, scale);
        docker_destroy(&d);
        curl_global_cleanup();
        return 0;
    }
    if (tiers) {
        bench_tiers(d, url, n > 20 ? 20 : n);
        docker_destroy(&d);
        curl_global_cleanup();
        return 0;
    }
    if (warm_only) {
        bench_warm(d, url, cold_url, n > 20 ? 20 : n);
        docker_destroy(&d);
        curl_global_cleanup();
        return 0;
    }
    if (judge_only) {
        bench_judge_cache(n > 32 ? 5 : n);
        docker_destroy(&d);
        curl_global_cleanup();
        return 0;
    }
    print_rss("idle");

    /* 2. first call of a new chat, vs docker run --rm */
    char conv[96];
    snprintf(conv, sizeof conv, "%s-main", prefix);
    int64_t t0 = now_us();
    char *t = run_cmd(conv, "true");
    double cold = (now_us() - t0) / 1e3;
    if (!t) {
        fprintf(stderr, "talkback-bench: no answer from %s\n", url);
        return 1;
    }
    free(t);
    int64_t dr[5];
    for (int i = 0; i < 5; i++) {
        t0 = now_us();
        if (system("docker run --rm --network talkback-sandboxes talkback-sandbox:latest true "
                   ">/dev/null 2>&1") != 0)
            fprintf(stderr, "docker run failed\n");
        dr[i] = now_us() - t0;
    }
    double drun = pct(dr, 5, 0.5);
    printf("first call of a new chat: %.0f ms; docker run --rm: %.0f ms (p50 of 5); ratio %.2f\n",
           cold, drun, cold / drun);

    /* 1. warm: MCP run("true") vs raw exec */
    char name[CONVID_NAME_MAX];
    convid_container_name(conv, name);
    int64_t *mcp = calloc((size_t)n, sizeof *mcp), *raw = calloc((size_t)n, sizeof *raw);
    const char *argv_true[] = { "true", NULL };
    docker_exec_t x = { .argv = argv_true };
    for (int i = 0; i < 5; i++) { /* warm both paths */
        free(run_cmd(conv, "true"));
        int code;
        docker_exec(d, name, &x, &code);
    }
    for (int i = 0; i < n; i++) {
        t0 = now_us();
        free(run_cmd(conv, "true"));
        mcp[i] = now_us() - t0;
        t0 = now_us();
        int code;
        docker_exec(d, name, &x, &code);
        raw[i] = now_us() - t0;
    }
    double mp50 = pct(mcp, n, 0.5), mp99 = pct(mcp, n, 0.99);
    double rp50 = pct(raw, n, 0.5), rp99 = pct(raw, n, 0.99);
    printf("run(\"true\") via MCP: p50 %.1f ms, p99 %.1f ms; raw Docker exec: p50 %.1f ms, p99 "
           "%.1f ms; "
           "ratio p50 %.2f, p99 %.2f (n=%d)\n",
           mp50, mp99, rp50, rp99, mp50 / rp50, mp99 / rp99, n);
    /* Without a raw exec between calls (its teardown goes on in dockerd
     * and containerd after it answered, on the same two cores), and what
     * the same trip costs when no process is started (a write_file). */
    int64_t *wf = calloc((size_t)n, sizeof *wf);
    for (int i = 0; i < n; i++) {
        t0 = now_us();
        free(run_cmd(conv, "true"));
        mcp[i] = now_us() - t0;
        t0 = now_us();
        free(call_tool(conv, "write_file",
                       json_pack("{s:s, s:s}", "path", "bench.txt", "content", "hello\n"), NULL));
        wf[i] = now_us() - t0;
    }
    printf("run(\"true\") via MCP, no raw exec in between: p50 %.1f ms, p99 %.1f ms; write_file of "
           "6 bytes "
           "(no process started): p50 %.1f ms (n=%d)\n",
           pct(mcp, n, 0.5), pct(mcp, n, 0.99), pct(wf, n, 0.5), n);
    free(wf);
    if (exec_url) {
        /* The same three, interleaved call by call, so load hits all alike. */
        char xconv[96];
        snprintf(xconv, sizeof xconv, "%s-xmain", prefix);
        int64_t *ex = calloc((size_t)n, sizeof *ex);
        for (int i = 0; i < 5; i++)
            free(call_tool_at(exec_url, xconv, "run", json_pack("{s:s}", "command", "true"), NULL));
        for (int i = 0; i < n; i++) {
            t0 = now_us();
            free(run_cmd(conv, "true"));
            mcp[i] = now_us() - t0;
            t0 = now_us();
            free(call_tool_at(exec_url, xconv, "run", json_pack("{s:s}", "command", "true"), NULL));
            ex[i] = now_us() - t0;
            t0 = now_us();
            int code;
            docker_exec(d, name, &x, &code);
            raw[i] = now_us() - t0;
        }
        printf("run(\"true\") side by side (n=%d): agent p50 %.1f ms p99 %.1f ms | exec path p50 "
               "%.1f ms "
               "p99 %.1f ms | raw Docker API exec p50 %.1f ms p99 %.1f ms\n",
               n, pct(mcp, n, 0.5), pct(mcp, n, 0.99), pct(ex, n, 0.5), pct(ex, n, 0.99),
               pct(raw, n, 0.5), pct(raw, n, 0.99));
        free(call_tool_at(exec_url, xconv, "reset", json_object(), NULL));
        free(ex);
    }
    print_agent_mem("idle");

    /* 3 + 4. many chats at once */
    chat_t *chats = calloc((size_t)nchats, sizeof *chats);
    for (int i = 0; i < nchats; i++) {
        snprintf(chats[i].conv, sizeof chats[i].conv, "%s-c%d", prefix, i);
        chats[i].cmd = "true";
    }
    double warm = parallel(chats, nchats);
    printf("%d new chats created at once: %.2f s\n", nchats, warm);
    for (int i = 0; i < nchats; i++)
        chats[i].cmd = "sleep 1";
    pthread_t sampler;
    sampling = 1;
    pthread_create(&sampler, NULL, rss_sampler, NULL);
    double wall = parallel(chats, nchats);
    sampling = 0;
    pthread_join(sampler, NULL);
    int ok = 0;
    for (int i = 0; i < nchats; i++)
        ok += chats[i].ok;
    printf("%d chats x run(\"sleep 1\") at once: wall %.2f s (%d answered)\n", nchats, wall, ok);
    parallel_spread(chats, nchats);
    printf("  the same %d bash -c \"sleep 1\" forked at once on this host, no talkback, no Docker: "
           "%.2f s\n",
           nchats, host_floor(nchats));
    printf("  peak RSS of all talkback processes under that load: %.1f MiB\n", peak_rss / 1024.0);
    print_rss("after load");
    print_agent_mem("after load");
    if (exec_url)
        bench_parallel_exec(nchats);

    if (judge && exec_url)
        bench_judge_vs(5);
    else if (judge)
        bench_judge(5);
    if (judge)
        bench_judge_cache(5);
    if (reap > 0)
        bench_reaper(d, conv, reap > 2000 ? 2000 : reap);
    if (guard_url)
        bench_guard(d, guard_url);

    /* clean up */
    for (int i = 0; i < nchats; i++)
        free(call_tool(chats[i].conv, "reset", json_object(), NULL));
    free(call_tool(conv, "reset", json_object(), NULL));
    char jconv[96];
    snprintf(jconv, sizeof jconv, "%s-judge", prefix);
    if (judge)
        free(call_tool(jconv, "reset", json_object(), NULL));
    free(chats);
    free(mcp);
    free(raw);
    docker_destroy(&d);
    curl_global_cleanup();
    return 0;
}
