# shellcheck shell=bash disable=SC2034 # globals here are for the attack_*.sh tests
# Shared functions of the attacks; sourced, never executed. An attack is made by the ordinary
# test user ($ACCEL_TEST_USER, default acceltest) against the one-node sandbox; a second
# ordinary user, the victim ($ACCEL_VICTIM_USER, default accelvictim), runs a job meanwhile.
#
#   adv_setup              root, sandbox, agent, both users; starts the victim's job
#   adv_setup_held         the same, but the victim's job runs until adv_assert_unharmed
#                          lets it go rather than for a fixed time
#   adv_assert_unharmed    after the attack: the node in service, the victim's job untouched
#                          and done, the agent answering, a normal --ipus job of the attacker
#                          COMPLETED with its summary
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/../integration/lib.sh"
# shellcheck source=tests/integration/spank_lib.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/../integration/spank_lib.sh"

VICTIM_USER=${ACCEL_VICTIM_USER:-accelvictim}
VICTIM_HOME=
VICTIM_JOB=

as_victim() {
    (cd "$VICTIM_HOME" && runuser -u "$VICTIM_USER" -- env SLURM_CONF="$SLURM_CONF" "$@")
}

ensure_victim_user() {
    if ! getent passwd "$VICTIM_USER" >/dev/null; then
        useradd --create-home --shell /bin/bash "$VICTIM_USER" 2>/dev/null ||
            getent passwd "$VICTIM_USER" >/dev/null || fail "could not create user $VICTIM_USER"
    fi
    "$SANDBOX_SCRIPT" add-user "$VICTIM_USER" >/dev/null ||
        fail "could not register $VICTIM_USER in accounting"
    VICTIM_HOME=$(getent passwd "$VICTIM_USER" | cut -d: -f6)
}

# adv_setup [VICTIM_SECONDS]: the victim's --ipus=1 job runs VICTIM_SECONDS (default 20) while
# the attack goes on; it must end COMPLETED, with its own summary.
adv_setup() {
    adv_prepare
    local secs=${1:-20}
    adv_submit_victim "sleep $secs"
    log "victim job $VICTIM_JOB (user $VICTIM_USER, ${secs} s)"
}

# adv_setup_held [MAX_SECONDS]: as adv_setup, but the victim's job runs until
# adv_assert_unharmed (or the test's end, however it ends) creates a file in the victim's home
# that the job looks for, so it spans the whole attack and ends as soon as the attack is over.
# MAX_SECONDS (default 240) bounds it should nobody let it go; it ends with status 0 either
# way, as the fixed sleep of adv_setup does. The job removes the file itself.
VICTIM_RELEASE=
adv_setup_held() {
    adv_prepare
    local max=${1:-240}
    VICTIM_RELEASE=$VICTIM_HOME/.accel-victim-release-$$-$RANDOM
    rm -f -- "$VICTIM_RELEASE"
    on_exit adv_release_victim
    adv_submit_victim "$(held_script "$VICTIM_RELEASE" "$max")"
    log "victim job $VICTIM_JOB (user $VICTIM_USER, until the attack is over, ${max} s at most)"
}

# held_script FILE MAX_SECONDS: a job script (sh) that waits until FILE exists, MAX_SECONDS
# at most, removes it and exits 0. FILE must be where the job's user may remove it.
held_script() {
    printf '%s' "n=0; while [ ! -e $1 ] && [ \$n -lt $(($2 * 5)) ]; do sleep 0.2;" \
        " n=\$((n + 1)); done; rm -f $1"
}

# Lets the job of adv_setup_held end (nothing for adv_setup's).
adv_release_victim() {
    [[ -z $VICTIM_RELEASE ]] || : >"$VICTIM_RELEASE"
}

adv_prepare() {
    require_root
    require_sandbox
    ensure_test_user
    ensure_victim_user
    require_agent
    expect_node_in_service
}

# adv_submit_victim SCRIPT...: the victim's --ipus=1 job running SCRIPT (words joined by
# spaces); sets VICTIM_JOB.
adv_submit_victim() {
    local out
    out=$(as_victim timeout 30 sbatch --parsable --ipus=1 -o /dev/null --wrap="$*") ||
        fail "the victim's sbatch failed"
    VICTIM_JOB=${out%%;*}
}

# adv_assert_unharmed: what every attack must leave true.
adv_assert_unharmed() {
    local status
    status=$("$ACCELCTL" status 2>&1) || fail "accel-agentd does not answer after the attack: $status"
    log "ok: the agent answers"
    if [[ -n $VICTIM_JOB ]]; then
        adv_release_victim
        wait_job_final "$VICTIM_JOB" 120
        VICTIM_RELEASE='' # the job has removed the file; nothing to let go at the end
        expect_eq "the victim's job" "COMPLETED|0:0" "$JOB_FINAL"
        wait_comment "$VICTIM_JOB" 60
        [[ $(summary_of "$COMMENT") == *'"result":"ok"'* ]] ||
            fail "the victim's summary is not ok: $COMMENT"
        log "ok: the victim's summary says ok"
    fi
    # shellcheck disable=SC2016 # expanded by the job, not here
    submit --ipus=1 -o /dev/null --wrap='test -r "$IPUOF_CONFIG_PATH"' </dev/null
    wait_job_final "$JOB_ID" 60
    expect_eq "a normal job after the attack" "COMPLETED|0:0" "$JOB_FINAL"
    expect_node_in_service
}

# The multi-node attacks (attack_node_key, attack_node_lists) share these two.
# aggregator_metric NAME MISSING: the aggregator's sample accel_aggregator_NAME (labels
# included) from the sandbox's metrics port ($metrics_port), or MISSING when it has none.
aggregator_metric() {
    local text
    # shellcheck disable=SC2154 # metrics_port: set by the attack that sources this file
    text=$(curl -sf --max-time 5 "http://127.0.0.1:$metrics_port/metrics") ||
        fail "the aggregator's metrics on port $metrics_port do not answer"
    awk -v n="accel_aggregator_$1" -v missing="$2" \
        '$1 == n { print $2; found = 1 } END { if (!found) print missing }' <<<"$text"
}

# expect_nodes_in_service: every node of "${nodes[@]}" in service, none drained or down.
expect_nodes_in_service() {
    local n state reason
    for n in "${nodes[@]}"; do
        state=$(sinfo -h -n "$n" -o %T) reason=$(sinfo -h -n "$n" -o %E)
        [[ $state =~ ^(idle|mixed|allocated|completing|planned)$ && $reason == none ]] ||
            fail "$n is $state (reason: $reason); no node may be drained or down"
    done
    log "ok: ${nodes[*]} in service"
}
