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
 * Docker names refuse replaced by '_' + "-" + 16 hex digits of a 64-bit
 * FNV-1a hash of the exact id, so two ids never share a name. */
#define CONVID_NAME_MAX (9 + CONVID_MAX + 1 + 16 + 1)
void convid_container_name(const char *id, char *out);

#endif
