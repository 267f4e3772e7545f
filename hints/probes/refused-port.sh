# shellcheck shell=bash disable=SC1083
# refused-port.sh -- which local port a refused connection went to, from
# the command and the last of its output, and what listens now (the
# connection-refused hints; follows listeners.sh).  {cmd} and {out} are
# placeholders (cd-guard.sh says why SC1083 is off).
#
# Exit 0: nothing listens on that port (lines: port, listeners); 2: it
# listens now (port, listeners); 1: no local port is named (listeners).
t={cmd}$'\n'{out}
loc='(localhost|127(\.[0-9]+){3}|0\.0\.0\.0|\[::1\]|::1)'
port=$(printf '%s\n' "$t" |
    grep -oE "$loc\|?:[0-9]+|${loc}[^0-9]{0,40}port[ =]*[0-9]+|${loc}['\"]?, *[0-9]+|\<(nc|ncat|netcat|telnet)( +-[A-Za-z]+)* +$loc +[0-9]+" |
    head -n 1 | grep -oE '[0-9]+$')
if [ -z "$port" ]; then
    # An http:// URL without a port goes to 80.
    printf '%s\n' "$t" | grep -qE "http://$loc(/|$|[[:space:]\"'])" && port=80
fi
l=$(listeners)
[ -n "$port" ] || {
    echo "$l"
    exit 1
}
echo "$port"
echo "$l"
ss -Hltn 2>/dev/null | awk -v p=":$port" 'substr($4, length($4) - length(p) + 1) == p { f = 1 } END { exit !f }' &&
    exit 2
exit 0
