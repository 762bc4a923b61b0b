#!/usr/bin/env bash
# Attack (docs/security.md, "The job's output file"): when a job's GPUs sit idle, the node writes
# one accel: line into the job's output file, whose path the user chose and whose file the user
# may swap while the job runs. Needs a GPU node with the fake NVML (the three-node sandbox,
# sbn3), its GPUs scripted at 0% and its agent restarted with IdleAfter=0:03, IdleAction=notify
# (restored at the end). Six jobs of the attacker, one GPU each; each swaps its output for
# something else as its first act, then waits to be found idle:
#   plain         nothing swapped: the line is written (the test can see a write)
#   link-root     a symbolic link to a file of root's
#   link-victim   a symbolic link to a file of another user's (the victim's)
#   fifo          a FIFO nobody reads
#   fifo-read     a FIFO the job itself reads from
#   dir-link      the output's directory replaced by a link to a directory of root's holding a
#                 file of root's under the output's name
# Must hold: root's and the victim's files stay byte for byte and keep their times; the FIFO's
# reader reads nothing; each job's job_idle event says told_job false (true for plain, whose
# output has the line); the agent answers at once throughout; no node is drained.
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/adv_lib.sh"
# shellcheck source=tests/integration/gpu_idle_lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/../integration/gpu_idle_lib.sh"

require_root
require_sandbox
ensure_test_user
ensure_victim_user
command -v jq >/dev/null || fail "jq is not installed"
sandbox_nodes 3

tag=attack-output-$$-$RANDOM
dir=$TEST_HOME/$tag
roots=$(mktemp -d /var/tmp/accel-attack-output.XXXXXX)
victim_file=$VICTIM_HOME/$tag.notes
jobs=()
restore() {
    local j
    for j in "${jobs[@]}"; do scancel "$j" 2>/dev/null || true; done
    gpu_idle_restore
    rm -rf "${dir:?}" "${roots:?}" "$victim_file"
}
trap restore EXIT
mkdir -p "$dir/sub"
chown -R "$TEST_USER" "$dir"
chmod 755 "$roots"
gpu_idle_prepare "$roots"
node=$GPU_NODE

# What must not change: root's files (one of them under the output's own name, in a directory
# of root's) and a file of the victim's, all readable by everyone.
mkdir -m 755 "$roots/dir"
echo "root's own file" >"$roots/precious"
echo "root's file under the output's name" >"$roots/dir/dir-link.out"
as_victim sh -c "echo \"the victim's notes\" >'$victim_file' && chmod 644 '$victim_file'"
chmod 644 "$roots/precious" "$roots/dir/dir-link.out"
fingerprint() { stat -c '%n %s %Y %Z %U %a' "$@" && sha256sum "$@"; }
before=$(fingerprint "$roots/precious" "$roots/dir/dir-link.out" "$victim_file")

gpu_idle_script all
gpu_idle_policy 0:03 notify

# swap NAME: the job's first act, as its user, before anything can be idle.
declare -A swap=(
    [plain]=':'
    [link-root]="rm -f OUT && ln -s $roots/precious OUT"
    [link-victim]="rm -f OUT && ln -s $victim_file OUT"
    [fifo]='rm -f OUT && mkfifo OUT'
    [fifo-read]="rm -f OUT && mkfifo OUT && { cat OUT >$dir/fifo-read.got & }"
    [dir-link]="mv $dir/sub $dir/sub.old && ln -s $roots/dir $dir/sub"
)
names=(plain link-root link-victim fifo fifo-read dir-link)
declare -A job_of out_of
for name in "${names[@]}"; do
    out=$dir/$name.out
    [[ $name == dir-link ]] && out=$dir/sub/$name.out
    out_of[$name]=$out
    submit -J "$tag-$name" -w "$node" -N 1 --gres=gpu:1 -o "$out" <<SCRIPT
#!/bin/bash
exec >/dev/null 2>&1
${swap[$name]//OUT/$out}
touch "$dir/$name.swapped"
sleep 120
SCRIPT
    job_of[$name]=$JOB_ID
    jobs+=("$JOB_ID")
done

# idle_event JOB: the job's job_idle event as the aggregator has it (empty until there is one).
idle_event() {
    "$SANDBOX_SCRIPT" exec "$node" accelctl --json events --job "$1" 2>/dev/null |
        jq -c 'select(.kind == "job_idle") | .event' | head -1
}

# One job at a time, in order (four GPUs: the last two start as the first end): it swaps its
# output, the node finds it idle and tries to tell it, the agent still answers at once, then the
# job is cancelled to free its GPU.
for name in "${names[@]}"; do
    job=${job_of[$name]}
    deadline=$((SECONDS + 90))
    until [[ -e $dir/$name.swapped ]]; do
        ((SECONDS <= deadline)) || { job_story "$job"; fail "job $job ($name) did not start and swap its output within 90 s"; }
        sleep 0.1
    done
    deadline=$((SECONDS + 30))
    until e=$(idle_event "$job") && [[ -n $e ]]; do
        ((SECONDS <= deadline)) || fail "job $job ($name): no job_idle event within 30 s"
        sleep 0.3
    done
    told=$(jq -r .told_job <<<"$e")
    log "job $job ($name): job_idle $e"
    want=false
    [[ $name == plain ]] && want=true
    expect_eq "$name: told_job" "$want" "$told"
    start=$(date +%s%N)
    "$SANDBOX_SCRIPT" exec "$node" timeout 5 accelctl status >/dev/null ||
        fail "the agent on $node did not answer after job $job's ($name) output was tried"
    log "ok: the agent on $node answered in $((($(date +%s%N) - start) / 1000000)) ms"
    scancel "$job"
done

line=$(grep '^accel: ' "${out_of[plain]}") || fail "no accel: line in the plain job's output"
log "ok: the plain job was told: $line"
after=$(fingerprint "$roots/precious" "$roots/dir/dir-link.out" "$victim_file")
[[ $after == "$before" ]] || fail "a file the attacker does not own changed:"$'\n'"before: $before"$'\n'"after:  $after"
log "ok: root's and the victim's files are as they were"
got=$(cat "$dir/fifo-read.got" 2>/dev/null || true)
[[ -z $got ]] || fail "the FIFO's reader got '$got'"
grep -q "its output not told" "$ACCEL_SANDBOX_DIR/log/agentd@$node.out" ||
    fail "the agent on $node never said why an output was not told"
log "the agent's words: $(grep "its output not told" "$ACCEL_SANDBOX_DIR/log/agentd@$node.out" | tail -n 5 | cut -c1-200 | tr '\n' '|')"
for job in "${jobs[@]}"; do wait_job_final "$job" 60; done
expect_nodes_in_service
log "PASS"
