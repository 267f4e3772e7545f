# shellcheck shell=bash disable=SC2154
# crlf-file.sh -- which file of a command has Windows line endings (hint
# crlf-script; follows cd-guard.sh, which leaves the command in c): the
# first file the command names whose text has a CR at a line's end.
#
# Prints the file and exits 0; exits 1 when no such file is named.
set -f
# shellcheck disable=SC2086 # the command's words, split on purpose
for w in $c; do
    w=${w#\'}
    w=${w%\'}
    [ -f "$w" ] || continue
    head -c 65536 -- "$w" | grep -q $'\r$' && {
        echo "$w"
        exit 0
    }
done
exit 1
