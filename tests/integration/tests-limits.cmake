# --- the appliance limit over whole process trees (limit_lib.sh) ------------------------------
# Real process trees on the one-node sandbox (proctrack/cgroup): every process of the job's
# steps gets the warning, SIGTERM and, after the grace, SIGKILL; three jobs of two kinds.
accel_integration_test(limit_process_tree)
set_tests_properties(integration.limit_process_tree PROPERTIES TIMEOUT 240)
