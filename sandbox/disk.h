/* disk.h -- the disk cap of sandboxes, on the sandbox manager's side.
 *
 * Where Docker's storage can cap a container's writable layer (overlay2
 * on xfs mounted with pquota, or btrfs with quota groups), every new
 * sandbox is made with HostConfig.StorageOpt size (disk_cap, plus the
 * image where the driver counts it), so a write past it fails at once with
 * "No space left on device" or "Disk quota exceeded" and the host's disk
 * never sees it.  The manager finds out at start, by creating (and
 * removing) two throwaway containers.  Where Docker cannot, the manager says so
 * once at start, and sizes a sandbox's writable layer (SizeRw, of that
 * one container) after its calls, at most once per disk_call_interval per
 * sandbox, off the call's path; one past disk_cap is removed at once,
 * with a tombstone, as the reaper does on its interval.
 *
 * Either way, when a command's output says a write failed for want of
 * space (ENOSPC, EDQUOT), the model is told why, in one bracketed line.
 */
#ifndef TALKBACK_SANDBOX_DISK_H
#define TALKBACK_SANDBOX_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/textbuf.h"
#include "docker/docker.h"
#include "kept/kept.h"

typedef struct disk disk_t;

/* What disk_new needs: the configuration (read by the process's main.c)
 * and the manager's question: forget(ctx, conv) is called when the sizing
 * removed conv's sandbox (may be NULL). */
typedef struct {
    const char *image;     /* for the probe and tombstones */
    int64_t cap;           /* disk_cap, bytes */
    int64_t call_interval; /* disk_call_interval, s; 0: no sizing */
    int64_t write_rate;    /* disk_write_rate, bytes/s; 0: every call_interval */
    int64_t watch_min_ms;  /* disk_watch_min_ms */
    const kept_t *kept;    /* the records dropped with a removed sandbox */
    void (*forget)(void *ctx, const char *conv);
    void *ctx;
} disk_opts_t;

/* Probe Docker's storage (one throwaway container) and start the sizing
 * thread when it cannot cap containers.  o is copied; its strings must
 * outlive the object.  NULL only without memory. */
disk_t *disk_new(docker_t *d, const disk_opts_t *o);
void disk_destroy(disk_t **self_p);

/* Whether new sandboxes get StorageOpt size. */
bool disk_enforced(const disk_t *k);
/* The StorageOpt size of new sandboxes in bytes (spec_body_t.storage):
 * 0 when the cap is not enforced at write time. */
int64_t disk_storage(const disk_t *k);

/* A call in container id (of chat conv, name its container's name) starts.
 * Where Docker cannot cap it, the sandbox is sized while the call runs:
 * again before it could reach disk_cap writing at disk_write_rate, at
 * least every disk_call_interval and at most every disk_watch_min_ms (or
 * four times what the last sizing took).  Every begin has one
 * disk_after_call. */
void disk_call_begin(disk_t *k, const char *id, const char *conv, const char *name);
/* Whether sandbox id was found past disk_cap while a call ran (then the
 * call is to stop); *written: the bytes it had written then. */
bool disk_over(disk_t *k, const char *id, int64_t *written);
/* A call in container id ended: queue a sizing of it when Docker cannot cap
 * it.  A sandbox found past the cap while calls ran is removed now, once
 * its last call ended (with a tombstone, as the reaper does). */
void disk_after_call(disk_t *k, const char *id, const char *conv, const char *name);
/* The line for a call stopped because its sandbox passed the cap (written:
 * what disk_over said).  Appends to t. */
void disk_capped_line(int64_t disk_cap, int64_t written, textbuf_t *t);
/* The line for a command or write whose output (len bytes) says it ran
 * out of space; nothing when it does not.  disk_cap (bytes) is the cap
 * the line names; k NULL: not enforced at write time.  Appends to t. */
void disk_hint(const disk_t *k, int64_t disk_cap, const char *out, size_t len, textbuf_t *t);
/* "2 GiB", "64 MiB", "1.5 GiB": a size as results say it. */
void disk_size_phrase(int64_t bytes, char *out, size_t outlen);

#endif
