# --- node agent: jobs whose epilog never came (included by CMakeLists.txt) -------------------
# It stops the sandbox's accel-agentd and drains (then resumes) the node: it runs alone.
accel_integration_test(agent_stale_job)
set_tests_properties(integration.agent_stale_job PROPERTIES RUN_SERIAL TRUE)
