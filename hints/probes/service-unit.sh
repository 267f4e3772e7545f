# shellcheck shell=bash disable=SC1083
# service-unit.sh -- the unit a systemctl or service command names, without
# ".service", and whether /etc/init.d has a script for it (hints systemctl
# and service-unknown).  {cmd} is a placeholder (cd-guard.sh says why
# SC1083 is off).
#
# Prints the unit.  Exit 0: it has an init script; 2: it has none; 1: the
# command names no unit.
u=$(printf '%s\n' {cmd} |
    grep -oE '(systemctl([[:space:]]+-[^[:space:]]+)*[[:space:]]+(start|restart|stop|reload|status|enable|disable|is-active)([[:space:]]+--now)?|service)[[:space:]]+[A-Za-z0-9@._-]+' |
    head -n 1 | awk '{ print $NF }')
u=${u%.service}
case $u in '' | -*) exit 1 ;; esac
echo "$u"
[ -x "/etc/init.d/$u" ] && exit 0
exit 2
