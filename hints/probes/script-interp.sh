# shellcheck shell=bash disable=SC2154
# script-interp.sh -- the interpreter that runs a script which is not
# executable (hint not-executable; follows cd-guard.sh): from its #! line,
# else from its extension.  f, the script, is set before this text by
# SCRIPT_INTERP_PROBE (SC2154).
#
# Prints "INTERPRETER SCRIPT" and exits 0; exits 1 when it cannot tell, 3
# when f is no file or is executable already.
[ -f "$f" ] && [ ! -x "$f" ] || exit 3
i=
IFS= read -r l <"$f"
l=${l%$'\r'}
case $l in
    '#!'*)
        # The #! line's words, split as the kernel would, never globbed.
        set -f
        # shellcheck disable=SC2086
        set -- ${l#??}
        i=${1##*/}
        [ "$i" = env ] && i=$2
        ;;
esac
if [ -z "$i" ]; then
    case $f in
        *.sh | *.bash) i=bash ;;
        *.py) i=python3 ;;
        *.js | *.mjs | *.cjs) i=node ;;
        *.pl) i=perl ;;
        *.rb) i=ruby ;;
        *.lua) i=lua ;;
        *.php) i=php ;;
    esac
fi
[ -n "$i" ] || exit 1
echo "$i $f"
exit 0
