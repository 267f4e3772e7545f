# shellcheck shell=bash
# mysql-no-server.sh -- whether a MariaDB or MySQL server is installed, to
# start (hint mysql-no-server).  Exit 0: it is; 1: it is not.
[ -x /etc/init.d/mariadb ] || [ -x /etc/init.d/mysql ]
