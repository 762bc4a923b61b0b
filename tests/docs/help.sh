#!/usr/bin/env bash
# --help on every program and verb: exits 0, prints on stdout, and names each option of the
# program or verb. Usage: help.sh BINDIR (the build's bin directory).
set -euo pipefail
bin=${1:?usage: help.sh BINDIR}
failures=0

fail_one() {
    printf 'help: FAIL: %s\n' "$*" >&2
    failures=$((failures + 1))
}

# expect_help "COMMAND ARGS" WORD...: COMMAND ARGS exits 0 with nothing on stderr and
# prints every WORD on stdout.
expect_help() {
    local cmd=$1 out err rc=0 word
    shift
    err=$(mktemp)
    # shellcheck disable=SC2086 # the command and its arguments are words on purpose
    out=$("$bin"/$cmd 2>"$err") || rc=$?
    ((rc == 0)) || fail_one "'$cmd' exited $rc"
    [[ ! -s $err ]] || fail_one "'$cmd' wrote on stderr: $(head -c 300 "$err")"
    rm -f "$err"
    for word in "$@"; do
        grep -qF -- "$word" <<<"$out" || fail_one "'$cmd' does not name '$word'"
    done
    ((failures > 0)) || printf 'help: ok: %s\n' "$cmd"
}

expect_help "accel-agentd --help" --config --topology --hw-mock --version --print-topology --xml --json
expect_help "accel-agentd --print-topology --help" --xml --json
expect_help "accel-aggregatord --help" --config --check-config "events --help"
expect_help "accel-aggregatord events --help" --database --job --node --follow --json
expect_help "accel-keygen --help" BASE .key .pub
expect_help "accelctl --help" --config --json prolog epilog status jobs job topology events report wait-appliance config
# The verbs themselves are checked option by option in tests/unit/ctl/cli_test.cpp; here the
# shipped binary, under each of its names.
expect_help "accelctl status --help" --json health
expect_help "accelctl events --help" --job --node --follow --database --json
expect_help "accelctl report --help" ID --json "plain line" SlurmUser
expect_help "accel-prolog --help" SLURM_JOB_ID
expect_help "accel-epilog --help" SLURM_JOB_ID

# A mistake on the command line says where the help is, or shows the usage itself.
for cmd in "accel-aggregatord --bogus" "accel-keygen" "accelctl bogus" "accel-agentd --bogus"; do
    rc=0
    # shellcheck disable=SC2086
    msg=$("$bin"/$cmd 2>&1 >/dev/null) || rc=$?
    ((rc == 2)) || fail_one "'$cmd' exited $rc, not 2 (usage)"
    grep -qE -- '--help|^usage:' <<<"$msg" || fail_one "'$cmd' shows neither the usage nor --help: $msg"
done

((failures == 0)) || exit 1
echo "help: every program and verb explains itself"
