#!/usr/bin/env bash
# Fixture: the ordinary user the integration tests submit as exists and may use the sandbox.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user
log "user $TEST_USER ready (home $TEST_HOME)"
