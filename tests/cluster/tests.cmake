# grove on an emulated cluster (scripts/cluster.sh): network namespaces on
# this machine, made and removed by each test; skipped, with the reason
# printed, only where namespaces cannot be created. One test per launcher
# and layout: hosts, every collective, the fence with a relay killed; then
# the bytes of a 1 MiB bcast on the links, and a host that drops out.
# Label `cluster` (`make test-cluster` runs them alone); they share one lock
# so that two clusters never compete for the two cores.
set(CLUSTER_TEST ${CMAKE_CURRENT_SOURCE_DIR}/cluster/cluster_test.sh)
set(CLUSTER_BIN $<TARGET_FILE_DIR:mp_colls>)
foreach(launcher mpirun srun)
  foreach(layout "4;2" "8;1")
    list(GET layout 0 hosts)
    list(GET layout 1 per_host)
    set(name cluster.${launcher}.${hosts}x${per_host})
    add_test(NAME ${name} COMMAND ${CLUSTER_TEST} ${CLUSTER_BIN} ${launcher} ${hosts} ${per_host})
    set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "all checks passed")
  endforeach()
endforeach()
add_test(NAME cluster.tcp_bytes COMMAND ${CLUSTER_TEST} ${CLUSTER_BIN} tcp-bytes)
add_test(NAME cluster.host_drop COMMAND ${CLUSTER_TEST} ${CLUSTER_BIN} host-drop)
set_tests_properties(cluster.tcp_bytes cluster.host_drop PROPERTIES
                     PASS_REGULAR_EXPRESSION "all checks passed")
# COST: a ctest run with no timings of an earlier one (CI's) starts these
# first, so that their chain under the lock (about 80 s on 2 cores) runs
# beside the other tests instead of after them, alone.
set_tests_properties(cluster.mpirun.4x2 cluster.mpirun.8x1 cluster.srun.4x2 cluster.srun.8x1
                     cluster.tcp_bytes cluster.host_drop PROPERTIES
                     LABELS cluster RESOURCE_LOCK emulated_cluster TIMEOUT 600 COST 1000
                     SKIP_RETURN_CODE 77 FAIL_REGULAR_EXPRESSION "FAIL: ")
