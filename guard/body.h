/* body.h -- the request bodies the Docker guard reads, checked and
 * re-encoded.
 *
 * Each check parses a body, refuses it (with a sentence) unless it is what
 * talkback itself sends, and returns a new object built only from what was
 * checked, with Docker's own field names: the guard forwards the encoding
 * of that object, never the bytes it received.  Pure functions of the body
 * and the template values (no I/O), so they are fuzzed
 * (tests/fuzz/fuzz_guard.c).
 */
#ifndef TALKBACK_GUARD_BODY_H
#define TALKBACK_GUARD_BODY_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "spec/sandbox.h"

/* The values of the sandbox template (spec/sandbox.h), from the config
 * keys the sandbox manager reads (common/config.c), and the disk cap. */
typedef struct {
    spec_template_t s;
    int64_t disk_cap; /* least StorageOpt size */
} gtemplate_t;

/* POST /containers/create: a sandbox (labels talkback.conversation/.user/
 * .created), a tombstone (talkback.tombstone/.gone.reason/.gone.at) or
 * the storage probe (talkback.probe); a sandbox or the probe may have
 * HostConfig.StorageOpt {"size": S}, S at least disk_cap. */
json_t *gbody_create(const char *buf, size_t len, const gtemplate_t *t, char *why, size_t whylen);
/* POST /containers/ID/exec: Cmd, Env, WorkingDir, User, the Attach flags
 * and Tty; never Privileged. */
json_t *gbody_exec_create(const char *buf, size_t len, char *why, size_t whylen);
/* POST /exec/ID/start: Detach (absent or false: never detached) and Tty. */
json_t *gbody_exec_start(const char *buf, size_t len, char *why, size_t whylen);
/* POST /networks/create: the sandbox network, a bridge, always with
 * inter-container traffic off. */
json_t *gbody_net_create(const char *buf, size_t len, const gtemplate_t *t, char *why,
                         size_t whylen);
/* POST /networks/NET/connect or /disconnect (disconnect = 1): Container
 * (a name or id the caller still has to check), an empty EndpointConfig,
 * Force. */
json_t *gbody_net_attach(const char *buf, size_t len, int disconnect, char *why, size_t whylen);

/* Parse a body (an empty one is {}); NULL with why when it is not JSON. */
json_t *gbody_parse(const char *buf, size_t len, char *why, size_t whylen);

#endif
