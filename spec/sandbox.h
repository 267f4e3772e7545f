/* sandbox.h -- what every sandbox container is, written once.
 *
 * The sandbox manager builds sandboxes from this and the Docker guard
 * (guard/) checks what it is asked to create against it, so the guard
 * depends on this floor-level spec, never on the manager.  Four bodies
 * reach POST /containers/create, and spec_create_body() builds each:
 *
 *   sandbox    a chat's container: labels talkback.conversation, .user,
 *              .created; the configured image, limits, network and
 *              runtime; the agent (or sleep) as its main process;
 *   spare      the same, made before any chat exists (the warm pool):
 *              labels talkback.spare (the template's hash), .pool (the
 *              state_dir's hash), .created;
 *   tombstone  a never-started container left where a sandbox was
 *              removed: labels talkback.tombstone (the chat), .gone.reason,
 *              .gone.at; no network, no log;
 *   probe      the manager's never-started storage probe: the one label
 *              talkback.probe=storage; no network, no log.
 *
 * A sandbox or a spare, and the probe, may carry HostConfig.StorageOpt
 * {"size": S} (the disk cap at write time).  Names: a chat's container is
 * "talkback-" and its id (common/convid.h), a spare's "talkback-spare-"
 * and 24 hex digits, a tombstone's "talkback-gone-" and the rest of the
 * sandbox's name, the probe's "talkback-probe-...".
 *
 * The capabilities a sandbox goes without: Docker's default set minus these
 * leaves CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID, SETUID and
 * NET_BIND_SERVICE: what apt (its _apt download user), dpkg, pip, npm, the
 * run_code toolchains and a root shell's habits (chown, kill, a server on
 * port 80) use.  Dropped: NET_RAW (raw sockets, layer-2 spoofing of a
 * neighbour), MKNOD (device nodes), AUDIT_WRITE, SETFCAP, SETPCAP and
 * SYS_CHROOT.  Every sandbox's HostConfig.CapDrop is exactly this list.
 */
#ifndef TALKBACK_SPEC_SANDBOX_H
#define TALKBACK_SPEC_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* ---- labels ---- */
#define SPEC_LABEL_CONV    "talkback.conversation"
#define SPEC_LABEL_USER    "talkback.user"
#define SPEC_LABEL_CREATED "talkback.created"
#define SPEC_LABEL_SPARE   "talkback.spare"
#define SPEC_LABEL_POOL    "talkback.pool"
#define SPEC_LABEL_TOMB    "talkback.tombstone"
#define SPEC_LABEL_REASON  "talkback.gone.reason"
#define SPEC_LABEL_GONE_AT "talkback.gone.at"
#define SPEC_LABEL_PROBE   "talkback.probe"
#define SPEC_PROBE_STORAGE "storage" /* the probe's one label value */
/* The sandbox network's label (POST /networks/create). */
#define SPEC_LABEL_NETWORK "talkback.network"
#define SPEC_NETWORK_KIND  "sandboxes"

/* ---- names ---- */
#define SPEC_NAME_PREFIX  "talkback-"
#define SPEC_SPARE_PREFIX "talkback-spare-"
#define SPEC_SPARE_HEX    24
#define SPEC_TOMB_PREFIX  "talkback-gone-"
#define SPEC_PROBE_PREFIX "talkback-probe-"

/* ---- fixed fields ---- */
/* Where the agent lives inside a sandbox (its main process). */
#define AGENT_CMD_PATH    "/usr/local/lib/talkback/talkback-agent"
#define SPEC_WORKDIR      "/work"
#define SPEC_USER         "root"
#define SPEC_HOSTNAME     "sandbox"
#define SPEC_LOG_FILES    "1"    /* json-file's max-file */
#define SPEC_BARE_NETWORK "none" /* a tombstone's or the probe's */
#define SPEC_RESTART      "no"   /* RestartPolicy.Name */

extern const char *const spec_cap_drop[];
extern const size_t spec_cap_drop_n;
/* The main process: sleep infinity without the agent, the agent with it,
 * true for a container never started. */
extern const char *const spec_sleep_cmd[2];
extern const char *const spec_agent_cmd[1];
extern const char *const spec_true_cmd[1];

/* The list as a new JSON array, for HostConfig.CapDrop (NULL: no memory). */
json_t *spec_cap_drop_json(void);

/* The configured values of a sandbox (common/config.c's keys of the same
 * names): what the manager builds with and the guard checks against.
 * Strings are not copied. */
typedef struct {
    const char *image;
    const char *network;
    const char *runtime; /* "" or NULL = Docker's default */
    const char *log_max_size;
    int64_t memory, memory_swap, nano_cpus, cpu_shares, pids_limit;
} spec_template_t;

typedef enum { SPEC_SANDBOX, SPEC_SPARE, SPEC_TOMBSTONE, SPEC_PROBE } spec_kind_t;

#define SPEC_LABELS_MAX 3

/* The label keys of a kind, in order, into *n (the probe: SPEC_LABEL_PROBE). */
const char *const *spec_labels_of(spec_kind_t kind, size_t *n);

/* One body to build: its kind, the values of the kind's labels (in the
 * order spec_labels_of gives; for a sandbox's or a spare's
 * talkback.created, NULL is now; the probe's value is fixed), whether the
 * agent is its main process (a sandbox or a spare), and its StorageOpt
 * size in bytes (a sandbox, a spare or the probe; 0: none). */
typedef struct {
    spec_kind_t kind;
    const char *label[SPEC_LABELS_MAX];
    bool agent;
    int64_t storage;
} spec_body_t;

/* The create body of b from t: a new JSON object (NULL: no memory).  The
 * one place a container body of talkback is written: the manager, the
 * pool, the reaper's tombstones and the storage probe send it, and the
 * guard forwards the one it rebuilds from what it checked. */
json_t *spec_create_body(const spec_template_t *t, const spec_body_t *b);

/* "2026-12-05T15:56:01Z": now, as talkback.created says it. */
void spec_created_now(char out[32]);

#endif
