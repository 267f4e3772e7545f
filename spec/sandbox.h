/* sandbox.h -- what every sandbox container is, written once.
 *
 * The sandbox manager builds sandboxes from this and the Docker guard
 * (guard/) checks what it is asked to create against it, so the guard
 * depends on this floor-level spec, never on the manager.
 *
 * The capabilities a sandbox goes without: Docker's default set minus these
 * leaves CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID, SETUID and
 * NET_BIND_SERVICE: what apt (its _apt download user), dpkg, pip, npm, the
 * run_code toolchains and a root shell's habits (chown, kill, a server on
 * port 80) use.  Dropped: NET_RAW (raw sockets, layer-2 spoofing of a
 * neighbour), MKNOD (device nodes), AUDIT_WRITE, SETFCAP, SETPCAP and
 * SYS_CHROOT.  Every sandbox's HostConfig.CapDrop is exactly this list.
 */
#ifndef TALKBACK_SPEC_SANDBOX_H
#define TALKBACK_SPEC_SANDBOX_H

#include <stddef.h>
#include <jansson.h>

/* Where the agent lives inside a sandbox (its main process). */
#define AGENT_CMD_PATH "/usr/local/lib/talkback/talkback-agent"

extern const char *const spec_cap_drop[];
extern const size_t spec_cap_drop_n;

/* The list as a new JSON array, for HostConfig.CapDrop (NULL: no memory). */
json_t *spec_cap_drop_json(void);

#endif
