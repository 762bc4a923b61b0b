# --- the demo (README's first command), run twice (included by CMakeLists.txt) ---------------
# It starts a sandbox of its own (<build>/demo-sandbox), so it needs none of the fixtures; it
# runs alone to keep two Slurm sandboxes from sharing the two cores with other tests.
add_test(NAME integration.demo_twice COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/demo_twice.sh)
set_tests_properties(integration.demo_twice PROPERTIES
                     LABELS "integration;demo"
                     ENVIRONMENT "ACCEL_BUILD_DIR=${CMAKE_BINARY_DIR}"
                     RUN_SERIAL TRUE
                     TIMEOUT 400)
