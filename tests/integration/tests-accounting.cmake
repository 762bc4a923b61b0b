# --- events and accounting: outages (included by CMakeLists.txt) ------------------------------
# It stops the sandbox's slurmctld for a while, so it runs alone.
accel_integration_test(accounting_outage)
set_tests_properties(integration.accounting_outage PROPERTIES RUN_SERIAL TRUE TIMEOUT 300)
