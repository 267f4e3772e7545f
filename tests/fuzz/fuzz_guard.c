/* fuzz_guard.c -- libFuzzer harness for the Docker guard's checks
 * (guard/body.h, guard/request.h).
 *
 * Whoever reaches the guard sends it these bytes, and the guard is all
 * that stands between them and a root-equivalent dockerd, so the checks
 * must never read out of bounds, leak or crash, and what they let through
 * must be stable: a body that passes is rebuilt, and the rebuilt body must
 * pass the same check again and rebuild to the very same bytes (the guard
 * forwards only what it would accept).  A passing container create must
 * also carry none of the fields that loosen a sandbox.
 *
 * Input layout: byte 0 picks the check (mod 7: create, exec create, exec
 * start, network create, connect, disconnect, request head); the rest is
 * the body or head.
 *
 * Built only with -DTALKBACK_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt);
 * run by tests/fuzz/run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard/body.h"
#include "guard/request.h"

static const gtemplate_t tpl = {
    .s = {
        .image = "talkback-sandbox:latest",
        .network = "talkback-sandboxes",
        .runtime = "",
        .log_max_size = "1m",
        .memory = 268435456,
        .memory_swap = 1073741824,
        .nano_cpus = 1000000000,
        .cpu_shares = 256,
        .pids_limit = 512,
    },
    .disk_cap = 2147483648,
};

/* Run check number k on buf. */
static json_t *check(int k, const char *buf, size_t len, char *why, size_t whylen)
{
    switch (k) {
    case 0: return gbody_create(buf, len, &tpl, why, whylen);
    case 1: return gbody_exec_create(buf, len, why, whylen);
    case 2: return gbody_exec_start(buf, len, why, whylen);
    case 3: return gbody_net_create(buf, len, &tpl, why, whylen);
    case 4: return gbody_net_attach(buf, len, 0, why, whylen);
    default: return gbody_net_attach(buf, len, 1, why, whylen);
    }
}

/* The fields no passing create may have, anywhere in its HostConfig. */
static void no_loosening(const json_t *j)
{
    static const char *const bad[] = { "Privileged",  "Binds",   "Mounts",
                                       "CapAdd",      "Devices", "PidMode",
                                       "SecurityOpt", "Sysctls", "VolumesFrom" };
    const json_t *h = json_object_get(j, "HostConfig");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (json_object_get(h, bad[i]))
            abort();
    if (strcmp(json_string_value(json_object_get(j, "Image")), tpl.s.image) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256];
    if (size < 1)
        return 0;
    int k = data[0] % 7;
    const char *buf = (const char *)data + 1;
    size_t len = size - 1;
    if (k == 6) {
        char *head = malloc(len + 1);
        greq_t r;
        memcpy(head, buf, len);
        greq_parse(head, len, &r, why, sizeof why);
        free(head);
        return 0;
    }
    json_t *j = check(k, buf, len, why, sizeof why);
    if (!j)
        return 0;
    char *once = json_dumps(j, JSON_COMPACT);
    json_t *again = check(k, once, strlen(once), why, sizeof why);
    char *twice = again ? json_dumps(again, JSON_COMPACT) : NULL;
    if (!twice || strcmp(once, twice) != 0)
        abort();
    if (k == 0)
        no_loosening(j);
    free(once);
    free(twice);
    json_decref(again);
    json_decref(j);
    return 0;
}
