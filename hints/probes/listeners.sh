# shellcheck shell=bash
# listeners.sh -- defines listeners, which prints every TCP listener of the
# sandbox on one line: "0.0.0.0:8000 (python3, pid 12); ..." or "nothing".
# Docker's DNS resolver (127.0.0.11, on a user-defined network) is not a
# server of the sandbox's own and is left out.  The hints that show what
# listens run it alone (LISTENERS); refused-port.sh calls it.
listeners() {
    ss -Hltnp 2>/dev/null | awk '$4 ~ /^127\.0\.0\.11:/ { next } { a = $4; p = ""; if (match($0, /"[^"]+",pid=[0-9]+/)) { s = substr($0, RSTART + 1, RLENGTH - 1); sub(/",pid=/, ", pid ", s); p = " (" s ")" } printf "%s%s%s", (n++ ? "; " : ""), a, p } END { if (!n) printf "nothing"; print "" }'
}
