#!/usr/bin/env bash
# Every invalid use of the plugin's options is refused by sbatch, salloc and srun before
# anything is queued: the command fails, prints exactly one line starting "accel:" that says
# what is wrong and what is allowed, no job appears in squeue or sacct, and after the whole
# batch of refusals the node is still in service (idle when nothing else runs), never drained.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"
# shellcheck source=tests/integration/spank_lib.sh
source "$(dirname -- "$0")/spank_lib.sh"

require_root
require_sandbox
ensure_test_user
require_accel_plugin
require_agent
use_submit_limits

V=$SUBMIT_DIR/vipu.conf
A=$SUBMIT_DIR/accel.conf
forms="use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED"
signals="use a signal name such as USR1, TERM or SIGUSR2, or a number from 1 to 64, optionally"
signals+=" after B: (the batch shell only) and followed by @SECONDS (0 to 65535, default 60)"
ipu_range="give 1 to 64 IPUs (MaxIpusPerJob in $V)"
above="above the site maximum of 02:00:00 (7200 seconds; ApplianceTimeMax in $A)"

# Each case: the options (one per line; an option and its value may be two words), then the
# exact message after "accel: ".
cases=(
    "--ipus=abc" "--ipus=abc: not a whole number; $ipu_range"
    "--ipus=" "--ipus=: no number given; $ipu_range"
    "--ipus=0" "--ipus=0: a job asks for at least 1 IPU; $ipu_range"
    "--ipus=-4" "--ipus=-4: negative numbers are not allowed; $ipu_range"
    "--ipus=4x" "--ipus=4x: not a whole number; $ipu_range"
    "--ipus=4 4" "--ipus='4 4': not a whole number; $ipu_range"
    "--ipus=65" "--ipus=65: at most 64 IPUs per job (MaxIpusPerJob in $V)"
    "--ipus=3" "--ipus=3: IPU partitions hold a power of two of IPUs (1, 2, 4, 8, ...); give 2 or 4"
    $'--ipus\n300' "--ipus=300: at most 64 IPUs per job (MaxIpusPerJob in $V)"
    "--ipus=99999999999999999999" "--ipus=99999999999999999999: at most 64 IPUs per job (MaxIpusPerJob in $V)"
    "--num-replicas=2" "--num-replicas=2: needs --ipus; the replicas share the job's IPUs"
    $'--ipus=4\n--num-replicas=3' "--num-replicas=3: does not divide --ipus=4; give 1, 2 or 4 (the divisors of --ipus=4)"
    $'--ipus=4\n--num-replicas=0' "--num-replicas=0: a job has at least 1 replica; give 1, 2 or 4 (the divisors of --ipus=4)"
    $'--ipus=4\n--num-replicas=x' "--num-replicas=x: not a whole number; give 1, 2 or 4 (the divisors of --ipus=4)"
    "--appliance-time=abc" "--appliance-time=abc: 'abc' is not a Slurm time (unexpected character); $forms"
    "--appliance-time=1:2:3:4" "--appliance-time=1:2:3:4: '1:2:3:4' is not a Slurm time (too many fields); $forms"
    "--appliance-time=0" "--appliance-time=0: a limit of zero is not allowed; give at least 1 second"
    "--appliance-time=2:00:01" "--appliance-time=2:00:01: $above"
    "--appliance-time=UNLIMITED" "--appliance-time=UNLIMITED: $above"
    "--job-time-sec=7201" "--job-time-sec=7201: $above"
    "--job-time-sec=0" "--job-time-sec=0: a limit of zero is not allowed; give at least 1 second"
    "--job-time-sec=-5" "--job-time-sec=-5: negative numbers are not allowed; give the limit in whole seconds"
    "--job-time-sec=1e3" "--job-time-sec=1e3: not a whole number; give the limit in whole seconds"
    "--job-time-sec=99999999999" "--job-time-sec=99999999999: too large; Slurm times end at 2147483647 seconds"
    $'--appliance-time=10\n--job-time-sec=600' "--appliance-time=10 and --job-time-sec=600: give only one; both set the same appliance time limit"
    "--appliance-signal=USR1" "--appliance-signal=USR1: the job has no appliance time limit to warn before; add --appliance-time or --job-time-sec"
    $'--appliance-time=10\n--appliance-signal=FOO' "--appliance-signal=FOO: unknown signal 'FOO'; $signals"
    $'--appliance-time=10\n--appliance-signal=0' "--appliance-signal=0: unknown signal '0'; $signals"
    $'--appliance-time=10\n--appliance-signal=USR1@abc' "--appliance-signal=USR1@abc: the time after '@' ('abc'): not a whole number; give whole seconds from 0 to 65535 before the limit"
    $'--appliance-time=10\n--appliance-signal=USR1@70000' "--appliance-signal=USR1@70000: the time after '@' ('70000'): too large; give whole seconds from 0 to 65535 before the limit"
    $'--appliance-time=10\n--appliance-signal=X:USR1' "--appliance-signal=X:USR1: unknown signal 'X:USR1'; $signals"
    $'--job-time-sec=30\n--appliance-signal=B:USR1' "--appliance-signal=B:USR1: the warning would come at once: the appliance time limit is 30 seconds; give a lead below 30"
    $'--job-time-sec=30\n--appliance-signal=USR1' "--appliance-signal=USR1: the warning would come at once: the appliance time limit is 30 seconds; give a lead below 30"
)

# run_refused TOOL NAME OPTIONS...: runs TOOL as the test user with the options and a trivial
# job; prints its stderr; fails if it succeeded.
run_refused() {
    local tool=$1 name=$2 rc=0 err
    shift 2
    case $tool in
    sbatch) err=$(as_test_user timeout 30 sbatch -J "$name" "$@" --wrap true 2>&1 >/dev/null) || rc=$? ;;
    salloc) err=$(as_test_user timeout 30 salloc -J "$name" "$@" true 2>&1 >/dev/null) || rc=$? ;;
    srun) err=$(as_test_user timeout 30 srun -J "$name" "$@" true 2>&1 >/dev/null) || rc=$? ;;
    esac
    ((rc != 0 && rc != 124)) || fail "$tool $* was not refused (exit $rc): $err"
    printf '%s\n' "$err"
}

# expect_refusal TOOL MESSAGE OPTIONS...
expect_refusal() {
    local tool=$1 want=$2 name err lines
    shift 2
    name=$(unique_name refused)
    err=$(run_refused "$tool" "$name" "$@")
    lines=$(grep -c 'accel:' <<<"$err" || true)
    ((lines == 1)) || fail "$tool $*: expected one line with 'accel:', got $lines: $err"
    expect_eq "$tool $*" "$tool: error: accel: $want" "$(grep 'accel:' <<<"$err")"
    expect_no_job "$name"
}

for ((i = 0; i < ${#cases[@]}; i += 2)); do
    mapfile -t opts <<<"${cases[i]}"
    for tool in sbatch salloc srun; do
        expect_refusal "$tool" "${cases[i + 1]}" "${opts[@]}"
    done
done

# Without vipu.conf the cluster has no IPUs: --ipus is refused, other options still work.
mv "$SUBMIT_DIR/vipu.conf" "$SUBMIT_DIR/vipu.conf.away"
for tool in sbatch salloc srun; do
    expect_refusal "$tool" "--ipus=4: this cluster has no IPUs ($V does not exist)" --ipus=4
done
mv "$SUBMIT_DIR/vipu.conf.away" "$SUBMIT_DIR/vipu.conf"

# plugstack.conf arguments are parsed strictly: an unknown key refuses every job, even one
# that gives no option of the plugin, rather than being ignored.
sed -i 's|\(spank_accel\.so.*\)$|\1 bogus=1|' "$SUBMIT_DIR/plugstack.conf"
for tool in sbatch salloc srun; do
    name=$(unique_name badarg)
    err=$(run_refused "$tool" "$name")
    expect_eq "$tool with bogus=1 in plugstack.conf" \
        "$tool: error: accel: plugstack.conf argument 'bogus=1': unknown key 'bogus'; keys: accel_conf=PATH, vipu_conf=PATH, socket=PATH, timeout=SECONDS" \
        "$(grep 'accel:' <<<"$err")"
    expect_no_job "$name"
done

expect_node_in_service
log "PASS"
