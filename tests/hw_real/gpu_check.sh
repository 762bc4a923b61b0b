#!/usr/bin/env bash
# tests/hw_real/gpu_check.sh: the GPU telemetry path on a machine with a real NVIDIA GPU, without
# Slurm. It starts a private accel-aggregatord and accel-agentd (real NVML, the live hwloc
# topology), runs one job's prolog with the GPUs it names, a workload on them, the epilog, and
# prints what the node and the aggregator recorded: the status line, the job's epilog_finished
# figures, and its report. Never run by CI; see tests/hw_real/README.md.
#
#   sudo tests/hw_real/gpu_check.sh [--build DIR] [--gpus LIST] [--seconds N] [--interval N]
#                                   [--workload CMD] [--out DIR] [--nvml LIB --topology XML]
#
# --nvml and --topology (both or neither) rehearse the script against another NVML, such as the
# fake of tests/hw_mock (with ACCEL_FAKE_NVML_DIR naming its scripts), and a captured topology;
# every figure is then marked as not real.
set -euo pipefail

here=$(cd -- "$(dirname -- "$0")" && pwd)
repo=$(cd -- "$here/../.." && pwd)
build=${ACCEL_BUILD_DIR:-$repo/build}
gpus=''
seconds=30
interval=1
workload=''
out=''
nvml=''
topology=''

die() {
    echo "gpu_check: $*" >&2
    exit 2
}
say() { printf '\n== %s\n' "$*"; }

while (($#)); do
    case $1 in
    --build) build=${2:?}; shift 2 ;;
    --gpus) gpus=${2:?}; shift 2 ;;
    --seconds) seconds=${2:?}; shift 2 ;;
    --interval) interval=${2:?}; shift 2 ;;
    --workload) workload=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --nvml) nvml=${2:?}; shift 2 ;;
    --topology) topology=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds < 1 || seconds > 3600)); then
    die "--seconds must be 1 to 3600"
fi
if ! [[ $interval =~ ^[0-9]+$ ]] || ((interval < 1 || interval > 300)); then
    die "--interval must be 1 to 300"
fi
[[ -z $nvml && -z $topology || -n $nvml && -n $topology ]] || die "--nvml and --topology go together"
((EUID == 0)) || die "run it as root: the prolog and epilog run as root under slurmd"
bin=$build/bin
for b in accel-agentd accelctl accel-aggregatord accel-keygen; do
    [[ -x $bin/$b ]] || die "$bin/$b is not built (--build DIR names the build directory)"
done
command -v jq >/dev/null || die "jq is needed to read the answers"

rehearsal=0
if [[ -n $nvml ]]; then
    rehearsal=1
    [[ -r $nvml && -r $topology ]] || die "cannot read $nvml or $topology"
    echo "gpu_check: REHEARSAL with $nvml and $topology: no figure below is from a real GPU" >&2
else
    ldconfig -p | grep -q 'libnvidia-ml\.so\.1 ' ||
        die "no libnvidia-ml.so.1 on this machine: this check needs an NVIDIA GPU and its driver"
fi

work=$(mktemp -d /tmp/accel-gpu-check.XXXXXX)
chmod 0755 "$work"
agg_pid=''
agent_pid=''
job=''
cleanup() {
    local rc=$?
    if [[ -n $job && -n $agent_pid ]] && kill -0 "$agent_pid" 2>/dev/null; then
        env -i PATH="$PATH" SLURM_JOB_ID="$job" SLURM_JOB_UID=0 SLURM_JOB_USER=root \
            SLURMD_NODENAME="$node" "$bin/accelctl" --config "$work/agent.conf" epilog \
            >/dev/null 2>&1 || true
    fi
    for p in $agent_pid $agg_pid; do
        if kill "$p" 2>/dev/null; then wait "$p" 2>/dev/null || true; fi
    done
    if ((rc != 0)); then
        echo "gpu_check: failed; the daemons' logs:" >&2
        tail -n 30 "$work"/*.log >&2 2>/dev/null || true
    fi
    if [[ -n $out ]]; then
        mkdir -p "$out"
        cp -f "$work"/*.log "$work"/*.json "$out"/ 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

node=$(uname -n)
mkdir -p "$work/keys/nodes" "$work/state" "$work/run" "$work/agg"
"$bin/accel-keygen" "$work/keys/aggregator" >/dev/null
"$bin/accel-keygen" "$work/keys/node" >/dev/null
cp "$work/keys/node.pub" "$work/keys/nodes/$node.pub"

cat >"$work/aggregator.conf" <<EOF
Listen=ipc://$work/agg.sock
QueryAddress=ipc://$work/query.sock
SecretKeyFile=$work/keys/aggregator.key
AllowListDir=$work/keys/nodes
Database=$work/agg/events.db
WriteComments=no
EOF
cat >"$work/agent.conf" <<EOF
ControlSocket=$work/agentd.sock
StateDir=$work/state
RunDir=$work/run
SlurmUser=root
JobDirSize=0
HookTimeout=20
TelemetryInterval=$interval
AggregatorAddress=ipc://$work/agg.sock
AggregatorQueryAddress=ipc://$work/query.sock
AggregatorPublicKeyFile=$work/keys/aggregator.pub
NodeKeyFile=$work/keys/node.key
${nvml:+NvmlLibrary=$nvml}
${topology:+TopologyFile=$topology}
EOF

ctl() { "$bin/accelctl" --config "$work/agent.conf" "$@"; }
hook() {
    env -i PATH="$PATH" SLURM_JOB_ID="$job" SLURM_JOB_UID=0 SLURM_JOB_GID=0 SLURM_JOB_USER=root \
        SLURMD_NODENAME="$node" SLURM_JOB_NODELIST="$node" SLURM_JOB_NUM_NODES=1 \
        SLURM_JOB_GPUS="$gpus" "$bin/accelctl" --config "$work/agent.conf" "$1"
}

"$bin/accel-aggregatord" --config "$work/aggregator.conf" 2>"$work/aggregator.log" &
agg_pid=$!
"$bin/accel-agentd" --config "$work/agent.conf" 2>"$work/agentd.log" &
agent_pid=$!
started=$(date +%s%N)
deadline=$((SECONDS + 30))
until ctl --json status >"$work/status-start.json" 2>/dev/null; do
    kill -0 "$agent_pid" 2>/dev/null || die "accel-agentd exited at start"
    ((SECONDS <= deadline)) || die "accel-agentd did not answer within 30 s"
    sleep 0.1
done
echo "agent answering after $((($(date +%s%N) - started) / 1000000)) ms (NVML opened on the way)"

say "status"
ctl status | grep -E '^(telemetry|devices|topology)' || true
loaded=$(jq -r '.telemetry.loaded' "$work/status-start.json")
[[ $loaded == true ]] || die "the agent did not load NVML: $(jq -r '.telemetry.reason' "$work/status-start.json")"

# The job's GPUs: those named, or every GPU of the topology.
if [[ -z $gpus ]]; then
    count=$(ctl --json topology ${topology:+--xml "$topology"} | jq '[.accelerators[]? | select(.kind == "gpu")] | length')
    ((count > 0)) || die "the topology shows no GPU"
    gpus=$(seq -s, 0 $((count - 1)))
fi
job=$((900000 + RANDOM))
echo "job $job on $node holds GPUs $gpus"

say "prolog"
t0=$(date +%s%N)
hook prolog
echo "prolog took $((($(date +%s%N) - t0) / 1000)) us"

say "workload (${seconds} s)"
if [[ -z $workload ]] && ((rehearsal == 0)) &&
    python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    workload="python3 $here/gpu_matmul.py --seconds $seconds"
fi
if [[ -n $workload ]]; then
    echo "running: $workload"
    CUDA_VISIBLE_DEVICES=$gpus timeout $((seconds + 60)) bash -c "$workload" || echo "the workload exited with $?"
else
    echo "no workload (no --workload, and no python3 with torch and CUDA): the GPUs stay idle for ${seconds} s"
    sleep "$seconds"
fi
ctl --json status >"$work/status-end.json"

say "epilog"
t0=$(date +%s%N)
hook epilog
echo "epilog took $((($(date +%s%N) - t0) / 1000)) us"
ended_job=$job
job=''

say "sampler"
jq -r --argjson i "$interval" '.telemetry | "samples \(.samples), failures \(.failures), sampler CPU \(.cpu_ns / 1e6) ms, \(if .samples > 0 then .cpu_ns / .samples / 1e3 else 0 end) us per sample, every \($i) s"' "$work/status-end.json"

say "the job's figures as the aggregator recorded them (epilog_finished)"
deadline=$((SECONDS + 20))
until ctl events --job "$ended_job" --database "$work/agg/events.db" --json >"$work/events.json" 2>/dev/null &&
    jq -e 'select(.kind == "epilog_finished")' "$work/events.json" >/dev/null; do
    ((SECONDS <= deadline)) || die "no epilog_finished event of job $ended_job reached the aggregator in 20 s"
    sleep 0.2
done
jq -c 'select(.kind == "epilog_finished") | .event.gpu' "$work/events.json" | tee "$work/gpu.json"

if ctl --help 2>&1 | grep -q '^ *report '; then
    say "accelctl report $ended_job"
    ctl report "$ended_job" || echo "accelctl report failed with $?"
    ctl report --json "$ended_job" >"$work/report.json" || true
fi
((rehearsal == 0)) || echo "(REHEARSAL: figures from $nvml, not a real GPU)"
