#!/bin/sh
# Stands in for `grove run -n N grove bench ... --tsv FILE` in the test of
# `grove bench --peers` rounds: writes one bcast row per size given, with
# every rank's time.
set -u
tsv="" sizes=""
while [ $# -gt 0 ]; do
  case $1 in
    --tsv) tsv=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    -n) n=$2; shift ;;
  esac
  shift
done
printf 'library\tcollective\talgorithm\tranks\tbytes\tcadence\titeration\tseconds\trank_seconds\n' > "$tsv"
ranks=$(seq "$n" | sed 's/.*/1.0e-06/' | paste -sd, -)
for s in $(echo "$sizes" | tr ',' ' '); do
  printf 'grove\tbcast\tauto\t%s\t%s\tisolated\t0\t1.0e-06\t%s\n' "$n" "$s" "$ranks" >> "$tsv"
done
