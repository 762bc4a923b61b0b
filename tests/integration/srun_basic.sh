#!/usr/bin/env bash
# srun of an ordinary user runs a step as that user and returns its output; the job is
# COMPLETED with 0:0 in accounting.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

tag=srun-basic-$$-$RANDOM
# The step expands these, not this shell.
# shellcheck disable=SC2016
out=$(as_test_user timeout 60 srun --job-name="$tag" --ntasks=1 \
    bash -c 'echo "$(id -un) $SLURM_JOB_ID"') || fail "srun failed (exit $?)"
read -r user job <<<"$out"
expect_eq "user running the step" "$TEST_USER" "$user"
[[ $job =~ ^[0-9]+$ ]] || fail "step printed no job id: '$out'"
wait_job_final "$job" 60
expect_eq "sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
log "PASS"
