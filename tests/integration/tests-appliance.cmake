# Appliance time limits and surrogate steps (issue 8): the tests beyond appliance_job,
# appliance_limit and surrogate_steps, which CMakeLists.txt registers.
accel_integration_test(surrogate_races)
accel_integration_test(appliance_queue)
# It kills the sandbox's shared accel-agentd mid-job: nothing else may run meanwhile.
accel_integration_test(appliance_restart)
set_tests_properties(integration.appliance_restart PROPERTIES RUN_SERIAL TRUE)

# The longer appliance tests keep a job of the sandbox's two CPUs busy for half a minute and
# more; run beside others, they starve those tests' jobs of a CPU past their waits. They run
# alone, and so does fabric_job, which compares the whole fabric namespace before and after its
# job (another test's job on the same NICs would show there).
set_tests_properties(integration.appliance_limit integration.appliance_queue integration.surrogate_races
                     integration.fabric_job PROPERTIES RUN_SERIAL TRUE)
