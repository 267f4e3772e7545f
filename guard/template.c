/* template.c -- the container bodies the guard lets Docker create: the
 * four of spec/sandbox.h (a sandbox, a spare, a tombstone, the storage
 * probe), checked field by field against the configured values and the
 * spec's fixed ones, and rebuilt by the spec's builder from what was
 * checked.
 *
 * Every field of the body must be on the template's list and hold the
 * template's value; the only free values are the three labels' texts.
 * Anything else -- Privileged, Binds, Mounts, Volumes, Devices,
 * DeviceRequests, CapAdd, PidMode/IpcMode/UtsMode/UsernsMode/CgroupnsMode,
 * another NetworkMode, SecurityOpt, Sysctls, another image or runtime,
 * other limits -- is refused by name.
 *
 * Two more fields carry a value: HostConfig.StorageOpt, the disk cap at
 * write time (sandbox/disk.c), may hold the one key "size" with a size at
 * least disk_cap; and the sandbox manager's storage probe (a never-started
 * container labelled talkback.probe, disk.c's probe_create) passes with
 * the same StorageOpt rule.
 */
#include "guard/body.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "guard/fields.h"
#include "spec/sandbox.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* What a StorageOpt size may add to disk_cap: on btrfs, zfs and vfs the
 * manager asks for the image as well (disk_cap + image + image/16 +
 * 16 MiB, sandbox/disk.c), so this allows an image up to 64 GiB with that
 * bookkeeping.  Past it the size is no cap of disk_cap any more. */
#define STORAGE_IMAGE_MAX ((INT64_C(64) << 30) + (INT64_C(4) << 30) + (INT64_C(16) << 20))

json_t *gbody_parse(const char *buf, size_t len, char *why, size_t whylen)
{
    json_error_t err;
    if (len == 0)
        return json_object();
    json_t *j = json_loadb(buf, len, 0, &err);
    if (!j)
        snprintf(why, whylen, "the body is not JSON (%.80s)", err.text);
    return j;
}

/* A size as Docker's storage drivers read it (go-units RAMInBytes): digits,
 * then an optional unit k, m, g, t or p (any case, powers of 1024), an
 * optional i and an optional b.  Decimals, which Docker rounds through a
 * float, and a space before the unit are not taken.  -1 when s is none. */
static int64_t storage_size(const char *s, size_t len)
{
    static const char units[] = "kmgtp";
    int64_t n = 0;
    size_t i = 0;
    int shift = 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        if (n > (INT64_MAX - 9) / 10)
            return -1;
        n = n * 10 + (s[i] - '0');
    }
    if (i == 0)
        return -1;
    const char *u = i < len && s[i] ? strchr(units, s[i] | 0x20) : NULL;
    if (u) {
        shift = 10 * (int)(u - units + 1);
        i++;
        if (i < len && (s[i] | 0x20) == 'i')
            i++;
    }
    if (i < len && (s[i] | 0x20) == 'b')
        i++;
    if (i != len || n > (INT64_MAX >> shift))
        return -1;
    return n << shift;
}

/* HostConfig.StorageOpt: absent, or exactly {"size": S} (the map key as
 * Go's map has it: "Size" is another key, which a storage driver folds onto
 * size itself, so it is refused) with S a size from disk_cap to disk_cap
 * plus STORAGE_IMAGE_MAX.  The size in bytes into *size (0 when absent). */
static int check_storage(const json_t *v, const gtemplate_t *t, int64_t *size, char *why,
                         size_t whylen)
{
    static const char *const keys[] = { "size" }, *const any[] = { NULL };
    *size = 0;
    if (!v)
        return 0;
    if (!fields_map_is(v, keys, any, 1)) {
        snprintf(why, whylen, "HostConfig.StorageOpt may hold only a size");
        return -1;
    }
    const json_t *s = json_object_get(v, "size");
    *size = storage_size(json_string_value(s), json_string_length(s));
    if (*size < t->disk_cap || *size - t->disk_cap > STORAGE_IMAGE_MAX) {
        snprintf(why, whylen,
                 "HostConfig.StorageOpt size is not a size from disk_cap %lld to %lld bytes",
                 (long long)t->disk_cap, (long long)(t->disk_cap + STORAGE_IMAGE_MAX));
        return -1;
    }
    return 0;
}

/* HostConfig.LogConfig: json-file with the configured size and one file
 * (agent = 0), or none (the agent's sandboxes, whose stdout is its wire). */
static int check_log(const json_t *v, const gtemplate_t *t, int agent, char *why, size_t whylen)
{
    static const char *const names[] = { "type", "config" };
    static const char *const keys[] = { "max-size", "max-file" };
    json_t *f[N(names)];
    if (fields_pick(v, "HostConfig.LogConfig", names, N(names), f, why, whylen))
        return -1;
    if (agent && fields_str_is(f[0], "none") && (!f[1] || fields_map_is(f[1], NULL, NULL, 0)))
        return 0;
    const char *vals[] = { t->s.log_max_size, SPEC_LOG_FILES };
    if (!agent && fields_str_is(f[0], "json-file") && fields_map_is(f[1], keys, vals, 2))
        return 0;
    snprintf(why, whylen, "HostConfig.LogConfig is not the template's log");
    return -1;
}

/* HostConfig of a sandbox: the configured limits, network and runtime,
 * the trimmed capabilities, no restart policy, a StorageOpt size (into
 * *size) or none, and nothing else. */
static int check_host(const json_t *host, const gtemplate_t *t, int agent, int64_t *size, char *why,
                      size_t whylen)
{
    static const char *const names[] = {
        "init",        "memory",    "memoryswap",    "nanocpus", "cpushares", "pidslimit",
        "networkmode", "logconfig", "restartpolicy", "runtime",  "capdrop",   "storageopt"
    };
    static const char *const rp[] = { "name", "maximumretrycount" };
    json_t *f[N(names)], *r[N(rp)];
    if (fields_pick(host, "HostConfig", names, N(names), f, why, whylen))
        return -1;
    const struct {
        const char *what;
        int ok;
    } checks[] = {
        { "Init", json_is_true(f[0]) },
        { "Memory", fields_int_is(f[1], t->s.memory) },
        { "MemorySwap", fields_int_is(f[2], t->s.memory_swap) },
        { "NanoCpus", fields_int_is(f[3], t->s.nano_cpus) },
        { "CpuShares", fields_int_is(f[4], t->s.cpu_shares) },
        { "PidsLimit", fields_int_is(f[5], t->s.pids_limit) },
        { "NetworkMode", fields_str_is(f[6], t->s.network) },
        { "Runtime", t->s.runtime && *t->s.runtime ? fields_str_is(f[9], t->s.runtime)
                                                   : (!f[9] || fields_str_is(f[9], "")) },
        { "CapDrop", fields_strv_is(f[10], spec_cap_drop, spec_cap_drop_n) },
    };
    for (size_t i = 0; i < N(checks); i++)
        if (!checks[i].ok) {
            snprintf(why, whylen, "HostConfig.%s is not the template's", checks[i].what);
            return -1;
        }
    if (check_log(f[7], t, agent, why, whylen) || check_storage(f[11], t, size, why, whylen))
        return -1;
    if (fields_pick(f[8], "HostConfig.RestartPolicy", rp, N(rp), r, why, whylen))
        return -1;
    if (!fields_str_is(r[0], SPEC_RESTART) || (r[1] && !fields_int_is(r[1], 0))) {
        snprintf(why, whylen, "HostConfig.RestartPolicy is not the template's");
        return -1;
    }
    return 0;
}

/* The body the guard forwards: the spec's, built from t, the kind, the
 * checked labels (the kind's keys, in the spec's order), the agent flag
 * and the checked StorageOpt size -- never from the bytes received. */
static json_t *rebuild(const gtemplate_t *t, spec_kind_t kind, const json_t *labels, int agent,
                       int64_t size)
{
    size_t n;
    const char *const *keys = spec_labels_of(kind, &n);
    spec_body_t b = { .kind = kind, .agent = agent != 0, .storage = size };
    for (size_t i = 0; i < n && i < SPEC_LABELS_MAX; i++)
        b.label[i] = json_string_value(json_object_get(labels, keys[i]));
    if (kind == SPEC_SANDBOX || kind == SPEC_SPARE)
        b.label[2] = b.label[2] ? b.label[2] : ""; /* never "now": what was checked */
    return spec_create_body(&t->s, &b);
}

/* Whether labels are exactly the keys of kind, any string values. */
static int labels_are(const json_t *labels, spec_kind_t kind)
{
    size_t n;
    const char *const *keys = spec_labels_of(kind, &n);
    const char *const any[SPEC_LABELS_MAX] = { NULL, NULL, NULL };
    return fields_map_is(labels, keys, any, n);
}

/* A sandbox's or a spare's body: f holds the picked top-level fields (see
 * names in gbody_create). */
static json_t *check_sandbox(json_t **f, const gtemplate_t *t, char *why, size_t whylen)
{
    int agent = fields_strv_is(f[1], spec_agent_cmd, 1);
    int spare = labels_are(f[9], SPEC_SPARE);
    const struct {
        const char *what;
        int ok;
    } checks[] = {
        { "Cmd", agent || fields_strv_is(f[1], spec_sleep_cmd, 2) },
        { "WorkingDir", fields_str_is(f[2], SPEC_WORKDIR) },
        { "User", fields_str_is(f[3], SPEC_USER) },
        { "Hostname", fields_str_is(f[4], SPEC_HOSTNAME) },
        { "Tty", json_is_false(f[5]) },
        { "OpenStdin", agent ? json_is_true(f[6]) : (!f[6] || json_is_false(f[6])) },
        { "StdinOnce", !f[7] || json_is_false(f[7]) },
        { "AttachStdin", agent ? json_is_true(f[8]) : (!f[8] || json_is_false(f[8])) },
        { "Labels", spare || labels_are(f[9], SPEC_SANDBOX) },
    };
    for (size_t i = 0; i < N(checks); i++)
        if (!checks[i].ok) {
            snprintf(why, whylen, "%s is not the template's", checks[i].what);
            return NULL;
        }
    int64_t size;
    if (check_host(f[10], t, agent, &size, why, whylen))
        return NULL;
    return rebuild(t, spare ? SPEC_SPARE : SPEC_SANDBOX, f[9], agent, size);
}

/* The HostConfig of a never-started container (a tombstone or the
 * probe): no network, no log, and -- the probe's only -- a StorageOpt
 * size (into *size). */
static int check_bare_host(const json_t *host, const gtemplate_t *t, int probe, int64_t *size,
                           char *why, size_t whylen)
{
    static const char *const hnames[] = { "networkmode", "logconfig", "storageopt" };
    static const char *const lnames[] = { "type", "config" };
    json_t *h[N(hnames)], *l[N(lnames)];
    *size = 0;
    if (fields_pick(host, "HostConfig", hnames, N(hnames), h, why, whylen) ||
        fields_pick(h[1], "HostConfig.LogConfig", lnames, N(lnames), l, why, whylen))
        return -1;
    if (!fields_str_is(h[0], SPEC_BARE_NETWORK) || !fields_str_is(l[0], "none") ||
        (l[1] && !fields_map_is(l[1], NULL, NULL, 0)) || (h[2] && !probe)) {
        snprintf(why, whylen, "the %s's HostConfig is not the template's",
                 probe ? "probe" : "tombstone");
        return -1;
    }
    return check_storage(h[2], t, size, why, whylen);
}

/* A never-started container's body: a tombstone (three labels) or the
 * storage probe (the one label talkback.probe=storage, perhaps a
 * StorageOpt size): Image, Cmd true, Labels and HostConfig only. */
static json_t *check_bare(json_t **f, int probe, const gtemplate_t *t, char *why, size_t whylen)
{
    static const char *const pvals[] = { SPEC_PROBE_STORAGE };
    size_t pn;
    const char *const *plabels = spec_labels_of(SPEC_PROBE, &pn);
    const char *what = probe ? "probe" : "tombstone";
    int64_t size;
    for (size_t i = 2; i <= 8; i++)
        if (f[i]) {
            snprintf(why, whylen, "a %s has only Image, Cmd, Labels and HostConfig", what);
            return NULL;
        }
    if (!fields_strv_is(f[1], spec_true_cmd, 1) ||
        !(probe ? fields_map_is(f[9], plabels, pvals, pn) : labels_are(f[9], SPEC_TOMBSTONE))) {
        snprintf(why, whylen, "the %s's Cmd or Labels are not the template's", what);
        return NULL;
    }
    if (check_bare_host(f[10], t, probe, &size, why, whylen))
        return NULL;
    return rebuild(t, probe ? SPEC_PROBE : SPEC_TOMBSTONE, f[9], 0, size);
}

json_t *gbody_create(const char *buf, size_t len, const gtemplate_t *t, char *why, size_t whylen)
{
    static const char *const names[] = { "image",       "cmd",    "workingdir", "user",
                                         "hostname",    "tty",    "openstdin",  "stdinonce",
                                         "attachstdin", "labels", "hostconfig" };
    json_t *f[N(names)], *out = NULL;
    json_t *j = gbody_parse(buf, len, why, whylen);
    if (!j)
        return NULL;
    if (fields_pick(j, "the body", names, N(names), f, why, whylen))
        goto done;
    if (!fields_str_is(f[0], t->s.image)) {
        snprintf(why, whylen, "Image is not the sandbox image %s", t->s.image);
        goto done;
    }
    if (json_is_object(f[9]) && json_object_get(f[9], SPEC_LABEL_TOMB))
        out = check_bare(f, 0, t, why, whylen);
    else if (json_is_object(f[9]) && json_object_get(f[9], SPEC_LABEL_PROBE))
        out = check_bare(f, 1, t, why, whylen);
    else
        out = check_sandbox(f, t, why, whylen);
done:
    json_decref(j);
    return out;
}
