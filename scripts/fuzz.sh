#!/usr/bin/env bash
# Runs every fuzzer of a fuzz build (tests/fuzz/, `make fuzz`) for SECONDS
# each, one after another, seeded from tests/fuzz/corpus/<name>/. New inputs
# go to BUILD/fuzz-work/<name>/corpus (the seeds in the repository are never
# written); a crash or a round-trip mismatch leaves its input in
# BUILD/fuzz-work/<name>/artifacts/ and makes the script fail.
#
#   scripts/fuzz.sh BUILD_DIR [SECONDS]     (SECONDS: $FUZZ_SECONDS, else 60)
set -euo pipefail
build=$1
seconds=${2:-${FUZZ_SECONDS:-60}}
source_dir=$(cd "$(dirname "$0")/.." && pwd)
status=0
found=0
for fuzzer in "$build"/tests/fuzz/fuzz_*; do
  [ -x "$fuzzer" ] || continue
  found=$((found + 1))
  name=${fuzzer##*/fuzz_}
  work="$build/fuzz-work/$name"
  mkdir -p "$work/corpus" "$work/artifacts"
  dirs=("$work/corpus")
  [ -d "$source_dir/tests/fuzz/corpus/$name" ] && dirs+=("$source_dir/tests/fuzz/corpus/$name")
  log="$work/log"
  if "$fuzzer" "${dirs[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz $name: ok, ${runs:-?} executions in $seconds s, corpus of $(ls "$work/corpus" | wc -l)"
  else
    echo "fuzz $name: FAILED (inputs in $work/artifacts, log $log)"
    tail -n 60 "$log"
    status=1
  fi
done
if [ "$found" -eq 0 ]; then
  echo "fuzz.sh: no fuzzers in $build/tests/fuzz (build with GROVE_FUZZ=ON)" >&2
  exit 1
fi
exit $status
