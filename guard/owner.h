/* owner.h -- whose a container is, asked of dockerd itself.
 *
 * A per-container call names a container by id, id prefix or name; the
 * guard inspects that reference (GET /containers/REF/json, straight to
 * dockerd) and lets the call through only for talkback's own: a sandbox
 * (label talkback.conversation, name talkback-...) or a tombstone (label
 * talkback.tombstone, name talkback-gone-...), a spare sandbox of the warm
 * pool (label talkback.spare: named talkback-spare-<24 hex> until a chat
 * claims it, then a sandbox under the chat's name), or the sandbox manager's
 * storage probe (label talkback.probe, name talkback-probe-...), which the
 * rules let only be inspected and removed.  The call then goes to
 * the full id Docker answered, so a name cannot change hands in between.
 */
#ifndef TALKBACK_GUARD_OWNER_H
#define TALKBACK_GUARD_OWNER_H

typedef enum {
    GOWN_SANDBOX,
    GOWN_TOMBSTONE,
    GOWN_PROBE,   /* the manager's storage probe (sandbox/disk.c) */
    GOWN_SPARE,   /* a spare sandbox nobody claimed (kept/claim.h) */
    GOWN_FOREIGN, /* some other container */
    GOWN_MISSING, /* Docker has none of that name */
    GOWN_ERROR,   /* dockerd could not be asked */
} gowner_t;

/* The owner of container ref; its full id into id (65 bytes). */
gowner_t gowner_container(const char *sock, const char *ref, char id[65]);
/* The owner of the container of exec eid; its full id into id. */
gowner_t gowner_exec(const char *sock, const char *eid, char id[65]);

/* Connect to dockerd's unix socket; the fd, or -1. */
int gowner_connect(const char *sock);

#endif
