/* convid.c -- which conversation and user ids talkback accepts (see
 * convid.h), and the container name derived from an id (SHA-256 now; the
 * FNV-1a name of older sandboxes, to find them).
 */
#include "common/convid.h"

#include "common/sha256.h"

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

/* "talkback-" + id with the characters Docker names refuse as '_';
 * returns the length written. */
static size_t convid_name_stem(const char *id, char *out)
{
    memcpy(out, "talkback-", 9);
    size_t o = 9;
    for (size_t i = 0; id[i] && i < CONVID_MAX; i++) {
        unsigned char c = (unsigned char)id[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        out[o++] = ok ? (char)c : '_';
    }
    return o;
}

void convid_container_name(const char *id, char *out)
{
    uint8_t d[SHA256_LEN];
    sha256(id, strlen(id), d);
    size_t o = convid_name_stem(id, out);
    out[o++] = '-';
    for (int i = 0; i < CONVID_HASH_HEX / 2; i++)
        o += (size_t)snprintf(out + o, CONVID_NAME_MAX - o, "%02x", d[i]);
}

void convid_container_name_v1(const char *id, char *out)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)id; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    size_t o = convid_name_stem(id, out);
    snprintf(out + o, CONVID_NAME_MAX - o, "-%016llx", (unsigned long long)h);
}

bool convid_name_is(const char *id, const char *name)
{
    char want[CONVID_NAME_MAX];
    if (!id || !name)
        return false;
    if (*name == '/')
        name++;
    convid_container_name(id, want);
    if (strcmp(name, want) == 0)
        return true;
    convid_container_name_v1(id, want);
    return strcmp(name, want) == 0;
}
