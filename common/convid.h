/* convid.h -- which conversation and user ids talkback accepts.
 *
 * The conversation id LibreChat sends is the only key of a sandbox, so an
 * id that every chat could share must never be accepted: empty, "new",
 * "null", "undefined", or an unreplaced "{{...}}" placeholder.  Usable
 * means 1-128 characters of [A-Za-z0-9._:-] and none of those.  Pure
 * functions, unit-tested.
 */
#ifndef TALKBACK_CONVID_H
#define TALKBACK_CONVID_H

#include <stdbool.h>
#include <stddef.h>

#define CONVID_MAX 128

typedef enum {
    CONVID_OK = 0,
    CONVID_MISSING,     /* no header, or empty */
    CONVID_PLACEHOLDER, /* holds "{{" or "}}": LibreChat did not substitute */
    CONVID_RESERVED,    /* new / null / undefined */
    CONVID_TOO_LONG,
    CONVID_BAD_CHAR
} convid_err_t;

/* Check a conversation id (NULL counts as missing). */
convid_err_t convid_check(const char *id);
/* Short English reason for a verdict, e.g. "is missing". */
const char *convid_strerror(convid_err_t e);
/* Check a user id: empty is fine; otherwise at most 128 bytes of printable
 * ASCII without a placeholder.  Returns true when usable. */
bool convid_user_ok(const char *user);
/* Whether a call by `user` may touch a sandbox whose owner label is
 * `owner`: a sandbox without an owner (NULL or "") lets every call in; an
 * owned one only the same user -- a call that names no user is refused
 * like a call from another user. */
bool convid_owner_ok(const char *owner, const char *user);

/* Write the Docker container name for a conversation id into out (at
 * least CONVID_NAME_MAX bytes): "talkback-" + the id with characters
 * Docker names refuse replaced by '_' + "-" + 16 hex digits, the first 64
 * bits of the SHA-256 of the exact id.  With FNV-1a 64 there, an id
 * sharing a given chat's name could be worked out in about 2^32 steps
 * (the hash runs backwards), and that chat refused; with SHA-256 it takes
 * about 2^64.  (Two ids of one's own that share a name, about 2^32
 * SHA-256s, refuse only one's own chat.) */
#define CONVID_HASH_HEX 16
#define CONVID_NAME_MAX (9 + CONVID_MAX + 1 + CONVID_HASH_HEX + 1)
void convid_container_name(const char *id, char *out);
/* The name sandboxes made before had: the same with 16 hex digits of the
 * 64-bit FNV-1a of the id.  Such a sandbox keeps its name; the manager
 * finds it under it (kept/chatname.h). */
void convid_container_name_v1(const char *id, char *out);
/* Whether name (with or without Docker's leading '/') is id's, under
 * either scheme. */
bool convid_name_is(const char *id, const char *name);

#endif
