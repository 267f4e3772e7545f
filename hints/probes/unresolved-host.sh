# shellcheck shell=bash disable=SC1083
# unresolved-host.sh -- the host name a lookup failed on, from the command
# and the last of its output (hints name-not-resolved and curl-no-host).
# {cmd} and {out} are placeholders (cd-guard.sh says why SC1083 is off).
#
# Prints the name.  Exit 0: a name without a dot (a Compose service name);
# 2: one with a dot; 1: no name is named.
t={cmd}$'\n'{out}
h=$(printf '%s\n' "$t" | grep -oE "(resolve host:? |ENOTFOUND |EAI_AGAIN |host='|://)[A-Za-z0-9_-][A-Za-z0-9._-]*" |
    grep -vE '://(localhost|127\.)' | head -n 1 |
    sed -E "s/^(resolve host:? |ENOTFOUND |EAI_AGAIN |host='|:\/\/)//")
[ -n "$h" ] || exit 1
echo "$h"
case $h in *.*) exit 2 ;; esac
exit 0
