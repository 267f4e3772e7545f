# shellcheck shell=bash
# apt-no-lists.sh -- whether apt has any package list yet (hint
# apt-no-lists: a new sandbox starts without them).  Exit 0: it has; 1: not.
compgen -G '/var/lib/apt/lists/*_Packages' >/dev/null
