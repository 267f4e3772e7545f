# shellcheck shell=bash
# agent-worker-restart.sh -- kill the agent's worker so its supervisor
# starts a fresh one (sandbox/agent_link.c, when a link misbehaved twice):
# the processes named talkback-agent whose parent is the one named so whose
# parent is the sandbox's init.  Bash builtins only, like the kill pass: a
# sandbox may lack every other program.
s=
w=
for d in /proc/[0-9]*; do
  read -r pid comm _ ppid _ <"$d/stat" 2>/dev/null || continue
  [ "$comm" = '(talkback-agent)' ] || continue
  if [ "$ppid" = 1 ]; then s="$s $pid"; else w="$w $pid:$ppid"; fi
done
for e in $w; do
  for k in $s; do
    [ "${e#*:}" = "$k" ] && kill -9 "${e%%:*}"
  done
done
exit 0
