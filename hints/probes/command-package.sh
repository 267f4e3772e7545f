# shellcheck shell=bash disable=SC2154
# command-package.sh -- which Debian package (or other install line) gives
# a command that is not installed (hints command-not-found and
# command-not-found-env).  c, the word bash took for a command, and cmd,
# the whole command line, are set before this text by COMMAND_PROBE
# (SC2154).
#
# A word that is no program's name is never sent to apt: text that bash
# read as commands but is not (an assignment with spaces, a line of
# another language, a word with a CR), and the tools of other systems,
# get what to do instead.
#
# Exit 0: prints the install line; 2: prints what to do instead (a file
# of that name is here, the word is not a command, or the command does not
# exist on Debian); 1: no package is known.
[ -f "$c" ] && {
    echo "$c is a file here, not an installed command: run it as ./$c"
    exit 2
}
case $c in
    *$'\r'* | *'\r'*)
        printf '%s\n' "That word ends in a CR: the script has Windows line endings (CR LF), not a missing program, and nothing needs installing. Remove them with sed -i 's/\\r\$//' FILE, then run it again"
        exit 2
        ;;
    *[!A-Za-z0-9._+-]* | -* | '')
        echo "$c is not a program's name (no command has such characters): bash read text that is not a command. Check the line's quoting, and nothing needs installing"
        exit 2
        ;;
esac
# NAME = VALUE: bash runs NAME with the arguments = and VALUE.
n=${c//./\\.}
n=${n//+/\\+}
re="(^|[;&|[:space:]])${n}[[:space:]]+\\+?=([[:space:]]|\$)"
[[ $cmd =~ $re ]] && {
    echo "$c is not a command: in bash an assignment has no spaces around the =, so write $c=VALUE (nothing needs installing)"
    exit 2
}
case $c in
    import | from | def | class | print | return | elif | lambda | const | let | var | function | \
        console.log | require | puts | fn | func | package | using | public | include | \
        printf\( | echo\( | end | begin | local | my | foreach)
        echo "$c is a word of program code, not a shell command: bash read code of another language (Python, JavaScript ...) line by line. Run the file with its own interpreter (python3 FILE, node FILE ...) or give it a #! line; nothing needs installing"
        exit 2
        ;;
    brew | yum | dnf | apk | pacman | zypper | port | choco | winget | scoop | emerge)
        echo "$c is another system's package manager: this sandbox is Debian 13, whose packages come with apt-get update && apt-get install -y PACKAGE"
        exit 2
        ;;
    open | xdg-open | start | explorer | explorer.exe | notepad | notepad.exe | pbcopy | pbpaste)
        echo "$c opens things on a screen, and this sandbox has none (nothing to install for that): read files with cat, and show a web page's HTML with curl -s URL"
        exit 2
        ;;
    ipconfig)
        echo 'ipconfig is Windows: here ip addr shows the addresses'
        exit 2
        ;;
    cls)
        echo 'cls is Windows: here there is no screen to clear, and nothing needs clearing'
        exit 2
        ;;
    py)
        echo 'py is the Windows launcher: here run python3'
        exit 2
        ;;
esac
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
    yarn | pnpm | nodemon | pm2 | eslint | prettier | http-server | serve | vite | tsx | \
        webpack | esbuild | live-server)
        echo "npm install -g $c"
        exit 0
        ;;
    ng | vue | nest)
        # npm's CLIs whose package has another name
        p=$(case $c in ng) echo @angular/cli ;; vue) echo @vue/cli ;; nest) echo @nestjs/cli ;; esac)
        echo "npm install -g $p"
        exit 0
        ;;
    flask | uvicorn | gunicorn | pytest | black | poetry | pipenv | streamlit | jupyter | \
        django-admin | httpie | mypy | ruff | flake8)
        # Python's CLIs: pip has them, under these names
        p=$(case $c in django-admin) echo Django ;; *) echo "$c" ;; esac)
        echo "pip install $p"
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
