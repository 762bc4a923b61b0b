# Appliance time limits and surrogate steps (issue 8): the tests beyond appliance_job,
# appliance_limit and surrogate_steps, which CMakeLists.txt registers.
accel_integration_test(surrogate_races)
accel_integration_test(appliance_queue)
# It kills the sandbox's shared accel-agentd mid-job: nothing else may run meanwhile.
accel_integration_test(appliance_restart)
set_tests_properties(integration.appliance_restart PROPERTIES RUN_SERIAL TRUE)
