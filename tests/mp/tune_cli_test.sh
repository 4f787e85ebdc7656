#!/bin/sh
# grove tune and grove explain end to end on a synthetic pLogP table (no
# timing: every figure checked is a prediction), and the exports run by the
# peer libraries.
#
#   tune_cli_test.sh GROVE cli                  tune, explain, refusals of bad input
#   tune_cli_test.sh GROVE probe                a short probe of two ranks: the table's gap of
#                                               sends posted together, host terms and copy
#                                               curves, read by sim and explain
#   tune_cli_test.sh GROVE openmpi|mpich PEER   export, then PEER's job runs with the file
#                                               (PEER empty or missing: skipped, exit 77)
set -u
grove=$1
mode=$2
peer=${3:-}
dir=$(mktemp -d "${TMPDIR:-/tmp}/grove-tune-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
# expect CODE REGEX CMD...: CMD exits with CODE and its output matches REGEX.
expect() {
  code=$1 pattern=$2
  shift 2
  "$@" > out.txt 2>&1
  status=$?
  [ $status -eq "$code" ] || { cat out.txt; fail "$* exited with $status, not $code"; }
  grep -q -E -- "$pattern" out.txt || { cat out.txt; fail "$* printed no '$pattern'"; }
}

# g(m) = 2 us + m / 1 KiB/us, o = g / 2, L = 10 us.
cat > p.txt <<'TABLE'
format grove-plogp/1
L 10
bytes os_us or_us g_us
0 1 1 2
1048576 500 500 1026
end
TABLE
grid="--ranks 2-4 --sizes 1,4KiB,1MiB --coll bcast,scatter,allreduce"

case $mode in
cli)
  # shellcheck disable=SC2086
  expect 0 "^wrote t.json" "$grove" tune --plogp p.txt --out t.json $grid
  grep -q '"plogp": "p.txt"' t.json || fail "t.json names no pLogP table"
  # Written elsewhere, the file names the table relative to its own
  # directory, where explain looks for it.
  mkdir -p sub
  # shellcheck disable=SC2086
  expect 0 "^wrote sub/t.json" "$grove" tune --plogp p.txt --out sub/t.json $grid
  grep -q '"plogp": "../p.txt"' sub/t.json || { cat sub/t.json; fail "sub/t.json: table not relative to it"; }
  expect 0 "^choice: " "$grove" explain bcast -n 3 --size 1MiB --tuning sub/t.json
  # At 3 ranks and 1 MiB the model's fastest is the chain in ceil(1 MiB / S)
  # byte segments, S = 23 (model/segment.hpp's search over S).
  row=$(grep -n '"min_ranks":3,"max_ranks":3,"min_bytes":1048576,"algorithm":"pipeline:seg=45591"' t.json |
    cut -d: -f1)
  [ -n "$row" ] || { cat t.json; fail "no pipeline row at 3 ranks, 1 MiB"; }
  # shm (its rows stay first: the table has no host terms to price it) takes
  # 1 MiB by its single-copy path unless shm_cma_min_bytes=0.
  expect 0 "why: tuning file t.json line [0-9]+ \\(every call\\)" \
    "$grove" explain bcast -n 3 --size 1MiB --tuning t.json
  grep -q "^choice: shm$" out.txt || fail "explain: shm is not the choice at 1 MiB"
  expect 0 "why: tuning file t.json line $row \\(min_ranks 3, max_ranks 3, min_bytes 1048576\\)" \
    "$grove" explain bcast -n 3 --size 1MiB --tuning t.json --param shm_cma_min_bytes=0
  grep -q "^choice: pipeline:seg=45591$" out.txt || fail "explain chose otherwise"
  grep -q "the choice is the model's fastest" out.txt || fail "explain: the tuned choice is not #1"
  grep -q -E "^  pipeline:seg=45591 +1136.539 us +#1 +<- the choice$" out.txt ||
    { cat out.txt; fail "explain: no predicted time beside the choice"; }
  # A forced parameter wins over the file, and explain says so.
  expect 0 "why: forced by the parameter bcast_algorithm=chain" \
    "$grove" explain bcast -n 3 --size 1MiB --tuning t.json --param bcast_algorithm=chain
  # Without a tuning file: the built-in row.
  expect 0 "why: built-in row 5 \\(max_ranks 7\\): MPICH: binomial below 8 ranks" \
    "$grove" explain bcast -n 3 --size 1MiB --plogp p.txt --param shm_cma_min_bytes=0
  expect 0 "why: built-in row 1 \\(every call\\)" "$grove" explain bcast -n 3 --size 1MiB --plogp p.txt
  grep -q "^choice: shm$" out.txt || fail "explain: shm is not the built-in choice at 1 MiB"

  # Bad input: named file, line and cause.
  head -c 300 t.json > cut.json
  expect 1 "cut.json line [0-9]+: not valid JSON" "$grove" explain bcast -n 3 --size 1 --tuning cut.json
  head -4 p.txt > cut.txt
  expect 1 "pLogP table cut.txt:4: truncated" "$grove" tune --plogp cut.txt --out x.json
  printf 'L 10\n0 1 1 2\n100 1 1 -3\n' > negative.txt
  expect 1 "pLogP table negative.txt:3: '-3' is not a number >= 0" \
    "$grove" tune --plogp negative.txt --out x.json
  printf 'L 10\n100 1 1 2\n10 1 1 3\n' > reversed.txt
  expect 1 "pLogP table reversed.txt:3: sizes must increase from row to row \\(10 after 100\\)" \
    "$grove" tune --plogp reversed.txt --out x.json
  sed 's/"pipeline:seg=45591"/"pipelined"/' t.json > unknown.json
  expect 1 "unknown.json line $row: .*pipelined" "$grove" explain bcast -n 3 --size 1 --tuning unknown.json
  expect 2 "unknown collective 'nosuch'" "$grove" explain nosuch -n 3 --size 1
  expect 2 "reduce of 3 B: a float32 vector's size is a multiple of 4" \
    "$grove" explain reduce -n 3 --size 3 --plogp p.txt
  expect 2 "--coll 'alltoallv': not a collective with algorithms to choose from" \
    "$grove" tune --plogp p.txt --out x.json --coll alltoallv
  expect 2 "--export 'lam': openmpi or mpich" "$grove" tune --plogp p.txt --export lam x
  expect 2 "grove probe needs two ranks \\(this job has 1\\)" "$grove" probe --out q.txt
  expect 2 "-n 3 must be the job's size \\(1" "$grove" explain bcast -n 3 --size 1 --measure
  echo "tune cli ok"
  ;;
probe)
  # Few iterations and small messages: the figures mean nothing, the table's
  # form does. The copy curves are measured 1 B .. 4 MiB (x4) whatever --max-size.
  expect 0 "wrote q.txt" "$grove" run -n 2 --param wait_policy=block "$grove" probe --out q.txt \
    --max-size 64 --min-its 2 --max-its 2 --release-copies 0
  want="1 4 16 64 256 1024 4096 16384 65536 262144 1048576 4194304"
  for curve in copy copy_in copy_out copy_cma; do
    sizes=$(awk -v k=$curve '$1 == k {printf "%s%s", sep, $2; sep = " "}' q.txt)
    if [ "$curve" = copy_cma ] && grep -q "copy_cma not measured: .*process_vm_readv" q.txt; then
      [ -z "$sizes" ] || fail "q.txt: copy_cma rows although it says they were not measured"
      continue
    fi
    [ "$sizes" = "$want" ] || { cat q.txt; fail "q.txt: $curve sizes '$sizes', not '$want'"; }
  done
  # The gap of sends posted together at every measured size.
  rows=$(awk '$1 ~ /^[0-9]+$/ && NF >= 4 {printf "%s%s", sep, $1; sep = " "}' q.txt)
  gaps=$(awk '$1 == "gap_posted" {printf "%s%s", sep, $2; sep = " "}' q.txt)
  [ -n "$rows" ] && [ "$rows" = "$gaps" ] ||
    { cat q.txt; fail "q.txt: gap_posted sizes '$gaps', size rows '$rows'"; }
  grep -q "^shm_us [0-9.]*$" q.txt || { cat q.txt; fail "q.txt: no shm_us"; }
  grep -q "^end$" q.txt || fail "q.txt: no end line"
  # The simulator reads the table (and ignores the host terms) ...
  expect 0 "completion_us[[:space:]]+[0-9.]+" "$grove" sim bcast --algo flat -n 4 --size 1KiB --plogp q.txt
  # ... and explain prices the engine with them, slots and single copy.
  for size in 1KiB 1MiB; do
    expect 0 "^  shm +[0-9]+\.[0-9]+ us +#" "$grove" explain bcast -n 2 --size $size --plogp q.txt
  done
  echo "tune probe ok"
  ;;
openmpi | mpich)
  if [ -z "$peer" ] || [ ! -x "$peer" ]; then
    echo "peer $mode not built (scripts/deps.sh installs its toolchain): skipped"
    exit 77
  fi
  args="--coll bcast,scatter,allreduce --sizes 1,4096,1048576 --cell-time 0.001 --warmup 1"
  args="$args --min-iters 1 --max-iters 2 --tsv out.tsv"
  if [ "$mode" = openmpi ]; then
    # shellcheck disable=SC2086
    expect 0 "^wrote rules.txt" "$grove" tune --plogp p.txt --export openmpi rules.txt $grid
    grep -q -E "^1048576 3 0 45591  # pipeline \\(grove pipeline:seg=45591" rules.txt ||
      { cat rules.txt; fail "no pipeline rule at 3 ranks"; }
    root=""
    [ "$(id -u)" -eq 0 ] && root=--allow-run-as-root
    for n in 2 3; do
      # shellcheck disable=SC2086
      timeout 60 mpirun.openmpi $root --oversubscribe -n $n --mca btl self,vader \
        --mca oob_tcp_if_include lo --mca coll_tuned_use_dynamic_rules 1 \
        --mca coll_tuned_dynamic_rules_filename "$dir/rules.txt" \
        --mca coll_tuned_bcast_knomial_radix 4 "$peer" $args > run.txt 2>&1 ||
        { cat run.txt; fail "Open MPI with the exported rules at $n ranks"; }
      for c in bcast scatter allreduce; do
        grep -q "^openmpi	$c	native	$n	1048576	" out.tsv || fail "no verified $c cell at $n ranks"
      done
    done
  else
    # shellcheck disable=SC2086
    expect 0 "^wrote sel.ch4.json" "$grove" tune --plogp p.txt --export mpich sel.json $grid
    for n in 2 3; do
      # shellcheck disable=SC2086
      MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=$dir/sel.json \
        MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE=$dir/sel.ch4.json UCX_NET_DEVICES=lo \
        timeout 60 mpirun.mpich -iface lo -n $n "$peer" $args > run.txt 2>&1 ||
        { cat run.txt; fail "MPICH with the exported selection at $n ranks"; }
      grep -q "Abort" run.txt && { cat run.txt; fail "MPICH aborted"; }
      for c in bcast scatter allreduce; do
        grep -q "^mpich	$c	native	$n	1048576	" out.tsv || fail "no verified $c cell at $n ranks"
      done
    done
    # MPICH does read the file: a broken one stops the job.
    echo '{ "collective=bcast": { broken' > broken.json
    # shellcheck disable=SC2086
    MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=$dir/broken.json UCX_NET_DEVICES=lo \
      timeout 60 mpirun.mpich -iface lo -n 2 "$peer" $args > run.txt 2>&1 &&
      ! grep -q "Abort" run.txt && fail "MPICH ran with a broken selection file"
  fi
  echo "tune export $mode ok"
  ;;
*) echo "tune_cli_test.sh: unknown mode $mode" >&2; exit 2 ;;
esac
