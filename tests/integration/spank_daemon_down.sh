#!/usr/bin/env bash
# With accel-agentd stopped:
#  - a job that asks for nothing of accel-agent runs exactly as without the plugin, through
#    sbatch (with an srun step), salloc (with an srun step) and srun: same output, nothing on
#    stderr, no "accel" anywhere, COMPLETED 0:0;
#  - a step that asks for an accelerator option inside an existing allocation fails with one
#    clear line naming the daemon, and the node is not drained.
# The daemon is started again at the end, pass or fail.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"
# shellcheck source=tests/integration/spank_lib.sh
source "$(dirname -- "$0")/spank_lib.sh"

require_root
require_sandbox
ensure_test_user
require_accel_plugin
require_agent
# The private submit config has no ApplianceTimeDefault: a site default would make every job
# one that asks for accel-agent.
use_submit_limits

work=$TEST_HOME/spank-daemon-down-$$
as_test_user mkdir -p "$work"
on_exit rm -rf -- "$work"

# An allocation made while the daemon runs; its step waits for a flag, then asks for an
# appliance time limit, which only accel-agentd can enforce. The allocation then waits for a
# second flag, so it ends (and its Epilog runs) once the daemon is back: a record of a job
# whose Epilog never reached the daemon would stay behind.
holder=$(unique_name holder)
# shellcheck disable=SC2016 # expanded by the allocation's shell
as_test_user timeout 120 salloc -J "$holder" sh -c "
    while [ ! -e $work/go ]; do sleep 0.1; done
    srun --appliance-time=10 echo must-not-run >$work/step.out 2>$work/step.err
    echo \$? >$work/step.rc
    while [ ! -e $work/end ]; do sleep 0.1; done" >/dev/null 2>&1 &
holder_pid=$!
holder_job=$(wait_running "$holder")
wait_record "$holder_job"

stop_agent
touch "$work/go"
deadline=$((SECONDS + 60))
until [[ -s $work/step.rc ]]; do
    ((SECONDS <= deadline)) || fail "the step of job $holder_job did not end within 60 s"
    sleep 0.1
done
rc=$(<"$work/step.rc")
[[ $rc != 0 ]] || fail "the step asking for --appliance-time ran without accel-agentd"
[[ ! -s $work/step.out ]] || fail "the refused step ran its command: $(cat "$work/step.out")"
msg=$(grep 'accel:' "$work/step.err" || true)
expect_eq "lines with 'accel:' from the refused step" 1 "$(grep -c . <<<"$msg")"
want="accel: job $holder_job: accel-agentd cannot be reached: accel-agentd is not running"
[[ $msg == *"$want"* && $msg == *"; the job asked for --appliance-time=10 and cannot run without it" ]] ||
    fail "unexpected refusal: '$msg'"
log "ok: refused step said: ${msg#*error: }"
expect_node_in_service

start_agent
touch "$work/end"
wait "$holder_pid" || fail "salloc of job $holder_job failed (exit $?)"
wait_job_final "$holder_job" 60
deadline=$((SECONDS + 30))
while [[ -e $AGENT_RUN_DIR/state/$holder_job.json ]]; do
    ((SECONDS <= deadline)) || fail "the Epilog of job $holder_job did not clean its record"
    sleep 0.1
done

stop_agent

# Plain jobs. sbatch with a step:
name=$(unique_name plain-sbatch)
submit -J "$name" -o "$work/batch.out" -e "$work/batch.err" <<<$'#!/bin/sh\necho batch-ok\nsrun echo step-ok'
wait_job_final "$JOB_ID" 60
expect_eq "sbatch job without options" "COMPLETED|0:0" "$JOB_FINAL"
expect_eq "its output" $'batch-ok\nstep-ok' "$(<"$work/batch.out")"
expect_eq "its stderr" "" "$(<"$work/batch.err")"

# srun:
name=$(unique_name plain-srun)
as_test_user timeout 60 srun -J "$name" echo srun-ok >"$work/srun.out" 2>"$work/srun.err" ||
    fail "srun without options failed (exit $?): $(cat "$work/srun.err")"
expect_eq "srun output" "srun-ok" "$(<"$work/srun.out")"
if grep -qi accel "$work/srun.err"; then fail "srun printed: $(cat "$work/srun.err")"; fi

# salloc with a step:
name=$(unique_name plain-salloc)
as_test_user timeout 60 salloc -J "$name" srun echo salloc-ok >"$work/salloc.out" 2>"$work/salloc.err" ||
    fail "salloc without options failed (exit $?): $(cat "$work/salloc.err")"
expect_eq "salloc step output" "salloc-ok" "$(<"$work/salloc.out")"
if grep -qi accel "$work/salloc.err"; then fail "salloc printed: $(cat "$work/salloc.err")"; fi

for job in $(sacct -n -X -a -S now-1hours -o JobID,JobName -P | awk -F'|' -v p="spank-plain-" \
    -v me="-$$-" 'index($2, p) == 1 && index($2, me) { print $1 }'); do
    wait_job_final "$job" 60
    expect_eq "job $job without options" "COMPLETED|0:0" "$JOB_FINAL"
done

expect_node_in_service
log "PASS"
