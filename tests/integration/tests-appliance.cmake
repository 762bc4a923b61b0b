# Appliance time limits and surrogate steps (issue 8): the tests beyond appliance_job,
# appliance_limit and surrogate_steps, which CMakeLists.txt registers.
accel_integration_test(surrogate_races)
accel_integration_test(appliance_queue)
