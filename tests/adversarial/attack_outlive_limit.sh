#!/usr/bin/env bash
# Attack: a user's job tries to outlive its appliance limit. Its batch shell and every process
# it starts ignore SIGTERM (and SIGHUP), some leave the process tree with setsid, some take a
# process group of their own, and one hops from process to process (each generation forks the
# next and exits, so no pid lives long), bounded by the job's own `ulimit -u`. At the limit
# every process of the job gets SIGTERM; after the grace (ApplianceKillGrace) SIGKILL reaches
# every one that is left, through the job's cgroups: nothing of the job survives, the job
# leaves the queue, its summary says time_limit, and the node is not drained.
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "$0")/adv_lib.sh"
# shellcheck source=tests/integration/limit_lib.sh
source "$(dirname -- "$0")/../integration/limit_lib.sh"

adv_setup 15
command -v bc >/dev/null || fail "bc is not installed (Debian package bc)"
node=$(sinfo -h -o %n | head -1)
grace=$(kill_grace)
tag=outlive-$$-$RANDOM
dir=$TEST_HOME/$tag
trap 'rm -rf "${dir:?}"' EXIT
mkdir -p "$dir"
cat >"$dir/hop.sh" <<'HOP'
#!/bin/bash
# One generation: ignore what can be ignored, start the next, leave.
trap '' TERM HUP INT USR1
sleep 0.05
bash "$0" &
exit 0
HOP
cat >"$dir/job.sh" <<JOB
#!/bin/bash
trap 'echo "term \$(date +%s.%N)" >>$dir/trace' TERM
trap '' HUP INT
# The user's own bound on its processes, so the hops and loops cannot exhaust the node.
ulimit -u \$(( \$(ps -u "\$USER" -o pid= | wc -l) + 150 ))
bash $dir/hop.sh &
setsid bash -c "trap '' TERM HUP; while :; do sleep 0.2; done" </dev/null >/dev/null 2>&1 &
( set -m; bash -c "trap '' TERM; while :; do sleep 0.2; done" & ) # a process group of its own
srun --overlap -n1 bash -c "trap '' TERM; for i in 1 2 3 4 5 6 7 8; do (trap '' TERM; while :; do sleep 0.2; done) & done; bash $dir/hop.sh; while :; do sleep 0.2; done" &
while :; do sleep 0.2; done
JOB
chown -R "$TEST_USER" "$dir"
submit -J "$tag" -o "$dir/job.out" --time=5 --ipus=1 --appliance-time=0:05 "$dir/job.sh"
job=$JOB_ID
wait_job_final "$job" 90
term=$(sed -n 's/^term //p' "$dir/trace" | head -1)
[[ -n $term ]] || fail "SIGTERM never reached the batch shell"
end=$(date -d "$(sacct -n -P -X -j "$job" -o End)" +%s)
k=$(echo "$end - $term" | bc)
log "the job ended $k s after SIGTERM (grace $grace s)"
(($(echo "$k <= $grace + 2" | bc))) || fail "the job ended $k s after SIGTERM: it outlived the grace"
expect_eq "the job's state and exit" "FAILED|0:9" "$JOB_FINAL"
expect_no_process_left "$job"
expect_left_queue "$job"
wait_comment "$job" 60
expect_eq "summary result" time_limit "$(summary_of "$COMMENT" | jq -r .result)"
expect_not_drained "$node"
adv_assert_unharmed
log "PASS"
