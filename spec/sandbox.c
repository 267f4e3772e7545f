/* sandbox.c -- the fixed parts of every sandbox container (spec/sandbox.h). */
#include "spec/sandbox.h"

const char *const spec_cap_drop[] = { "AUDIT_WRITE", "MKNOD",   "NET_RAW",
                                      "SETFCAP",     "SETPCAP", "SYS_CHROOT" };
const size_t spec_cap_drop_n = sizeof spec_cap_drop / sizeof spec_cap_drop[0];

json_t *spec_cap_drop_json(void)
{
    json_t *caps = json_array();
    for (size_t i = 0; caps && i < spec_cap_drop_n; i++)
        json_array_append_new(caps, json_string(spec_cap_drop[i]));
    return caps;
}
