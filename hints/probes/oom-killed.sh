# shellcheck shell=bash
# oom-killed.sh -- whether the kernel killed a process of the sandbox for
# lack of memory (hints killed-137 and killed-line), from its cgroup's
# oom_kill count (cgroup v2, else v1).  Exit 0: it did; 1: it did not; 2:
# the cgroup does not tell.
for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do
    [ -r "$f" ] || continue
    awk '$1 == "oom_kill" && $2 > 0 { k = 1 } END { exit !k }' "$f" && exit 0
    exit 1
done
exit 2
