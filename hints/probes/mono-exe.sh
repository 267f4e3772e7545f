# shellcheck shell=bash
# mono-exe.sh -- whether Mono is installed, to run a .NET program with
# (hint mono-exe).  Exit 0: it is; 1: it is not.
command -v mono >/dev/null
