/* config.c -- the table of every talkback setting, and how values arrive.
 *
 * The table below is the single list of limits, timeouts, paths and
 * endpoints; docs/configuration.md is generated from it (`--help` prints
 * it).  Each entry has a type: a string, an integer, a size (bytes, with
 * K/M/G suffixes), a duration (seconds, with s/m/h/d suffixes) or a bool.
 *
 * Order of precedence, later wins: default, config file, environment
 * (TALKBACK_<KEY>), command line.  The file is plain `key = value` lines so
 * an operator can write it without reading this code.
 */
#include "common/config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum { CT_STR, CT_INT, CT_SIZE, CT_DURATION, CT_BOOL } config_type_t;

typedef struct {
    const char *key;
    config_type_t type;
    const char *dflt;
    const char *help;
    char *value; /* malloc'ed when set; NULL = default */
} config_entry_t;

static config_entry_t config_table[] = {
    /* --- endpoints and transport --- */
    { "listen", CT_STR, "127.0.0.1:8080", "HOST:PORT the MCP endpoint (POST /mcp) listens on",
      NULL },
    { "hub_endpoint", CT_STR, "ipc:///run/talkback/hub.ipc",
      "ZeroMQ endpoint of the hub: the gateway binds it, workers connect (ipc:// or tcp://)",
      NULL },
    { "hub_bind", CT_STR, "",
      "endpoint the gateway binds instead of hub_endpoint (e.g. tcp://0.0.0.0:5555)", NULL },
    { "heartbeat_ms", CT_INT, "1000", "how often workers say HELLO to the hub, milliseconds",
      NULL },
    { "heartbeat_timeout_ms", CT_INT, "3000",
      "silence after which the hub counts a worker dead, milliseconds", NULL },
    { "worker_wait_ms", CT_INT, "5000",
      "how long a call waits for a worker to appear before it fails, milliseconds", NULL },
    { "record", CT_STR, "",
      "append every queued request and its reply to this file (msgpack); empty = off", NULL },
    { "host_name", CT_STR, "",
      "the name this host goes by in a cluster (sandbox manager, reaper, judges); empty = the "
      "machine's host name",
      NULL },
    { "on_host_lost", CT_STR, "refuse",
      "what the gateway does with a chat whose host is not reachable: refuse (the call says so; "
      "its files stay there) or place (a new sandbox on another host; its files are lost)",
      NULL },
    { "locate_wait_ms", CT_INT, "3000",
      "how long the gateway waits for the sandbox managers to say which of them holds a chat (once "
      "per chat per gateway life), milliseconds",
      NULL },
    { "hub_hosts_file", CT_STR, "/var/lib/talkback/hub/hosts",
      "file where the gateway keeps the names of the hosts it has seen a worker on, so that after "
      "a restart a chat found on no live host is refused while one of them has no sandbox manager "
      "(`talkbackctl forget HOST` drops a retired one); empty: kept in memory only",
      NULL },
    { "route_cache_max", CT_INT, "100000",
      "chats whose host the gateway remembers; past it the memory starts again empty and each chat "
      "is found again",
      NULL },
    { "max_jobs", CT_INT, "256", "requests a worker runs at once; more wait", NULL },
    /* --- the hub's keys and bounds (hub/hubkeys.c) --- */
    { "hub_keys", CT_STR, "/etc/talkback/keys",
      "directory of the hub's CURVE keys, as `talkback-keys DIR` makes it (needed on tcp:// hubs)",
      NULL },
    { "hub_cert", CT_STR, "",
      "a worker's own secret certificate; empty = HUB_KEYS/KIND.key_secret (sandbox, judge, "
      "reaper, ctl)",
      NULL },
    { "hub_insecure", CT_BOOL, "0",
      "let a tcp:// hub run without keys: any peer that reaches it can act as any worker (logged "
      "loudly)",
      NULL },
    { "hub_max_message", CT_SIZE, "16M",
      "largest message the hub accepts from a peer; a larger one closes that peer's connection (it "
      "reconnects)",
      NULL },
    { "hub_hwm", CT_INT, "1000",
      "messages the hub queues per peer and direction before it stops reading that peer", NULL },
    { "hub_peer_requests", CT_INT, "1024",
      "open requests one remote peer (a judge, the reaper) may have at the hub; more are refused",
      NULL },
    { "hub_refusal_log_ms", CT_INT, "10000",
      "the hub logs a refused handshake, HELLO, request or reply at most once per key and kind of "
      "refusal in this time, milliseconds (the next line counts those held back); 0 = every one",
      NULL },
    { "ctl_timeout", CT_DURATION, "30s",
      "how long talkbackctl waits for one answer (a host's sandbox list, a drain, a removal)",
      NULL },
    { "ctl_connect_timeout", CT_DURATION, "5s",
      "how long talkbackctl waits to reach the hub before it says the hub is not reachable", NULL },
    /* --- MCP front --- */
    { "conversation_header", CT_STR, "X-Conversation-Id", "HTTP header that carries the chat id",
      NULL },
    { "user_header", CT_STR, "X-User-Id", "HTTP header that carries the user id (optional)", NULL },
    { "max_body", CT_SIZE, "8M", "largest request body accepted; larger gets 413", NULL },
    { "sse_keepalive", CT_DURATION, "15s", "keep-alive comment interval on SSE answers", NULL },
    { "list_ttl", CT_DURATION, "1h",
      "how long a 2026-07-28 client may cache tools/list and server/discover (their ttlMs)", NULL },
    { "allowed_origins", CT_STR, "", "comma-separated Origin values allowed besides localhost",
      NULL },
    /* --- MCP front: who may call, and what one client may hold --- */
    { "auth_token", CT_STR, "",
      "bearer token POST /mcp and GET /metrics must carry (Authorization: Bearer TOKEN), 16+ "
      "characters; required unless listen is loopback",
      NULL },
    { "auth_token_file", CT_STR, "",
      "file whose first line is the bearer token (instead of auth_token)", NULL },
    { "allowed_hosts", CT_STR, "",
      "comma-separated Host names accepted besides localhost, 127.0.0.1, [::1] and (off loopback) "
      "IP literals: NAME, NAME:PORT or *",
      NULL },
    { "max_connections", CT_INT, "1024",
      "connections the MCP endpoint serves at once; past it requests get 503 (0 = no cap)", NULL },
    { "max_client_connections", CT_INT, "256",
      "connections one client address may have open; past it requests get 429 (0 = no cap)", NULL },
    { "header_timeout", CT_DURATION, "15s",
      "a connection must send a request's headers within this (also the keep-alive idle time); "
      "else it is closed",
      NULL },
    { "body_timeout", CT_DURATION, "60s",
      "a request's body must arrive within this after its headers; else the connection is closed",
      NULL },
    { "body_budget", CT_SIZE, "64M",
      "request-body bytes the gateway holds at once; a body past it gets 503", NULL },
    { "call_grace", CT_DURATION, "30s",
      "deadline slack beyond a command's own timeout (container start, copy-out)", NULL },
    { "client_timeout", CT_DURATION, "600s",
      "how long the MCP client waits for one call (LibreChat's `timeout`); every timeout and "
      "deadline stays below it; 0 = no limit",
      NULL },
    /* --- tools --- */
    { "client_margin_ms", CT_INT, "2000",
      "milliseconds of client_timeout a call's deadline leaves for the reply's way back to the "
      "client (hub, gateway, HTTP); set-up takes its time from the command's share instead",
      NULL },
    { "job_answer_ms", CT_INT, "1000",
      "how long before a call's deadline a `run` whose command still runs answers, the command "
      "going on as job N (`talkback job N`); the time to write and send that result",
      NULL },
    { "job_log_cap", CT_SIZE, "16M",
      "what the agent keeps of a job's output in its file in the sandbox "
      "(/run/talkback/jobs/N/out); past it the rest is dropped and the file says so",
      NULL },
    { "run_timeout", CT_DURATION, "300s", "default timeout of run", NULL },
    { "run_timeout_max", CT_DURATION, "1800s", "largest timeout run accepts", NULL },
    { "output_cap", CT_SIZE, "64K",
      "output kept per command (head + tail); the middle is cut and counted", NULL },
    { "write_file_max", CT_SIZE, "8M", "largest content write_file accepts", NULL },
    { "code_run_timeout", CT_DURATION, "10s", "default run timeout of run_code", NULL },
    { "code_compile_timeout", CT_DURATION, "120s", "compile timeout of run_code", NULL },
    { "code_timeout_max", CT_DURATION, "300s", "largest run timeout run_code accepts", NULL },
    { "image_max_count", CT_INT, "4",
      "images returned with one run or run_code result; more are only named", NULL },
    { "image_max_bytes", CT_SIZE, "4M",
      "largest image returned; a larger one is named and not shown", NULL },
    { "image_max_call_bytes", CT_SIZE, "8M",
      "bytes of images returned with one result, all together (at most 12M)", NULL },
    { "code_output_limit", CT_SIZE, "1M",
      "output of one run_code run past which the program is stopped", NULL },
    /* --- Docker and the sandbox template --- */
    { "docker_host", CT_STR, "",
      "Docker daemon address (unix:///... or tcp://...); empty = $DOCKER_HOST or "
      "unix:///var/run/docker.sock",
      NULL },
    { "image", CT_STR, "talkback-sandbox:latest", "image of new sandboxes", NULL },
    { "network", CT_STR, "talkback-sandboxes",
      "bridge network of sandboxes; created if missing, never removed", NULL },
    { "egress_record", CT_STR, "",
      "the record deploy/egress-rule writes of the network it protects (name, Docker id, "
      "subnets); no sandbox is made or started on a network that does not match it; empty = "
      "/run/talkback-egress/NETWORK",
      NULL },
    { "egress_check", CT_STR, "require",
      "require: a sandbox starts only on the network the egress rule's record describes (same id "
      "and subnets, a bridge, inter-container traffic off, no IPv6); off: not checked (another "
      "firewall keeps sandboxes off the host and the LAN; logged at every start)",
      NULL },
    { "memory", CT_SIZE, "256M", "sandbox memory limit", NULL },
    { "memory_swap", CT_SIZE, "1G", "sandbox memory + swap limit", NULL },
    { "nano_cpus", CT_INT, "1000000000", "sandbox CPU quota in billionths of a CPU", NULL },
    { "cpu_shares", CT_INT, "256", "sandbox CPU weight (1024 = normal)", NULL },
    { "pids_limit", CT_INT, "512", "most processes a sandbox may have", NULL },
    { "runtime", CT_STR, "",
      "container runtime of sandboxes (e.g. runsc); empty = Docker's default", NULL },
    { "log_max_size", CT_STR, "1m", "Docker json-file log size cap per sandbox", NULL },
    { "agent_path", CT_STR, "",
      "the in-sandbox agent program copied into new sandboxes; empty = talkback-agent next to "
      "talkback-sandbox; a missing file = no agent (Docker exec only)",
      NULL },
    { "agent_shepherd", CT_BOOL, "true",
      "run each command under the agent's shepherd (a subreaper that kills all the command started "
      "on timeout, cancel or output limit, and reports its CPU time and memory); false only to "
      "measure what it costs",
      NULL },
    { "background_watch_ms", CT_INT, "1500",
      "what the agent watches what a run's command left running in the background for, in "
      "milliseconds after its end (each program that ends in that time is said in the result, with "
      "its status and last lines; a server, with its ports): half of it, and all of it only "
      "while a program is still busy starting; over early once each ended or listens; at most "
      "1500; 0 = no watch",
      NULL },
    { "agent_frame_deadline", CT_DURATION, "2s",
      "a frame from the agent whose header came but whose payload does not follow within this long "
      "ends the agent link (the call goes on through exec or ends with a clear text)",
      NULL },
    { "disk_cap", CT_SIZE, "2G",
      "most a sandbox may write: enforced at write time where Docker's storage allows (overlay2 on "
      "xfs with pquota, or btrfs with quota groups), else a sandbox past it is removed",
      NULL },
    { "disk_call_interval", CT_DURATION, "5s",
      "where disk_cap is not enforced at write time: least time between two sizings of one sandbox "
      "after its calls (0 = only the reaper's)",
      NULL },
    { "disk_write_rate", CT_SIZE, "1G",
      "where disk_cap is not enforced at write time: the most a sandbox is taken to write per "
      "second; a sandbox with a call running is sized again before it could reach its cap at that "
      "rate (at most every disk_call_interval), and the call is stopped once it is past it",
      NULL },
    { "disk_watch_min_ms", CT_INT, "250",
      "least time in milliseconds between two sizings of one sandbox while a call runs (also at "
      "least four times what its last sizing took)",
      NULL },
    { "inotify_max_watches", CT_INT, "16384",
      "most inotify watches the processes of one sandbox may hold (the host's inotify is shared "
      "by every sandbox); past it the agent kills the biggest holder (0 = no cap)",
      NULL },
    { "inotify_max_instances", CT_INT, "32",
      "most inotify instances the processes of one sandbox may hold; past it the agent kills the "
      "biggest holder (0 = no cap)",
      NULL },
    { "mem_floor", CT_SIZE, "512M",
      "a sandbox is not created, claimed or started while the Docker host's available memory "
      "(MemAvailable) is below this (0 = no floor)",
      NULL },
    { "max_running", CT_INT, "100",
      "most sandboxes running at once on this sandbox network; past it a new or stopped sandbox is "
      "not started (0 = no cap)",
      NULL },
    { "max_running_per_user", CT_INT, "20",
      "most sandboxes of one user (X-User-Id) running at once; past it one of theirs is not "
      "started (0 = no cap)",
      NULL },
    { "warm_pool", CT_INT, "2",
      "spare sandboxes the sandbox manager keeps created, started and with their agent attached, "
      "for new chats to claim (0 = no pool)",
      NULL },
    { "warm_pool_check", CT_DURATION, "10s",
      "how often the sandbox manager checks its spare sandboxes against the sandbox image and "
      "template, and retries making them after a failure",
      NULL },
    { "state_dir", CT_STR, "/var/lib/talkback/state",
      "folder on the Docker host, shared by the sandbox manager and the reaper, for what sandboxes "
      "must not change: last-call stamps and stop reasons",
      NULL },
    /* --- kept sandboxes (the reaper) --- */
    { "idle_pause", CT_DURATION, "5m",
      "a running sandbox with no call for this long is paused (docker pause: its processes and "
      "memory stay, it uses no CPU) and the next call unpauses it (0 = never paused)",
      NULL },
    { "max_paused", CT_INT, "50",
      "most sandboxes kept paused at once (each keeps its memory, and its place under the running "
      "caps); past it the least recently used paused one is stopped (0 = no cap)",
      NULL },
    { "idle_stop", CT_DURATION, "60m",
      "a sandbox with no call for this long is stopped (not removed)", NULL },
    { "disk_interval", CT_DURATION, "30s",
      "how often the reaper sizes running sandboxes against disk_cap", NULL },
    { "reaper_interval", CT_DURATION, "60s",
      "how often the reaper looks for idle sandboxes and evictions", NULL },
    { "keep_max_age", CT_DURATION, "14d", "a stopped sandbox unused this long is removed", NULL },
    { "keep_max_count", CT_INT, "50", "most stopped sandboxes kept; the oldest go first", NULL },
    { "keep_max_bytes", CT_SIZE, "10G",
      "most disk all stopped sandboxes may use together; the oldest go first", NULL },
    { "orphan_grace", CT_DURATION, "1h",
      "a claimed spare whose claim record is gone (an orphan: nobody's sandbox) is stopped at "
      "once and removed once it has been an orphan this long",
      NULL },
    { "reaper_clock_offset", CT_DURATION, "0",
      "seconds added to the reaper's clock (tests use it instead of waiting)", NULL },
    { "reaper_prefix", CT_STR, "",
      "reaper: only sandboxes whose conversation id starts with this (empty = all)", NULL },
    { "dry_run", CT_BOOL, "0",
      "reaper: print what would be stopped or removed and why, change nothing, exit", NULL },
    { "once", CT_BOOL, "0", "reaper: one sweep, then exit", NULL },
    /* --- talkback-proxy (the reply repair in front of the model server) --- */
    { "proxy_listen", CT_STR, "127.0.0.1:8090",
      "HOST:PORT talkback-proxy's OpenAI-compatible API listens on", NULL },
    { "proxy_upstream", CT_STR, "http://127.0.0.1:8000",
      "root URL of the OpenAI-compatible model server; the client's path (/v1/...) is appended, a "
      "trailing /v1 is dropped",
      NULL },
    { "proxy_tool_run_code", CT_STR, "run_code",
      "tool names (comma-separated) of run_code; NAME or NAME_mcp_SERVER matches", NULL },
    { "proxy_tool_write_file", CT_STR, "write_file",
      "tool names of write_file, matched the same way", NULL },
    { "proxy_tool_run", CT_STR, "run", "tool names of run, matched the same way", NULL },
    { "proxy_max_body", CT_SIZE, "32M",
      "largest request body talkback-proxy accepts; larger gets 413", NULL },
    { "proxy_connect_timeout", CT_DURATION, "10s",
      "how long talkback-proxy waits to connect to the model server", NULL },
    /* --- misc --- */
    { "log_level", CT_STR, "info", "error, warn, info or debug", NULL },
};

#define CONFIG_N (sizeof config_table / sizeof config_table[0])

static config_entry_t *config_find(const char *key)
{
    for (size_t i = 0; i < CONFIG_N; i++)
        if (strcmp(config_table[i].key, key) == 0)
            return &config_table[i];
    return NULL;
}

int config_parse_size(const char *s, int64_t *out)
{
    if (!s || !*s)
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v < 0)
        return -1;
    int64_t mul = 1;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
        case 'K': mul = 1024; break;
        case 'M': mul = 1024 * 1024; break;
        case 'G': mul = 1024LL * 1024 * 1024; break;
        case 'T': mul = 1024LL * 1024 * 1024 * 1024; break;
        case 'B': mul = 1; break;
        default: return -1;
        }
        end++;
        if (*end == 'i' || *end == 'I')
            end++;
        if (*end == 'B' || *end == 'b')
            end++;
        if (*end)
            return -1;
    }
    if (v > INT64_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

int config_parse_duration(const char *s, int64_t *out)
{
    if (!s || !*s)
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v < 0)
        return -1;
    int64_t mul = 1;
    if (*end) {
        switch (*end) {
        case 's': mul = 1; break;
        case 'm': mul = 60; break;
        case 'h': mul = 3600; break;
        case 'd': mul = 86400; break;
        default: return -1;
        }
        if (end[1])
            return -1;
    }
    if (v > INT64_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

static int config_parse(const config_entry_t *e, const char *s, int64_t *out)
{
    switch (e->type) {
    case CT_STR: return 0;
    case CT_SIZE: return config_parse_size(s, out);
    case CT_DURATION: return config_parse_duration(s, out);
    case CT_BOOL:
        if (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on")) {
            *out = 1;
            return 0;
        }
        if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off") ||
            !*s) {
            *out = 0;
            return 0;
        }
        return -1;
    case CT_INT: {
        errno = 0;
        char *end;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || *end)
            return -1;
        *out = v;
        return 0;
    }
    }
    return -1;
}

int config_set(const char *key, const char *value)
{
    config_entry_t *e = config_find(key);
    if (!e || !value)
        return -1;
    int64_t dummy;
    if (config_parse(e, value, &dummy))
        return -1;
    char *copy = strdup(value);
    if (!copy)
        return -1;
    free(e->value);
    e->value = copy;
    return 0;
}

const char *config_str(const char *key)
{
    config_entry_t *e = config_find(key);
    if (!e) {
        fprintf(stderr, "talkback: internal error: unknown config key %s\n", key);
        abort();
    }
    return e->value ? e->value : e->dflt;
}

int64_t config_int(const char *key)
{
    config_entry_t *e = config_find(key);
    if (!e) {
        fprintf(stderr, "talkback: internal error: unknown config key %s\n", key);
        abort();
    }
    int64_t v = 0;
    if (config_parse(e, e->value ? e->value : e->dflt, &v))
        config_parse(e, e->dflt, &v);
    return v;
}

bool config_bool(const char *key)
{
    return config_int(key) != 0;
}

void config_print_reference(void)
{
    printf("%-22s %-30s %s\n", "key", "default", "meaning");
    for (size_t i = 0; i < CONFIG_N; i++)
        printf("%-22s %-30s %s\n", config_table[i].key,
               *config_table[i].dflt ? config_table[i].dflt : "\"\"", config_table[i].help);
    printf("\nEvery key can also be set as TALKBACK_<KEY> in the environment, as\n"
           "`key = value` in the config file (--config FILE, $TALKBACK_CONFIG,\n"
           "or /etc/talkback/talkback.conf), or as --key VALUE / --key=VALUE.\n");
}

/* One cell of a Markdown table: | and newlines would end it. */
static void config_md_cell(const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", stdout);
        else
            putchar(*s == '\n' ? ' ' : *s);
    }
}

void config_print_markdown(void)
{
    printf("| key | default | meaning |\n|---|---|---|\n");
    for (size_t i = 0; i < CONFIG_N; i++) {
        printf("| `%s` | ", config_table[i].key);
        if (*config_table[i].dflt) {
            putchar('`');
            config_md_cell(config_table[i].dflt);
            putchar('`');
        }
        fputs(" | ", stdout);
        config_md_cell(config_table[i].help);
        fputs(" |\n", stdout);
    }
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

static int config_read_file(const char *path, bool must_exist)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (!must_exist && errno == ENOENT)
            return 0;
        fprintf(stderr, "talkback: cannot read config file %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[4096];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#')
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            fprintf(stderr, "talkback: %s:%d: expected key = value\n", path, lineno);
            rc = -1;
            continue;
        }
        *eq = '\0';
        char *key = trim(s), *val = trim(eq + 1);
        size_t vl = strlen(val);
        if (vl >= 2 && val[0] == '"' && val[vl - 1] == '"') {
            val[vl - 1] = '\0';
            val++;
        }
        if (config_set(key, val)) {
            fprintf(stderr, "talkback: %s:%d: %s %s\n", path, lineno,
                    config_find(key) ? "bad value for" : "unknown key", key);
            rc = -1;
        }
    }
    fclose(f);
    return rc;
}

static void config_read_env(void)
{
    for (size_t i = 0; i < CONFIG_N; i++) {
        char name[64] = "TALKBACK_";
        size_t o = strlen(name);
        for (const char *k = config_table[i].key; *k && o < sizeof name - 1; k++)
            name[o++] = (char)toupper((unsigned char)*k);
        name[o] = '\0';
        const char *v = getenv(name);
        if (v && config_set(config_table[i].key, v))
            fprintf(stderr, "talkback: ignoring bad value of %s: %s\n", name, v);
    }
}

int config_load(int argc, char **argv, const char *process)
{
    const char *file = getenv("TALKBACK_CONFIG");
    bool must_exist = file != NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--config") && i + 1 < argc) {
            file = argv[++i];
            must_exist = true;
        } else if (!strncmp(argv[i], "--config=", 9)) {
            file = argv[i] + 9;
            must_exist = true;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: talkback-%s [--config FILE] [--KEY VALUE ...]\n\n", process);
            config_print_reference();
            exit(0);
        } else if (!strcmp(argv[i], "--help-markdown")) {
            config_print_markdown(); /* docs/configuration.md's table */
            exit(0);
        }
    }
    if (!file)
        file = "/etc/talkback/talkback.conf";
    if (config_read_file(file, must_exist))
        return -1;
    config_read_env();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--config")) {
            i++;
            continue;
        }
        if (!strncmp(a, "--config=", 9))
            continue;
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "talkback-%s: unexpected argument %s (try --help)\n", process, a);
            return -1;
        }
        char key[64];
        const char *val;
        const char *eq = strchr(a, '=');
        size_t kl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (kl >= sizeof key) {
            fprintf(stderr, "talkback-%s: unknown option %s\n", process, a);
            return -1;
        }
        memcpy(key, a + 2, kl);
        key[kl] = '\0';
        for (char *p = key; *p; p++)
            if (*p == '-')
                *p = '_';
        config_entry_t *ce = config_find(key);
        if (eq) {
            val = eq + 1;
        } else if (ce && ce->type == CT_BOOL) {
            val = "1"; /* --dry-run alone means on */
        } else if (i + 1 < argc) {
            val = argv[++i];
        } else {
            fprintf(stderr, "talkback-%s: option %s needs a value\n", process, a);
            return -1;
        }
        if (!config_find(key)) {
            fprintf(stderr, "talkback-%s: unknown option --%s (try --help)\n", process, key);
            return -1;
        }
        if (config_set(key, val)) {
            fprintf(stderr, "talkback-%s: bad value for --%s: %s\n", process, key, val);
            return -1;
        }
    }
    return 0;
}
