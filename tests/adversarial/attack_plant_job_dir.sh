#!/usr/bin/env bash
# Issue 34, point 2: the job's owner cannot make root's writes into the job directory fail. A
# job of the attacker loops on planting a directory at the name of the next IPU job's first
# IPUoF file (IpuofDir/<id>/ipuof-gcd0.conf) while the fake V-IPU controller takes 1.5 s to
# create a partition, as a real one takes seconds; then the attacker submits that --ipus=2 job.
# Before the fix the directory was the user's from its creation, the plant landed, the rename
# of the IPUoF file failed with EISDIR, and the node was drained (Prolog error). Now the
# directory is root's until the prolog's last step: every plant fails, the job COMPLETED with
# its IPUoF file in place, and the node stays in service.
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "$0")/adv_lib.sh"

# The node has two CPUs: the victim's job ends soon, so the IPU job runs beside the planter.
adv_setup 5

conf_dir=$(dirname -- "$AGENT_CONF")
ipuof=$(sed -n 's/^[[:space:]]*IpuofDir[[:space:]]*=[[:space:]]*\([^[:space:]#]*\).*/\1/p' \
    "$conf_dir/vipu.conf" | tail -n 1)
[[ -n $ipuof && -d $ipuof ]] || fail "no IpuofDir in $conf_dir/vipu.conf"
rules=${ACCEL_HW_MOCK_STATE:?}/vipu/faults
[[ ! -s $rules ]] || fail "$rules is not empty before the attack"
work=$TEST_HOME/adv-plant-$$
mkdir -p "$work"
chown "$TEST_USER" "$work"
on_exit rm -rf -- "$rules" "${rules%/*}/faults.fired" "$work"
printf 'create delay 1500\n' >"$rules"

# The planter: for each id after its own, mkdir -p IpuofDir/<id>/ipuof-gcd0.conf, as fast as
# it can, counting what it managed to make.
submit -J adv-plant -o "$work/planter.out" --time=3 <<SCRIPT
#!/bin/bash
first=\$((SLURM_JOB_ID + 1))
planted=0
touch $work/planting
end=\$((SECONDS + 60))
while ((SECONDS < end)) && [[ ! -e $work/stop ]]; do
    for id in \$first \$((first + 1)) \$((first + 2)); do
        if [[ ! -e $ipuof/\$id/ipuof-gcd0.conf ]] && mkdir -p $ipuof/\$id/ipuof-gcd0.conf 2>/dev/null; then
            planted=\$((planted + 1))
        fi
    done
done
echo "planted \$planted"
SCRIPT
planter=$JOB_ID
deadline=$((SECONDS + 30))
until [[ -e $work/planting ]]; do
    ((SECONDS < deadline)) || fail "the planter job $planter never started"
    sleep 0.2
done

# shellcheck disable=SC2016 # expanded by the job, not here
submit -J adv-plant-ipu -o "$work/ipu.out" --ipus=2 \
    --wrap='test -f "$IPUOF_CONFIG_PATH" && test -r "$IPUOF_CONFIG_PATH" && echo "ipuof ok $IPUOF_CONFIG_PATH"'
target=$JOB_ID
((target <= planter + 3)) || fail "job $target is not among the ids the planter aims at"
wait_job_final "$target" 90
expect_eq "the IPU job the planter aimed at" "COMPLETED|0:0" "$JOB_FINAL"
grep -q '^ipuof ok ' "$work/ipu.out" || fail "the job did not find its IPUoF file: $(cat "$work/ipu.out")"
touch "$work/stop"
wait_job_final "$planter" 60
log "planter: $(cat "$work/planter.out")"
grep -qx 'planted 0' "$work/planter.out" || fail "the planter made directories in a job directory of root's: $(cat "$work/planter.out")"
rm -f "$rules"
adv_assert_unharmed
log "PASS"
