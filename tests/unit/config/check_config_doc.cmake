# Runs the reference generator and fails when its output differs from the
# committed docs/config-reference.md. Arguments: -DTOOL=... -DDOC=...
execute_process(COMMAND ${TOOL} OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TOOL} failed with exit status ${rc}")
endif()
file(READ ${DOC} committed)
if(NOT generated STREQUAL committed)
  message(FATAL_ERROR "${DOC} is out of date; regenerate it with: ${TOOL} ${DOC}")
endif()
