# shellcheck shell=bash disable=SC1083
# crlf-or-interpreter.sh -- why a script's #! line names a program that
# does not exist (hint crlf-or-interpreter; follows cd-guard.sh).  {o2} is
# the script, a placeholder (cd-guard.sh says why SC1083 is off).
#
# Exit 0: its first line ends in CR (Windows line endings); 1: it names an
# interpreter that is not installed, printed without the #!; 3: neither
# can be told (no such file, no #! line).
f={o2}
[ -f "$f" ] || exit 3
IFS= read -r l <"$f"
case $l in
    *$'\r') exit 0 ;;
    '#!'*)
        echo "${l#??}"
        exit 1
        ;;
esac
exit 3
