#!/bin/sh
# launcher.stale_run_directory: `grove run` removes the run directories and
# shared-memory segments of jobs whose owner is gone, and only those.
#
#   stale_sweep.sh GROVE
#
# A launcher killed with SIGKILL leaves its $TMPDIR/grove-run-<pid>-<start>-*
# directory; a segment /dev/shm/grove-<pid>-<start>.* of a dead process is
# made by hand. A live launcher's directory and a live process's segment must
# survive the sweep. Prints "stale sweep ok" when every check passed.
set -u
grove=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/grove-sweep-test.XXXXXX")
export TMPDIR="$tmp"
victim=""
live=""
dead_segment=""
live_segment=""
cleanup() {
  [ -n "$live" ] && kill -9 "$live" 2>/dev/null
  [ -n "$victim" ] && kill -9 "$victim" 2>/dev/null
  rm -f "$dead_segment" "$live_segment"
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  ls -la "$tmp"
  exit 1
}
# Field 22 of /proc/PID/stat (start time), counted after the command's ')'.
start_of() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f20; }
# The run directory of launcher $1, waited for (bounded: 10 s).
dir_of() {
  tries=0
  while :; do
    for d in "$tmp"/grove-run-"$1"-*; do
      [ -d "$d" ] && { echo "$d"; return 0; }
    done
    tries=$((tries + 1))
    [ $tries -gt 100 ] && return 1
    sleep 0.1
  done
}

"$grove" run -n 1 sleep 600 &
victim=$!
victim_dir=$(dir_of "$victim") || fail "launcher $victim made no run directory"
kill -9 "$victim"
wait "$victim" 2>/dev/null
victim=""
[ -d "$victim_dir" ] || fail "a launcher killed by SIGKILL removed its directory"

"$grove" run -n 1 sleep 600 &
live=$!
live_dir=$(dir_of "$live") || fail "launcher $live made no run directory"

# A segment whose maker is dead, and one whose maker (this shell) lives.
sleep 600 &
gone=$!
gone_start=$(start_of "$gone")
kill -9 "$gone"
wait "$gone" 2>/dev/null
dead_segment="/dev/shm/grove-$gone-$gone_start.7.0"
live_segment="/dev/shm/grove-$$-$(start_of $$).7.0"
: >"$dead_segment" || fail "cannot make $dead_segment"
: >"$live_segment" || fail "cannot make $live_segment"

"$grove" run -n 1 true || fail "grove run -n 1 true failed"
[ -e "$victim_dir" ] && fail "stale run directory $victim_dir was not removed"
[ -d "$live_dir" ] || fail "the live launcher's directory $live_dir was removed"
[ -e "$dead_segment" ] && fail "stale segment $dead_segment was not removed"
[ -e "$live_segment" ] || fail "the live process's segment $live_segment was removed"

kill -TERM "$live"
wait "$live" 2>/dev/null
live=""
[ -e "$live_dir" ] && fail "$live_dir left after its launcher ended"
echo "stale sweep ok"
