/* hints_table.h -- what an entry of the hint tables is, and the building
 * blocks entries share (private to sandbox/hints*.c).
 *
 * The tables are data: hints.c holds the first table and the engine that
 * reads every table; hints_habits.c holds the entries for habits a small
 * model brings from a real machine (service managers, terminals, a shell
 * that lasts, clients that fail without a word, servers).  The engine reads
 * hints_habits first, so such an entry speaks before a general entry of
 * the same group (say, "systemctl is not installed") could say a wrong
 * thing.
 *
 * An entry of the table:
 *
 *   name      what the situation is called (tests refer to it)
 *   on        HK_RUN: matched against a run's command and output;
 *             HK_WRITE: against a write_file's path and content;
 *             HK_TIMEOUT: against a run that its timeout killed
 *   group     entries sharing a group are alternatives: the first of them
 *             that says something wins, the rest are skipped
 *   cmd       ERE the command (the path) must match; NULL = any
 *   not_cmd   ERE it must not match
 *   out       ERE the output (the content) must match; NULL = any
 *   not_out   ERE it must not match ("[^[:space:]]" = the output is empty)
 *   exit      HX_ANY, HX_ZERO, HX_NONZERO or HX_CODE (with code)
 *   probe     bash run in the sandbox when everything above matched; its
 *             exit code picks the text: 0 -> say[0], 1 -> say[1],
 *             2 -> say[2]; any other code, or a NULL text, says nothing
 *   say       the line(s), "[...]"; without a probe, say[0]
 *
 * Regexes are POSIX extended as glibc implements them (with \< \> \`),
 * compiled once, with REG_NEWLINE: ^ and $ match at every line of the
 * output.  Placeholders, replaced in probes (as one single-quoted shell
 * word) and in texts (as is):
 *
 *   {cmd}            the command (for a write: the path)
 *   {out}            the last 4 KiB of the output (probes only)
 *   {c1}..{c9}       groups of the cmd regex;  {o1}..{o9} of the out regex
 *   {probe}          the probe's output, trailing blank space trimmed
 *   {p1}..{p9}       its lines
 *   {memory} {cpus} {pids} {disk_cap} {limits}
 *                    the sandbox's limits as phrases: "256 MiB of memory
 *                    plus 768 MiB of swap", "1 CPU", "at most 512
 *                    processes", "2 GiB of disk", and all four together.
 *                    What its cgroup says when the limits callback can
 *                    tell (swap only as far as the host has any), else the
 *                    sandbox template's limits from the configuration
 *
 * Rules every text keeps: it is short, concrete and true (a probe checks
 * what the output alone cannot tell); it says what to do next; it never
 * asks to work out by hand what a program computed, or to make up tests;
 * error hints never fire on a success.  The exceptions are deliberate and
 * state facts: chmod/chown/chgrp show the mode after, free/nproc/df show
 * the real limits, ShellCheck reports what it finds, and running an empty
 * file says it was empty.
 */
#ifndef TALKBACK_HINTS_TABLE_H
#define TALKBACK_HINTS_TABLE_H

#include <stddef.h>

/* What an entry looks at: a run that ended by itself, a write_file, or a
 * run its timeout killed (its output so far; probes run after the kill). */
typedef enum { HK_RUN = 0, HK_WRITE, HK_TIMEOUT } hint_on_t;
typedef enum { HX_ANY = 0, HX_ZERO, HX_NONZERO, HX_CODE } hint_exit_t;

typedef struct {
    const char *name;
    hint_on_t on;
    const char *group;
    const char *cmd, *not_cmd;
    const char *out, *not_out;
    hint_exit_t exit;
    int code;
    const char *probe;
    const char *say[3];
} hint_t;

/* The habits table (hints_habits.c), read before hints.c's own. */
extern const hint_t hints_habits[];
extern const size_t hints_habits_n;
/* Room the engine keeps for it (checked by hints_check). */
#define HINTS_HABITS_MAX 64

/* ---- building blocks of the table ------------------------------------------- */

/* Where a command word starts: the line's start, after ; & | ( ` or $(, or
 * after a word that runs the next one.  One regex group. */
#define AT_CMD "(^|[;&|(`]|\\$\\(|\\<sudo|\\<then|\\<do|\\<else|\\<time|\\<nohup|\\<exec|\\<xargs|\\<env" \
               "|\\<timeout[[:space:]]+[0-9.]+[smhd]?)[[:space:]]*"

/* Relative paths in a probe are resolved in /work, where commands start; a
 * command that changes folder first leaves them unknown.  Probes using
 * CD_GUARD(n) exit with n when the command has a cd or pushd. */
#define CD_GUARD(n) \
    "c={cmd}; re='(^|[;&|(])[[:space:]]*(cd|pushd)[[:space:]]'; [[ $c =~ $re ]] && exit " #n "; "

/* Source files the missing-file hint looks for in a command. */
#define SRC_EXT "c|cc|cpp|cxx|h|hpp|py|kt|kts|java|rs|go|js|mjs|cjs|ts|cs|hs|lua|rb|pl|php|sh|bash|scala|swift|r|R|jl|dart|zig|ml|ex|exs|f90"

/* Print "F does not exist (no file /abs/F)[; there is one at ...]" or
 * "F is empty (0 bytes)" for the first source file of the command that is
 * missing or empty, and exit 0; exit 1 when all of them are there. */
#define MISSING_FILE_PROBE(check_missing) \
    CD_GUARD(3) \
    "c=$(printf '%s\\n' \"$c\" | sed -E 's/[0-9]*>>?[[:space:]]*[^[:space:];&|]+//g'); " \
    "while IFS= read -r f; do " \
    "  case $f in *://*) continue;; esac; " \
    "  if " check_missing " [ ! -e \"$f\" ]; then " \
    "    w=$(find /work /tmp /root -maxdepth 3 -type f -name \"${f##*/}\" 2>/dev/null | head -n 1); " \
    "    printf '%s does not exist (no file %s)' \"$f\" \"$(realpath -m -- \"$f\")\"; " \
    "    [ -n \"$w\" ] && printf '; there is one at %s' \"$w\"; echo; exit 0; " \
    "  elif [ -f \"$f\" ] && [ ! -s \"$f\" ]; then echo \"$f is empty (0 bytes)\"; exit 0; fi; " \
    "done < <(printf '%s\\n' \"$c\" | grep -oE '[^][[:space:];&|<>()\"'\\''=,]+\\.(" SRC_EXT ")\\>'); exit 1"

/* Every TCP listener: "0.0.0.0:8000 (python3, pid 12); ..." or "nothing".
 * Docker's DNS resolver (127.0.0.11, on a user-defined network) is not a
 * server of the sandbox's own and is left out. */
#define LISTENERS \
    "ss -Hltnp 2>/dev/null | awk '$4 ~ /^127\\.0\\.0\\.11:/ { next } { a = $4; p = \"\"; " \
    "if (match($0, /\"[^\"]+\",pid=[0-9]+/)) { s = substr($0, RSTART + 1, RLENGTH - 1); " \
    "sub(/\",pid=/, \", pid \", s); p = \" (\" s \")\" } " \
    "printf \"%s%s%s\", (n++ ? \"; \" : \"\"), a, p } END { if (!n) printf \"nothing\"; print \"\" }'"

/* Which local port a refused connection went to, from the command and the
 * output.  Exit 0: nothing listens there (lines: port, listeners); 2: it
 * listens now (port, listeners); 1: no local port named (listeners). */
#define REFUSED_PROBE \
    "t={cmd}$'\\n'{out}; " \
    "loc='(localhost|127(\\.[0-9]+){3}|0\\.0\\.0\\.0|\\[::1\\]|::1)'; " \
    "port=$(printf '%s\\n' \"$t\" | grep -oE \"$loc\\|?:[0-9]+|$loc[^0-9]{0,40}port[ =]*[0-9]+|$loc['\\\"]?, *[0-9]+|" \
    "\\<(nc|ncat|netcat|telnet)( +-[A-Za-z]+)* +$loc +[0-9]+\" | head -n 1 | grep -oE '[0-9]+$'); " \
    "if [ -z \"$port\" ]; then printf '%s\\n' \"$t\" | grep -qE \"http://$loc(/|$|[[:space:]\\\"'])\" && port=80; fi; " \
    "l=$(" LISTENERS "); " \
    "[ -n \"$port\" ] || { echo \"$l\"; exit 1; }; " \
    "echo \"$port\"; echo \"$l\"; " \
    "ss -Hltn 2>/dev/null | awk -v p=\":$port\" 'substr($4, length($4) - length(p) + 1) == p { f = 1 } END { exit !f }' " \
    "&& exit 2; exit 0"

/* ShellCheck's errors and warnings on one shell script, plus its notes
 * SC2030/SC2031 (a variable changed in a pipeline's subshell), at most 10
 * lines.  A script without a #! line is checked as bash (it is run with
 * bash, and ShellCheck would otherwise only complain that it cannot tell
 * the shell).  Exit 0 with the report, 1 when it finds none of those, 3
 * when the file is not a shell script or ShellCheck is missing. */
#define SHELLCHECK_PROBE(file) \
    "f=" file "; [ -f \"$f\" ] || exit 3; IFS= read -r l < \"$f\"; l=${l%$'\\r'}; " \
    "sh='^#![[:space:]]*(/usr)?/bin/(env[[:space:]]+)?(ba|da|k)?sh([[:space:]]|$)'; " \
    "s=; case $l in '#!'*) [[ $l =~ $sh ]] || exit 3;; *) case $f in *.sh|*.bash) s=--shell=bash;; *) exit 3;; esac;; esac; " \
    "command -v shellcheck >/dev/null || exit 3; " \
    "r=$(shellcheck $s -f gcc -- \"$f\" 2>/dev/null | grep -E ': (error|warning): |\\[SC203[01]\\]$' " \
    "| sed -E 's/^[^:]*:([0-9]+):[0-9]+: /line \\1: /'); " \
    "[ -n \"$r\" ] || exit 1; n=$(printf '%s\\n' \"$r\" | wc -l); " \
    "echo \"ShellCheck on $f:\"; printf '%s\\n' \"$r\" | head -n 10; " \
    "[ \"$n\" -gt 10 ] && echo \"... $((n - 10)) more: shellcheck $f\"; " \
    "printf '%s\\n' \"$r\" | grep -q 'SC203[01]' && echo \"(Each part of a pipeline runs in a subshell: a variable " \
    "set in cmd | while read ... is lost after the loop. Use while read ...; done < <(cmd) instead.)\"; exit 0"

/* Which Debian package (or other install line) gives a missing command. */
#define COMMAND_PROBE(var) \
    "c=" var "; " \
    "[ -f \"$c\" ] && { echo \"$c is a file here, not an installed command: run it as ./$c\"; exit 2; }; " \
    "case $c in " \
    "dotnet|csc) echo \"There is no $c here: C# builds with Mono: mcs -out:NAME.exe FILE.cs, then mono NAME.exe\"; exit 2;; " \
    "python2|python2.7) echo 'Debian 13 has no Python 2: use python3'; exit 2;; " \
    "tsc) echo 'npm install -g typescript'; exit 0;; " \
    "ts-node) echo 'npm install -g ts-node typescript'; exit 0;; " \
    "yarn|pnpm) echo \"npm install -g $c\"; exit 0;; " \
    "esac; " \
    "p=$(case $c in " \
    "ssh|scp|sftp|ssh-keygen|ssh-keyscan|ssh-copy-id|ssh-agent) echo openssh-client;; sshd) echo openssh-server;; " \
    "ifconfig|netstat|route|arp) echo net-tools;; ping) echo iputils-ping;; traceroute) echo traceroute;; " \
    "dig|nslookup|host|nsupdate) echo bind9-dnsutils;; telnet) echo inetutils-telnet;; " \
    "nc|netcat) echo netcat-openbsd;; ip|ss) echo iproute2;; " \
    "ps|top|free|pgrep|pkill|watch|uptime) echo procps;; killall|pstree|fuser) echo psmisc;; " \
    "vi|vim) echo vim;; xxd) echo xxd;; hexdump|column) echo bsdextrautils;; 7z) echo 7zip;; " \
    "java|javac|jar|jshell) echo default-jdk-headless;; kotlin|kotlinc) echo kotlin;; " \
    "go|gofmt) echo golang-go;; rustc) echo rustc;; cargo) echo cargo;; ghc|ghci|runghc) echo ghc;; " \
    "lua) echo lua5.4;; mono) echo mono-runtime;; mcs) echo mono-mcs;; node|nodejs) echo nodejs;; " \
    "npm|npx) echo npm;; pip|pip3) echo python3-pip;; python|python3) echo python3;; " \
    "ruby|irb|gem) echo ruby;; php) echo php-cli;; R|Rscript) echo r-base-core;; scala) echo scala;; " \
    "clang|clang++) echo clang;; gcc|cc) echo gcc;; g++|c++) echo g++;; " \
    "gpg) echo gnupg;; mysql|mariadb) echo mariadb-client;; " \
    "mysqld|mariadbd|mysql_secure_installation) echo mariadb-server;; psql) echo postgresql-client;; " \
    "redis-cli) echo redis-tools;; crontab) echo cron;; man) echo man-db;; " \
    "convert|identify|magick) echo imagemagick;; " \
    "*) apt-cache show -- \"$c\" >/dev/null 2>&1 && echo \"$c\";; esac); " \
    "[ -n \"$p\" ] || exit 1; echo \"apt-get update && apt-get install -y $p\"; exit 0"

#define NOT_INSTALLED_SAY(o)                                                                       \
    {                                                                                              \
        [0] = "[" o " is not installed in this sandbox. Install it: {p1}]",                        \
        [1] = "[" o " is not installed in this sandbox. Find its package with apt-get update && "  \
              "apt-cache search " o ", then apt-get install -y PACKAGE.]",                         \
        [2] = "[{p1}.]",                                                                           \
    }

#define OOM_PROBE \
    "for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do " \
    "[ -r \"$f\" ] || continue; " \
    "awk '$1 == \"oom_kill\" && $2 > 0 { k = 1 } END { exit !k }' \"$f\" && exit 0; exit 1; done; exit 2"

#define OOM_SAY                                                                                    \
    {                                                                                              \
        [0] = "[Killed for lack of memory: this sandbox has {memory}, and the program needed "     \
              "more. Make it use less memory; running it again as is ends the same way.]",         \
        [2] = "[Killed (SIGKILL), most likely for lack of memory: this sandbox has {memory}. "     \
              "Make the program use less memory.]",                                                \
    }

#define REFUSED_SAY_NOT_LISTENING                                                                  \
    "[Nothing listens on port {p1} in this sandbox, so the connection was refused: the server is " \
    "not running (or listens on another port). Listening now: {p2}. Start the server first, in "  \
    "the background (CMD > server.log 2>&1 &), then check with ss -ltnp.]"
#define REFUSED_SAY_NOT_READY                                                                      \
    "[Port {p1} has a listener now ({p2}), but it was not ready when this connected. Wait for it " \
    "(sleep 1, or retry a few times) before connecting.]"
#define REFUSED_SAY                                                                                \
    {                                                                                              \
        [0] = REFUSED_SAY_NOT_LISTENING,                                                           \
        [1] = "[Connection refused: nothing listened at the address and port this connected to. "  \
              "Listening in this sandbox now: {p1}. If the server should run here, start it "      \
              "first, in the background (CMD > server.log 2>&1 &), then check with ss -ltnp.]",    \
        [2] = REFUSED_SAY_NOT_READY,                                                               \
    }

#define MISSING_SAY "[{probe}, so there was nothing to compile or run. Write it first (write_file), " \
                    "then run this command again.]"

#define NO_TTY_SAY "[Nobody types here: there is no terminal and stdin is closed, so this command " \
                   "could not ask for input and did not do what it asks for. Pass the answers in " \
                   "the command instead (a --batch, --yes or --password style option, or pipe them " \
                   "in: printf 'answer\\n' | CMD).]"

#define SCRIPT_INTERP_PROBE(var) \
    "f=" var "; [ -f \"$f\" ] && [ ! -x \"$f\" ] || exit 3; i=; IFS= read -r l < \"$f\"; l=${l%$'\\r'}; " \
    "case $l in '#!'*) set -f; set -- ${l#??}; i=${1##*/}; [ \"$i\" = env ] && i=$2;; esac; " \
    "if [ -z \"$i\" ]; then case $f in *.sh|*.bash) i=bash;; *.py) i=python3;; *.js|*.mjs|*.cjs) i=node;; " \
    "*.pl) i=perl;; *.rb) i=ruby;; *.lua) i=lua;; *.php) i=php;; esac; fi; " \
    "[ -n \"$i\" ] || exit 1; echo \"$i $f\"; exit 0"

#endif
