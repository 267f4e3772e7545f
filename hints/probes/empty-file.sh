# shellcheck shell=bash disable=SC2154
# empty-file.sh -- whether the file a cat (head, tail) printed nothing of
# is empty (hint no-output-file; follows cd-guard.sh).  f, the file, is set
# before this text (SC2154).
#
# Exit 0: it is an empty file; 1: it is not (or is no file).
[ -f "$f" ] && [ ! -s "$f" ]
