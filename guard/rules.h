/* rules.h -- which Engine API calls the Docker guard lets through.
 *
 * A table of the calls the sandbox manager and the reaper make (method,
 * path pattern, what the body must be, which container the call is
 * about); everything else is refused.  Paths are matched after an optional
 * version prefix (/v1.24 or later: older versions still honour a
 * HostConfig in the start body); a path with an escape, a dot segment, an
 * empty segment or any byte outside [A-Za-z0-9_./-] is refused outright.
 */
#ifndef TALKBACK_GUARD_RULES_H
#define TALKBACK_GUARD_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "guard/owner.h"

typedef enum {
    GB_NONE,   /* no body */
    GB_STREAM, /* passed through as it comes (an archive) */
    GB_CREATE, /* checked and rebuilt: body.h */
    GB_EXEC_CREATE,
    GB_EXEC_START,
    GB_NET_CREATE,
    GB_NET_CONNECT,
    GB_NET_DISCONNECT,
} gbody_kind_t;

typedef enum {
    GT_NONE,      /* about no one container */
    GT_CONTAINER, /* the {id} of the path: a sandbox (or a tombstone if tomb) */
    GT_EXEC,      /* the exec {id} of the path: an exec in a sandbox */
    GT_LIST,      /* a container list: only talkback's own (list.h) */
} gtarget_t;

typedef struct {
    gbody_kind_t body;
    gtarget_t target;
    bool tomb;    /* a tombstone may be the target too */
    bool probe;   /* so may the manager's storage probe (inspect, remove) */
    bool hijack;  /* Docker may hand the connection over (attach, exec start) */
    bool spare;   /* the target must be a spare nobody claimed (rename) */
    char id[129]; /* the {id} of the path */
    size_t id_at; /* where the {id} starts in the path */
} groute_t;

/* Match method and path (query apart) against the table, with network the
 * sandbox network's name.  0 with *rt filled, or -1 with a sentence. */
int grules_match(const char *method, const char *path, const char *network, groute_t *rt, char *why,
                 size_t whylen);

/* Whether the query of a container create names a talkback container:
 * exactly "name=talkback-..." with a Docker-valid name. */
bool grules_create_query_ok(const char *query);
/* Whether the query of the storage probe's create names a probe:
 * "name=talkback-probe-..." (owner.h tells probes by that name). */
bool grules_probe_query_ok(const char *query);

/* Whether name (no leading '/') is a spare sandbox's: "talkback-spare-" and
 * 24 lowercase hex digits (kept/claim.h). */
bool grules_spare_name_ok(const char *name);
/* Whether name is a chat sandbox's: "talkback-", 1-128 of [A-Za-z0-9_.-],
 * "-" and 16 lowercase hex digits (common/convid.h), and not a spare's, a
 * tombstone's or a probe's. */
bool grules_chat_name_ok(const char *name);
/* Whether the query of a rename is exactly "name=<a chat sandbox's name>":
 * the warm pool's claim, the only rename the guard lets through. */
bool grules_rename_query_ok(const char *query);
/* Whether the query of a create whose labels are a spare's names a spare,
 * and that of any other sandbox does not. */
bool grules_create_query_fits(const char *query, bool spare_labels);

/* Whose a container is, from what Docker's inspect says: its name (with
 * the leading '/') and Config.Labels.  Pure. */
gowner_t grules_owner(const char *name, const json_t *labels);

#endif
