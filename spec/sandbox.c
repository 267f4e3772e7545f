/* sandbox.c -- what every sandbox container is (spec/sandbox.h): its fixed
 * parts, and the one builder of the bodies talkback creates containers
 * with. */
#include "spec/sandbox.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>

const char *const spec_cap_drop[] = { "AUDIT_WRITE", "MKNOD",   "NET_RAW",
                                      "SETFCAP",     "SETPCAP", "SYS_CHROOT" };
const size_t spec_cap_drop_n = sizeof spec_cap_drop / sizeof spec_cap_drop[0];
const char *const spec_sleep_cmd[2] = { "sleep", "infinity" };
const char *const spec_agent_cmd[1] = { AGENT_CMD_PATH };
const char *const spec_true_cmd[1] = { "true" };

static const char *const labels_chat[] = { SPEC_LABEL_CONV, SPEC_LABEL_USER, SPEC_LABEL_CREATED };
static const char *const labels_spare[] = { SPEC_LABEL_SPARE, SPEC_LABEL_POOL, SPEC_LABEL_CREATED };
static const char *const labels_tomb[] = { SPEC_LABEL_TOMB, SPEC_LABEL_REASON, SPEC_LABEL_GONE_AT };
static const char *const labels_probe[] = { SPEC_LABEL_PROBE };

json_t *spec_cap_drop_json(void)
{
    json_t *caps = json_array();
    for (size_t i = 0; caps && i < spec_cap_drop_n; i++)
        json_array_append_new(caps, json_string(spec_cap_drop[i]));
    return caps;
}

const char *const *spec_labels_of(spec_kind_t kind, size_t *n)
{
    switch (kind) {
    case SPEC_SANDBOX: *n = 3; return labels_chat;
    case SPEC_SPARE: *n = 3; return labels_spare;
    case SPEC_TOMBSTONE: *n = 3; return labels_tomb;
    case SPEC_PROBE:
    default: *n = 1; return labels_probe;
    }
}

void spec_created_now(char out[32])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A JSON array of the n strings v. */
static json_t *strv(const char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

/* The Labels of b: the kind's keys with b's values (created: now when
 * NULL; a missing value is ""). */
static json_t *labels(const spec_body_t *b)
{
    size_t n;
    const char *const *keys = spec_labels_of(b->kind, &n);
    json_t *l = json_object();
    char created[32];
    for (size_t i = 0; l && i < n; i++) {
        const char *v = b->label[i];
        if (b->kind == SPEC_PROBE)
            v = SPEC_PROBE_STORAGE;
        else if (!v && (b->kind == SPEC_SANDBOX || b->kind == SPEC_SPARE) && i == 2) {
            spec_created_now(created);
            v = created;
        }
        json_object_set_new(l, keys[i], json_string(v ? v : ""));
    }
    return l;
}

/* HostConfig.StorageOpt of size bytes into h (none when 0). */
static void put_storage(json_t *h, int64_t size)
{
    char v[32];
    if (!h || size <= 0)
        return;
    snprintf(v, sizeof v, "%" PRId64, size);
    json_object_set_new(h, "StorageOpt", json_pack("{s:s}", "size", v));
}

/* The HostConfig of a sandbox or a spare: the configured limits, network
 * and runtime, the trimmed capabilities, no restart, the log (none with
 * the agent: its stdout is its wire). */
static json_t *sandbox_host(const spec_template_t *t, bool agent)
{
    json_t *log = agent ? json_pack("{s:s, s:{}}", "Type", "none", "Config")
                        : json_pack("{s:s, s:{s:s, s:s}}", "Type", "json-file", "Config",
                                    "max-size", t->log_max_size, "max-file", SPEC_LOG_FILES);
    json_t *h = json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:s, s:o, s:{s:s}}", "Init", 1, "Memory",
                          (json_int_t)t->memory, "MemorySwap", (json_int_t)t->memory_swap,
                          "NanoCpus", (json_int_t)t->nano_cpus, "CpuShares",
                          (json_int_t)t->cpu_shares, "PidsLimit", (json_int_t)t->pids_limit,
                          "NetworkMode", t->network, "LogConfig", log, "RestartPolicy", "Name",
                          SPEC_RESTART);
    if (h && t->runtime && *t->runtime)
        json_object_set_new(h, "Runtime", json_string(t->runtime));
    if (h)
        json_object_set_new(h, "CapDrop", spec_cap_drop_json());
    return h;
}

/* See sandbox.h.  With the agent, a sandbox's main process is the agent,
 * reached over attach: stdin kept open across attaches, and no log, since
 * its stdout carries the protocol.  Without, it idles on sleep with a
 * bounded json-file log.  HostConfig comes last. */
json_t *spec_create_body(const spec_template_t *t, const spec_body_t *b)
{
    bool bare = b->kind == SPEC_TOMBSTONE || b->kind == SPEC_PROBE;
    json_t *out;
    if (bare) {
        out = json_pack("{s:s, s:o, s:o, s:{s:s, s:{s:s}}}", "Image", t->image, "Cmd",
                        strv(spec_true_cmd, 1), "Labels", labels(b), "HostConfig", "NetworkMode",
                        SPEC_BARE_NETWORK, "LogConfig", "Type", "none");
        if (out && b->kind == SPEC_PROBE)
            put_storage(json_object_get(out, "HostConfig"), b->storage);
        return out;
    }
    out = json_pack("{s:s, s:o, s:s, s:s, s:s, s:b, s:b}", "Image", t->image, "Cmd",
                    b->agent ? strv(spec_agent_cmd, 1) : strv(spec_sleep_cmd, 2), "WorkingDir",
                    SPEC_WORKDIR, "User", SPEC_USER, "Hostname", SPEC_HOSTNAME, "Tty", 0,
                    "OpenStdin", b->agent);
    if (!out)
        return NULL;
    if (b->agent) {
        json_object_set_new(out, "StdinOnce", json_false());
        json_object_set_new(out, "AttachStdin", json_true());
    }
    json_object_set_new(out, "Labels", labels(b));
    json_t *host = sandbox_host(t, b->agent);
    put_storage(host, b->storage);
    if (!host || json_object_set_new(out, "HostConfig", host)) {
        json_decref(out);
        return NULL;
    }
    return out;
}
