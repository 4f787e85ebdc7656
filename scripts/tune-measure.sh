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
#   plogp-before-bench.txt, plogp-after-bench.txt  probes just before and after bench.tsv;
#   modes.txt                whether they agree (the machine's copy speed changes with time);
#                            if not, the three are taken again (TUNE_TRIES, 3): modes-all-tries.txt
#   report.md                grove tune --report against plogp-before-bench.txt: predicted vs
#                            measured, within +-20%, regret,
#                            scatter against Open MPI's rule
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
  mode_bytes=65536
  cell="--cell-time 0.005 --warmup 1 --min-iters 1 --max-iters 3"
  sizes="1,4KiB,64KiB"
else
  probe_opts=""
  reprobe_opts=""
  mode_bytes=1048576
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

# This machine's copies between two cores run in one of two speeds, and it
# moves between them within minutes (a 1 MiB message: about 30 us or about
# 80 us, docs/tuning.md): the model is compared with a measurement only when a
# probe taken just before and one just after the measurement agree.
# A measurement whose two probes disagree compares the model with a machine
# that changed state halfway; it is taken again, up to TUNE_TRIES times (3),
# and the last one kept (modes.txt says whether it agreed).
g_at() { awk -v b="$mode_bytes" '$1 == b && NF >= 4 {print $4}' "$1"; }
tries=${TUNE_TRIES:-3}
try=1
: > "$out/modes-all-tries.txt"
while :; do
  step "probe again, just before the measurement (try $try of $tries)"
  # shellcheck disable=SC2086
  $run "$grove" probe --out "$out/plogp-before-bench.txt" --release-copies 0 $reprobe_opts \
    > "$out/probe-before-bench.txt" 2>&1

  step "bench --algo all, bcast and scatter, auto with the tuned file"
  # shellcheck disable=SC2086
  $run --param tuning_file="$out/tuned.json" "$grove" bench --algo all --coll bcast,scatter \
    --sizes "$sizes" $cell --tsv "$out/bench.tsv" > "$out/bench.txt" 2>&1

  step "probe again, just after the measurement"
  # shellcheck disable=SC2086
  $run "$grove" probe --out "$out/plogp-after-bench.txt" --release-copies 0 $reprobe_opts \
    > "$out/probe-after-bench.txt" 2>&1
  # g(m) at mode_bytes in each of the three tables.
  {
    echo "g($mode_bytes B) in us: probe for tune $(g_at "$out/plogp.txt"), just before the bench" \
      "$(g_at "$out/plogp-before-bench.txt"), just after $(g_at "$out/plogp-after-bench.txt")" \
      "(try $try of $tries)"
    echo "$(g_at "$out/plogp-before-bench.txt") $(g_at "$out/plogp-after-bench.txt")" |
      awk '{r = ($1 > $2 ? $1 / $2 : $2 / $1);
            printf "before and after the bench agree within 20%%: %s (ratio %.2f)\n",
                   (r <= 1.2 ? "yes" : "NO"), r}'
  } > "$out/modes.txt"
  cat "$out/modes.txt" >> "$out/modes-all-tries.txt"
  if grep -q ": yes" "$out/modes.txt" || [ "$try" -ge "$tries" ]; then break; fi
  try=$((try + 1))
done

step "report"
# Fidelity against the probe taken just before the bench; regret against
# the tuned file.
"$grove" tune --plogp "$out/plogp-before-bench.txt" --report "$out/bench.tsv" \
  --tuning "$out/tuned.json" > "$out/report.md"

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
