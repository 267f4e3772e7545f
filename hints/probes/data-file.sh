# shellcheck shell=bash disable=SC1083
# data-file.sh -- where a data file a program could not open really is
# (hint data-file-missing).  {o2}..{o5} are the path
# the program asked for, placeholders (cd-guard.sh says why SC1083 is off).
#
# Exit 0: prints where files of that name are (at most 3); 1: there is
# none; 2: the path is there from /work, printed absolute (the program ran
# elsewhere).
f={o2}{o3}{o4}{o5}
[ -n "$f" ] || exit 3
case $f in
    /*) ;;
    *) [ -e "/work/$f" ] && {
        echo "/work/$f"
        exit 2
    } ;;
esac
b=${f##*/}
b=${b##*\\}
w=$(find /work /data /mnt /tmp /root /home -maxdepth 5 -name "$b" -not -path '*/node_modules/*' \
    -not -path '*/.git/*' 2>/dev/null | head -n 3 | paste -sd ' ' | sed 's/ /, /g')
[ -n "$w" ] && {
    echo "$w"
    exit 0
}
exit 1
