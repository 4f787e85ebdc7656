# The `pmix` bootstrap on one host: grove programs started by Open MPI's
# mpirun (Debian's 4.1.4 over the system PMIx 4.2), and by pmix_fake_server,
# a PMIx launcher of our own that misbehaves on request (refuses a fence,
# never completes one, loses a rank's key, sends failure events).
add_executable(pmix_fake_server ${CMAKE_CURRENT_SOURCE_DIR}/pmix/fake_server.cpp)
target_link_libraries(pmix_fake_server PRIVATE PkgConfig::PMIX)
target_compile_options(pmix_fake_server PRIVATE ${GROVE_WARNINGS})

set(FAKE_PMIX $<TARGET_FILE:pmix_fake_server>)
set(MP_BOOTSTRAP $<TARGET_FILE:mp_bootstrap>)
set(GROVE_EXPECT ${CMAKE_CURRENT_SOURCE_DIR}/mp/expect.sh)

find_program(MPIRUN_OPENMPI mpirun.openmpi)
if(MPIRUN_OPENMPI)
  # grove programs are not MPI programs: mpirun only starts them and serves
  # PMIx, its own traffic on loopback. --enable-recovery (where given): a rank
  # that dies does not end the job (the survivors hear of it from the pmix
  # bootstrap's watch).
  set(MPIRUN ${MPIRUN_OPENMPI} --allow-run-as-root --oversubscribe --mca oob_tcp_if_include lo)
else()
  set(MPIRUN sh -c "echo 'mpirun.openmpi not found: scripts/deps.sh installs openmpi-bin'; exit 1" --)
endif()

add_test(NAME pmix.mpirun.bootstrap.n4 COMMAND ${MPIRUN} -np 4 ${MP_BOOTSTRAP})
set_tests_properties(pmix.mpirun.bootstrap.n4 PROPERTIES PASS_REGULAR_EXPRESSION
                     "bootstrap ok: 4 ranks")
add_test(NAME pmix.mpirun.hosts.n3 COMMAND ${MPIRUN} -np 3 ${MP_BOOTSTRAP} hosts pmix 1 3 -)
set_tests_properties(pmix.mpirun.hosts.n3 PROPERTIES PASS_REGULAR_EXPRESSION
                     "hosts ok: 1 hosts x 3 ranks \\(pmix\\)")
add_test(NAME pmix.grove_run.hosts.n3 COMMAND ${GROVE_TOOL} run -n 3 ${MP_BOOTSTRAP} hosts local 1 3 -)
set_tests_properties(pmix.grove_run.hosts.n3 PROPERTIES PASS_REGULAR_EXPRESSION
                     "hosts ok: 1 hosts x 3 ranks \\(local\\)")
# Every collective and algorithm (tests/mp/colls.cpp) and the fence.
add_test(NAME pmix.mpirun.colls.n4
         COMMAND ${MPIRUN} -np 4 -x GROVE_WAIT_POLICY=block $<TARGET_FILE:mp_colls>)
set_tests_properties(pmix.mpirun.colls.n4 PROPERTIES PASS_REGULAR_EXPRESSION "colls ok: 4 ranks"
                     FAIL_REGULAR_EXPRESSION "FAILED;finalize barrier failed")
add_test(NAME pmix.mpirun.fence.n5
         COMMAND ${MPIRUN} -np 5 -x GROVE_WAIT_POLICY=block $<TARGET_FILE:mp_fence>)
set_tests_properties(pmix.mpirun.fence.n5 PROPERTIES PASS_REGULAR_EXPRESSION "fence ok: 5 ranks")
# A release relay SIGKILLed in each of 2 rounds (see fence.kill_relay in tests/mp/tests.cmake).
add_test(NAME pmix.mpirun.fence_kill.n8
         COMMAND ${GROVE_EXPECT} 0 --match "fence kill ok: 6 survivors, 2 kills" --absent "check failed"
                 -- ${MPIRUN} --enable-recovery -np 8 -x GROVE_WAIT_POLICY=block
                    -x GROVE_FENCE_RELEASE_DELAY_MS=300 -x GROVE_RELEASE_RADIX=2
                    -x GROVE_TIMEOUT_MS=30000 $<TARGET_FILE:mp_fence> kill 2)
# A rank exits: every survivor gets one notice, from the watch. (Not a PMIx
# fence afterwards: under mpirun a fence begun after a rank died hangs in
# about half the runs, docs/cluster.md.)
add_test(NAME pmix.mpirun.notice.n4
         COMMAND ${GROVE_EXPECT} 0 --match "notice ok: rank 0" --match "notice ok: rank 1"
                 --match "notice ok: rank 3" --absent "check failed"
                 -- ${MPIRUN} --enable-recovery -np 4 ${MP_BOOTSTRAP} notice 2
                    "its process ended")
# Bad input: a rank whose start-up record (its watch address) is late beyond timeout_ms.
add_test(NAME pmix.mpirun.late_peer
         COMMAND ${GROVE_EXPECT} 1 --match "rank 0: start-up exchange: the PMIx (server gave up on the fence|fence did not complete) .*timeout_ms = 2000"
                 -- ${MPIRUN} -np 3 -x GROVE_TIMEOUT_MS=2000 ${MP_BOOTSTRAP} late 1 4000)
set_tests_properties(pmix.mpirun.bootstrap.n4 pmix.mpirun.hosts.n3 pmix.grove_run.hosts.n3
                     pmix.mpirun.fence.n5 pmix.mpirun.fence_kill.n8 pmix.mpirun.notice.n4
                     pmix.mpirun.late_peer PROPERTIES TIMEOUT 120)
set_tests_properties(pmix.mpirun.colls.n4 PROPERTIES TIMEOUT 300)

# ---- pmix_fake_server ----
add_test(NAME pmix.fake.bootstrap.n3 COMMAND ${FAKE_PMIX} -n 3 ${MP_BOOTSTRAP})
set_tests_properties(pmix.fake.bootstrap.n3 PROPERTIES PASS_REGULAR_EXPRESSION "bootstrap ok: 3 ranks")
# Failure notices from PMIx events alone (the watch off), then from both
# sources at once: one notice, version 1.
add_test(NAME pmix.fake.events
         COMMAND ${GROVE_EXPECT} 1 --match "notify ok: 3 survivors" --absent "check failed"
                 -- ${FAKE_PMIX} --notify -n 4 ${MP_BOOTSTRAP} notify 2
                    "PMIx event PROC-EXIT-NONZERO-TERM (exit code 1)")
set_tests_properties(pmix.fake.events PROPERTIES ENVIRONMENT GROVE_PMIX_WATCH=false)
add_test(NAME pmix.fake.events_and_watch
         COMMAND ${GROVE_EXPECT} 1 --match "notify ok: 3 survivors" --absent "check failed"
                 -- ${FAKE_PMIX} --notify -n 4 ${MP_BOOTSTRAP} notify 1)
# Bad input: a key that never arrives, a fence the server fails, a fence it never completes.
add_test(NAME pmix.fake.lose_key
         COMMAND ${GROVE_EXPECT} 1 --match "rank 0: start-up exchange: the PMIx server has no 'grove.start' from rank 3 after the fence \\(it refused or lost the key\\)"
                 -- ${FAKE_PMIX} --fault lose-key -n 3 ${MP_BOOTSTRAP})
add_test(NAME pmix.fake.fence_error
         COMMAND ${GROVE_EXPECT} 1 --match "rank 1: allgather #1: the PMIx fence failed: UNREACH"
                 -- ${FAKE_PMIX} --fault fence-error:2 -n 3 ${MP_BOOTSTRAP})
add_test(NAME pmix.fake.fence_hang
         COMMAND ${GROVE_EXPECT} 1 --match "rank 2: barrier #2: the PMIx fence did not complete within timeout_ms = 1500"
                 -- ${FAKE_PMIX} --fault fence-hang:3 -n 3 ${MP_BOOTSTRAP})
set_tests_properties(pmix.fake.fence_hang PROPERTIES ENVIRONMENT GROVE_TIMEOUT_MS=1500)
set_tests_properties(pmix.fake.bootstrap.n3 pmix.fake.events pmix.fake.events_and_watch
                     pmix.fake.lose_key pmix.fake.fence_error pmix.fake.fence_hang
                     PROPERTIES TIMEOUT 60)
# Bad input: PMIx variables that name no server (a launcher that is gone).
add_test(NAME pmix.no_server
         COMMAND ${GROVE_EXPECT} 1 --match "bootstrap: PMIx_Init failed: UNREACHABLE .*is that launcher still running"
                 -- env PMIX_NAMESPACE=grove-nobody PMIX_RANK=0
                    "PMIX_SERVER_URI41=nobody.0;tcp4://127.0.0.1:9" ${MP_BOOTSTRAP})
set_tests_properties(pmix.no_server PROPERTIES TIMEOUT 60)
