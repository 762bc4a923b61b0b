#!/usr/bin/env bash
# Issue 17, point 2 (docs/architecture.md: "A job's SPANK environment is its user's"): the test user
# submits through libslurm directly (tools/raw_submit.c, no sbatch, so spank_accel.so never
# checks anything) with hand-made SPANK_ACCEL_* values: garbage, more IPUs than MaxIpusPerJob,
# an appliance time that overflows any unit conversion, blanks, negative numbers, half of a
# pair. For each job: the Prolog exits 0 (the node is never drained), the job FAILS without
# running its script, its output file has an `accel:` line saying why, its summary says
# failed with the same reason, and nothing of it is left on the node (no job record, no V-IPU
# partition made). Then the shared checks: the victim's job untouched, a normal job works.
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "$0")/adv_lib.sh"

RAW_SUBMIT=$ACCEL_BUILD_DIR/tests/adversarial/tools/raw_submit
[[ -x $RAW_SUBMIT ]] || fail "$RAW_SUBMIT is not built (it is part of the default build)"

adv_setup_held 240

# The node's own MaxIpusPerJob: the Prolog applies the node's limits, whatever the submit host's.
vipu_conf=$(dirname -- "$AGENT_CONF")/vipu.conf
max_ipus=$(sed -n 's/^[[:space:]]*MaxIpusPerJob[[:space:]]*=[[:space:]]*\([0-9]*\).*/\1/Ip' "$vipu_conf" | tail -n 1)
[[ $max_ipus =~ ^[0-9]+$ ]] || fail "no MaxIpusPerJob in the node's $vipu_conf"
log "the node's MaxIpusPerJob: $max_ipus"

# The tool and the jobs' output live where the test user can reach them.
work=$(mktemp -d /tmp/accel-attack-spank.XXXXXX)
on_exit rm -rf -- "$work"
cp -- "$RAW_SUBMIT" "$work/raw_submit"
chmod 755 "$work" "$work/raw_submit"
mkdir "$work/out"
chown "$TEST_USER" "$work/out"

# Each case: a name, the SPANK variables (VAR=VALUE, separated by ';'), and what the accel:
# line must say after "are refused: ".
cases=(
    ipus_garbage "ACCEL_IPUS=abc" "--ipus=abc: not a whole number"
    ipus_above_max "ACCEL_IPUS=$((max_ipus * 2))" "--ipus=$((max_ipus * 2)): at most $max_ipus IPUs per job"
    ipus_wrap_32_bits "ACCEL_IPUS=4294967297" "--ipus=4294967297: at most $max_ipus IPUs per job"
    ipus_blank "ACCEL_IPUS= 4" "--ipus=' 4': not a whole number"
    ipus_negative "ACCEL_IPUS=-2" "--ipus=-2: negative numbers are not allowed"
    replicas_not_dividing "ACCEL_IPUS=4;ACCEL_NUM_REPLICAS=3" "--num-replicas=3: does not divide --ipus=4"
    time_overflow "ACCEL_APPLIANCE_TIME=99999999999999999999"
    "--job-time-sec=99999999999999999999: too large; Slurm times end at 2147483647 seconds"
    time_huge_minutes "ACCEL_APPLIANCE_TIME=153722867280912930"
    "--job-time-sec=153722867280912930: too large; Slurm times end at 2147483647 seconds"
    time_empty "ACCEL_APPLIANCE_TIME=" "--job-time-sec=: no number given"
    time_source_forged "ACCEL_APPLIANCE_TIME=60;ACCEL_APPLIANCE_TIME_SOURCE=root"
    "SPANK_ACCEL_APPLIANCE_TIME_SOURCE='root': neither 'option' nor 'default'"
    signal_without_lead "ACCEL_APPLIANCE_TIME=60;ACCEL_APPLIANCE_SIGNAL=10"
    "SPANK_ACCEL_APPLIANCE_SIGNAL='10' without SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD"
    ntasks_overflow "ACCEL_IPUS=1;ACCEL_NTASKS=99999999999" "SPANK_ACCEL_NTASKS='99999999999': too large"
    signal_target_forged
    "ACCEL_APPLIANCE_TIME=60;ACCEL_APPLIANCE_SIGNAL=10;ACCEL_APPLIANCE_SIGNAL_LEAD=5;ACCEL_APPLIANCE_SIGNAL_BATCH=all"
    "SPANK_ACCEL_APPLIANCE_SIGNAL_BATCH='all': not 1"
    signal_target_smuggled "ACCEL_APPLIANCE_TIME=60;ACCEL_APPLIANCE_SIGNAL=B:10;ACCEL_APPLIANCE_SIGNAL_LEAD=5"
    "SPANK_ACCEL_APPLIANCE_SIGNAL='B:10': not a signal"
)

# Submit every case first; they run side by side with the victim's job.
declare -A job_of want_of
for ((i = 0; i < ${#cases[@]}; i += 3)); do
    name=${cases[i]} vars=${cases[i + 1]} want=${cases[i + 2]}
    args=()
    IFS=';' read -ra pairs <<<"$vars"
    for v in "${pairs[@]}"; do args+=(-s "$v"); done
    out=$(cd "$work/out" && runuser -u "$TEST_USER" -- env SLURM_CONF="$SLURM_CONF" \
        timeout 30 "$work/raw_submit" -J "attack-spank-$name" -o "$work/out/$name.out" "${args[@]}" \
        $'#!/bin/sh\ntouch '"$work/out/$name.ran"$'\n') || fail "raw_submit failed for $name: $out"
    [[ $out =~ ^[0-9]+$ ]] || fail "raw_submit printed no job id for $name: '$out'"
    job_of[$name]=$out
    want_of[$name]=$want
    log "$name: job $out with ${args[*]}"
done

node=$(sinfo -h -o %N | head -n 1)
for ((i = 0; i < ${#cases[@]}; i += 3)); do
    name=${cases[i]} job=${job_of[${cases[i]}]} want=${want_of[${cases[i]}]}
    wait_job_final "$job" 90
    [[ ${JOB_FINAL%%|*} == FAILED ]] || fail "$name: job $job ended '$JOB_FINAL'; expected FAILED"
    [[ ! -e $work/out/$name.ran ]] || fail "$name: job $job ran its script"
    [[ -r $work/out/$name.out ]] || fail "$name: job $job wrote no output file"
    line=$(grep -m1 -o 'accel: job [0-9]*: .*' "$work/out/$name.out") ||
        fail "$name: no accel: line in job $job's output: $(cat "$work/out/$name.out")"
    [[ $line == "accel: job $job: the job's accelerator options (SPANK_ACCEL_*"*") are refused: $want"* ]] ||
        fail "$name: job $job's accel: line is '$line'; expected the refusal '$want'"
    log "ok: $name: $line"
    expect_node_in_service
done

# Nothing of the refused jobs is left, and their summaries say why they failed.
for ((i = 0; i < ${#cases[@]}; i += 3)); do
    name=${cases[i]} job=${job_of[${cases[i]}]}
    deadline=$((SECONDS + 30))
    while [[ -e $AGENT_RUN_DIR/state/$job.json ]]; do
        ((SECONDS <= deadline)) || fail "$name: the agent still holds a record of job $job after 30 s"
        sleep 0.2
    done
    expect_eq "$name: V-IPU partitions made and removed for job $job" "0 0" "$(partition_calls "$job")"
    wait_comment "$job" 60
    json=$(summary_of "$COMMENT")
    expect_eq "$name: summary result" failed "$(jq -r .result <<<"$json")"
    jq -e --arg n "$node" '.errors[$n] | startswith("the job'"'"'s accelerator options (SPANK_ACCEL_*")' \
        <<<"$json" >/dev/null || fail "$name: the summary of job $job does not give the refusal: $json"
done
log "ok: no refused job left a record or a partition; every summary says why"

adv_assert_unharmed
log "PASS"
