# shellcheck shell=bash disable=SC1083
# ownership-after.sh -- mode, owner and group of the paths a chmod, chown or
# chgrp just changed (hint ownership-after).  {cmd} is the command and {c6}
# its paths, placeholders (cd-guard.sh says why SC1083 is off).
#
# Prints "MODE OWNER:GROUP PATH; ..." (at most 8) and exits 0; exits 1 when
# a path cannot be read, 3 when a relative path follows a cd.
c={cmd}
read -ra p <<< {c6}
re='(^|[;&|(])[[:space:]]*(cd|pushd)[[:space:]]'
for x in "${p[@]}"; do
    case $x in
        /*) ;;
        *) [[ $c =~ $re ]] && exit 3 ;;
    esac
done
# shellcheck disable=SC2068 # the paths as the command gave them
r=$(stat -c '%A %U:%G %n' -- ${p[@]} 2>/dev/null) || exit 1
printf '%s\n' "$r" | head -n 8 | paste -sd ';' | sed 's/;/; /g'
