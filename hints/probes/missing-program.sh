# shellcheck shell=bash disable=SC1083
# missing-program.sh -- what is in the folder of a program that bash could
# not find (hint missing-program; follows cd-guard.sh).  {o2} is the
# program's path, a placeholder (cd-guard.sh says why SC1083 is off).
#
# Prints the folder's first 30 names on one line and exits 0; exits 1 when
# the folder does not exist either.
d=$(dirname -- {o2})
[ -d "$d" ] || exit 1
# shellcheck disable=SC2012 # names for a person to read
ls -A -- "$d" | head -n 30 | paste -sd ' '
