# shellcheck shell=bash disable=SC2154
# data-columns.sh -- the real columns of the table a pandas program read
# (hint pandas-column; follows cd-guard.sh, which leaves the command in c).
# The table is the first .csv/.tsv/.txt/.xlsx file a read_csv/read_table/
# read_excel/read_json or open call of the program names: in the command itself (python3 -c) or in the
# .py files it runs.  Only its first line is read (a CSV header), or for
# other kinds what pandas says, under a short timeout.
#
# Prints "FILE: 'a', 'b', ..." (at most 40 names) and exits 0; exits 1 when
# no table can be read, or it has the column k names.
src=$c
while IFS= read -r p; do
    [ -f "$p" ] && src+=$'\n'$(head -c 65536 -- "$p")
done < <(printf '%s\n' "$c" | grep -oE '[^][[:space:];&|<>()"'\''=,]+\.py\>')
t=$(printf '%s\n' "$src" | grep -oE "(read_(csv|table|excel|json|parquet)|open)\\([[:space:]]*[rf]?['\"][^'\"]+" |
    sed -E "s/^(read_[a-z]+|open)\\([[:space:]]*[rf]?['\"]//" |
    grep -iE '\.(csv|tsv|txt|xlsx|xls)$' | head -n 1)
[ -n "$t" ] && [ -f "$t" ] || exit 1
r=$(timeout 5 python3 - "$t" 2>/dev/null <<'PY'
import csv, sys
f = sys.argv[1]
if f.lower().endswith(('.csv', '.tsv', '.txt')):
    with open(f, newline='', encoding='utf-8', errors='replace') as fh:
        head = fh.read(8192)
    try:
        d = csv.Sniffer().sniff(head.splitlines()[0] if head else '', delimiters=',;\t|')
        sep = d.delimiter
    except Exception:
        sep = '\t' if f.lower().endswith('.tsv') else ','
    cols = next(csv.reader([head.splitlines()[0] if head else ''], delimiter=sep), [])
else:
    import pandas as pd
    cols = [str(x) for x in pd.read_excel(f, nrows=0).columns] if f.lower().endswith(('.xlsx', '.xls')) else []
print(', '.join(repr(x) for x in cols[:40]))
PY
)
[ -n "$r" ] || exit 1
# k, when set before this text, is the key the program missed ('Revenue'):
# a table that has that column is not the one the error is about.
case ", $r, " in *", ${k:-}, "*) [ -n "${k:-}" ] && exit 1 ;; esac
echo "$t: $r"
