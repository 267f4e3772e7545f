# shellcheck shell=bash disable=SC1083
# server-port.sh -- the port a foreground server that its timeout killed
# listened on (hints server-foreground and server-foreground-cmd): from
# what it printed, else from its command (-p N, --port N, :N,
# http.server N), else the default of the framework it names.  {cmd} and
# {out} are placeholders (cd-guard.sh says why SC1083 is off).
#
# Prints the port and exits 0; exits 1 when nothing names one.
p=$(printf '%s\n' {out} | grep -oiE '(listen|running|serving|started|server|local|available)[^[:cntrl:]]{0,80}' |
    grep -oE '(:|[Pp]ort[[:space:]=]*)[0-9]{2,5}\>' | head -n 1 | grep -oE '[0-9]+')
[ -n "$p" ] || p=$(printf '%s\n' {cmd} |
    grep -oE '(-p|--port|-P)[[:space:]=]*[0-9]{2,5}\>|:[0-9]{2,5}\>|http\.server[[:space:]]+[0-9]{2,5}\>|runserver[[:space:]]+([0-9.]+:)?[0-9]{2,5}\>' |
    head -n 1 | grep -oE '[0-9]{2,5}$')
# shellcheck disable=SC2194 # the word is the command, put in by the engine
[ -n "$p" ] || case {cmd} in
    *http.server*) p=8000 ;;
    *runserver*) p=8000 ;;
    *flask*) p=5000 ;;
esac
[ -n "$p" ] || exit 1
echo "$p"
