#!/usr/bin/env bash
# The simulator's scale table (docs/simulator.md, "Scale"): wall time and
# peak resident memory of `grove sim` runs, one TSV line per run.
#   scripts/sim-scale.sh GROVE [ring|all|tree]...   (default: ring all tree)
#     ring: ring allreduce, 1 MiB, at 1000, 2000 and 10000 ranks
#     all:  every collective's every schedule algorithm at 10000 ranks, 1 MiB
#     tree: binomial bcast, 1 MiB, at 1000000 ranks
# Columns: command, exit status, wall s, peak MB (from /usr/bin/time -v),
# then the run's own events and events_per_s, or the refusal's first words.
# A run refused by the estimate (sim_max_memory) exits 1 and says why.
# Run it on a quiet machine: every line is a timing measurement.
# For a quick check that it runs, smaller sizes: RING_RANKS="10 20"
# ALL_RANKS=16 TREE_RANKS=100 SIZE=4KiB scripts/sim-scale.sh GROVE
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 GROVE [ring|all|tree]..." >&2
  exit 2
fi
grove=$1
shift
parts=("$@")
ring_ranks=${RING_RANKS:-1000 2000 10000}
all_ranks=${ALL_RANKS:-10000}
tree_ranks=${TREE_RANKS:-1000000}
size=${SIZE:-1MiB}
[ ${#parts[@]} -eq 0 ] && parts=(ring all tree)
if [ ! -x /usr/bin/time ]; then
  echo "$0: /usr/bin/time is missing (Debian package 'time')" >&2
  exit 2
fi
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# One run: grove sim ARGS..., measured.
measure() {
  local status=0
  /usr/bin/time -v "$grove" sim "$@" <"/dev/null" >"$out" 2>"$err" || status=$?
  local wall peak events rate note
  # "Elapsed (wall clock) time (h:mm:ss or m:ss): M:SS.ss" -> seconds
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {
      n = split($2, p, ":"); s = 0; for (i = 1; i <= n; ++i) s = s * 60 + p[i]; printf "%.1f", s }' "$err")
  peak=$(awk '/Maximum resident set size/ { printf "%.0f", $NF / 1024 }' "$err")
  events=$(awk -F'\t' '$1 == "events" { print $2 }' "$out")
  rate=$(awk -F'\t' '$1 == "events_per_s" { print $2 }' "$out")
  note=""
  if [ "$status" -ne 0 ]; then
    note=$(grep -m1 '^grove' "$err" | cut -c1-160 || true)
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "grove sim $*" "$status" "$wall" "$peak" \
    "${events:--}" "${rate:--}" "$note"
}

printf 'command\tstatus\twall_s\tpeak_MB\tevents\tevents_per_s\tnote\n'
for part in "${parts[@]}"; do
  case "$part" in
    ring)
      for n in $ring_ranks; do
        measure allreduce --algo ring -n "$n" --size "$size"
      done
      ;;
    all)
      # Every algorithm with a schedule (`grove select --algorithms` lists
      # them; shm and hier run on a communicator's shared memory, not here).
      "$grove" select --algorithms | awk '
          /^[a-z_]+$/ { coll = $1; next }
          $1 != "shm" && $1 != "hier" { print coll, $1 }' |
        while read -r coll algo; do
          measure "$coll" --algo "$algo" -n "$all_ranks" --size "$size"
        done
      ;;
    tree)
      measure bcast --algo binomial -n "$tree_ranks" --size "$size"
      ;;
    *)
      echo "$0: unknown part '$part' (ring, all, tree)" >&2
      exit 2
      ;;
  esac
done
