#!/usr/bin/env bash
# grove against Open MPI, MPICH and Gloo on this machine: measures raw TSVs
# into bench/results/ and generates docs/results.md (tables, headline
# ratios, plots) from them.
#
#   bench/run-comparison.sh            measure, then generate the document
#   bench/run-comparison.sh --report   only regenerate the document from the
#                                      TSVs already in bench/results/
#
# Settings (environment): RANKS ("2 4 8"), COLLS (the issue's seven; those
# grove does not have yet are left out and listed), SIZES (1:1MiB:4),
# CADENCES ("isolated barrier-after": grove's loop, a barrier before each
# call, into nN.tsv; OSU's, a barrier after it, into nN-osu.tsv), ROUNDS (5:
# every round is a new job per library, and a 1 MiB cell's median moves by
# up to 1.6x from job to job while it holds within 10% inside one:
# docs/results.md, Method),
# CELL_TIME (0.3 s per cell over all rounds),
# MAX_ITERS (600 calls per cell over all rounds),
# BUILD_DIR (build-release, configured as Release), RESULTS_DIR
# (bench/results), DOC (docs/results.md), PLOTS_DIR (docs/results).
# Then grove once per wait_policy against the MPI libraries on a smaller
# grid: POLICY_COLLS (bcast,barrier,allreduce), POLICY_SIZES
# (1,64,4096,65536,1MiB), POLICY_ROUNDS (2); POLICIES=0 skips it.
# Then every library quiet and beside a background load (nice-busy,daemon)
# at BACKGROUND_RANKS ("2 4") on the policy grid's collectives and sizes
# plus alltoall, into bg-nN.tsv, over BACKGROUND_ROUNDS (4); BACKGROUND=0
# skips it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ranks=${RANKS:-"2 4 8"}
colls=${COLLS:-bcast,scatter,gather,allgather,alltoall,barrier,allreduce}
sizes=${SIZES:-1:1MiB:4}
cadences=${CADENCES:-${CADENCE:-isolated barrier-after}}
rounds=${ROUNDS:-5}
cell_time=${CELL_TIME:-0.3}
# Bounds the samples per cell (over all rounds): the bootstrap CIs cost
# 2000 resamples of every cell, so 10,000-sample cells make the summary slow.
max_iters=${MAX_ITERS:-600}
build=${BUILD_DIR:-$root/build-release}
results=${RESULTS_DIR:-$root/bench/results}
doc=${DOC:-$root/docs/results.md}
plots=${PLOTS_DIR:-$(dirname "$doc")/results}
peers=openmpi,mpich,gloo
policy_colls=${POLICY_COLLS:-bcast,barrier,allreduce}
policy_sizes=${POLICY_SIZES:-1,64,4096,65536,1MiB}
policy_rounds=${POLICY_ROUNDS:-2}
policies=${POLICIES:-1}
background=${BACKGROUND:-1}
background_ranks=${BACKGROUND_RANKS:-"2 4"}
background_rounds=${BACKGROUND_ROUNDS:-4}
background_colls=${BACKGROUND_COLLS:-bcast,allreduce,alltoall}
# The TSV of a cadence: grove's own loop keeps the historical name.
tsv_name() { if [ "$2" = isolated ]; then echo "n$1.tsv"; else echo "n$1-osu.tsv"; fi; }
measure=1
[ "${1:-}" = --report ] && measure=0

grove=$build/tools/grove
if [ $measure = 1 ] || [ ! -x "$grove" ]; then
  "$root/scripts/deps.sh"
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$build" -j2 --target grove \
    $(for p in openmpi mpich gloo; do
        ninja -C "$build" -t targets all 2>/dev/null | grep -q "^grove-peer-$p:" && echo "grove-peer-$p"
      done)
fi
mkdir -p "$results" "$plots"

if [ $measure = 1 ]; then
  # Only the collectives grove can run now: one tiny cell each at N=2.
  have=()
  missing=()
  for c in ${colls//,/ }; do
    if timeout 60 "$grove" run -n 2 "$grove" bench --coll "$c" --algo auto --sizes 4 \
        --cell-time 0 --min-iters 1 --warmup 0 >/dev/null 2>&1; then
      have+=("$c")
    else
      missing+=("$c")
    fi
  done
  [ ${#have[@]} -gt 0 ] || { echo "run-comparison.sh: grove runs none of: $colls" >&2; exit 1; }
  printf '%s\n' "${missing[@]}" > "$results/missing-collectives.txt"
  list=$(IFS=,; echo "${have[*]}")
  for cadence in $cadences; do
    for n in $ranks; do
      t=$(tsv_name "$n" "$cadence")
      echo "run-comparison.sh: N=$n, $cadence, $list" >&2
      "$grove" bench --peers "$peers" -n "$n" --algo auto --coll "$list" --sizes "$sizes" \
        --cadence "$cadence" --rounds "$rounds" --cell-time "$cell_time" --max-iters "$max_iters" \
        --tsv "$results/$t" > "$results/${t%.tsv}.txt"
    done
  done
  if [ "$policies" = 1 ]; then
    for n in $ranks; do
      echo "run-comparison.sh: N=$n, every wait_policy" >&2
      "$grove" bench --peers openmpi,mpich --wait-policies all -n "$n" --algo auto \
        --coll "$policy_colls" --sizes "$policy_sizes" --cadence isolated \
        --rounds "$policy_rounds" --cell-time "$cell_time" --max-iters "$max_iters" \
        --tsv "$results/policies-n$n.tsv" > "$results/policies-n$n.txt"
    done
  fi
  if [ "$background" = 1 ]; then
    for n in $background_ranks; do
      echo "run-comparison.sh: N=$n, quiet and beside nice-busy,daemon" >&2
      "$grove" bench --peers openmpi,mpich --background nice-busy,daemon -n "$n" --algo auto \
        --coll "$background_colls" --sizes "$policy_sizes" --cadence isolated \
        --rounds "$background_rounds" --cell-time "$cell_time" --max-iters "$max_iters" \
        --tsv "$results/bg-n$n.tsv" > "$results/bg-n$n.txt"
    done
  fi
  {
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "cpu: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) cores online)"
    echo "memory: $(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
    echo "os: $(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r)"
    echo "compiler: $(c++ --version | head -1)"
    echo "load average at the end (other work on the machine disturbs the numbers): $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "build: $(grep -s '^CMAKE_BUILD_TYPE' "$build/CMakeCache.txt" | cut -d= -f2)"
    echo "command: RANKS=\"$ranks\" COLLS=$colls SIZES=$sizes CADENCES=\"$cadences\" ROUNDS=$rounds CELL_TIME=$cell_time MAX_ITERS=$max_iters POLICIES=$policies BACKGROUND=$background BACKGROUND_ROUNDS=$background_rounds bench/run-comparison.sh"
    for cadence in $cadences; do
      for n in $ranks; do
        echo "run: grove bench --peers $peers -n $n --algo auto --coll $list --sizes $sizes --cadence $cadence --rounds $rounds --cell-time $cell_time --max-iters $max_iters --tsv bench/results/$(tsv_name "$n" "$cadence")"
      done
    done
    if [ "$policies" = 1 ]; then
      for n in $ranks; do
        echo "run: grove bench --peers openmpi,mpich --wait-policies all -n $n --algo auto --coll $policy_colls --sizes $policy_sizes --cadence isolated --rounds $policy_rounds --cell-time $cell_time --max-iters $max_iters --tsv bench/results/policies-n$n.tsv"
      done
    fi
    if [ "$background" = 1 ]; then
      for n in $background_ranks; do
        echo "run: grove bench --peers openmpi,mpich --background nice-busy,daemon -n $n --algo auto --coll $background_colls --sizes $policy_sizes --cadence isolated --rounds $background_rounds --cell-time $cell_time --max-iters $max_iters --tsv bench/results/bg-n$n.tsv"
      done
    fi
  } > "$results/machine.txt"
fi

# ---- the document, from bench/results/ only ----
shopt -s nullglob
# The raw samples are kept xz-compressed in the repository (nN.tsv.xz).
for packed in "$results"/n*.tsv.xz "$results"/policies-n*.tsv.xz "$results"/bg-n*.tsv.xz; do
  [ -f "${packed%.xz}" ] || xz -dk "$packed"
done
# Per N, grove's loop first, then OSU's.
tsvs=()
for f in "$results"/n*.tsv; do
  case $f in *-osu.tsv) continue ;; esac
  tsvs+=("$f")
  [ -f "${f%.tsv}-osu.tsv" ] && tsvs+=("${f%.tsv}-osu.tsv")
done
[ ${#tsvs[@]} -gt 0 ] || { echo "run-comparison.sh: no TSVs in $results" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rel_plots=$(realpath --relative-to="$(dirname "$doc")" "$plots")
{
  echo "# grove against Open MPI, MPICH and Gloo"
  echo
  echo "Generated by \`bench/run-comparison.sh\` from the raw samples in \`bench/results/\`;"
  echo "do not edit by hand. Regenerate the document alone with"
  echo "\`bench/run-comparison.sh --report\`, or measure anew with \`bench/run-comparison.sh\`."
  echo
  echo "## Machine and commands"
  echo
  echo '```'
  cat "$results/machine.txt" 2>/dev/null || echo "(machine.txt missing)"
  echo '```'
  echo
  if grep -qs . "$results/missing-collectives.txt"; then
    echo "Not measured (grove does not run them yet): $(paste -sd, "$results/missing-collectives.txt")."
    echo
  fi
  echo "## Method"
  echo
  echo "- Each N runs grove and each peer as separate jobs in interleaved rounds (grove, openmpi,"
  echo "  mpich, gloo, grove, ...), so drift of the machine hits all alike; samples are pooled."
  echo "  Rounds matter most at 1 MiB: there a cell's median holds within 10% inside one job"
  echo "  (mostly 2-6%) but moves by up to 1.6x from one job to the next, for grove and the MPIs"
  echo "  alike (20 rounds of gather 1 MiB at N = 2: grove 65-103 us per job, Open MPI 66-92; the"
  echo "  root's process_vm_readv is the part that varies, why was not found), so a ratio pooled"
  echo "  over few jobs is partly a draw."
  echo "- Two metrics per cell. The span: the last rank's completion minus the first rank's start"
  echo "  of a call on the shared CLOCK_MONOTONIC, as a median with a 95% percentile-bootstrap CI"
  echo "  (2000 resamples, deterministic seed per cell); ratio grove/peer of the medians. OSU's"
  echo "  per-rank mean: each rank's mean time of one call, then the mean over ranks (min..max"
  echo "  over ranks in brackets), with a bootstrap CI; ratio grove/peer of the means. The span"
  echo "  shows the waiting of oversubscribed ranks, which the per-rank mean averages away."
  echo "  Raw samples written before the per-rank times were recorded show \"-\" for the second."
  echo "- The loop is named by the cadence column: isolated (a barrier before each call),"
  echo "  barrier-after (OSU's order) or streaming; CADENCE=barrier-after selects OSU's."
  echo "- This machine has $(nproc) cores: runs with more ranks than cores are oversubscribed, a real"
  echo "  situation reported as such. Each peer runs at its defaults for it (settings per run below)."
  echo
  for f in "${tsvs[@]}"; do
    n=$(basename "$f" .tsv)
    # From the repository root, so the document names the TSV as bench/results/...
    (cd "$root" && "$grove" bench --from-tsv "$(realpath --relative-to="$root" "$f")" \
      --peers "$peers" --markdown "$tmp/$n.md" --plot "$plots/$n.svg" >/dev/null 2>"$tmp/$n.plots")
    case $n in
      *-osu) echo "## ${n%-osu} ranks, OSU's loop (a barrier after each call)" | sed 's/^## n/## /' ;;
      *) echo "## ${n#n} ranks, a barrier before each call" ;;
    esac
    echo
    cat "$tmp/$n.md"
    echo
    for svg in $(sed -n 's/^grove bench: wrote //p' "$tmp/$n.plots"); do
      echo "![$(basename "$svg" .svg)]($rel_plots/$(basename "$svg"))"
    done
    echo
  done
  policy_tsvs=("$results"/policies-n*.tsv)
  if [ ${#policy_tsvs[@]} -gt 0 ]; then
    echo "## grove at each wait_policy"
    echo
    echo "grove once per \`wait_policy\` value (\`grove/<policy>\`; \`hybrid\` is the default)"
    echo "against the MPI libraries at their defaults, on a smaller grid."
    echo
    for f in "${policy_tsvs[@]}"; do
      n=$(basename "$f" .tsv)
      (cd "$root" && "$grove" bench --from-tsv "$(realpath --relative-to="$root" "$f")" \
        --peers openmpi,mpich --markdown "$tmp/$n.md" >/dev/null 2>&1)
      echo "### ${n#policies-n} ranks, every wait_policy"
      echo
      cat "$tmp/$n.md"
      echo
    done
  fi
  bg_tsvs=("$results"/bg-n*.tsv)
  if [ ${#bg_tsvs[@]} -gt 0 ]; then
    echo "## Beside a background load"
    echo
    echo "Every library once quiet and once (\`+bg\`) beside \`nice -n 19\` busy loops, one per core,"
    echo "and a process at normal priority that wakes every millisecond and computes for about"
    echo "50 us; slowdown = loaded / quiet median of the same library in the same round."
    echo
    for f in "${bg_tsvs[@]}"; do
      n=$(basename "$f" .tsv)
      (cd "$root" && "$grove" bench --from-tsv "$(realpath --relative-to="$root" "$f")" \
        --peers openmpi,mpich --markdown "$tmp/$n.md" >/dev/null 2>&1)
      echo "### ${n#bg-n} ranks"
      echo
      cat "$tmp/$n.md"
      echo
    done
  fi
} > "$doc"
for f in "${tsvs[@]}" "${policy_tsvs[@]}" "${bg_tsvs[@]}"; do xz -9 -f -k "$f"; done
echo "run-comparison.sh: wrote $doc" >&2
