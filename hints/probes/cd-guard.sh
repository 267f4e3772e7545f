# shellcheck shell=bash disable=SC1083,SC2154
# cd-guard.sh -- the head of a probe that reads relative paths from the
# command.  Relative paths in a probe are resolved in /work, where commands
# start; a command that changes folder first leaves them unknown, so the
# probe stops at once, with exit code cd_exit (set by CD_GUARD(n) in
# hints/table.h, before this text).  Leaves the command in c for
# the probe that follows.
#
# {name} words are the hint engine's placeholders: it replaces each with one
# single-quoted shell word before the probe runs (hints/table.h), so
# ShellCheck's SC1083 (a literal brace) does not apply; SC2154: cd_exit comes
# from the text before this one.
c={cmd}
re='(^|[;&|(])[[:space:]]*(cd|pushd)[[:space:]]'
[[ $c =~ $re ]] && exit "$cd_exit"
