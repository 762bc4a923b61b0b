# --- fault injection (issue 10, point 4) ------------------------------------------------------
# Scenarios against the sandbox: daemons killed, the V-IPU controller failing and hanging,
# slurmctld restarted, full disks under the agent, a wall-clock jump seen by the agent alone.
# The shared checks (nothing left behind, no event lost or doubled) are in faults_lib.sh.
# Every scenario kills, stops or breaks something the whole sandbox shares (the agent, the
# aggregator, slurmctld, the fake controller's fault rules, the node's drain state), so each
# runs alone. Run them with: ctest -L faults --output-on-failure; ACCEL_FAULTS_SEED=N replays
# the random choices of a logged run.
set(accel_fault_scenarios
    faults_agent_kill
    faults_agent_kill_hooks
    faults_aggregator_kill
    faults_vipu
    faults_slurmctld_restart
    faults_disk_full_spool
    faults_disk_full_state
    faults_clock_jump
    faults_clock_jump_queued)
foreach(scenario IN LISTS accel_fault_scenarios)
  accel_integration_test(${scenario})
  set_tests_properties(integration.${scenario} PROPERTIES
                       RUN_SERIAL TRUE
                       LABELS "integration;faults"
                       TIMEOUT 150)
endforeach()

