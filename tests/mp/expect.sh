#!/bin/sh
# Runs a command and checks how it ended, for launcher tests that must fail
# in a particular way.
#
#   expect.sh CODE [--match REGEX]... [--absent REGEX]... [--signal-when REGEX SIG] -- CMD ARGS...
#
# Passes when CMD exits with CODE, its combined stdout+stderr matches every
# --match (grep -E) and no --absent. With --signal-when, CMD runs in the
# background and gets SIG (e.g. TERM) once its output matches REGEX.
set -u
code=$1
shift
matches=""
absents=""
when=""
sig=""
nl='
'
while [ $# -gt 0 ]; do
  case $1 in
    --match) matches="$matches$2$nl"; shift 2 ;;
    --absent) absents="$absents$2$nl"; shift 2 ;;
    --signal-when) when=$2; sig=$3; shift 3 ;;
    --) shift; break ;;
    *) echo "expect.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
out=$(mktemp "${TMPDIR:-/tmp}/grove-expect.XXXXXX")
trap 'rm -f "$out"' EXIT

if [ -n "$when" ]; then
  "$@" >"$out" 2>&1 &
  pid=$!
  # Bounded wait (30 s) for the output that says the job is ready.
  tries=0
  until grep -Eq "$when" "$out"; do
    tries=$((tries + 1))
    if [ $tries -gt 300 ] || ! kill -0 "$pid" 2>/dev/null; then
      echo "expect.sh: output never matched '$when'" >&2
      break
    fi
    sleep 0.1
  done
  kill -"$sig" "$pid" 2>/dev/null
  wait "$pid"
  status=$?
else
  "$@" >"$out" 2>&1
  status=$?
fi

fail=0
if [ "$status" -ne "$code" ]; then
  echo "expect.sh: exit status $status, expected $code" >&2
  fail=1
fi
IFS="$nl"
for re in $matches; do
  if ! grep -Eq -- "$re" "$out"; then
    echo "expect.sh: output does not match '$re'" >&2
    fail=1
  fi
done
for re in $absents; do
  if grep -Eq -- "$re" "$out"; then
    echo "expect.sh: output matches '$re', which it must not" >&2
    fail=1
  fi
done
if [ $fail -ne 0 ]; then
  echo "---- output of: $* ----" >&2
  cat "$out" >&2
fi
exit $fail
