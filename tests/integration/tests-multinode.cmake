# --- several nodes: a sandbox of three (scripts/slurm-sandbox up --nodes 3) ---------------------
# Fixture slurm_sandbox3: a cluster of three nodes, each its own host (network, UTS and mount
# namespaces) with its own slurmd and accel-agentd, every node the captured 4-GPU ipa20
# topology, so each has four GPUs as Slurm GRES and two fabric NICs on a shared fabric bridge.
# sbn1 and sbn2 are IPU-POD hosts (a V-IPU controller, the fake one) that read the appliance;
# sbn3 has neither (--no-ipu, --no-appliance): a GPU node, which the GPU tests use and the IPU
# and appliance tests leave alone but one, which sends it an IPU job on purpose.
# It lives in <build>/sandbox3, with its own ports, namespaces and addresses, so it may run
# beside the one-node fixture slurm_sandbox. Except in a sanitizer build: both sandboxes of
# one build share the build's sanitizer options files, which each sandbox's `up` writes and
# `down` removes, so there the three-node sandbox starts once the one-node one is down.
# Run them with: ctest -L multinode --output-on-failure
set(ACCEL_MULTINODE_ENV
    ACCEL_BUILD_DIR=${CMAKE_BINARY_DIR}
    ACCEL_SANDBOX_DIR=${CMAKE_BINARY_DIR}/sandbox3)

add_test(NAME integration.multinode_sandbox_up
         COMMAND ${ACCEL_SANDBOX_SCRIPT} up --nodes 3 --no-ipu sbn3 --no-appliance sbn3
                 --topology ${PROJECT_SOURCE_DIR}/tests/hw_mock/topologies/ipa20.xml)
add_test(NAME integration.multinode_sandbox_down COMMAND ${ACCEL_SANDBOX_SCRIPT} down)
add_test(NAME integration.multinode_test_user
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/setup_test_user.sh)
set_tests_properties(integration.multinode_sandbox_up PROPERTIES FIXTURES_SETUP slurm_sandbox3)
set_tests_properties(integration.multinode_sandbox_down PROPERTIES FIXTURES_CLEANUP slurm_sandbox3)
set_tests_properties(integration.multinode_test_user PROPERTIES
                     FIXTURES_SETUP slurm_test_user3
                     FIXTURES_REQUIRED slurm_sandbox3)
set_tests_properties(integration.multinode_sandbox_up integration.multinode_sandbox_down
                     integration.multinode_test_user
                     PROPERTIES LABELS "integration;multinode"
                                ENVIRONMENT "${ACCEL_MULTINODE_ENV}"
                                TIMEOUT 180)
if(ACCEL_SANITIZE)
  set_tests_properties(integration.multinode_sandbox_up PROPERTIES
                       DEPENDS integration.sandbox_down)
endif()

# accel_multinode_test(NAME): registers NAME.sh of this directory as a test that runs
# against the three-node sandbox as the test user. They take the sandbox one at a time
# (resource sandbox3): several pick the same nodes by name, two drain a node and one kills an
# agent, and each is short; the one-node tests still run beside them.
function(accel_multinode_test name)
  add_test(NAME integration.${name}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/${name}.sh)
  set_tests_properties(integration.${name} PROPERTIES
                       LABELS "integration;multinode"
                       ENVIRONMENT "${ACCEL_MULTINODE_ENV}"
                       FIXTURES_REQUIRED "slurm_sandbox3;slurm_test_user3"
                       RESOURCE_LOCK sandbox3
                       TIMEOUT 180)
endfunction()

accel_multinode_test(multinode_cluster)
accel_multinode_test(multinode_ipu)
accel_multinode_test(multinode_appliance)
accel_multinode_test(multinode_gpu)
accel_multinode_test(multinode_gpu_limit)
accel_multinode_test(multinode_salloc)
accel_multinode_test(multinode_faults)
accel_multinode_test(multinode_limit)
accel_multinode_test(multinode_wrong_kind)
accel_multinode_test(multinode_heartbeat)
accel_multinode_test(multinode_events)
accel_multinode_test(multinode_limit_tree)
accel_multinode_test(multinode_telemetry)
accel_multinode_test(multinode_report)
accel_multinode_test(multinode_xid)
accel_multinode_test(multinode_idle_summary)
accel_multinode_test(multinode_idle_cancel)
