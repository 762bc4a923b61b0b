# --- metrics: the sandbox's Prometheus (included by CMakeLists.txt) ---------------------------
# It stops the sandbox's accel-agentd for a while (the AccelAgentDown alert), so it runs alone.
accel_integration_test(prometheus_scrape)
set_tests_properties(integration.prometheus_scrape PROPERTIES RUN_SERIAL TRUE)
