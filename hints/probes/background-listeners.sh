# shellcheck shell=bash
# background-listeners.sh -- the listeners the command just run left
# behind (hint server-background).  Processes carry their run's marker
# (TALKBACK_RUN, sandbox/run.c) in their environment, and the newest marked
# process other than this probe's belongs to the run that just ended.
#
# Prints its listeners, "*:8000 (node, pid 12); ...", waiting up to 1.5 s
# for a first one (a server started a moment ago may not listen yet), and
# exits 0; exits 1 when it has none (a background job that is no server,
# or one from an earlier call).
m=
best=-1
me="TALKBACK_RUN=$TALKBACK_RUN"
while IFS= read -r -d '' x; do
    p=${x#/proc/}
    p=${p%%/*}
    e=${x#*:}
    [ "$e" = "$me" ] && continue
    { read -r st <"/proc/$p/stat"; } 2>/dev/null || continue
    # Field 22 of stat, the start time: the 20th after the name.
    st=${st##*) }
    # shellcheck disable=SC2086 # split into fields on purpose
    set -- $st
    [ "${20:-0}" -gt "$best" ] && {
        best=${20}
        m=$e
    }
done < <(grep -aoHz '^TALKBACK_RUN=[0-9a-f]*' /proc/[0-9]*/environ 2>/dev/null)
[ -n "$m" ] || exit 1
for _ in 1 2 3 4 5 6; do
    l=$(ss -Hltnp 2>/dev/null | while read -r _ _ _ a _ rest; do
        p=${rest#*pid=}
        p=${p%%[!0-9]*}
        # shellcheck disable=SC2015 # skip it when either fails
        [ -n "$p" ] && grep -qaxzF "$m" "/proc/$p/environ" 2>/dev/null || continue
        n=${rest#*\"}
        n=${n%%\"*}
        printf '%s (%s, pid %s); ' "$a" "$n" "$p"
    done)
    [ -n "$l" ] && break
    sleep 0.25
done
[ -n "$l" ] || exit 1
echo "${l%; }"
