# --- docs: every documented command is run by a test (tests/docs) ----------------------------
# docs.commands_covered needs no Slurm: each command in README.md and docs/*.md is either run
# by the docs test or listed in tests/docs/not-run-here.txt with the registered test that
# covers it.
add_test(NAME docs.commands_covered COMMAND bash ${PROJECT_SOURCE_DIR}/tests/docs/doc_commands.sh check)
set_tests_properties(docs.commands_covered PROPERTIES LABELS docs)

# The checker itself: it refuses what it must refuse.
add_test(NAME docs.checker_refuses COMMAND bash ${PROJECT_SOURCE_DIR}/tests/docs/checker_test.sh)
set_tests_properties(docs.checker_refuses PROPERTIES LABELS docs)
