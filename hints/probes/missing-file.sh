# shellcheck shell=bash disable=SC2154
# missing-file.sh -- which source file of a command that failed (or ran
# and printed nothing) is missing or empty (hints missing-file and
# empty-file-ran).  Follows cd-guard.sh, which leaves the command in c;
# missing (set before, by MISSING_FILE_PROBE) is 1 to report files that do
# not exist, empty to report only empty ones.  SC2154: c and missing come
# from the text before this one.
#
# Prints "F does not exist (no file /abs/F)[; there is one at ...]" or
# "F is empty (0 bytes)" for the first such file, and exits 0; exits 1 when
# all of them are there.

# Redirections (2>err.txt, > out.log) name files the command makes.
c=$(printf '%s\n' "$c" | sed -E 's/[0-9]*>>?[[:space:]]*[^[:space:];&|]+//g')
while IFS= read -r f; do
    case $f in *://*) continue ;; esac
    if [ -n "$missing" ] && [ ! -e "$f" ]; then
        w=$(find /work /tmp /root -maxdepth 3 -type f -name "${f##*/}" 2>/dev/null | head -n 1)
        printf '%s does not exist (no file %s)' "$f" "$(realpath -m -- "$f")"
        [ -n "$w" ] && printf '; there is one at %s' "$w"
        echo
        exit 0
    elif [ -f "$f" ] && [ ! -s "$f" ]; then
        echo "$f is empty (0 bytes)"
        exit 0
    fi
    # The source files a command may name, by their extension.
done < <(printf '%s\n' "$c" | grep -oE '[^][[:space:];&|<>()"'\''=,]+\.(c|cc|cpp|cxx|h|hpp|py|kt|kts|java|rs|go|js|mjs|cjs|ts|cs|hs|lua|rb|pl|php|sh|bash|scala|swift|r|R|jl|dart|zig|ml|ex|exs|f90)\>')
exit 1
