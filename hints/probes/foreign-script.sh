# shellcheck shell=bash disable=SC2154
# foreign-script.sh -- the interpreter for a file of program code that
# bash ran as a shell script (hint foreign-code; follows cd-guard.sh, which
# leaves the command in c): by the file's extension.
#
# Prints the file, then the line that runs it, and exits 0; exits 1 when
# the command names no such file.
f=$(printf '%s\n' "$c" | grep -oE '[^][[:space:];&|<>()"'\''=]+\.(py|js|mjs|cjs|ts|rb|pl|php|lua|R|r|jl|java|c|cpp|go|rs|kt)\>' | head -n 1)
[ -n "$f" ] && [ -f "$f" ] || exit 1
case $f in
    *.py) r="python3 $f" ;;
    *.js | *.mjs | *.cjs) r="node $f" ;;
    *.ts) r="npx tsx $f" ;;
    *.rb) r="ruby $f" ;;
    *.pl) r="perl $f" ;;
    *.php) r="php $f" ;;
    *.lua) r="lua5.4 $f" ;;
    *.R | *.r) r="Rscript $f" ;;
    *.jl) r="julia $f" ;;
    *.java) r="java $f" ;;
    *.c) r="gcc -O2 -o prog $f && ./prog" ;;
    *.cpp) r="g++ -O2 -o prog $f && ./prog" ;;
    *.go) r="go run $f" ;;
    *.rs) r="rustc -O -o prog $f && ./prog" ;;
    *.kt) r="kotlinc $f -include-runtime -d prog.jar && java -jar prog.jar" ;;
esac
echo "$f"
echo "$r"
