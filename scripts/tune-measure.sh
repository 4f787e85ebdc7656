#!/bin/sh
# The figures of docs/tuning.md marked "(lead measures)", on a quiet machine:
# every command is run at N = 2 on this host through `grove run`, and its
# raw output lands in OUTDIR (created). About 5 minutes with the defaults
# (cells x --cell-time 0.1 s; the probe stops on its confidence interval).
#
#   scripts/tune-measure.sh OUTDIR [GROVE]     GROVE defaults to build/tools/grove
#   TUNE_SMOKE=1 scripts/tune-measure.sh OUTDIR   tiny cells: checks the script runs (no figures)
#
# OUTDIR afterwards:
#   plogp.txt, probe.txt     the probe's table (grove probe --out) and what it printed (fits)
#   tuned.json, tune.txt     grove tune's file from the probe, and its summary
#   verify.txt, verified.json  grove tune --verify 3 --exhaustive at N=2: its own run time
#                            against grove bench --algo all over the same cells, and the choices
#   bench.tsv                grove bench --algo all (auto with tuned.json) for bcast and scatter
#   plogp-before-bench.txt   the primary table the report uses: the first probe (before the
#                            bench) whose ping-pongs before and after agree
#   calibration-ref-before.tsv, calibration-ref-after.tsv  ping-pongs (8 B, 1 MiB) just before
#                            and after that probe: the state its table describes
#   plogp-other-state.txt, calibration-ref-other-{before,after}.tsv  the same for a probe in the
#                            machine's other state, when one of the TUNE_TRIES (4) probes found it
#   modes.txt, modes-all-tries.txt  which probes agreed, and in which state (plogp-try*.txt,
#                            probe-try*.txt, calibration-try*-*.tsv: every probe taken)
#   calibration.tsv          the same ping-pongs just before and after every bench cell (a cell
#                            whose two differ is run again, up to TUNE_CELL_RETRIES, 2)
#   report.md                grove tune --report against plogp-before-bench.txt: predicted vs
#                            measured with each cell in its own state (and the plain share),
#                            within +-20%, regret, scatter against Open MPI's rule
#   explain-*.txt            grove explain --measure at a few cells: predicted beside measured
#   sim.tsv                  the closed forms against the pLogP simulator with the probe's
#                            table at N = 4, 8, 16 (where no cluster is at hand)
#   versions.txt             grove's commit and the machine
set -eu
out=${1:?usage: scripts/tune-measure.sh OUTDIR [GROVE]}
grove=${2:-build/tools/grove}
[ -x "$grove" ] || { echo "tune-measure.sh: $grove is not an executable (build it first)" >&2; exit 2; }
mkdir -p "$out"
# The default wait policy (hybrid): two ranks on two cores are not
# oversubscribed, and a sleeping receiver would add its wake-up to every
# call the model is compared with.
run="$grove run -n 2"

if [ "${TUNE_SMOKE:-0}" = 1 ]; then
  probe_opts="--max-size 64KiB --max-its 3 --release-copies 2"
  reprobe_opts="--max-size 64KiB --max-its 3"
  cell="--cell-time 0.005 --warmup 1 --min-iters 1 --max-iters 3"
  sizes="1,4KiB,64KiB"
else
  probe_opts=""
  # The report's tables: up to 60 round trips a size (the default stops at
  # 18): this machine's 1 MiB round trips have outliers of twice the median,
  # and at 18 the median of one probe came out 15% above the ping-pongs
  # beside it (docs/tuning.md).
  reprobe_opts="--max-its 60"
  cell="--cell-time 0.1"
  sizes="1:4MiB:4"
fi

{
  git -C "$(dirname "$0")/.." rev-parse HEAD 2>/dev/null || echo "commit unknown"
  uname -a
  nproc
  date -u
} > "$out/versions.txt"

step() { echo "== $* ($(date -u +%H:%M:%S))"; }

step "probe"
# shellcheck disable=SC2086
$run "$grove" probe --out "$out/plogp.txt" $probe_opts > "$out/probe.txt" 2>&1

step "tune (model only)"
# shellcheck disable=SC2086
"$grove" tune --plogp "$out/plogp.txt" --out "$out/tuned.json" --sizes "$sizes" > "$out/tune.txt"

step "tune --verify 3 --exhaustive at N=2"
# shellcheck disable=SC2086
$run "$grove" tune --plogp "$out/plogp.txt" --out "$out/verified.json" --ranks 2 \
  --sizes "$sizes" --verify 3 --exhaustive $cell > "$out/verify.txt" 2>&1

# This machine runs everything between its two cores at one of two speeds
# and moves between them within tens of seconds (a 1 MiB message: about 30
# us or about 80 us one way, docs/tuning.md). So the model is compared with
# each cell in the state that cell ran in: the bench times a ping-pong of
# ranks 0 and 1 (8 B and 1 MiB) just before and after every cell
# (`--calibrate`), runs a cell again when the two differ (the state changed
# during it; `--calibrate-retries`, TUNE_CELL_RETRIES, 2), and the same
# ping-pong around each probe is that table's reference (`grove tune
# --report --calibration`). A probe must not straddle a change: its two
# ping-pongs must agree within 20% at 1 MiB. The states do not change every
# path alike (the kernel's single copy much less than UCX's copies), so one
# table per state is wanted: the first probe whose ping-pongs agree is the
# primary table, and probing goes on, up to TUNE_TRIES probes in all (4),
# until one agrees in the other state too (1 MiB at least 1.5x apart from
# the primary's); the report prices each cell with the table of its state.
# Without an agreeing probe the last one is kept (modes.txt says so).
calibrate_into() {
  $run "$grove" bench --coll bcast --algo auto --sizes 1 --cell-time 0.005 --warmup 1 \
    --min-iters 1 --max-iters 3 --calibrate "$1" > /dev/null
}
large_at() { awk -F'\t' 'NR > 1 && $3 == 1048576 {v = $4} END {print v}' "$1"; }
# ratio A B: the larger over the smaller
ratio() { echo "$1 $2" | awk '{printf "%.2f", ($1 > $2 ? $1 / $2 : $2 / $1)}'; }
keep_try() {  # keep_try TRY NAME REFNAME: the try's table and ping-pongs under the kept names
  cp "$out/plogp-try$1.txt" "$out/$2.txt"
  cp "$out/probe-try$1.txt" "$out/probe-$2.txt"
  cp "$out/calibration-try$1-before.tsv" "$out/$3-before.tsv"
  cp "$out/calibration-try$1-after.tsv" "$out/$3-after.tsv"
}
tries=${TUNE_TRIES:-4}
try=1
primary_large=""
other=0
: > "$out/modes-all-tries.txt"
rm -f "$out/plogp-other-state.txt" "$out"/calibration-ref-other-*.tsv
while [ "$try" -le "$tries" ]; do
  step "calibrate, probe, calibrate (try $try of $tries)"
  rm -f "$out/calibration-try$try-before.tsv" "$out/calibration-try$try-after.tsv"
  calibrate_into "$out/calibration-try$try-before.tsv"
  # shellcheck disable=SC2086
  $run "$grove" probe --out "$out/plogp-try$try.txt" --release-copies 0 $reprobe_opts \
    > "$out/probe-try$try.txt" 2>&1
  calibrate_into "$out/calibration-try$try-after.tsv"
  before=$(large_at "$out/calibration-try$try-before.tsv")
  after=$(large_at "$out/calibration-try$try-after.tsv")
  r=$(ratio "$before" "$after")
  agree=$(echo "$r" | awk '{print ($1 <= 1.2 ? "yes" : "NO")}')
  echo "try $try: 1 MiB one way, us: before the probe $before, after it $after;" \
    "agree within 20%: $agree (ratio $r)" >> "$out/modes-all-tries.txt"
  if [ "$agree" = yes ]; then
    mean=$(echo "$before $after" | awk '{printf "%.4f", sqrt($1 * $2)}')
    if [ -z "$primary_large" ]; then
      keep_try "$try" plogp-before-bench calibration-ref
      primary_large=$mean
      echo "try $try: the primary table (1 MiB $mean us)" >> "$out/modes-all-tries.txt"
    elif [ "$(ratio "$mean" "$primary_large" | awk '{print ($1 >= 1.5)}')" = 1 ]; then
      keep_try "$try" plogp-other-state calibration-ref-other
      other=1
      echo "try $try: the other state's table (1 MiB $mean us)" >> "$out/modes-all-tries.txt"
      break
    fi
  fi
  try=$((try + 1))
done
if [ -z "$primary_large" ]; then
  last=$((try - 1))
  keep_try "$last" plogp-before-bench calibration-ref
  echo "no probe's ping-pongs agreed: the last (try $last) kept" >> "$out/modes-all-tries.txt"
fi
{
  echo "1 MiB one way, us: before the primary probe $(large_at "$out/calibration-ref-before.tsv")," \
    "after it $(large_at "$out/calibration-ref-after.tsv")"
  echo "before and after the probe agree within 20%: $([ -n "$primary_large" ] && echo yes || echo NO)"
  if [ "$other" = 1 ]; then
    echo "a table in the other state: yes (1 MiB $(large_at "$out/calibration-ref-other-before.tsv")" \
      "and $(large_at "$out/calibration-ref-other-after.tsv") us): plogp-other-state.txt"
  else
    echo "a table in the other state: no (no probe of $tries agreed in the other state)"
  fi
} > "$out/modes.txt"

step "bench --algo all, bcast and scatter, auto with the tuned file, each cell calibrated"
rm -f "$out/calibration.tsv"
# shellcheck disable=SC2086
$run --param tuning_file="$out/tuned.json" "$grove" bench --algo all --coll bcast,scatter \
  --sizes "$sizes" $cell --tsv "$out/bench.tsv" --calibrate "$out/calibration.tsv" \
  --calibrate-retries "${TUNE_CELL_RETRIES:-2}" > "$out/bench.txt" 2>&1

step "report"
# Fidelity against the probe taken just before the bench, each cell in its
# own state (and the plain share beside it); regret against the tuned file.
# With a table of the other state, each cell is priced with its state's.
set --
if [ "$other" = 1 ]; then
  set -- --state "$out/plogp-other-state.txt,$out/calibration-ref-other-before.tsv,$out/calibration-ref-other-after.tsv"
fi
"$grove" tune --plogp "$out/plogp-before-bench.txt" --report "$out/bench.tsv" \
  --tuning "$out/tuned.json" --calibration "$out/calibration.tsv" \
  --calibration-ref "$out/calibration-ref-before.tsv" "$out/calibration-ref-after.tsv" \
  "$@" > "$out/report.md"

step "explain --measure"
for cell_of in "bcast 1" "bcast 64KiB" "bcast 1MiB" "scatter 1KiB" "scatter 256KiB"; do
  # shellcheck disable=SC2086
  set -- $cell_of
  # shellcheck disable=SC2086
  $run "$grove" explain "$1" -n 2 --size "$2" --tuning "$out/tuned.json" --measure $cell \
    > "$out/explain-$1-$2.txt" 2>&1
done

step "simulator with the probe's table, N = 4, 8, 16"
# sim.tsv: the closed form's prediction (grove explain) against the pLogP
# simulator's completion time (grove sim) for the same spec; pipeline at
# the segment the model chose.
# The simulator runs the messages only: both sides read the table without
# its host terms (call_us, shm_us, copy rows), which price the call around them.
grep -Ev '^(call_us|shm_us|copy|copy_in|copy_out|copy_cma) ' "$out/plogp.txt" > "$out/plogp-messages.txt"
printf 'collective\tspec\tranks\tbytes\tpredicted_us\tsimulated_us\n' > "$out/sim.tsv"
for n in 4 8 16; do
  for case in "bcast flat chain pipeline binary binomial knomial:4" "scatter flat binomial chain"; do
    # shellcheck disable=SC2086
    set -- $case
    coll=$1
    shift
    for size in 1 1024 65536 1048576; do
      "$grove" explain "$coll" -n "$n" --size "$size" --plogp "$out/plogp-messages.txt" \
        > "$out/explain.tmp"
      for algo in "$@"; do
        line=$(grep -E "^  ${algo}[ :]" "$out/explain.tmp" | head -1)
        spec=$(echo "$line" | awk '{print $1}')
        predicted=$(echo "$line" | awk '{print $2}')
        simulated=$("$grove" sim "$coll" --algo "$spec" -n "$n" --size "$size" \
          --plogp "$out/plogp-messages.txt" | awk '{for (i = 1; i < NF; ++i) if ($i == "completion_us") print $(i + 1)}')
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$coll" "$spec" "$n" "$size" "$predicted" "$simulated" \
          >> "$out/sim.tsv"
      done
    done
  done
done
rm -f "$out/explain.tmp"
step "done: $out"
