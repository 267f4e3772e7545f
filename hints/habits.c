/* habits.c -- hint entries for what a small model believes about a
 * machine that is not true in this sandbox (hints_table.h says what an
 * entry is; hints.c reads this table before its own).
 *
 * A model learned from real machines: services start with systemctl,
 * logs are in journalctl, a quiet curl that printed nothing "worked", cd
 * lasts to the next command, an editor or top can be opened, a server is
 * started and then used, and a name like `db` is another machine.  Here
 * the sandbox is one container, run by a program that starts a new bash
 * per call, with no terminal and stdin closed.  Each entry below notices
 * one of those beliefs from the command, the output and the exit code,
 * says why it does not hold here and what does work.
 *
 * Rules beyond hints_table.h's: an entry about something that cannot work
 * in a container never advises installing it (it is in group "cnf" and
 * read first, so "X is not installed: install it" never follows); an
 * entry that fires on a success states a fact (the shell change that is
 * gone, the server that is running now).
 */
#include "hints/table.h"

/* ---- building blocks --------------------------------------------------------- */

/* A container cannot do it, whatever gets installed. */
#define NO_INSTALL "installing anything won't change that"

#define EDITOR_SAY                                                                                 \
    "[Nobody types here (no terminal, stdin closed), so a screen editor like {c2} cannot be "      \
    "used, "                                                                                       \
    "and " NO_INSTALL ". Write the whole file with the write_file tool, or change it in place "    \
    "with run: sed -i 's/OLD/NEW/' FILE.]"

/* pkill matching whole command lines (-f, --full, or -f among other
 * letters), not in a pipe. */
#define PKILL_FULL                                                                                 \
    "(^|[;&|({[:space:]])pkill[[:space:]]+([^;&|]*[[:space:]])?(-[[:alnum:]]*f[[:alnum:]]*|--"     \
    "full)"                                                                                        \
    "([[:space:]]|$)"

#define PKILL_SELF_SAY                                                                             \
    "[pkill -f matched this command's own shell too: its pattern is part of the command line it "  \
    "ran in, so the command was stopped by its own signal (exit code {exit}), whether or not the " \
    "program was. See what still runs with pgrep -af PATTERN, then stop the program by its PID "   \
    "(kill PID), or write the pattern so it cannot match itself (pkill -f '[h]ttp.server' "        \
    "matches the server, not the shell).]"

/* ---- the table ---------------------------------------------------------------------- */

const hint_t hints_habits[] = {
    /* -- a pattern kill that kills itself: `pkill -f PATTERN` runs in a shell
     *    whose own command line holds PATTERN, so it signals that shell too -- */
    {
        .name = "pkill-self-term", .group = "sigterm",
        .cmd = PKILL_FULL, .exit = HX_CODE, .code = 143,
        .say = { PKILL_SELF_SAY },
    },
    {
        .name = "pkill-self-kill", .group = "oom",
        .cmd = PKILL_FULL, .exit = HX_CODE, .code = 137,
        .say = { PKILL_SELF_SAY },
    },
    /* -- clients that fail without a word -- */
    {
        .name = "curl-refused", .group = "refused",
        .cmd = "\\<curl\\>", .not_out = "[^[:space:]]", .exit = HX_CODE, .code = 7,
        .probe = REFUSED_PROBE,
        .say = {
            [0] = "[curl could not connect (exit 7, it printed nothing), and nothing listens on port {p1} in this "
                  "sandbox: the server is not running (or listens on another port). Listening now: "
                  "{p2}. Start the server first, in the background (CMD > server.log 2>&1 &), then "
                  "check with ss -ltnp.]",
            [1] = "[curl could not connect (exit 7): nothing accepted the connection at that address "
                  "and port. Listening in this sandbox now: {p1}. Start the server first, in the "
                  "background (CMD > server.log 2>&1 &), then check with ss -ltnp.]",
            [2] = "[curl could not connect (exit 7). Port {p1} has a listener now ({p2}), but it was "
                  "not ready then: wait for it (sleep 1) and try again.]",
        },
    },
    {
        .name = "curl-http-error",
        .cmd = "\\<curl\\>[^;&|]*[[:space:]]-([A-Za-z]*f[A-Za-z]*|-fail)\\>", .exit = HX_CODE, .code = 22,
        .say = { "[curl -f got an HTTP error status (400 or above) and printed nothing (exit 22): the "
                 "server answered, but with an error. See the status and the body without -f: "
                 "curl -s -i URL.]" },
    },
    {
        .name = "curl-timeout",
        .cmd = "\\<curl\\>", .exit = HX_CODE, .code = 28,
        .probe = LISTENERS,
        .say = { "[curl gave up waiting (exit 28, timed out): the server accepted nothing or answered "
                 "nothing in time, or the host cannot be reached from here. Listening in this sandbox "
                 "now: {p1}. Check the server's own log, or give it longer: --max-time SECONDS.]" },
    },
    {
        .name = "curl-empty-reply",
        .cmd = "\\<curl\\>", .exit = HX_CODE, .code = 52,
        .say = { "[The server closed the connection without answering (curl exit 52): it crashed on the "
                 "request, or it does not speak plain HTTP there (an https:// server, or not HTTP at "
                 "all). Read the server's log.]" },
    },
    {
        .name = "curl-recv-error",
        .cmd = "\\<curl\\>", .exit = HX_CODE, .code = 56,
        .probe = LISTENERS,
        .say = { "[The connection broke while curl was receiving (exit 56): the server closed or reset "
                 "it, often because it crashed. Listening now: {p1}. Read the server's log.]" },
    },
    {
        .name = "wget-failed",
        .cmd = "\\<wget\\>", .exit = HX_CODE, .code = 4,
        .probe = REFUSED_PROBE,
        .say = {
            [0] = "[wget failed at the network level (exit 4): nothing listens on port {p1} in this "
                  "sandbox. Listening now: {p2}. Start the server first, in the background "
                  "(CMD > server.log 2>&1 &).]",
            [1] = "[wget failed at the network level (exit 4): the connection was refused, the name "
                  "did not resolve, or the host cannot be reached. Listening in this sandbox now: "
                  "{p1}. Run it without -q to see which.]",
            [2] = "[wget failed at the network level (exit 4). Port {p1} has a listener now ({p2}), "
                  "but it was not ready then: wait for it (sleep 1) and try again.]",
        },
    },
    {
        .name = "wget-tls",
        .cmd = "\\<wget\\>", .exit = HX_CODE, .code = 5,
        .say = { "[wget could not check the server's TLS certificate (exit 5). For a local test server "
                 "with a self-made certificate add --no-check-certificate; otherwise the address is "
                 "wrong. Run it without -q to see the error.]" },
    },
    {
        .name = "wget-http-error",
        .cmd = "\\<wget\\>", .exit = HX_CODE, .code = 8,
        .say = { "[The server answered with an error status (wget exit 8: 404, 500 and the like), so "
                 "nothing was saved. Run it without -q to see the status, or check the URL.]" },
    },
    {
        .name = "name-not-resolved", .group = "dns",
        .out = "Could not resolve host|Name or service not known|Temporary failure in name resolution"
               "|getaddrinfo (ENOTFOUND|EAI_AGAIN)|No address associated with hostname"
               "|could not translate host name",
        .exit = HX_NONZERO,
        .probe = PROBE_UNRESOLVED_HOST,
        .say = {
            [0] = "[No machine is called {p1} here: this sandbox is one machine, not a Docker Compose "
                  "network, so service names like db or redis do not exist. Run that service in this "
                  "sandbox and use localhost instead of {p1}.]",
            [2] = "[The name {p1} does not resolve from this sandbox: check its spelling. A server you "
                  "started here is at localhost.]",
        },
    },
    {
        .name = "curl-no-host", .group = "dns",
        .cmd = "\\<curl\\>", .exit = HX_CODE, .code = 6,
        .probe = PROBE_UNRESOLVED_HOST,
        .say = {
            [0] = "[curl could not resolve the host name (exit 6): no machine is called {p1} here. "
                  "This sandbox is one machine, not a Docker Compose network: run that service here "
                  "and use localhost instead of {p1}.]",
            [1] = "[curl could not resolve the host name (exit 6): check its spelling. A server you "
                  "started here is at localhost.]",
            [2] = "[curl could not resolve {p1} (exit 6): the name does not resolve from this sandbox. "
                  "Check its spelling; a server you started here is at localhost.]",
        },
    },
    {
        .name = "psql-no-server", .group = "refused",
        .out = "connection to server on socket \"[^\"]*\\.s\\.PGSQL\\.([0-9]+)\" failed|"
               "connection to server at \"[^\"]*\" \\([^)]*\\), port ([0-9]+) failed: Connection refused",
        .exit = HX_NONZERO,
        .probe = PROBE_PSQL_NO_SERVER,
        .say = {
            [0] = "[No PostgreSQL server is running in this sandbox, so there was nothing to connect "
                  "to. Start it first: service postgresql start (it stays running after this call), "
                  "then connect.]",
            [1] = "[No PostgreSQL server is running in this sandbox, and none is installed: psql is "
                  "only the client. Install the server (apt-get update && apt-get install -y "
                  "postgresql), start it with service postgresql start, then connect.]",
        },
    },
    {
        .name = "mysql-no-server", .group = "refused",
        .out = "Can't connect to (local )?(MySQL |MariaDB )?server( through socket| on)",
        .exit = HX_NONZERO,
        .probe = PROBE_MYSQL_NO_SERVER,
        .say = {
            [0] = "[No MariaDB/MySQL server is running in this sandbox, so there was nothing to "
                  "connect to. Start it first: service mariadb start (it stays running after this "
                  "call), then connect.]",
            [1] = "[No MariaDB/MySQL server is running in this sandbox, and none is installed: mysql "
                  "is only the client. Install the server (apt-get update && apt-get install -y "
                  "mariadb-server), start it with service mariadb start, then connect.]",
        },
    },

    /* -- what a container cannot do -- */
    {
        .name = "systemctl", .group = "cnf",
        .cmd = AT_CMD "systemctl\\>", .exit = HX_NONZERO,
        .probe = PROBE_SERVICE_UNIT,
        .say = {
            [0] = "[systemctl cannot work here: this sandbox is a container with no systemd, and "
                  NO_INSTALL ". {p1} has an init script: service {p1} start (or stop, restart, status) "
                  "runs it, and it stays running after this call.]",
            [1] = "[systemctl cannot work here: this sandbox is a container with no systemd, and "
                  NO_INSTALL ". Start the daemon's own program in the background instead "
                  "(PROGRAM > /var/log/PROGRAM.log 2>&1 &), read that log, and check with ss -ltnp.]",
            [2] = "[systemctl cannot work here: this sandbox is a container with no systemd, and "
                  NO_INSTALL ". {p1} has no init script here (is its package installed?): start its "
                  "program in the background (PROGRAM > /var/log/{p1}.log 2>&1 &), read that log, and "
                  "check with ss -ltnp.]",
        },
    },
    {
        .name = "service-unknown",
        .cmd = AT_CMD "service[[:space:]]", .out = "unrecognized service", .exit = HX_NONZERO,
        .probe = PROBE_SERVICE_UNIT,
        .say = { [2] = "[There is no /etc/init.d/{p1}, so service cannot start it: the package that "
                       "brings {p1} is not installed (apt-cache search {p1}), or it has no init "
                       "script; then start its program in the background (PROGRAM > "
                       "/var/log/{p1}.log 2>&1 &).]" },
    },
    {
        .name = "journalctl", .group = "cnf",
        .cmd = AT_CMD "journalctl\\>", .exit = HX_NONZERO,
        .say = { "[There is no journal here: this sandbox is a container with no systemd, and "
                 NO_INSTALL ". Daemons write their logs to files: ls -t /var/log, or the file you sent "
                 "a program's output to (CMD > app.log 2>&1 &, then tail -n 50 app.log).]" },
    },
    {
        .name = "container-in-container", .group = "cnf",
        .cmd = AT_CMD "(docker|podman|docker-compose|dockerd|containerd|kubectl|minikube|kind)\\>",
        .out = "command not found|Cannot connect to the Docker daemon|docker\\.sock|newuidmap|cgroup"
               "|[Oo]peration not permitted|[Pp]ermission denied|No such file or directory",
        .exit = HX_NONZERO,
        .say = { "[You are inside a container already (this sandbox), so {c2} cannot run containers "
                 "here, and " NO_INSTALL ". Do directly here what the image would do: install its "
                 "packages (apt-get, pip, npm), then start the program in the background.]" },
    },
    {
        .name = "reboot", .group = "cnf",
        .cmd = AT_CMD "(reboot|shutdown|poweroff|halt|init[[:space:]]+[06]|telinit)\\>",
        .exit = HX_NONZERO,
        .say = { "[This sandbox cannot be rebooted or shut down from inside: it is a container, and "
                 NO_INSTALL ". To restart a program, kill its PID and start it again; to start over "
                 "with a clean machine, use the reset tool (everything is lost).]" },
    },
    {
        .name = "kernel-rights", .group = "cnf",
        .cmd = AT_CMD "(mount|umount|modprobe|insmod|rmmod|swapon|swapoff|sysctl|mkswap|losetup"
               "|iptables|nft|ip6tables|hostnamectl|timedatectl|hwclock|setenforce)\\>",
        .out = "ermission denied|Operation not permitted|command not found|must be superuser"
               "|Read-only file system|not permitted|env: .[a-z]+.: No such file or directory",
        .exit = HX_NONZERO,
        .say = { "[{c2} needs rights over the kernel, and this sandbox is a container that shares the "
                 "host's kernel without them; " NO_INSTALL ". Work without it: plain folders instead "
                 "of mounts, the limits as they are (free, nproc and df show them).]" },
    },
    {
        .name = "ulimit-raise",
        .cmd = "\\<ulimit\\>", .out = "cannot modify limit: Operation not permitted", .exit = HX_ANY,
        .say = { "[This sandbox's limits are fixed from outside: ulimit can only lower them here. Make "
                 "the program fit the limit it has (ulimit -a shows them).]" },
    },

    /* -- programs that want a terminal -- */
    {
        .name = "screen-monitor", .group = "cnf",
        .cmd = AT_CMD "(htop|top|btop|atop|iotop|glances|nmon)\\>", .not_cmd = "\\<top[[:space:]][^;&|]*-b",
        .exit = HX_NONZERO,
        .say = { "[{c2} draws a live screen on a terminal, and there is none here ("
                 NO_INSTALL "). For one snapshot: top -b -n 1 | head -n 20, or ps aux --sort=-%cpu "
                 "| head.]" },
    },
    {
        .name = "screen-editor", .group = "cnf",
        .cmd = AT_CMD "(vim?|nvim|nano|emacs|pico|joe|micro|ed|mcedit)\\>", .exit = HX_NONZERO,
        .say = { EDITOR_SAY },
    },
    {
        .name = "watch-screen", .group = "cnf",
        .cmd = AT_CMD "watch\\>", .exit = HX_NONZERO,
        .say = { "[watch redraws a terminal screen, and there is none here (" NO_INSTALL "). Repeat "
                 "the command in a loop instead: for i in 1 2 3; do CMD; sleep 2; done]" },
    },
    {
        .name = "watch-forever", .on = HK_TIMEOUT, .group = "server",
        .cmd = AT_CMD "watch\\>",
        .say = { "[watch repeats a command for ever on a terminal screen, so it ran until the timeout and "
                 "was killed with it. Repeat the command a few times in a loop instead: "
                 "for i in 1 2 3; do CMD; sleep 2; done]" },
    },
    {
        .name = "follow-forever", .on = HK_TIMEOUT, .group = "server",
        .cmd = AT_CMD "(tail[[:space:]][^;&|]*(-[A-Za-z]*[fF]|--follow)|less[[:space:]]+\\+F"
               "|ping)\\>",
        .not_cmd = "\\<ping[[:space:]][^;&|]*-[A-Za-z]*c",
        .say = { "[{c2} never ends by itself (it follows for ever), so it ran until the timeout and was "
                 "killed with it. Take what is there now: tail -n 50 FILE (ping -c 3 HOST).]" },
    },
    {
        .name = "terminal-multiplexer", .group = "cnf",
        .cmd = AT_CMD "(tmux|screen|byobu)\\>", .exit = HX_NONZERO,
        .say = { "[{c2} keeps programs running for a terminal, and there is none here ("
                 NO_INSTALL "). Nothing is needed for that: a program started in the background "
                 "(CMD > app.log 2>&1 &) keeps running after this call; read app.log later.]" },
    },
    {
        .name = "apt-no-yes", .group = "tty",
        .cmd = "\\<apt(-get)?\\>",
        .out = "(Do you want to continue|Continue)\\? \\[Y/n\\] Abort\\.",
        .exit = HX_NONZERO,
        .say = { "[Nobody types here, so apt could not ask whether to continue, and did nothing. "
                 "Add -y: apt-get install -y PACKAGE (apt-get remove -y PACKAGE).]" },
    },
    {
        .name = "crontab-edit", .group = "cnf",
        .cmd = AT_CMD "crontab[[:space:]]+-e\\>", .exit = HX_ANY,
        .say = { "[Nobody types here, so crontab -e cannot open an editor. Install a line without "
                 "one: (crontab -l 2>/dev/null; echo '*/5 * * * * CMD') | crontab - . Nothing runs "
                 "it until cron itself runs: start it with cron (a job that must run now: "
                 "while true; do CMD; sleep 300; done > job.log 2>&1 &).]" },
    },
    {
        .name = "psql-password",
        .cmd = "\\<psql\\>", .out = "no password supplied|password authentication failed",
        .exit = HX_NONZERO,
        .say = { "[Nobody types here, so psql could not ask for a password (or got the wrong one). "
                 "Give it in the command: PGPASSWORD='PASS' psql -h localhost -U USER DB -c 'SQL'.]" },
    },
    {
        .name = "mysql-password",
        .cmd = "\\<(mysql|mariadb)\\>", .out = "Access denied for user .*\\(using password: NO\\)",
        .exit = HX_NONZERO,
        .say = { "[No password was sent: nobody types here, so mysql -p cannot ask for one. Give it "
                 "in the command: mysql -u USER -p'PASS' -e 'SQL' (no space after -p), or "
                 "MYSQL_PWD='PASS' mysql -u USER. As root on this machine, plain mysql -e 'SQL' "
                 "may work with no password.]" },
    },
    {
        .name = "git-credentials", .group = "tty",
        .cmd = "\\<git\\>", .out = "could not read (Username|Password) for '([^']*)'",
        .exit = HX_NONZERO,
        .say = { "[Nobody types here, so git could not ask for a user name or password for {o2}, and "
                 "did nothing. Give them in the command: a URL with a token "
                 "(https://USER:TOKEN@HOST/PATH.git), or a public URL that needs none.]" },
    },
    {
        .name = "ssh-host-key",
        .cmd = "\\<(ssh|scp|sftp|rsync|git)\\>", .out = "Host key verification failed",
        .exit = HX_NONZERO,
        .say = { "[Nobody types here, so ssh could not ask you to accept the server's host key, and "
                 "stopped. Accept a new key in the command: ssh -o StrictHostKeyChecking=accept-new "
                 "... (for git: GIT_SSH_COMMAND='ssh -o StrictHostKeyChecking=accept-new' git ...).]" },
    },
    {
        .name = "ssh-password",
        .cmd = "\\<(ssh|scp|sftp)\\>", .out = "Permission denied \\([^)]*password[^)]*\\)",
        .exit = HX_NONZERO,
        .say = { "[Nobody types here, so ssh could not ask for a password. Use a key instead: "
                 "ssh-keygen -t ed25519 -N '' -f ~/.ssh/id_ed25519, add ~/.ssh/id_ed25519.pub to the "
                 "server's authorized_keys, then ssh -i ~/.ssh/id_ed25519 ...]" },
    },

    /* -- a shell that does not last -- */
    {
        .name = "shell-state-only",
        .cmd = "\\`[[:space:]]*(((cd|pushd|popd|export|unset|source|\\.|alias|unalias|ulimit|umask|set"
               "|shopt|declare|nvm[[:space:]]+use|conda[[:space:]]+activate|deactivate|workon"
               "|pyenv[[:space:]]+shell|rbenv[[:space:]]+shell)([[:space:]]+[^;&|[:space:]]+)*"
               "|[A-Za-z_][A-Za-z0-9_]*=[^[:space:];&|]*)[[:space:]]*(;|&&)?[[:space:]]*)+\\'",
        .exit = HX_ZERO,
        .say = { "[That only changed this call's shell, and that shell is gone now: every run starts a "
                 "new bash in /work, so the next call is not in that folder and has none of those "
                 "settings. Put it in front of the command it is for, in one run: cd app && npm test, "
                 ". venv/bin/activate && python app.py, export VAR=1 && CMD.]" },
    },

    /* -- servers -- */
    {
        .name = "server-foreground", .on = HK_TIMEOUT, .group = "server",
        .out = "[Ll]isten|[Rr]unning (on|at)|[Ss]erving|[Ss]erver (started|running|is running|ready)"
               "|[Ss]tarted (server|on)|Local:|[Aa]vailable on|ready in|Ready on|ready on",
        .probe = PROBE_SERVER_PORT,
        .say = {
            [0] = "[That was a server: it listened on port {p1}, and a server never ends by itself, so "
                  "it ran until the timeout and was killed with it. Start it in the background: "
                  "{cmd} > server.log 2>&1 & then use it in later runs (curl -s localhost:{p1}/), and "
                  "read server.log when something fails.]",
            [1] = "[That looks like a server: a server never ends by itself, so it ran until the "
                  "timeout and was killed with it. Start it in the background: {cmd} > server.log "
                  "2>&1 & then use it in later runs; ss -ltnp shows its port.]",
        },
    },
    {
        .name = "server-foreground-cmd", .on = HK_TIMEOUT, .group = "server",
        .cmd = AT_CMD "((npx|python3?[[:space:]]+-m)[[:space:]]+)?(flask|uvicorn|gunicorn|hypercorn"
               "|waitress-serve|rails|puma|nginx|httpd|redis-server|mongod|mysqld|mariadbd|postgres"
               "|live-server|http-server|serve|vite|next|http\\.server)\\>"
               "|runserver|npm[[:space:]]+(start|run[[:space:]]+(dev|serve|start))|php[[:space:]]+-S"
               "|\\<node[[:space:]]+[^[:space:];&|]*(server|app|index|main)[^[:space:];&|]*\\.[cm]?js",
        .probe = PROBE_SERVER_PORT,
        .say = {
            [0] = "[That was a server (port {p1}), and a server never ends by itself, so it ran until "
                  "the timeout and was killed with it. Start it in the background: {cmd} > server.log "
                  "2>&1 & then use it in later runs (curl -s localhost:{p1}/), and read server.log "
                  "when something fails.]",
            [1] = "[That looks like a server: a server never ends by itself, so it ran until the "
                  "timeout and was killed with it. Start it in the background: {cmd} > server.log "
                  "2>&1 & then use it in later runs; ss -ltnp shows its port.]",
        },
    },
};

const size_t hints_habits_n = sizeof hints_habits / sizeof hints_habits[0];
