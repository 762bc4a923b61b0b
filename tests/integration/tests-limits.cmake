# --- the appliance limit over whole process trees (limit_lib.sh) ------------------------------
# Real process trees on the one-node sandbox (proctrack/cgroup): every process of the job's
# steps gets the warning, SIGTERM and, after the grace, SIGKILL; three jobs of two kinds.
accel_integration_test(limit_process_tree)
set_tests_properties(integration.limit_process_tree PROPERTIES TIMEOUT 240)
# A process that outlives SIGKILL (the job's freezer cgroup frozen by the test, as a process
# stuck in the kernel) drains the node, naming the job and the processes. The node is drained
# for a while: nothing else may run meanwhile.
accel_integration_test(limit_stuck_process)
set_tests_properties(integration.limit_stuck_process PROPERTIES RUN_SERIAL TRUE)

# Fixture slurm_sandbox_lp: a one-node sandbox of its own made as a site without cgroups runs
# (`up --proctrack linuxproc`), in <build>/sandbox-lp, beside the others (its own ports and
# namespaces). The limit there reaches, through slurmctld, what Slurm's
# own tracking finds (limit_no_cgroups). In a sanitizer build it starts once the three-node
# sandbox is down: the sandboxes of one build share the build's sanitizer options files.
set(ACCEL_LP_ENV ACCEL_BUILD_DIR=${CMAKE_BINARY_DIR} ACCEL_SANDBOX_DIR=${CMAKE_BINARY_DIR}/sandbox-lp)
add_test(NAME integration.linuxproc_sandbox_up
         COMMAND ${ACCEL_SANDBOX_SCRIPT} up --proctrack linuxproc
                 --topology ${PROJECT_SOURCE_DIR}/tests/hw_mock/topologies/ipa20.xml)
add_test(NAME integration.linuxproc_sandbox_down COMMAND ${ACCEL_SANDBOX_SCRIPT} down)
add_test(NAME integration.linuxproc_test_user
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/setup_test_user.sh)
set_tests_properties(integration.linuxproc_sandbox_up PROPERTIES FIXTURES_SETUP slurm_sandbox_lp)
set_tests_properties(integration.linuxproc_sandbox_down PROPERTIES FIXTURES_CLEANUP slurm_sandbox_lp)
set_tests_properties(integration.linuxproc_test_user PROPERTIES
                     FIXTURES_SETUP slurm_test_user_lp
                     FIXTURES_REQUIRED slurm_sandbox_lp)
add_test(NAME integration.limit_no_cgroups
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/limit_no_cgroups.sh)
set_tests_properties(integration.limit_no_cgroups PROPERTIES
                     FIXTURES_REQUIRED "slurm_sandbox_lp;slurm_test_user_lp"
                     TIMEOUT 180)
set_tests_properties(integration.linuxproc_sandbox_up integration.linuxproc_sandbox_down
                     integration.linuxproc_test_user integration.limit_no_cgroups
                     PROPERTIES LABELS integration
                                ENVIRONMENT "${ACCEL_LP_ENV}"
                                TIMEOUT 180)
if(ACCEL_SANITIZE)
  set_tests_properties(integration.linuxproc_sandbox_up PROPERTIES
                       DEPENDS integration.multinode_sandbox_down)
endif()
