/* fuzz_hubkeys.c -- libFuzzer harness for the hub's checks of what a key
 * allows (hub/hubkeys.c).
 *
 * The kind and name of a HELLO or REQUEST come from the peer; the lists
 * come from a certificate's metadata; so may the host a key names.  The checks must never read out of
 * bounds or crash on either, and must agree with a plain reference: an
 * item is allowed only when it equals one comma-separated element, spaces
 * trimmed.
 *
 * Input layout: the bytes up to the first NUL are the list, the rest up to
 * the next NUL the kind, the rest the name.
 *
 * Built only with -DTALKBACK_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt);
 * run by tests/fuzz/run.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hub/hubkeys.h"

/* The reference: split on commas, trim spaces and tabs, compare. */
static int ref_has(const char *list, const char *item)
{
    if (!*item)
        return 0;
    char *copy = strdup(list), *save = NULL;
    int found = 0;
    for (char *s = copy; !found; s = NULL) {
        char *tok = strtok_r(s, ",", &save);
        if (!tok)
            break;
        while (*tok == ' ' || *tok == '\t')
            tok++;
        size_t n = strlen(tok);
        while (n && (tok[n - 1] == ' ' || tok[n - 1] == '\t'))
            n--;
        found = n == strlen(item) && memcmp(tok, item, n) == 0;
    }
    free(copy);
    return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 3);
    memcpy(buf, data, size);
    buf[size] = buf[size + 1] = buf[size + 2] = '\0';
    const char *list = buf;
    const char *kind = list + strlen(list) + 1;
    if (kind > buf + size)
        kind = buf + size + 1;
    const char *name = kind + strlen(kind) + 1;
    if (name > buf + size + 1)
        name = buf + size + 2;

    /* strtok_r skips empty elements, which can never match a non-empty
     * item anyway. */
    if (hubkeys_list_has(list, kind) != (ref_has(list, kind) != 0))
        abort();
    (void)hubkeys_may_register(list, kind);
    (void)hubkeys_may_submit(list, kind, name);
    if (hubkeys_meta_valid(list, name) && !hubkeys_meta_valid(list, ""))
        abort(); /* a valid kinds list is valid whatever submit is */
    /* The host a key is made for (a HELLO's host is checked against it):
     * never longer than the name, and a suffix of it. */
    char host[64];
    if (hubkeys_host_for(kind, name, host, sizeof host) == 0 &&
        (strlen(host) > strlen(name) || strcmp(name + strlen(name) - strlen(host), host) != 0))
        abort();
    if (hubkeys_host_valid(list) && (strpbrk(list, " ,/:") || strlen(list) > HUBKEYS_META_MAX))
        abort();
    (void)hubkeys_kind_per_host(kind);
    free(buf);
    return 0;
}
