# shellcheck shell=bash disable=SC2154
# script-report.sh -- ShellCheck's errors and warnings on one shell script,
# plus its notes SC2030/SC2031 (a variable changed in a pipeline's
# subshell), at most 10 lines (the shellcheck hints).  f, the script, is
# set before this text by SHELLCHECK_PROBE (SC2154).  A script without a #!
# line is checked as bash (it is run with bash, and ShellCheck would
# otherwise only complain that it cannot tell the shell).
#
# Exit 0: prints the report; 1: ShellCheck finds none of those; 3: f is not
# a shell script, or ShellCheck is missing.
[ -f "$f" ] || exit 3
IFS= read -r l <"$f"
l=${l%$'\r'}
sh='^#![[:space:]]*(/usr)?/bin/(env[[:space:]]+)?(ba|da|k)?sh([[:space:]]|$)'
s=
case $l in
    '#!'*) [[ $l =~ $sh ]] || exit 3 ;;
    *)
        case $f in
            *.sh | *.bash) s=--shell=bash ;;
            *) exit 3 ;;
        esac
        ;;
esac
command -v shellcheck >/dev/null || exit 3
# shellcheck disable=SC2086 # s is one option or none
r=$(shellcheck $s -f gcc -- "$f" 2>/dev/null | grep -E ': (error|warning): |\[SC203[01]\]$' |
    sed -E 's/^[^:]*:([0-9]+):[0-9]+: /line \1: /')
[ -n "$r" ] || exit 1
n=$(printf '%s\n' "$r" | wc -l)
echo "ShellCheck on $f:"
printf '%s\n' "$r" | head -n 10
[ "$n" -gt 10 ] && echo "... $((n - 10)) more: shellcheck $f"
printf '%s\n' "$r" | grep -q 'SC203[01]' &&
    echo "(Each part of a pipeline runs in a subshell: a variable set in cmd | while read ... is lost after the loop. Use while read ...; done < <(cmd) instead.)"
exit 0
