#!/bin/sh
# Runs a job and checks that its survivors name a departed rank within 1 s
# of the launcher's notice (docs/reliability.md). `grove run` prints
# "grove run: rank R exited with code C" (or "killed by signal S") just
# before it sends the failure notice to the other ranks; every line of the
# job's output is stamped when it arrives here, and each line matching
# NAMED must arrive within 1000 ms after the first line matching NOTICE.
# The bound is a bound, not a speed claim.
#
#   named_in_time.sh CODE NOTICE NAMED COUNT -- CMD ARGS...
#
# Passes when CMD exits with CODE and exactly COUNT lines match NAMED, all
# in time.
set -u
code=$1
notice=$2
named=$3
count=$4
shift 4
[ "${1:-}" = "--" ] && shift
out=$(mktemp "${TMPDIR:-/tmp}/grove-named.XXXXXX")
trap 'rm -f "$out" "$out.status"' EXIT

{
  "$@" 2>&1
  echo $? >"$out.status"
} | while IFS= read -r line; do
  printf '%s %s\n' "$(date +%s%3N)" "$line"
done >"$out"
status=$(cat "$out.status")

report=$(awk -v notice="$notice" -v named="$named" '
  { t = $1; sub(/^[0-9]+ /, "") }
  t0 == "" && $0 ~ notice { t0 = t; print "notice: " $0; next }
  $0 ~ named {
    if (t0 == "") { print "early: " $0 " (before any notice)"; bad++; next }
    d = t - t0
    print "named after " d " ms: " $0
    if (d >= 1000) bad++; else good++
  }
  END { printf "summary: %d %d %s\n", good, bad, (t0 == "" ? "no-notice" : "notice") }
' "$out")
echo "$report"
summary=$(echo "$report" | sed -n 's/^summary: //p')
good=${summary%% *}
rest=${summary#* }
bad=${rest%% *}
seen=${rest#* }

fail=0
if [ "$status" -ne "$code" ]; then
  echo "named_in_time: exit status $status, expected $code"
  fail=1
fi
if [ "$seen" != "notice" ]; then
  echo "named_in_time: no line matched '$notice'"
  fail=1
fi
if [ "$bad" -ne 0 ] || [ "$good" -ne "$count" ]; then
  echo "named_in_time: $good lines in time and $bad late, expected $count in time"
  fail=1
fi
if [ $fail -ne 0 ]; then
  echo "---- output of: $* ----"
  cat "$out"
else
  echo "named_in_time ok: $good within 1000 ms of the notice"
fi
exit $fail
