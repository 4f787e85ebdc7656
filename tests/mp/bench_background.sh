#!/bin/sh
# `grove bench --background nice-busy,daemon`: each library runs quiet and
# beside the load, the summary gives the loaded/quiet slowdown, and no load
# process outlives the bench on any way out: a normal end, a failed job
# (an error), SIGTERM and SIGKILL of the bench. grove's own job is a stand-in
# (fake_grove_bench.sh), so nothing here is timed.
#
#   bench_background.sh GROVE FAKE_GROVE_BENCH
set -u
grove=$1
fake=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/grove-bench-bg.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
args="--background nice-busy,daemon -n 2 --rounds 1 --coll bcast --sizes 1,64 --cell-time 0.01"

# The load's pids, from the bench's stderr.
pids_in() { sed -n 's/.*grove bench: background load pids//p' "$1" | tr '\n' ' '; }
# Bounded wait (5 s) until none of the pids exists.
all_gone() {
  tries=0
  while [ $tries -lt 50 ]; do
    alive=""
    for p in $1; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
    [ -z "$alive" ] && return 0
    tries=$((tries + 1))
    sleep 0.1
  done
  echo "still running:$alive"
  return 1
}

# 1. A normal run: every library quiet and loaded; the stand-in takes 1 us
# both ways, so the slowdown is exactly 1.
# shellcheck disable=SC2086
"$grove" bench $args --grove-exe "$fake" >"$dir/out" 2>"$dir/err" || { cat "$dir/err"; fail "normal run exited with $?"; }
pids=$(pids_in "$dir/err")
[ -n "$pids" ] || fail "no background pids reported"
all_gone "$pids" || fail "load left behind after a normal end"
grep -q "background load: each contender also runs as LIBRARY+bg" "$dir/out" || fail "no settings line"
n=$(grep -Ec "^grove +bcast +auto +2 +(1|64) +isolated +1.00 +1.00 +1.000 \[1.000, 1.000\] +1.000 \[1.000, 1.000\]$" "$dir/out")
[ "$n" -eq 2 ] || { cat "$dir/out"; fail "expected 2 slowdown rows of 1.000, got $n"; }

# 2. grove's job fails: the bench ends with an error, and the load with it.
printf '#!/bin/sh\nexit 3\n' >"$dir/failing"
chmod +x "$dir/failing"
# shellcheck disable=SC2086
"$grove" bench $args --grove-exe "$dir/failing" >"$dir/out2" 2>"$dir/err2" && fail "a failing job did not fail the bench"
grep -q "grove bench --peers: grove" "$dir/err2" || { cat "$dir/err2"; fail "no error naming the job"; }
all_gone "$(pids_in "$dir/err2")" || fail "load left behind after an error"

# 3, 4. The bench itself is ended by a signal while its loaded job runs;
# the load dies with it. The stand-in answers at once the first time (the
# quiet job) and sleeps 3 s the second (the loaded one), then ends by itself.
printf '#!/bin/sh\nif [ -e "%s/second" ]; then sleep 3; else touch "%s/second"; fi\nexec "%s" "$@"\n' \
  "$dir" "$dir" "$fake" >"$dir/sleeping"
chmod +x "$dir/sleeping"
for sig in TERM KILL; do
  rm -f "$dir/second"
  # shellcheck disable=SC2086
  "$grove" bench $args --grove-exe "$dir/sleeping" >/dev/null 2>"$dir/err-$sig" &
  bench=$!
  tries=0
  until grep -q "background load pids" "$dir/err-$sig"; do
    tries=$((tries + 1))
    [ $tries -gt 100 ] && { kill -KILL $bench; fail "SIG$sig: the load never started"; }
    sleep 0.1
  done
  pids=$(pids_in "$dir/err-$sig")
  kill -$sig $bench
  wait $bench 2>/dev/null
  all_gone "$pids" || fail "load left behind after SIG$sig of the bench"
done
echo "background ok"
