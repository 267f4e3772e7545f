/* convid.c -- which conversation and user ids talkback accepts (see
 * convid.h), and the container name derived from an id.
 */
#include "common/convid.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

convid_err_t convid_check(const char *id)
{
    if (!id || !*id)
        return CONVID_MISSING;
    if (strstr(id, "{{") || strstr(id, "}}"))
        return CONVID_PLACEHOLDER;
    if (strcasecmp(id, "new") == 0 || strcasecmp(id, "null") == 0 ||
        strcasecmp(id, "undefined") == 0)
        return CONVID_RESERVED;
    size_t n = strlen(id);
    if (n > CONVID_MAX)
        return CONVID_TOO_LONG;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)id[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == ':' || c == '-';
        if (!ok)
            return CONVID_BAD_CHAR;
    }
    return CONVID_OK;
}

const char *convid_strerror(convid_err_t e)
{
    switch (e) {
    case CONVID_OK: return "usable";
    case CONVID_MISSING: return "missing or empty";
    case CONVID_PLACEHOLDER: return "an unreplaced placeholder";
    case CONVID_RESERVED: return "not a real chat id (new/null/undefined)";
    case CONVID_TOO_LONG: return "longer than 128 characters";
    case CONVID_BAD_CHAR: return "not made only of letters, digits and . _ : -";
    }
    return "unusable";
}

bool convid_user_ok(const char *user)
{
    if (!user || !*user)
        return true;
    size_t n = strlen(user);
    if (n > 128 || strstr(user, "{{") || strstr(user, "}}"))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)user[i];
        if (c < 0x21 || c > 0x7e)
            return false;
    }
    return true;
}

bool convid_owner_ok(const char *owner, const char *user)
{
    if (!owner || !*owner)
        return true;
    return user && strcmp(owner, user) == 0;
}

void convid_container_name(const char *id, char *out)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)id; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    size_t o = 0;
    memcpy(out, "talkback-", 9);
    o = 9;
    for (size_t i = 0; id[i] && i < CONVID_MAX; i++) {
        unsigned char c = (unsigned char)id[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        out[o++] = ok ? (char)c : '_';
    }
    snprintf(out + o, CONVID_NAME_MAX - o, "-%016llx", (unsigned long long)h);
}
