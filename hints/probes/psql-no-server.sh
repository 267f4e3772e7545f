# shellcheck shell=bash
# psql-no-server.sh -- whether PostgreSQL's server is installed, to start
# (hint psql-no-server).  Exit 0: it is; 1: it is not.
[ -x /etc/init.d/postgresql ]
