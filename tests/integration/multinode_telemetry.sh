#!/usr/bin/env bash
# GPU telemetry through real Slurm on the three-node sandbox, whose GPU nodes load the fake
# NVML of tests/hw_mock (NvmlLibrary, TelemetryInterval=1; their GPUs scripted busy at 60%,
# 189 W and 22 GB used, with the topology's PCI bus ids: scripts/lib/sandbox-config.sh):
#  1. `accelctl status` on the GPU node names the NVML source and its interval, in text and
#     --json;
#  2. a job of --gres=gpu:1 is sampled while it runs (the node's samples grow, one job
#     sampled), and its epilog_finished event, as the aggregator stores it, carries the
#     figures of its one GPU: the GPU Slurm gave it, samples >= 1, utilization 60% at most
#     and on average at most that, memory about 22 GB, energy above zero;
#     The job's summary in AdminComment has the same figures as its row for that node, and
#     `accelctl events --json` shows them to the job's owner;
#     While it runs, the node's metrics show its GPU at 60% and 0 s idle;
#  3. once it ended, no job is sampled on the node and its series are gone from the metrics;
#  4. a job of one GPU on each of two nodes (a batch script launching one srun task per node)
#     has both nodes' GPUs in its summary, each with its own figures.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

sandbox_nodes 3
node=${nodes[2]}

tag=mn-telemetry-$$-$RANDOM
dir=$TEST_HOME/$tag
job=''
cleanup() {
    [[ -z $job ]] || scancel "$job" 2>/dev/null || true
    rm -rf "${dir:?}"
}
trap cleanup EXIT
mkdir -p "$dir"
chown "$TEST_USER" "$dir"

# The node's telemetry as `accelctl --json status` gives it.
telemetry() { "$SANDBOX_SCRIPT" exec "$node" accelctl --json status | jq -c '.telemetry'; }

# --- 1. the status names the source --------------------------------------------------------------
text=$("$SANDBOX_SCRIPT" exec "$node" accelctl status) || fail "accelctl status on $node failed"
line=$(grep '^telemetry ' <<<"$text") || fail "no telemetry line in the status of $node: $text"
log "status: $line"
[[ $line == *"NVML ("*"libnvidia-ml.so.1), 4 GPUs, every 1 s; "* ]] ||
    fail "the telemetry line does not name the fake NVML with 4 GPUs every 1 s: $line"
t=$(telemetry)
expect_eq "telemetry loaded (--json)" true "$(jq -r '.loaded' <<<"$t")"
expect_eq "telemetry interval (--json)" 1000 "$(jq -r '.interval_ms' <<<"$t")"
samples_before=$(jq -r '.samples' <<<"$t")

# --- 2. a GPU job sampled, its figures in its epilog's event ---------------------------------------
submit -J "$tag" -w "$node" -N 1 --gres=gpu:1 -o "$dir/job.out" <<SCRIPT
#!/bin/bash
echo "\$SLURM_JOB_GPUS" >"$dir/job.tmp"
mv "$dir/job.tmp" "$dir/job.started"
for _ in \$(seq 600); do [[ -e "$dir/release" ]] && exit 0; sleep 0.1; done
exit 1
SCRIPT
job=$JOB_ID
deadline=$((SECONDS + 60))
until [[ -e $dir/job.started ]]; do
    ((SECONDS <= deadline)) || fail "the GPU job $job did not start within 60 s"
    sleep 0.1
done
gpu=$(<"$dir/job.started")
# Held until the node has sampled it three times (one a second).
deadline=$((SECONDS + 30))
until t=$(telemetry) && (($(jq -r '.samples' <<<"$t") >= samples_before + 3)); do
    ((SECONDS <= deadline)) || fail "the node took fewer than 3 samples in 30 s while job $job ran: $t"
    sleep 0.3
done
expect_eq "jobs sampled while job $job runs" 1 "$(jq -r '.jobs_sampled' <<<"$t")"
# The node's metrics show the job's GPU, busy (the scripted 60%), and no idle time.
conf=${ACCEL_SANDBOX_NODE_CONF_3:-}
address=$(sed -n 's/^MetricsAddress=//p' "$conf")
[[ -n $address ]] || fail "no MetricsAddress in $conf"
scraped=$("$SANDBOX_SCRIPT" exec "$node" curl -sf --max-time 5 "http://$address/metrics") ||
    fail "the metrics of $node do not answer at $address"
grep -qx "accel_gpu_utilization_percent{job_id=\"$job\",gpu=\"[0-9]*\"} 60" <<<"$scraped" ||
    fail "no utilization of 60% for job $job in $node's metrics: $(grep '^accel_gpu' <<<"$scraped")"
grep -qx "accel_gpu_memory_used_bytes{job_id=\"$job\",gpu=\"[0-9]*\"} 23141941248" <<<"$scraped" ||
    fail "no memory figure for job $job in $node's metrics: $(grep '^accel_gpu' <<<"$scraped")"
grep -qx "accel_gpu_job_idle_seconds{job_id=\"$job\"} 0" <<<"$scraped" ||
    fail "job $job's busy GPU is not 0 s idle in $node's metrics: $(grep '^accel_gpu' <<<"$scraped")"
log "ok: $node's metrics show job $job's GPU busy"
touch "$dir/release"
wait_job_final "$job" 60
expect_eq "GPU job $job: state|exit code" "COMPLETED|0:0" "$JOB_FINAL"

# The epilog_finished envelope as the aggregator stored it, read with the schema.
db=$ACCEL_SANDBOX_DIR/state/aggregator/events.db
[[ -e $db ]] || fail "no aggregator database at $db"
deadline=$((SECONDS + 30))
until [[ $(sqlite3 "$db" "SELECT count(*) FROM events WHERE kind = 'epilog_finished' AND job_id = $job") -ge 1 ]]; do
    ((SECONDS <= deadline)) || fail "no epilog_finished of job $job in $db within 30 s"
    sleep 0.5
done
sqlite3 "$db" "SELECT writefile('$dir/epilog.bin', envelope) FROM events
               WHERE kind = 'epilog_finished' AND job_id = $job LIMIT 1" >/dev/null
flatc --json --strict-json --raw-binary -o "$dir" "$ACCEL_REPO_DIR/schemas/events.fbs" -- \
    "$dir/epilog.bin" || fail "flatc could not read the stored epilog_finished of job $job"
figures=$(jq -c '.event.gpu' "$dir/epilog.json")
log "job $job (GPU $gpu): $figures"
[[ $figures != null ]] || fail "the epilog_finished of job $job carries no GPU figures"
expect_eq "devices in job $job's figures" 1 "$(jq '.devices | length' <<<"$figures")"
expect_eq "the figures' GPU is the one Slurm gave the job" "$gpu" "$(jq -r '.devices[0].index // 0' <<<"$figures")"
jq -e '.samples >= 1 and .devices[0].samples >= 1' <<<"$figures" >/dev/null ||
    fail "job $job's figures have no sample: $figures"
jq -e '.devices[0].energy_j > 0' <<<"$figures" >/dev/null ||
    fail "job $job's busy GPU used no energy: $figures"
jq -e '.devices[0].util_max_pct == 60 and .devices[0].util_mean_pct > 0
       and .devices[0].util_mean_pct <= 60' <<<"$figures" >/dev/null ||
    fail "job $job's utilization is not the scripted 60% at most: $figures"
expect_eq "job $job's most memory used, MiB (the scripted 23141941248 bytes)" 22070 \
    "$(jq -r '.devices[0].memory_used_max_mib' <<<"$figures")"
[[ $(jq -r '.devices[0].pci_bus_id' <<<"$figures") == 0000:* ]] ||
    fail "job $job's GPU has no PCI bus id: $figures"

# The same figures in the job's summary in accounting (one row per GPU: index, mean %, max %,
# MiB, J, samples) and in `accelctl events --json` as its owner reads them.
wait_comment "$job" 60
row=$(summary_of "$COMMENT" | jq -c --arg n "$node" '.gpu[$n][0]')
log "job $job's summary row for $node: $row"
jq -e --argjson gpu "$gpu" '.[0] == $gpu and .[1] > 0 and .[1] <= 60 and .[2] == 60 and
       .[3] == 22070 and .[4] > 0 and .[5] >= 1' <<<"$row" >/dev/null ||
    fail "job $job's summary has not its GPU's figures: $(summary_of "$COMMENT")"
shown=$("$SANDBOX_SCRIPT" exec "$node" runuser -u "$TEST_USER" -- env SLURM_CONF="$SLURM_CONF" \
    accelctl events --job "$job" --json | jq -c 'select(.kind == "epilog_finished") | .event.gpu.devices[0].memory_used_max_mib')
expect_eq "the most memory used, as accelctl events shows it" 22070 "$shown"

# --- 3. nothing sampled once it ended ------------------------------------------------------------
expect_eq "jobs sampled after job $job ended" 0 "$(telemetry | jq -r '.jobs_sampled')"
scraped=$("$SANDBOX_SCRIPT" exec "$node" curl -sf --max-time 5 "http://$address/metrics") ||
    fail "the metrics of $node do not answer at $address"
grep -q "job_id=\"$job\"" <<<"$scraped" &&
    fail "job $job's GPU series outlived its epilog: $(grep '^accel_gpu' <<<"$scraped")"

# --- 4. a job on two GPU nodes: its summary has each node's GPU -------------------------------------
other=${nodes[1]}
rm -f "$dir/release"
submit -J "$tag-two" -w "$other,$node" -N 2 --ntasks-per-node=1 --gres=gpu:1 -o "$dir/two.out" <<SCRIPT
#!/bin/bash
# A launcher: one task per node, each a shell whose child waits for the release.
srun bash -c 'echo "\$(hostname) \$CUDA_VISIBLE_DEVICES" >"$dir/two.\$SLURM_NODEID"; \
    for _ in \$(seq 600); do [[ -e "$dir/release" ]] && exit 0; sleep 0.1; done; exit 1'
SCRIPT
job=$JOB_ID
deadline=$((SECONDS + 60))
until [[ -e $dir/two.0 && -e $dir/two.1 ]]; do
    ((SECONDS <= deadline)) || fail "the two-node GPU job $job did not start on both nodes within 60 s"
    sleep 0.2
done
# Held until the aggregator has live figures of both nodes' GPUs, busy (accelctl report, as root).
deadline=$((SECONDS + 30))
until "$SANDBOX_SCRIPT" exec "$node" accelctl report "$job" --json 2>/dev/null |
    jq -e '[.devices[] | select(.util_max_pct == 60)] | length == 2' >/dev/null; do
    ((SECONDS <= deadline)) || fail "no live figures of both nodes' GPUs of job $job within 30 s"
    sleep 0.3
done
touch "$dir/release"
wait_job_final "$job" 60
expect_eq "two-node GPU job $job: state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
wait_comment "$job" 60
merged=$(summary_of "$COMMENT" | jq -c '.gpu')
log "job $job's summary gpu: $merged"
expect_eq "nodes in job $job's gpu summary" "$(printf '%s\n' "$node" "$other" | sort | paste -sd,)" \
    "$(jq -r 'keys | join(",")' <<<"$merged")"
for n in "$node" "$other"; do
    jq -e --arg n "$n" '.[$n] | length == 1 and (.[0] | .[2] == 60 and .[3] == 22070 and
           .[4] > 0 and .[5] >= 1)' <<<"$merged" >/dev/null ||
        fail "job $job's summary lacks $n's busy GPU: $merged"
done
log "PASS"
