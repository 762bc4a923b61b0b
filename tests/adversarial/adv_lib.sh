# shellcheck shell=bash disable=SC2034 # globals here are for the attack_*.sh tests
# Shared functions of the attacks; sourced, never executed. An attack is made by the ordinary
# test user ($ACCEL_TEST_USER, default acceltest) against the one-node sandbox; a second
# ordinary user, the victim ($ACCEL_VICTIM_USER, default accelvictim), runs a job meanwhile.
#
#   adv_setup              root, sandbox, agent, both users; starts the victim's job
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
    require_root
    require_sandbox
    ensure_test_user
    ensure_victim_user
    require_agent
    expect_node_in_service
    local secs=${1:-20} out
    out=$(as_victim timeout 30 sbatch --parsable --ipus=1 -o /dev/null --wrap="sleep $secs") ||
        fail "the victim's sbatch failed"
    VICTIM_JOB=${out%%;*}
    log "victim job $VICTIM_JOB (user $VICTIM_USER, ${secs} s)"
}

# adv_assert_unharmed: what every attack must leave true.
adv_assert_unharmed() {
    local status
    status=$("$ACCELCTL" status 2>&1) || fail "accel-agentd does not answer after the attack: $status"
    log "ok: the agent answers"
    if [[ -n $VICTIM_JOB ]]; then
        wait_job_final "$VICTIM_JOB" 120
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
