#!/usr/bin/env bash
# Checks a unit file template (accel-agentd.service.in, accel-aggregatord.service.in) with
# systemd-analyze verify, pointing ExecStart at the freshly built binary. Fails on any
# complaint about the unit. Usage: verify_unit.sh TEMPLATE BINARY
set -euo pipefail
template=$1 binary=$2
program=$(basename "$binary")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unit=$dir/$(basename "$template" .in)
sed -e "s|@ACCEL_SBIN_DIR@/$program|$binary|" -e "s|@ACCEL_DOC_DIR@|/usr/share/doc/accel-agent|" \
  "$template" > "$unit"
if grep -q '@' "$unit"; then
  echo "unfilled placeholder in the unit:"; grep -n '@' "$unit"; exit 1
fi
out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$unit" 2>&1 || true)
# Without systemd as PID 1, verify still parses the unit and reports unknown
# keys and bad values; lines about the missing bus or other units are noise.
bad=$(printf '%s\n' "$out" | grep -F "$dir/" |
  grep -viE "bus|Failed to (connect|create)|slurmd.service|slurmdbd.service|munge.service" || true)
if [ -n "$bad" ]; then
  echo "systemd-analyze verify found problems:"; printf '%s\n' "$bad"; exit 1
fi
echo "$(basename "$unit"): verified ($(grep -c '=' "$unit") settings)"
