#!/usr/bin/env bash
# The README's algorithm table is generated from the algorithm registry
# (`grove select --algorithms --markdown`), between the markers
# <!-- algorithms:begin --> and <!-- algorithms:end -->.
#   scripts/readme-algorithms.sh GROVE --write   rewrites it (make docs)
#   scripts/readme-algorithms.sh GROVE --check   fails, showing the diff, if it is stale
set -euo pipefail
grove=$1
mode=$2
readme="$(dirname "$0")/../README.md"
table=$("$grove" select --algorithms --markdown)
current=$(sed -n '/<!-- algorithms:begin -->/,/<!-- algorithms:end -->/p' "$readme" | sed '1d;$d')
if [ -z "$(grep -c '<!-- algorithms:begin -->' "$readme")" ]; then
  echo "README.md has no <!-- algorithms:begin --> marker" >&2
  exit 1
fi
case "$mode" in
  --check)
    if [ "$table" != "$current" ]; then
      echo "README.md's algorithm table is stale; run 'make docs'. Difference:" >&2
      diff <(echo "$current") <(echo "$table") >&2 || true
      exit 1
    fi
    echo "README algorithm table current ($(echo "$table" | wc -l) lines)"
    ;;
  --write)
    tmp=$(mktemp)
    awk -v table="$table" '
      /<!-- algorithms:begin -->/ { print; print table; skip = 1; next }
      /<!-- algorithms:end -->/ { skip = 0 }
      !skip { print }' "$readme" > "$tmp"
    mv "$tmp" "$readme"
    ;;
  *)
    echo "usage: $0 GROVE --check|--write" >&2
    exit 2
    ;;
esac
