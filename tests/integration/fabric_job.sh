#!/usr/bin/env bash
# The fabric of an IPU job in the sandbox's private network namespace (ACCEL_SANDBOX_NETNS):
# while the job runs, its fabric address sits on a fabric NIC with the configured MTU (9000)
# and the route to the accelerators' subnet goes through it; after the job the namespace is
# exactly as before, and the host's own namespace never changed.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user
if [[ -z ${ACCEL_SANDBOX_NETNS:-} ]] || ! grep -qw "$ACCEL_SANDBOX_NETNS" <<<"$(ip netns list)"; then
    fail "the sandbox has no fabric namespace (bring it up with --topology)"
fi
ns=$ACCEL_SANDBOX_NETNS

snapshot() { ip "$@" -j link show; ip "$@" -j addr show; ip "$@" -j route show table all; }
before_ns=$(snapshot -n "$ns")
before_host=$(ip -j link show; ip -j addr show)

tag=fabric-$$-$RANDOM
output=$TEST_HOME/$tag.out
marker=$TEST_HOME/$tag.running
trap 'rm -f "$output" "$marker"' EXIT

submit -J "$tag" -o "$output" --ipus=2 <<SCRIPT
#!/bin/bash
echo "nics=\$ACCEL_FABRIC_NICS addresses=\$ACCEL_FABRIC_ADDRESSES prefix=\$ACCEL_FABRIC_PREFIX mtu=\$ACCEL_FABRIC_MTU"
touch "$marker"
for _ in \$(seq 100); do [[ -e "$marker" ]] || exit 0; sleep 0.1; done
echo "the test never looked"
exit 1
SCRIPT

deadline=$((SECONDS + 60))
until [[ -e $marker ]]; do
    ((SECONDS <= deadline)) || fail "job $JOB_ID did not start"
    sleep 0.1
done
line=$(head -n1 "$output")
log "job environment: $line"
nic=$(sed -n 's/^nics=\([^, ]*\).*/\1/p' <<<"$line")
addr=$(sed -n 's/.* addresses=\([^, ]*\).*/\1/p' <<<"$line")
[[ -n $nic && -n $addr ]] || fail "the job got no fabric NIC or address: '$line'"
expect_eq "prefix and MTU the job was told" "prefix=16 mtu=9000" "$(grep -o 'prefix=.*' <<<"$line")"
got=$(ip -n "$ns" -j addr show dev "$nic" | jq -r --arg a "$addr" \
    '.[0] | "\(.mtu) \(.operstate != "DOWN") \([.addr_info[] | select(.local == $a) | .prefixlen] | first)"')
expect_eq "$nic in $ns: MTU, up, prefix of $addr" "9000 true 16" "$got"
routes=$(ip -n "$ns" route show 10.10.0.0/16)
grep -q "dev $nic " <<<"$routes" || fail "no route to 10.10.0.0/16 through $nic: '$routes'"
rm -f "$marker"

wait_job_final "$JOB_ID" 60
expect_eq "sacct state|exit code" "COMPLETED|0:0" "$JOB_FINAL"
after_ns=$(snapshot -n "$ns")
[[ $after_ns == "$before_ns" ]] || fail "namespace $ns differs after the job:" \
    "$(diff <(jq . <<<"$before_ns") <(jq . <<<"$after_ns") | head -20)"
[[ $(ip -j link show; ip -j addr show) == "$before_host" ]] || fail "the host's namespace changed"
log "PASS"
