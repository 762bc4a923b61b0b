#!/usr/bin/env bash
# doc_commands.sh check on small trees made here: it accepts marked blocks and listed commands,
# and refuses an unmarked or unclosed fence, a command hidden in a text block, a list entry
# that is in no doc, and one whose covering test does not exist or does not contain its evidence.
set -euo pipefail
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# case NAME EXPECTED-EXIT EXPECTED-TEXT: README.md of the tree comes on stdin; the allow-list
# is $work/allow.txt.
case_() {
    local name=$1 want=$2 text=$3 out rc=0
    mkdir -p "$work/$name/docs"
    cat >"$work/$name/README.md"
    out=$(ACCEL_DOCS_ROOT="$work/$name" ACCEL_DOCS_ALLOW="$work/allow.txt" \
        bash "$here/doc_commands.sh" check 2>&1) || rc=$?
    if ((rc != want)) || ! grep -qF -- "$text" <<<"$out"; then
        printf 'checker_test: FAIL: %s: exit %d (wanted %d), output:\n%s\n' "$name" "$rc" "$want" "$out" >&2
        failures=$((failures + 1))
    else
        printf 'checker_test: ok: %s\n' "$name"
    fi
}

printf 'systemctl enable --now accel-agentd | tests/daemon/verify_unit.sh | systemd-analyze verify\n' \
    >"$work/allow.txt"

case_ clean 0 "2 commands run by the docs test, 1 covered" <<'EOF2'
```sh
accelctl status   # a comment
systemctl enable --now accel-agentd
```
```console
$ sbatch --ipus=300 job.sh
sbatch: error: accel: ...
```
```text
health      ok
```
EOF2
case_ unmarked_fence 1 'README.md:1: fence "```": mark the block sh, console, text or conf' <<'EOF2'
```
accelctl status
```
systemctl enable --now accel-agentd
EOF2
case_ command_in_text 1 "a command in a text block (accelctl jobs)" <<'EOF2'
```text
accelctl jobs
```
```sh
systemctl enable --now accel-agentd
```
EOF2
case_ unclosed_fence 1 "a fence is never closed" <<'EOF2'
```sh
systemctl enable --now accel-agentd
EOF2
case_ stale_entry 1 "'systemctl enable --now accel-agentd' is in no doc any more" <<'EOF2'
```sh
accelctl status
```
EOF2
printf 'systemctl enable --now accel-agentd | tests/daemon/no_such_test.sh | x\n' >"$work/allow.txt"
case_ missing_test 1 "tests/daemon/no_such_test.sh does not exist" <<'EOF2'
```sh
systemctl enable --now accel-agentd
```
EOF2
printf 'systemctl enable --now accel-agentd | tests/daemon/verify_unit.sh | no such text\n' >"$work/allow.txt"
case_ evidence_missing 1 "does not contain 'no such text'" <<'EOF2'
```sh
systemctl enable --now accel-agentd
```
EOF2

((failures == 0)) || exit 1
echo "checker_test: all cases as expected"
