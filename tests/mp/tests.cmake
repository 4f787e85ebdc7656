# Multi-process tests: each runs a driver (tests/mp/*.cpp -> mp_<name>) under
# the real launcher. GROVE_TOOL is the grove executable.
set(GROVE_TOOL $<TARGET_FILE:grove>)

# ---- bootstrap and `grove run` (launcher) ----
set(GROVE_EXPECT ${CMAKE_CURRENT_SOURCE_DIR}/mp/expect.sh)
set(MP_BOOTSTRAP $<TARGET_FILE:mp_bootstrap>)

foreach(n 1 2 5 16)
  add_test(NAME bootstrap.allgather.n${n} COMMAND ${GROVE_TOOL} run -n ${n} ${MP_BOOTSTRAP})
  set_tests_properties(bootstrap.allgather.n${n} PROPERTIES TIMEOUT 60
                       PASS_REGULAR_EXPRESSION "bootstrap ok: ${n} ranks")
endforeach()
add_test(NAME bootstrap.singleton COMMAND ${MP_BOOTSTRAP} singleton)
set_tests_properties(bootstrap.singleton PROPERTIES TIMEOUT 30
                     PASS_REGULAR_EXPRESSION "bootstrap ok: 1 ranks")
add_test(NAME bootstrap.tag_output
         COMMAND ${GROVE_TOOL} run -n 3 --tag-output ${MP_BOOTSTRAP})
set_tests_properties(bootstrap.tag_output PROPERTIES TIMEOUT 60
                     PASS_REGULAR_EXPRESSION "\\[0\\] bootstrap ok: 3 ranks")
add_test(NAME bootstrap.param_passed
         COMMAND ${GROVE_TOOL} run -n 2 --param timeout_ms=12345 ${MP_BOOTSTRAP} param timeout_ms 12345)
set_tests_properties(bootstrap.param_passed PROPERTIES TIMEOUT 60)
add_test(NAME bootstrap.bad_key_refused
         COMMAND ${GROVE_EXPECT} 0 --match "refused a bootstrap connection claiming rank 2: wrong job key"
                 --match "rank 2 is already connected" --match "bootstrap ok: 3 ranks"
                 -- ${GROVE_TOOL} run -n 3 ${MP_BOOTSTRAP} badkey)
set_tests_properties(bootstrap.bad_key_refused PROPERTIES TIMEOUT 60)
add_test(NAME bootstrap.notify
         COMMAND ${GROVE_EXPECT} 1 --match "grove run: rank 2 exited with code 1"
                 --match "notify ok: 3 survivors" --absent "check failed"
                 -- ${GROVE_TOOL} run -n 4 --on-failure=notify ${MP_BOOTSTRAP} notify 2)
set_tests_properties(bootstrap.notify PROPERTIES TIMEOUT 60)

add_test(NAME launcher.exit_code
         COMMAND ${GROVE_EXPECT} 7 --match "^grove run: rank 3 exited with code 7$"
                 -- ${GROVE_TOOL} run -n 4 ${MP_BOOTSTRAP} exit 7 3)
add_test(NAME launcher.exit_code_plain_program
         COMMAND ${GROVE_EXPECT} 3 --match "^grove run: rank 1 exited with code 3$"
                 -- ${GROVE_TOOL} run -n 2 sh -c "exit $((GROVE_JOB_RANK * 3))")
add_test(NAME launcher.non_grove_program
         COMMAND ${GROVE_EXPECT} 0 --match "^hello$" -- ${GROVE_TOOL} run -n 3 echo hello)
add_test(NAME launcher.killed_rank
         COMMAND ${GROVE_EXPECT} 137 --match "^grove run: rank 1 killed by signal 9 \\(Killed\\)$"
                 -- ${GROVE_TOOL} run -n 3 ${MP_BOOTSTRAP} signal 1)
add_test(NAME launcher.timeout
         COMMAND ${GROVE_EXPECT} 124 --match "^grove run: job timed out after 1 s; killed 3 ranks$"
                 -- ${GROVE_TOOL} run -n 3 --timeout 1 ${MP_BOOTSTRAP} hang)
add_test(NAME launcher.sigterm_forwarded
         COMMAND ${GROVE_EXPECT} 143 --signal-when "hanging" TERM
                 --match "received signal 15 \\(Terminated\\); forwarding it to 2 ranks"
                 -- ${GROVE_TOOL} run -n 2 ${MP_BOOTSTRAP} hang)
add_test(NAME launcher.early_exit_fails_collective
         COMMAND ${GROVE_EXPECT} 1 --match "rank 0 exited with code 0 before joining barrier #2"
                 -- ${GROVE_TOOL} run -n 2 ${MP_BOOTSTRAP} exit 0 0)
add_test(NAME launcher.zero_ranks
         COMMAND ${GROVE_EXPECT} 2 --match "-n must be at least 1" -- ${GROVE_TOOL} run -n 0 true)
add_test(NAME launcher.missing_program
         COMMAND ${GROVE_EXPECT} 2 --match "no program given" -- ${GROVE_TOOL} run -n 2)
add_test(NAME launcher.program_not_found
         COMMAND ${GROVE_EXPECT} 2 --match "program 'grove-no-such-program' not found in PATH"
                 -- ${GROVE_TOOL} run -n 2 grove-no-such-program)
add_test(NAME launcher.unknown_param
         COMMAND ${GROVE_EXPECT} 2 --match "no_such_parameter"
                 -- ${GROVE_TOOL} run -n 2 --param no_such_parameter=1 true)
# --bind-to core (the default): rank r on the (r mod k)-th allowed CPU, and
# GROVE_JOB_CORES = k; --bind-to none: the launcher's whole set, no count.
add_test(NAME launcher.bind_to_core
         COMMAND ${GROVE_EXPECT} 0 --match "^\\[2\\] one cpu, cores=[1-9]"
                 --absent "more than one cpu"
                 -- ${GROVE_TOOL} run -n 3 --tag-output sh -c
                    "n=$(grep Cpus_allowed_list /proc/self/status | cut -f2); case $n in *[,-]*) echo more than one cpu;; *) echo one cpu, cores=$GROVE_JOB_CORES;; esac")
add_test(NAME launcher.bind_to_none
         COMMAND ${GROVE_EXPECT} 0 --match "^\\[1\\] same=yes cores=$"
                 -- ${GROVE_TOOL} run -n 2 --bind-to none --tag-output sh -c
                    "[ \"$(grep Cpus_allowed_list /proc/self/status)\" = \"$(grep Cpus_allowed_list /proc/$PPID/status)\" ] && echo same=yes cores=$GROVE_JOB_CORES")
add_test(NAME launcher.bind_to_bad
         COMMAND ${GROVE_EXPECT} 2 --match "--bind-to 'socket' is not one of: core, none"
                 -- ${GROVE_TOOL} run -n 2 --bind-to socket true)
# -n beyond what one machine can start is refused before anything starts:
# the hard cap (launcher.hpp, kMaxRanks) and the user's process limit.
add_test(NAME launcher.too_many_ranks
         COMMAND ${GROVE_EXPECT} 2 --match "-n 100000 is more than the 4096 ranks"
                 -- ${GROVE_TOOL} run -n 100000 true)
add_test(NAME launcher.ranks_over_nproc
         COMMAND ${GROVE_EXPECT} 2 --match "RLIMIT_NPROC, ulimit -u: 20"
                 -- prlimit --nproc=20 ${GROVE_TOOL} run -n 20 true)
# A fork that fails part way (tests/mp/preload/spawn_faults.cpp: the third
# fork fails as at RLIMIT_NPROC): the error names it, the two ranks started
# are killed (they would sleep 600 s), and nothing else is signalled: no
# kill(1, ...) or kill(-1, ...) for the ranks that never existed.
set(SPAWN_FAULTS $<TARGET_FILE:spawn_faults>)
add_test(NAME launcher.fork_fails
         COMMAND ${GROVE_EXPECT} 1 --match "grove run: fork[(][)]: Resource temporarily unavailable"
                 --absent "spawn_faults: refused kill"
                 -- env LD_PRELOAD=${SPAWN_FAULTS} SPAWN_FAULTS_FORK_FAIL_AFTER=2
                    ${GROVE_TOOL} run -n 4 sleep 600)
# A signal that reaches a rank between its fork and its exec acts on the
# rank (here SIGTERM ends it) instead of running the launcher's handler,
# which would report it as a signal to the launcher and forward it.
add_test(NAME launcher.signal_before_exec
         COMMAND ${GROVE_EXPECT} 143 --match "^grove run: rank [01] killed by signal 15"
                 --absent "received signal" --absent "spawn_faults: refused kill"
                 -- env LD_PRELOAD=${SPAWN_FAULTS} SPAWN_FAULTS_SIGNAL_BEFORE_EXEC=15
                    ${GROVE_TOOL} run -n 2 true)
set_tests_properties(launcher.fork_fails launcher.signal_before_exec PROPERTIES
                     ENVIRONMENT "ASAN_OPTIONS=verify_asan_link_order=0")
# 300 connections that never finish a hello, opened before any rank
# connects, must not lock the ranks out (rendezvous.cpp: the longest-waiting
# stranger makes room; run_hello_timeout_ms closes them).
add_test(NAME launcher.idle_connections
         COMMAND ${GROVE_EXPECT} 0 --match "flood ok: 4 ranks admitted past 300 idle connections"
                 -- ${GROVE_TOOL} run -n 4 ${MP_BOOTSTRAP} flood 300)
# A launcher killed with SIGKILL leaves its run directory; the next
# `grove run` removes it, and leaves a live launcher's alone.
add_test(NAME launcher.stale_run_directory
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mp/stale_sweep.sh ${GROVE_TOOL})
set_tests_properties(launcher.stale_run_directory PROPERTIES
                     PASS_REGULAR_EXPRESSION "stale sweep ok")

set_tests_properties(
  launcher.too_many_ranks launcher.ranks_over_nproc launcher.fork_fails
  launcher.signal_before_exec launcher.idle_connections launcher.stale_run_directory
  launcher.exit_code launcher.exit_code_plain_program launcher.non_grove_program
  launcher.killed_rank launcher.timeout launcher.sigterm_forwarded
  launcher.early_exit_fails_collective launcher.zero_ranks launcher.missing_program
  launcher.program_not_found launcher.unknown_param launcher.bind_to_core
  launcher.bind_to_none launcher.bind_to_bad
  PROPERTIES TIMEOUT 60)

# ---- bcast and barrier over UCX, every algorithm, one job per N ----
foreach(n 1 2 3 4 5 7 8 13 16)
  add_test(NAME coll.bcast_barrier.n${n}
           COMMAND ${GROVE_TOOL} run -n ${n} --param wait_policy=block
                   $<TARGET_FILE:mp_bcast_barrier>)
  set_tests_properties(coll.bcast_barrier.n${n} PROPERTIES TIMEOUT 300
                       PASS_REGULAR_EXPRESSION "bcast_barrier ok: ${n} ranks")
endforeach()

# ---- grove bench itself: a tiny run in OSU's loop order, both metrics in
# its TSV and summary.
add_test(NAME bench.smoke.n2 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mp/bench_smoke.sh ${GROVE_TOOL})
set_tests_properties(bench.smoke.n2 PROPERTIES TIMEOUT 150 PASS_REGULAR_EXPRESSION "bench smoke ok"
                     FAIL_REGULAR_EXPRESSION "FAIL: ")

# --background: quiet and loaded jobs, the slowdown table, and no load
# process left on a normal end, an error, SIGTERM or SIGKILL of the bench.
add_test(NAME bench.background
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mp/bench_background.sh ${GROVE_TOOL}
                 ${CMAKE_CURRENT_SOURCE_DIR}/mp/fake_grove_bench.sh)
set_tests_properties(bench.background PROPERTIES TIMEOUT 120 PASS_REGULAR_EXPRESSION "background ok"
                     FAIL_REGULAR_EXPRESSION "FAIL: ")

# ---- bench peers (bench/peers/): each peer driver at N=2 on tiny sizes; a
# peer that was not built is skipped (exit 77). Then `grove bench --peers`
# rounds with a stand-in for grove's own job, so the peers' launch lines are
# tested whether or not grove's collectives are complete.
foreach(peer openmpi mpich gloo)
  set(peer_exe "")
  if(TARGET grove-peer-${peer})
    set(peer_exe $<TARGET_FILE:grove-peer-${peer}>)
  endif()
  add_test(NAME bench.peer.${peer}.n2
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mp/peer_test.sh ${peer} "${peer_exe}")
  # The pass pattern names the peer: a driver's own output mentions skipped
  # cells, and a bare "skipped" once let a failing driver pass.
  set_tests_properties(bench.peer.${peer}.n2 PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                       PASS_REGULAR_EXPRESSION "peer ${peer} ok|peer ${peer} not built"
                       FAIL_REGULAR_EXPRESSION "FAIL: ")
endforeach()
# The MPI one-sided peers (bench/peers/mpi_rma_peer.cpp) beside grove's
# window table, at N=2 (labelled external with the other peers).
foreach(peer openmpi mpich)
  set(peer_exe "")
  if(TARGET grove-rma-peer-${peer})
    set(peer_exe $<TARGET_FILE:grove-rma-peer-${peer}>)
  endif()
  add_test(NAME bench.peer.rma.${peer}.n2
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mp/rma_peer_test.sh ${peer} "${peer_exe}"
                   ${GROVE_TOOL})
  set_tests_properties(bench.peer.rma.${peer}.n2 PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                       PASS_REGULAR_EXPRESSION "rma peer ${peer} ok|rma peer ${peer} not built"
                       FAIL_REGULAR_EXPRESSION "FAIL")
endforeach()
if(TARGET grove-peer-openmpi OR TARGET grove-peer-mpich OR TARGET grove-peer-gloo)
  # Not on a terminal (ctest's pipe), progress still comes line by line, and
  # --algo defaults to auto; both metrics get their headline.
  add_test(NAME bench.peers.rounds
           COMMAND ${GROVE_EXPECT} 0
                   --match "# grove vs [a-z]+ \\(span median\\): at or below 1 in [0-9]+ of 2 cells"
                   --match "# grove vs [a-z]+ \\(per-rank mean\\): at or below 1 in [0-9]+ of 2 cells"
                   --match "grove bench: round 2/2: grove +[0-9]+/[0-9]+ jobs, cells [0-9]+/[0-9]+"
                   --match "algorithm auto"
                   --absent "no numbers: round"
                   -- ${GROVE_TOOL} bench --peers openmpi,mpich,gloo -n 2 --rounds 2 --coll bcast
                   --sizes 1,4096 --cell-time 0.02 --max-iters 200
                   --grove-exe ${CMAKE_CURRENT_SOURCE_DIR}/mp/fake_grove_bench.sh
                   --peer-dir $<TARGET_FILE_DIR:grove>/../bench/peers)
  set_tests_properties(bench.peers.rounds PROPERTIES TIMEOUT 300)
endif()

# ---- examples run as tests, so the README's examples stay true ----
add_test(NAME example.hello_bcast
         COMMAND ${GROVE_TOOL} run -n 3 --param wait_policy=block $<TARGET_FILE:example_hello_bcast>)
set_tests_properties(example.hello_bcast PROPERTIES TIMEOUT 60
                     PASS_REGULAR_EXPRESSION "rank 2 of 3 got: hello from rank 0")

# ---- scatter, gather, allgather(v), alltoall(v), reduce, allreduce,
# reduce_scatter over UCX: every algorithm x sizes x roots, concurrent and
# persistent operations, split/dup, algorithm mismatch; one job per N.
# Blocking waits: 16 ranks share 2 cores.
foreach(n 1 2 3 4 5 7 8 9 16)
  add_test(NAME coll.colls.n${n}
           COMMAND ${GROVE_TOOL} run -n ${n} --param wait_policy=block $<TARGET_FILE:mp_colls>)
  set_tests_properties(coll.colls.n${n} PROPERTIES TIMEOUT 300
                       PASS_REGULAR_EXPRESSION "colls ok: ${n} ranks"
                       FAIL_REGULAR_EXPRESSION "FAILED;finalize barrier failed;exited with code")
endforeach()

# ---- shared-memory collectives (src/coll/shm/): exact bytes and the path
# taken at every limit, back-to-back calls, overlap with non-blocking calls,
# split/dup; every wait policy; the segment switched off; named errors.
foreach(n 2 3 4 7)
  add_test(NAME coll.shm.n${n}
           COMMAND ${GROVE_TOOL} run -n ${n} --param wait_policy=block $<TARGET_FILE:mp_shm>)
  set_tests_properties(coll.shm.n${n} PROPERTIES TIMEOUT 300
                       PASS_REGULAR_EXPRESSION "shm ok: ${n} ranks"
                       FAIL_REGULAR_EXPRESSION "FAILED;finalize barrier failed;exited with code")
endforeach()
foreach(policy spin lazy hybrid)
  add_test(NAME coll.shm.policy_${policy}
           COMMAND ${GROVE_TOOL} run -n 2 --param wait_policy=${policy} $<TARGET_FILE:mp_shm>)
  set_tests_properties(coll.shm.policy_${policy} PROPERTIES TIMEOUT 300
                       PASS_REGULAR_EXPRESSION "shm ok: 2 ranks"
                       FAIL_REGULAR_EXPRESSION "FAILED;finalize barrier failed;exited with code")
endforeach()
add_test(NAME coll.shm.off
         COMMAND ${GROVE_TOOL} run -n 3 --param wait_policy=block --param shm_collectives=false
                 $<TARGET_FILE:mp_shm> off)
set_tests_properties(coll.shm.off PROPERTIES TIMEOUT 300 PASS_REGULAR_EXPRESSION "shm ok: 3 ranks"
                     FAIL_REGULAR_EXPRESSION "FAILED;finalize barrier failed;exited with code")
add_test(NAME coll.shm.mismatch
         COMMAND ${GROVE_EXPECT} 0 --match "mismatch: rank 1: allreduce\\(64 B\\) on shared memory \\(call [0-9]+\\): rank 0 entered bcast\\(root 0, 64 B\\)"
                 --match "inline mismatch: mismatch: rank 2: allreduce\\(16 B\\) on shared memory \\(call [0-9]+\\): rank 0 entered bcast\\(root 0, 16 B\\)"
                 --match "slot against inline: mismatch: rank 1: bcast\\(root 0, 16 B\\) on shared memory \\(call [0-9]+\\): rank 0 entered bcast\\(root 0, 1024 B\\)"
                 --match "shm mismatch ok"
                 -- ${GROVE_TOOL} run -n 3 --param wait_policy=block $<TARGET_FILE:mp_shm> mismatch)
add_test(NAME coll.shm.timeout
         COMMAND ${GROVE_EXPECT} 0 --match "timeout: rank 2: bcast\\(root 0, 64 B\\) on shared memory \\(call [0-9]+\\): timed out after 1000 ms waiting for rank 0"
                 --match "shm timeout ok"
                 -- ${GROVE_TOOL} run -n 3 --param wait_policy=hybrid $<TARGET_FILE:mp_shm> timeout)
add_test(NAME coll.shm.departed
         COMMAND ${GROVE_EXPECT} 3 --match "peer failed: rank 2: barrier on shared memory \\(call [0-9]+\\): rank 1 departed"
                 --match "shm departed ok"
                 -- ${GROVE_TOOL} run -n 3 --on-failure=notify --param wait_policy=block
                    $<TARGET_FILE:mp_shm> departed)
set_tests_properties(coll.shm.mismatch coll.shm.timeout coll.shm.departed PROPERTIES TIMEOUT 60)
# The slot path alone (both thresholds 0: no single-copy calls).
add_test(NAME coll.shm.slots_only.n3
         COMMAND ${GROVE_TOOL} run -n 3 --param wait_policy=block --param shm_cma_min_bytes=0
                 --param shm_cma_min_block_bytes=0
                 $<TARGET_FILE:mp_shm>)
set_tests_properties(coll.shm.slots_only.n3 PROPERTIES TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "shm ok: 3 ranks"
                     FAIL_REGULAR_EXPRESSION "FAILED;finalize barrier failed;exited with code")

# ---- the single-copy (CMA) path of the shared-memory collectives: exact
# bytes and the path at shm_cma_min_bytes and 1 MiB, every root; the path
# off by parameter and by a rank that cannot read the others; a mismatch
# and a killed owner or reader named.
set(MP_SHM_CMA $<TARGET_FILE:mp_shm_cma>)
foreach(n 2 3 4)
  add_test(NAME coll.shm_cma.n${n}
           COMMAND ${GROVE_TOOL} run -n ${n} --param wait_policy=block ${MP_SHM_CMA})
  set_tests_properties(coll.shm_cma.n${n} PROPERTIES TIMEOUT 300
                       PASS_REGULAR_EXPRESSION "shm_cma ok: ${n} ranks"
                       FAIL_REGULAR_EXPRESSION "FAILED;finalize barrier failed;exited with code")
endforeach()
add_test(NAME coll.shm_cma.slots.n3
         COMMAND ${GROVE_TOOL} run -n 3 --param wait_policy=block --param shm_cma_min_bytes=0
                 --param shm_cma_min_block_bytes=0
                 ${MP_SHM_CMA} slots)
set_tests_properties(coll.shm_cma.slots.n3 PROPERTIES TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "shm_cma ok: 3 ranks"
                     FAIL_REGULAR_EXPRESSION "FAILED;finalize barrier failed;exited with code")
add_test(NAME coll.shm_cma.denied.n3
         COMMAND ${GROVE_EXPECT} 0 --match "grove: single-copy shared-memory path \\(CMA\\) off: rank 1 cannot read rank 0's memory with process_vm_readv: Operation not permitted"
                 --match "shm_cma ok: 3 ranks"
                 -- ${GROVE_TOOL} run -n 3 --param wait_policy=block ${MP_SHM_CMA} denied)
add_test(NAME coll.shm_cma.mismatch.n3
         COMMAND ${GROVE_EXPECT} 0 --match "mismatch: rank 1: bcast\\(root 0, 524288 B\\) on shared memory \\(call [0-9]+\\): rank 0 entered bcast\\(root 0, 1048576 B\\)"
                 --match "shm_cma mismatch ok"
                 -- ${GROVE_TOOL} run -n 3 --param wait_policy=block ${MP_SHM_CMA} mismatch)
set_tests_properties(coll.shm_cma.denied.n3 coll.shm_cma.mismatch.n3 PROPERTIES TIMEOUT 300)
foreach(who owner reader)
  if(who STREQUAL "owner")
    set(named 2)
  else()
    set(named 1)
  endif()
  add_test(NAME coll.shm_cma.killed_${who}.n3
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mp/named_in_time.sh 137
                   "grove run: rank 2 killed by signal 9" "^cma_killed ok: rank [01] named rank 2$"
                   ${named}
                   -- ${GROVE_TOOL} run -n 3 --on-failure=notify --param wait_policy=block
                      --param timeout_ms=30000 ${MP_SHM_CMA} killed ${who})
  set_tests_properties(coll.shm_cma.killed_${who}.n3 PROPERTIES TIMEOUT 60
                       PASS_REGULAR_EXPRESSION "named_in_time ok"
                       FAIL_REGULAR_EXPRESSION "FAILED;AddressSanitizer")
endforeach()

# ---- ranks that disagree on the algorithm get a named error ----
add_test(NAME coll.mismatch_named
         COMMAND ${GROVE_EXPECT} 0 --match "mismatch: .*another collective, algorithm or parameters"
                 -- ${GROVE_TOOL} run -n 3 --param wait_policy=block $<TARGET_FILE:mp_mismatch>)
set_tests_properties(coll.mismatch_named PROPERTIES TIMEOUT 60)

# ---- the reliable fence ----
# Failure-free: variable blobs, overlapped ifences, a barrier-like fence.
foreach(n 1 2 5 8 16)
  add_test(NAME fence.basic.n${n}
           COMMAND ${GROVE_TOOL} run -n ${n} --param wait_policy=block $<TARGET_FILE:mp_fence>)
  set_tests_properties(fence.basic.n${n} PROPERTIES TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "fence ok: ${n} ranks")
endforeach()
# A release relay SIGKILLed while it holds the release (fence_release_delay_ms
# widens the window): every survivor completes with identical bytes. Each
# job kills K relays one round after another; repeated for ordering races.
foreach(rep 1 2 3)
  add_test(NAME fence.kill_relay.n8.r${rep}
           COMMAND ${GROVE_EXPECT} 137 --match "fence kill ok: 6 survivors, 2 kills"
                   --absent "check failed"
                   -- ${GROVE_TOOL} run -n 8 --on-failure=notify --timeout 100
                      --param wait_policy=block --param fence_release_delay_ms=300
                      --param release_radix=2 --param timeout_ms=30000
                      $<TARGET_FILE:mp_fence> kill 2)
  add_test(NAME fence.kill_relay.n16.r${rep}
           COMMAND ${GROVE_EXPECT} 137 --match "fence kill ok: 13 survivors, 3 kills"
                   --absent "check failed"
                   -- ${GROVE_TOOL} run -n 16 --on-failure=notify --timeout 100
                      --param wait_policy=block --param fence_release_delay_ms=300
                      --param release_radix=4 --param timeout_ms=30000
                      $<TARGET_FILE:mp_fence> kill 3)
  set_tests_properties(fence.kill_relay.n8.r${rep} fence.kill_relay.n16.r${rep}
                       PROPERTIES TIMEOUT 120)
endforeach()

# ---- per-call cost (perf): after warm-up a repeated call of one shape
# allocates nothing (blocking, non-blocking, persistent), and a parameter
# change between calls is seen by the next call ----
foreach(n 1 2 4)
  if(n GREATER 2)
    set(policy block)
  else()
    set(policy hybrid)
  endif()
  add_test(NAME coll.call_cost.n${n}
           COMMAND ${GROVE_TOOL} run -n ${n} --param wait_policy=${policy} $<TARGET_FILE:mp_call_cost>)
  set_tests_properties(coll.call_cost.n${n} PROPERTIES TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "call_cost ok: ${n} ranks"
                       FAIL_REGULAR_EXPRESSION "check failed")
endforeach()

# ---- documentation generated from the code ----
add_test(NAME docs.readme_algorithms
         COMMAND ${CMAKE_SOURCE_DIR}/scripts/readme-algorithms.sh ${GROVE_TOOL} --check)
set_tests_properties(docs.readme_algorithms PROPERTIES TIMEOUT 30)

# ---- bad command lines: every subcommand exits with 2 and names the cause
# (tools/usage.hpp), CLI11's own errors included; nothing runs or prints
# before the refusal. Each entry: name, message, then the arguments.
set(GROVE_BAD_COMMAND_LINES
  "no_subcommand|A subcommand is required|"
  "unknown_subcommand|A subcommand is required|nosuch"
  "unknown_option|not expected|params --nosuch"
  "bench_unknown_algo|--algo 'nosuch' for bcast|bench --coll bcast --algo nosuch"
  "bench_negative_cell_time|--cell-time: Value -1 not in range|bench --cell-time -1"
  "bench_zero_min_iters|--min-iters: Value 0 not in range|bench --min-iters 0"
  "bench_bad_sizes|'x' is not a byte count|bench --sizes x"
  "bench_bad_cadence|--cadence 'x'|bench --cadence x"
  "bench_compare_one_file|--compare: At least 2 required|bench --compare a.tsv"
  "sim_zero_ranks|--ranks: Value 0 not in range|sim bcast -n 0"
  "sim_unknown_collective|no collective 'nosuch'|sim nosuch"
  "sim_unknown_algo|unknown algorithm 'nosuch'|sim bcast --algo nosuch"
  "sim_bad_size|--size: 'x' is not a byte count|sim bcast --size x"
  "sim_root_out_of_range|root 99 is outside|sim bcast -n 4 --root 99"
  "sim_negative_alpha|alpha_us = -1 must be >= 0|sim bcast --alpha -1"
  "sim_missing_plogp_table|cannot be read|sim bcast --plogp /nonexistent/table"
  "model_check_unknown_coll|--coll 'nosuch': no closed form|model check --coll nosuch"
  "rma_bench_bad_mode|--modes: 'fast' is not one of safe, raw, p2p|rma-bench --modes safe,fast"
  "rma_bench_bad_stream|--stream-bytes '1,2' is not one size|rma-bench --stream-bytes 1,2"
  "rma_bench_bad_table|--table: 'fast' is not one of compare, loss, width, window|rma-bench --table fast"
  "rma_bench_zero_depth|--depths: 0 is outside its range \\[1, 1048576\\]|rma-bench --table loss --depths 2,0"
  "rma_bench_negative_pace|--paces: '-5' is not a whole number|rma-bench --table loss --paces 0,-5"
  "rma_bench_garbage_pace|--paces: '1x' is not a whole number|rma-bench --table loss --paces 1x"
  "rma_bench_empty_pace|--paces: '' is not a whole number|rma-bench --table loss --paces 0,,5"
  "rma_bench_short_payload|--payload 4: at least 8 bytes are needed|rma-bench --table loss --payload 4"
  "rma_bench_width_background|--background: --table width has no background|rma-bench --table width --background"
  "rma_bench_width_one_rank|--table width: run it under grove run -n 2 or more|rma-bench --table width"
  "rma_bench_window_zero_size|--sizes: a payload of 0 bytes|rma-bench --table window --sizes 0,8"
  "rma_bench_from_missing_tsv|--from-tsv: cannot read /nonexistent.tsv|rma-bench --from-tsv /nonexistent.tsv"
  "bench_ring_bad_algo|--algo 'fast' for ring: the ring's algorithms are safe, raw|bench --coll ring --algo fast"
  "bench_ring_mixed|--coll: 'bcast' is a collective|bench --coll ring,bcast"
  "bench_ring_peers|--coll ring, p2p, put, get: run them under grove run -n N|bench --coll ring --peers openmpi"
  "bench_put_with_ring|--coll: put and get \\(a window\\) run apart|bench --coll put,ring"
  "model_check_zero_ranks|-n 0 is outside its range|model check -n 0"
  "model_radix_bad_segment|--segment: 'x' is not a byte count|model radix --segment x --no-sim"
  "model_radix_one_rank|-n 1: need 2..2\\^20|model radix -n 1"
  "fence_campaign_zero_ranks|--sizes 0 is outside its range|fence campaign --sizes 0"
  "fence_campaign_negative_random|--random: Value -1 not in range|fence campaign --random -1"
  "fence_campaign_radix_one|--routing 1 is outside its range|fence campaign --routing 1"
  "fence_compare_zero_ranks|--sizes 0 is outside its range|fence compare --sizes 0"
  "fence_compare_bad_payload|--payloads: 'x' is not a byte count|fence compare --payloads x"
  "run_bad_ranks|-n 'x' is not a number of ranks|run -n x true"
)
set(cli_tests "")
foreach(entry ${GROVE_BAD_COMMAND_LINES})
  string(REPLACE "|" ";" fields "${entry}")
  list(GET fields 0 name)
  list(GET fields 1 message)
  list(GET fields 2 arguments)
  separate_arguments(arguments UNIX_COMMAND "${arguments}")
  add_test(NAME cli.${name}
           COMMAND ${GROVE_EXPECT} 2 --match "${message}" -- ${GROVE_TOOL} ${arguments})
  list(APPEND cli_tests cli.${name})
endforeach()
# An unknown collective is refused before the bench prints its header.
add_test(NAME cli.bench_unknown_coll
         COMMAND ${GROVE_EXPECT} 2 --match "unknown collective 'nosuch'" --absent "# grove bench"
                 -- ${GROVE_TOOL} bench --coll nosuch)
list(APPEND cli_tests cli.bench_unknown_coll)
set_tests_properties(${cli_tests} PROPERTIES TIMEOUT 60)

# ---- the hierarchical algorithm (ranks told they run on several hosts) ----
foreach(shape "6 3" "5 2" "7 3" "4 4" "8 2")
  separate_arguments(shape)
  list(GET shape 0 n)
  list(GET shape 1 hosts)
  add_test(NAME coll.hier.n${n}.hosts${hosts}
           COMMAND ${GROVE_TOOL} run -n ${n} --hosts ${hosts} --param wait_policy=block
                   $<TARGET_FILE:mp_hier>)
  set_tests_properties(coll.hier.n${n}.hosts${hosts} PROPERTIES TIMEOUT 300
                       PASS_REGULAR_EXPRESSION "hier ok: ${n} ranks, ${hosts} hosts")
endforeach()
# The whole collective matrix with the world spread over hosts: every
# blocking auto call of barrier, bcast, reduce, allreduce and allgather
# takes the hierarchical path.
add_test(NAME coll.colls.n6.hosts3
         COMMAND ${GROVE_TOOL} run -n 6 --hosts 3 --param wait_policy=block $<TARGET_FILE:mp_colls>)
set_tests_properties(coll.colls.n6.hosts3 PROPERTIES TIMEOUT 600
                     PASS_REGULAR_EXPRESSION "colls ok: 6 ranks")

# ---- grove tune and grove explain (tools/tuning/) ----
# explain's choice against the plan the call ran: one host, and the world
# spread over two hosts (the hierarchical rows).
foreach(shape "3 1" "4 2")
  separate_arguments(shape)
  list(GET shape 0 n)
  list(GET shape 1 hosts)
  add_test(NAME tune.explain_choice.n${n}.hosts${hosts}
           COMMAND ${GROVE_TOOL} run -n ${n} --hosts ${hosts} --param wait_policy=block
                   $<TARGET_FILE:mp_explain_choice>)
  set_tests_properties(tune.explain_choice.n${n}.hosts${hosts} PROPERTIES TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "explain_choice ok: ${n} ranks, 21 cases")
endforeach()
set(GROVE_TUNE_TEST ${CMAKE_CURRENT_SOURCE_DIR}/mp/tune_cli_test.sh)
add_test(NAME tune.cli COMMAND sh ${GROVE_TUNE_TEST} ${GROVE_TOOL} cli)
set_tests_properties(tune.cli PROPERTIES TIMEOUT 60 PASS_REGULAR_EXPRESSION "tune cli ok")
# grove probe's table through the launcher: its host terms and the copy
# curves between the two ranks, read back by grove sim and grove explain.
add_test(NAME tune.probe_copies COMMAND sh ${GROVE_TUNE_TEST} ${GROVE_TOOL} probe)
set_tests_properties(tune.probe_copies PROPERTIES TIMEOUT 120 PASS_REGULAR_EXPRESSION "tune probe ok")
# The exports, loaded by the MPI peers' jobs (skipped when a peer was not built).
foreach(peer openmpi mpich)
  set(peer_exe "")
  if(TARGET grove-peer-${peer})
    set(peer_exe $<TARGET_FILE:grove-peer-${peer}>)
  endif()
  add_test(NAME tune.export.${peer} COMMAND sh ${GROVE_TUNE_TEST} ${GROVE_TOOL} ${peer} "${peer_exe}")
  set_tests_properties(tune.export.${peer} PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77
                       PASS_REGULAR_EXPRESSION "tune export ${peer} ok|peer ${peer} not built")
endforeach()
# ---- docs/reliability.md: nothing written after a call returned or threw
# (a receive left posted by a timed-out call must be cancelled: the late
# sender's message lands in no buffer; under AddressSanitizer a late write
# is a heap-use-after-free report); a departed rank named within 1 s
# whichever rank was waited for, on both paths; no shared-memory segment
# left after a rank was killed while communicators were being made ----
set(MP_RELIABILITY $<TARGET_FILE:mp_reliability>)
add_test(NAME reliability.late_sender.n2
         COMMAND ${GROVE_TOOL} run -n 2 --param wait_policy=block --param bcast_algorithm=binomial
                 --param timeout_ms=1000 ${MP_RELIABILITY} late_sender)
set_tests_properties(reliability.late_sender.n2 PROPERTIES TIMEOUT 60
                     PASS_REGULAR_EXPRESSION "late_sender ok"
                     FAIL_REGULAR_EXPRESSION "FAILED;AddressSanitizer;exited with code;killed by")
add_test(NAME reliability.late_p2p.n2
         COMMAND ${GROVE_TOOL} run -n 2 --param wait_policy=block --param timeout_ms=1000
                 ${MP_RELIABILITY} late_p2p)
set_tests_properties(reliability.late_p2p.n2 PROPERTIES TIMEOUT 60
                     PASS_REGULAR_EXPRESSION "late_p2p ok"
                     FAIL_REGULAR_EXPRESSION "FAILED;AddressSanitizer;exited with code;killed by")
set(GROVE_NAMED_IN_TIME ${CMAKE_CURRENT_SOURCE_DIR}/mp/named_in_time.sh)
foreach(path shm schedule)
  if(path STREQUAL "schedule")
    set(force --param bcast_algorithm=binomial)
  else()
    set(force "")
  endif()
  foreach(waited late gone)
    set(name reliability.departed_${waited}_${path}.n3)
    add_test(NAME ${name}
             COMMAND sh ${GROVE_NAMED_IN_TIME} 3 "grove run: rank 2 exited with code 3"
                     "^departed ok: rank 0 named rank 2$" 1
                     -- ${GROVE_TOOL} run -n 3 --on-failure=notify --param wait_policy=block
                        --param timeout_ms=30000 ${force}
                        ${MP_RELIABILITY} departed ${waited} ${path})
    set_tests_properties(${name} PROPERTIES TIMEOUT 60 PASS_REGULAR_EXPRESSION "named_in_time ok"
                         FAIL_REGULAR_EXPRESSION "FAILED;AddressSanitizer")
  endforeach()
endforeach()
add_test(NAME reliability.dup_killed.n3
         COMMAND sh ${GROVE_NAMED_IN_TIME} 137 "grove run: rank 1 killed by signal 9"
                 "^dup_killed ok: rank [02] named rank 1$" 2
                 -- ${GROVE_TOOL} run -n 3 --on-failure=notify --param wait_policy=block
                    --param timeout_ms=30000 ${MP_RELIABILITY} dup_killed 1 200)
add_test(NAME reliability.shm_leak.n4
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mp/shm_leak.sh ${GROVE_TOOL} ${MP_RELIABILITY}
                 ${CMAKE_CURRENT_BINARY_DIR}/reliability.shm_leak)
set_tests_properties(reliability.dup_killed.n3 PROPERTIES TIMEOUT 60
                     PASS_REGULAR_EXPRESSION "named_in_time ok"
                     FAIL_REGULAR_EXPRESSION "FAILED;AddressSanitizer")
set_tests_properties(reliability.shm_leak.n4 PROPERTIES TIMEOUT 180
                     PASS_REGULAR_EXPRESSION "shm_leak ok")
# ---- point-to-point (api/p2p.cpp): exact bytes, order, wildcards, probe,
# typed forms, beside collectives; named errors; a departed sender.
foreach(n 1 2 3 5)
  add_test(NAME p2p.basic.n${n}
           COMMAND ${GROVE_TOOL} run -n ${n} --param wait_policy=block $<TARGET_FILE:mp_p2p>)
  set_tests_properties(p2p.basic.n${n} PROPERTIES TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "p2p ok: ${n} ranks"
                       FAIL_REGULAR_EXPRESSION "FAILED;finalize barrier failed;exited with code")
endforeach()
add_test(NAME p2p.errors
         COMMAND ${GROVE_EXPECT} 0 --match "truncated: truncated: rank 1: recv from 0 \\(tag 2, 10 B buffer\\): a message from rank 0 \\(tag 2\\) is longer than the 10-byte buffer"
                 --match "bad rank: invalid argument: rank [0-9]: send: rank 3 is not in \\[0, 3\\)"
                 --match "partial element: mismatch: .*6 B is not a whole number of 4-byte elements"
                 --match "p2p errors ok"
                 -- ${GROVE_TOOL} run -n 3 --param wait_policy=block $<TARGET_FILE:mp_p2p> errors)
add_test(NAME p2p.departed
         COMMAND ${GROVE_EXPECT} 3 --match "departed: peer failed: rank 0: recv from 1 \\(tag 0, 8 B buffer\\): rank 1 departed"
                 --match "p2p departed ok"
                 -- ${GROVE_TOOL} run -n 3 --on-failure=notify --param wait_policy=block
                    $<TARGET_FILE:mp_p2p> departed)
set_tests_properties(p2p.errors p2p.departed PROPERTIES TIMEOUT 60)

# ---- typed windows (grove::Window<T>): every operation and type with exact
# results under contention; bounds and type errors; disagreeing ranks; a
# departed target named.
foreach(n 1 2 3 4)
  add_test(NAME rma.window.n${n}
           COMMAND ${GROVE_TOOL} run -n ${n} --param wait_policy=block $<TARGET_FILE:mp_window>)
  set_tests_properties(rma.window.n${n} PROPERTIES TIMEOUT 300
                       PASS_REGULAR_EXPRESSION "window ok: ${n} ranks"
                       FAIL_REGULAR_EXPRESSION "FAILED;finalize barrier failed;exited with code")
endforeach()
add_test(NAME rma.window.through_ucx
         COMMAND ${GROVE_TOOL} run -n 3 --param wait_policy=block --param rma_direct=false
                 $<TARGET_FILE:mp_window>)
set_tests_properties(rma.window.through_ucx PROPERTIES TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "window ok: 3 ranks"
                     FAIL_REGULAR_EXPRESSION "FAILED;finalize barrier failed;exited with code")
add_test(NAME rma.window.errors
         COMMAND ${GROVE_EXPECT} 0 --match "put out of bounds: invalid argument: rank 0: window\\(int32 x 16\\) put to rank 1: elements \\[13, 17\\) \\(offset 52 B, length 16 B\\) are outside the window of 16 elements"
                 --match "bitwise on float: invalid argument: .*bxor is not defined on float32"
                 --match "closed: invalid argument: .*the window is closed"
                 --match "window errors ok"
                 -- ${GROVE_TOOL} run -n 2 --param wait_policy=block $<TARGET_FILE:mp_window> errors)
add_test(NAME rma.window.mismatch
         COMMAND ${GROVE_EXPECT} 0 --match "mismatch: mismatch: rank 1: window\\(int32 x 17\\): rank 0 created window\\(int32 x 16\\)"
                 --match "mismatch: mismatch: rank 0: window\\(int32 x 16\\): rank 1 created window\\(int32 x 17\\)"
                 --match "window mismatch ok"
                 -- ${GROVE_TOOL} run -n 3 --param wait_policy=block $<TARGET_FILE:mp_window> mismatch)
add_test(NAME rma.window.departed
         COMMAND ${GROVE_EXPECT} 3 --match "window departed: peer failed: rank 0: window\\(int64 x 8\\) get to rank 1: rank 1 departed"
                 --match "window departed ok"
                 -- ${GROVE_TOOL} run -n 3 --on-failure=notify --param wait_policy=block
                    $<TARGET_FILE:mp_window> departed)
set_tests_properties(rma.window.errors rma.window.mismatch rma.window.departed PROPERTIES TIMEOUT 60)

# ---- ring channels (grove::Ring): safe soak (everything, in order), large
# messages on the chunked path, raw loss exact and the soak invariant
# delivered + lost = sent; named errors.
foreach(n 2 3 5 8)
  add_test(NAME rma.ring.n${n}
           COMMAND ${GROVE_TOOL} run -n ${n} --param wait_policy=block $<TARGET_FILE:mp_ring>)
  set_tests_properties(rma.ring.n${n} PROPERTIES TIMEOUT 300
                       PASS_REGULAR_EXPRESSION "ring ok: ${n} ranks"
                       FAIL_REGULAR_EXPRESSION "FAILED;finalize barrier failed;exited with code")
endforeach()
# How the large case's messages went, per run: through mappings every
# message stays in its slot (safe mode chunks the four above 8 KiB where
# ring_chunk_bytes is set so below), whatever ring_direct_bytes says; through UCX's put/get (rma_direct=false) those
# above ring_direct_bytes go by descriptor (two above 64 KiB, four above 4 KiB).
add_test(NAME rma.ring.through_ucx
         COMMAND ${GROVE_EXPECT} 0 --match "ring ok: 3 ranks"
                 --match "rank 0 large safe: sent 8, chunked 0, by descriptor 2"
                 --match "rank 0 large raw: sent 8, chunked 0, by descriptor 2"
                 --absent "FAILED|finalize barrier failed|exited with code"
                 -- ${GROVE_TOOL} run -n 3 --param wait_policy=block --param rma_direct=false
                 $<TARGET_FILE:mp_ring>)
set_tests_properties(rma.ring.through_ucx PROPERTIES TIMEOUT 300)
# The same with ring_direct_bytes at 4 KiB: the large case's sizes lie
# below, at and above it; mapped lanes still keep them in their slots
# (single copy off: the large case sends before it receives, so whether an
# offer is taken or taken back depends on timing).
foreach(n 2 3)
  add_test(NAME rma.ring.direct.n${n}
           COMMAND ${GROVE_EXPECT} 0 --match "ring ok: ${n} ranks"
                   --match "rank 0 large safe: sent 8, chunked 4, by descriptor 0"
                   --match "rank 1 large raw: sent 8, chunked 0, by descriptor 0"
                   --absent "FAILED|finalize barrier failed|exited with code"
                   -- ${GROVE_TOOL} run -n ${n} --param wait_policy=block
                   --param ring_direct_bytes=4096 --param ring_single_copy_bytes=0
                   --param ring_chunk_bytes=8192
                   $<TARGET_FILE:mp_ring>)
  set_tests_properties(rma.ring.direct.n${n} PROPERTIES TIMEOUT 300)
endforeach()
add_test(NAME rma.ring.direct.through_ucx
         COMMAND ${GROVE_EXPECT} 0 --match "ring ok: 3 ranks"
                 --match "rank 0 large safe: sent 8, chunked 0, by descriptor 4"
                 --match "rank 2 large raw: sent 8, chunked 0, by descriptor 4"
                 --absent "FAILED|finalize barrier failed|exited with code"
                 -- ${GROVE_TOOL} run -n 3 --param wait_policy=block --param rma_direct=false
                 --param ring_direct_bytes=4096 $<TARGET_FILE:mp_ring>)
set_tests_properties(rma.ring.direct.through_ucx PROPERTIES TIMEOUT 300)
# Single copy (docs/rma.md "Large messages"): a ping-pong of three messages
# above ring_single_copy_bytes each way, every offer taken (a minute to take
# it), and with the payload CRC on; with the path off, all three chunked.
foreach(variant plain crc off)
  set(args --param ring_single_copy_bytes=16384 --param ring_single_copy_wait_us=60000000)
  set(want "single copy 3, chunked 0, corrupt 0")
  if(variant STREQUAL "crc")
    list(APPEND args --param ring_single_copy_crc=true)
  elseif(variant STREQUAL "off")
    set(args --param ring_single_copy_bytes=0)
    set(want "single copy 0, chunked 3, corrupt 0")
  endif()
  add_test(NAME rma.ring.single_copy.${variant}
           COMMAND ${GROVE_EXPECT} 0 --match "rank 0 single copy: sent 3, ${want}"
                   --match "rank 1 single copy: sent 3, ${want}"
                   --match "ring single ok"
                   --absent "FAILED|finalize barrier failed|exited with code"
                   -- ${GROVE_TOOL} run -n 2 --param wait_policy=block ${args}
                   $<TARGET_FILE:mp_ring> single)
  set_tests_properties(rma.ring.single_copy.${variant} PROPERTIES TIMEOUT 120)
endforeach()
add_test(NAME rma.ring.errors
         COMMAND ${GROVE_EXPECT} 0 --match "too long: invalid argument: rank 0: ring lane 0 -> 1 \\(safe, depth 2, capacity 64 B\\): a message of 65 B exceeds the lane's slot capacity of 64 B; nothing was sent"
                 --match "no lane: invalid argument: rank 0: ring send to 2: no lane 0 -> 2"
                 --match "short buffer: truncated: rank 1: ring lane 0 -> 1 .*message 1 has 40 B, the receive buffer 16 B; nothing was consumed"
                 --match "ring errors ok"
                 -- ${GROVE_TOOL} run -n 3 --param wait_policy=block $<TARGET_FILE:mp_ring> errors)
add_test(NAME rma.ring.mismatch
         COMMAND ${GROVE_EXPECT} 0 --match "mismatch: mismatch: rank 2: .*rank 0.*1 -> 2 \\(depth 8"
                 --match "ring mismatch ok"
                 -- ${GROVE_TOOL} run -n 3 --param wait_policy=block $<TARGET_FILE:mp_ring> mismatch)
add_test(NAME rma.ring.zero_depth
         COMMAND ${GROVE_EXPECT} 0 --match "zero depth: invalid argument: rank 1: ring: lane 0 -> 1 \\(depth 0, capacity 64 B\\): depth 0 \\(a lane needs at least one slot\\); no ring was created"
                 --match "ring zero ok"
                 -- ${GROVE_TOOL} run -n 2 --param wait_policy=block $<TARGET_FILE:mp_ring> zero)
# A sleeping reader (then a writer sleeping on credits) is woken by its
# peer's publication: no sleep runs out its 1 s limit. Both ways of
# sleeping on a mapped lane: a short look then the membarrier and the rest
# (default), and one look covering the whole sleep; and with 4 ranks, where
# two idle ranks make the host oversubscribed on 2 cores.
foreach(variant default look n4)
  set(args -n 2)
  if(variant STREQUAL "look")
    list(APPEND args --param ring_sleep_look_us=1000000)
  elseif(variant STREQUAL "n4")
    set(args -n 4)
  endif()
  add_test(NAME rma.ring.wake.${variant}
           COMMAND ${GROVE_EXPECT} 0 --match "rank 1 reader: delivered 20, sleeps [1-9][0-9]*, timed out 0"
                   --match "rank 0 writer: sent 21, waits [0-9]+, sleeps [1-9][0-9]*, timed out 0"
                   --match "ring wake ok"
                   --absent "FAILED|finalize barrier failed|exited with code"
                   -- ${GROVE_TOOL} run ${args} --param wait_policy=block
                   --param shm_wake_interval_us=1000000 --param wait_block_slice_us=1000000
                   $<TARGET_FILE:mp_ring> wake)
  set_tests_properties(rma.ring.wake.${variant} PROPERTIES TIMEOUT 60)
endforeach()
set_tests_properties(rma.ring.errors rma.ring.mismatch rma.ring.zero_depth PROPERTIES TIMEOUT 60)
# `grove rma-bench` runs end to end with tiny settings (no timing is checked),
# ring payloads below, at and above ring_direct_bytes: through mappings in
# the slots (chunked above 16 KiB in safe mode), through UCX's put/get by
# descriptor above it.
add_test(NAME bench.rma_bench.tiny
         COMMAND ${GROVE_EXPECT} 0 --match "ring_direct_bytes 4KiB"
                 --match "safe +4096 delivered_pct +100 .*  slot$"
                 --match "safe +16384 delivered_pct +100 .*  chunked slot$"
                 --match "safe +16384 sleeps +[0-9]"
                 --match "raw +16384 delivered_pct .*  slot$"
                 --match "p2p +16384 delivered_pct"
                 --match "raw +64 inject_msgps +[0-9]"
                 --match "raw +64 goodput_msgps +[0-9]"
                 --match "safe +64 goodput_msgps +[0-9]"
                 -- ${GROVE_TOOL} run -n 3 --param wait_policy=block --param ring_direct_bytes=4KiB
                 --param ring_chunk_bytes=8KiB
                 ${GROVE_TOOL} rma-bench --sizes 16KiB,64,4KiB --repeats 2 --pingpongs 3
                 --stream-bytes 32KiB --background)
add_test(NAME bench.rma_bench.tiny_through_ucx
         COMMAND ${GROVE_EXPECT} 0 --match "safe +4096 delivered_pct +100 .*  slot$"
                 --match "safe +16384 delivered_pct +100 .*  descriptor$"
                 --match "raw +16384 delivered_pct .*  descriptor$"
                 -- ${GROVE_TOOL} run -n 2 --param wait_policy=block --param ring_direct_bytes=4KiB
                 --param rma_direct=false ${GROVE_TOOL} rma-bench --modes safe,raw
                 --sizes 16KiB,4KiB --repeats 2 --pingpongs 3 --stream-bytes 32KiB)
set_tests_properties(bench.rma_bench.tiny bench.rma_bench.tiny_through_ucx PROPERTIES TIMEOUT 120)
# The other tables end to end, tiny. loss: the tool itself refuses a repeat
# where delivered + lost != sent (Errc::internal), so the rows' presence is
# the check; width: safe mode must deliver 100% at N = 4 (and in order, or
# the tool fails); window: every payload is put, flushed, read back and
# compared before it is timed.
add_test(NAME bench.rma_bench.loss_tiny
         COMMAND ${GROVE_EXPECT} 0 --match "raw/depth=2/pace_ns=0 +64 lost_pct +[0-9]"
                 --match "raw/depth=8/pace_ns=1000 +64 offered_msgps +[0-9]"
                 --absent "delivered .* != sent|exited with code"
                 -- ${GROVE_TOOL} run -n 3 --param wait_policy=block ${GROVE_TOOL} rma-bench
                 --table loss --depths 2,8 --paces 0,1000 --messages 300 --repeats 2
                 --payload 64 --background)
add_test(NAME bench.rma_bench.loss_through_ucx
         COMMAND ${GROVE_EXPECT} 0 --match "raw/depth=2/pace_ns=2000 +64 lost_pct +[0-9]"
                 --absent "delivered .* != sent|exited with code"
                 -- ${GROVE_TOOL} run -n 2 --param rma_direct=false ${GROVE_TOOL} rma-bench
                 --table loss --depths 2 --paces 0,2000 --messages 300 --repeats 2 --payload 64)
add_test(NAME bench.rma_bench.width_n4
         COMMAND ${GROVE_EXPECT} 0 --match "safe/ranks=4 +256 delivered_pct +100 \\[100, 100\\]"
                 --match "safe/ranks=4 +256 max_blocked +[0-9]"
                 --absent "exited with code"
                 -- ${GROVE_TOOL} run -n 4 --param wait_policy=block ${GROVE_TOOL} rma-bench
                 --table width --messages 300 --repeats 2 --depth 2)
add_test(NAME bench.rma_bench.window_tiny
         COMMAND ${GROVE_EXPECT} 0 --match "grove/put +8 latency_us +[0-9]"
                 --match "grove/get +8 latency_us +[0-9]"
                 --match "grove/put +1048576 bandwidth_MiBps +[0-9]"
                 --match "grove/get +1048576 bandwidth_MiBps +[0-9]"
                 --absent "read back as|exited with code"
                 -- ${GROVE_TOOL} run -n 2 ${GROVE_TOOL} rma-bench --table window
                 --sizes 8,1000,1MiB --repeats 1 --pingpongs 3 --stream-bytes 2MiB)
add_test(NAME bench.rma_bench.window_through_ucx
         COMMAND ${GROVE_EXPECT} 0 --match "grove/get +1048576 bandwidth_MiBps +[0-9]"
                 --absent "read back as|exited with code"
                 -- ${GROVE_TOOL} run -n 2 --param rma_direct=false ${GROVE_TOOL} rma-bench
                 --table window --sizes 8,1000,1MiB --repeats 1 --pingpongs 3 --stream-bytes 2MiB)
# `grove bench --coll ring|p2p|put|get` routes to the same machinery.
add_test(NAME bench.coll_ring_p2p
         COMMAND ${GROVE_EXPECT} 0 --match "safe +64 delivered_pct +100"
                 --match "p2p +64 goodput_msgps +[0-9]"
                 --absent "raw +64|exited with code"
                 -- ${GROVE_TOOL} run -n 2 ${GROVE_TOOL} bench --coll ring,p2p --algo safe
                 --sizes 64)
add_test(NAME bench.coll_put_get
         COMMAND ${GROVE_EXPECT} 0 --match "grove/put +64 latency_us +[0-9]"
                 -- ${GROVE_TOOL} run -n 2 ${GROVE_TOOL} bench --coll put,get --sizes 64)
set_tests_properties(bench.rma_bench.loss_tiny bench.rma_bench.loss_through_ucx
                     bench.rma_bench.width_n4
                     bench.rma_bench.window_tiny bench.rma_bench.window_through_ucx
                     bench.coll_ring_p2p bench.coll_put_get PROPERTIES TIMEOUT 120)
