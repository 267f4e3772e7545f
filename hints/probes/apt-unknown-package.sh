# shellcheck shell=bash disable=SC1083
# apt-unknown-package.sh -- Debian packages named like one apt does not
# know (hint apt-unknown-package): the same name with other version numbers
# first (openjdk-17-jdk -> openjdk-21-jdk), else any name containing it.
# {o1}{o2} is the package, a placeholder (cd-guard.sh says why SC1083 is
# off).
#
# Prints up to 8 names on one line and exits 0; exits 1 when there are none.
p={o1}{o2}
# The name as a regex: each run of digits may be any version, and a dash
# may have a version before it.  SC2016: sed's $ is meant.
# shellcheck disable=SC2016
pat=$(printf '%s' "$p" | sed -E 's/[][\\.+*?^$(){}|]/\\&/g; s/[0-9]+/#/g; s/-/%-/g; s/#/[0-9.]+/g; s/%/[0-9.]*/g')
r=$(apt-cache search --names-only "^$pat\$" 2>/dev/null | cut -d' ' -f1 | grep -vxF -- "$p" |
    sort -V | head -n 8 | paste -sd ' ')
[ -n "$r" ] || r=$(apt-cache search --names-only -- "$p" 2>/dev/null | cut -d' ' -f1 |
    grep -vxF -- "$p" | sort -V | head -n 8 | paste -sd ' ')
[ -n "$r" ] || exit 1
echo "$r"
