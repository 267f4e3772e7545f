# shellcheck shell=bash
# go-no-module.sh -- the build line for the one .go file of /work, when go
# found no go.mod (hint go-no-module; follows cd-guard.sh).
#
# Prints "go build -o NAME NAME.go" and exits 0; exits 1 when the folder
# has no .go file or more than one.
n=0
for f in *.go; do
    [ -f "$f" ] && { n=$((n + 1)); g=$f; }
done
[ $n = 1 ] || exit 1
echo "go build -o ${g%.go} $g"
