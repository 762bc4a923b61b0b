# --- docs: every documented command is run by a test (tests/docs) ----------------------------
# docs.commands_covered needs no Slurm: each command in README.md and docs/*.md is either run
# by integration.docs_commands or listed in tests/docs/not-run-here.txt with the registered
# test that covers it. integration.docs_commands runs them against the sandbox; it submits
# jobs and runs an epilog by hand, so it runs alone.
add_test(NAME docs.commands_covered COMMAND bash ${PROJECT_SOURCE_DIR}/tests/docs/doc_commands.sh check)
set_tests_properties(docs.commands_covered PROPERTIES LABELS docs)

add_test(NAME docs.help COMMAND bash ${PROJECT_SOURCE_DIR}/tests/docs/help.sh ${CMAKE_BINARY_DIR}/bin)
set_tests_properties(docs.help PROPERTIES LABELS docs)

add_test(NAME integration.docs_commands COMMAND bash ${PROJECT_SOURCE_DIR}/tests/docs/doc_commands.sh run)
set_tests_properties(integration.docs_commands PROPERTIES
                     LABELS "integration;docs"
                     ENVIRONMENT "${ACCEL_INTEGRATION_ENV}"
                     FIXTURES_REQUIRED "slurm_sandbox;slurm_test_user"
                     RUN_SERIAL TRUE
                     TIMEOUT 600)

# The checker itself: it refuses what it must refuse.
add_test(NAME docs.checker_refuses COMMAND bash ${PROJECT_SOURCE_DIR}/tests/docs/checker_test.sh)
set_tests_properties(docs.checker_refuses PROPERTIES LABELS docs)

# Every folder with code has a README.md with "## Depends on" and "## Tests" (no build
# needed); the second test shows the check refusing trees that break each rule.
add_test(NAME docs.folder_readmes COMMAND bash ${PROJECT_SOURCE_DIR}/tests/docs/folder_readmes.sh)
add_test(NAME docs.folder_readmes_refuses
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/docs/folder_readmes.sh --self-test)
set_tests_properties(docs.folder_readmes docs.folder_readmes_refuses PROPERTIES LABELS docs)

# The tree formatted with clang-format 14 (.clang-format), and the check shown able to refuse.
add_test(NAME docs.clang_format COMMAND bash ${PROJECT_SOURCE_DIR}/tests/docs/clang_format.sh)
add_test(NAME docs.clang_format_refuses
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/docs/clang_format.sh --self-test)
set_tests_properties(docs.clang_format docs.clang_format_refuses PROPERTIES LABELS docs)
