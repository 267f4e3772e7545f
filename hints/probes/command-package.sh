# shellcheck shell=bash disable=SC2154
# command-package.sh -- which Debian package (or other install line) gives
# a command that is not installed (hints command-not-found and
# command-not-found-env).  c, the command, is set before this text by
# COMMAND_PROBE (SC2154).
#
# Exit 0: prints the install line; 2: prints what to do instead (a file
# of that name is here, or the command does not exist on Debian); 1: no
# package is known.
[ -f "$c" ] && {
    echo "$c is a file here, not an installed command: run it as ./$c"
    exit 2
}
case $c in
    dotnet | csc)
        echo "There is no $c here: C# builds with Mono: mcs -out:NAME.exe FILE.cs, then mono NAME.exe"
        exit 2
        ;;
    python2 | python2.7)
        echo 'Debian 13 has no Python 2: use python3'
        exit 2
        ;;
    tsc)
        echo 'npm install -g typescript'
        exit 0
        ;;
    ts-node)
        echo 'npm install -g ts-node typescript'
        exit 0
        ;;
    yarn | pnpm)
        echo "npm install -g $c"
        exit 0
        ;;
esac
p=$(case $c in
    ssh | scp | sftp | ssh-keygen | ssh-keyscan | ssh-copy-id | ssh-agent) echo openssh-client ;;
    sshd) echo openssh-server ;;
    ifconfig | netstat | route | arp) echo net-tools ;;
    ping) echo iputils-ping ;;
    traceroute) echo traceroute ;;
    dig | nslookup | host | nsupdate) echo bind9-dnsutils ;;
    telnet) echo inetutils-telnet ;;
    nc | netcat) echo netcat-openbsd ;;
    ip | ss) echo iproute2 ;;
    ps | top | free | pgrep | pkill | watch | uptime) echo procps ;;
    killall | pstree | fuser) echo psmisc ;;
    vi | vim) echo vim ;;
    xxd) echo xxd ;;
    hexdump | column) echo bsdextrautils ;;
    7z) echo 7zip ;;
    java | javac | jar | jshell) echo default-jdk-headless ;;
    kotlin | kotlinc) echo kotlin ;;
    go | gofmt) echo golang-go ;;
    rustc) echo rustc ;;
    cargo) echo cargo ;;
    ghc | ghci | runghc) echo ghc ;;
    lua) echo lua5.4 ;;
    mono) echo mono-runtime ;;
    mcs) echo mono-mcs ;;
    node | nodejs) echo nodejs ;;
    npm | npx) echo npm ;;
    pip | pip3) echo python3-pip ;;
    python | python3) echo python3 ;;
    ruby | irb | gem) echo ruby ;;
    php) echo php-cli ;;
    R | Rscript) echo r-base-core ;;
    scala) echo scala ;;
    clang | clang++) echo clang ;;
    gcc | cc) echo gcc ;;
    g++ | c++) echo g++ ;;
    gpg) echo gnupg ;;
    mysql | mariadb) echo mariadb-client ;;
    mysqld | mariadbd | mysql_secure_installation) echo mariadb-server ;;
    psql) echo postgresql-client ;;
    redis-cli) echo redis-tools ;;
    crontab) echo cron ;;
    man) echo man-db ;;
    convert | identify | magick) echo imagemagick ;;
    *) apt-cache show -- "$c" >/dev/null 2>&1 && echo "$c" ;;
esac)
[ -n "$p" ] || exit 1
echo "apt-get update && apt-get install -y $p"
exit 0
