/* caps.h -- the capabilities a sandbox goes without.
 *
 * Docker's default set minus these leaves CHOWN, DAC_OVERRIDE, FOWNER,
 * FSETID, KILL, SETGID, SETUID and NET_BIND_SERVICE: what apt (its _apt
 * download user), dpkg, pip, npm, the run_code toolchains and a root shell's
 * habits (chown, kill, a server on port 80) use.  Dropped: NET_RAW (raw
 * sockets, layer-2 spoofing of a neighbour), MKNOD (device nodes),
 * AUDIT_WRITE, SETFCAP, SETPCAP and SYS_CHROOT.  The sandbox manager puts
 * this list in every sandbox's HostConfig.CapDrop and the Docker guard
 * (guard/) lets a create through only with exactly this list.
 */
#ifndef TALKBACK_SANDBOX_CAPS_H
#define TALKBACK_SANDBOX_CAPS_H

#include <stddef.h>
#include <jansson.h>

#define SANDBOX_CAP_DROP                                                                           \
    {                                                                                              \
        "AUDIT_WRITE", "MKNOD", "NET_RAW", "SETFCAP", "SETPCAP", "SYS_CHROOT"                      \
    }
#define SANDBOX_CAP_DROP_N 6

/* The list as a new JSON array, for HostConfig.CapDrop. */
static inline json_t *sandbox_cap_drop_json(void)
{
    static const char *const drop[] = SANDBOX_CAP_DROP;
    json_t *caps = json_array();
    for (size_t i = 0; caps && i < SANDBOX_CAP_DROP_N; i++)
        json_array_append_new(caps, json_string(drop[i]));
    return caps;
}

#endif
