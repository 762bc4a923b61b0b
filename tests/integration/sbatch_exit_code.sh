#!/usr/bin/env bash
# A batch job that exits 3 is FAILED with exit code 3:0 in accounting: the sandbox tells
# failure from success.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

tag=sbatch-exit-code-$$-$RANDOM
trap 'rm -f "$TEST_HOME/$tag.out"' EXIT

submit --job-name="$tag" --output="$TEST_HOME/$tag.out" <<'SCRIPT'
#!/bin/bash
exit 3
SCRIPT

wait_job_final "$JOB_ID" 60
expect_eq "sacct state|exit code" "FAILED|3:0" "$JOB_FINAL"
log "PASS"
