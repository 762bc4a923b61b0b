#!/usr/bin/env bash
# Checks accel-agentd.service with systemd-analyze verify, pointing ExecStart
# at the freshly built binary. Fails on any complaint about the unit.
set -euo pipefail
template=$1 binary=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed -e "s|@ACCEL_SBIN_DIR@/accel-agentd|$binary|" -e "s|@ACCEL_DOC_DIR@|/usr/share/doc/accel-agent|" \
  "$template" > "$dir/accel-agentd.service"
if grep -q '@' "$dir/accel-agentd.service"; then
  echo "unfilled placeholder in the unit:"; grep -n '@' "$dir/accel-agentd.service"; exit 1
fi
out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$dir/accel-agentd.service" 2>&1 || true)
# Without systemd as PID 1, verify still parses the unit and reports unknown
# keys and bad values; lines about the missing bus or other units are noise.
bad=$(printf '%s\n' "$out" | grep -F "$dir/" | grep -viE "bus|Failed to (connect|create)|slurmd.service|munge.service" || true)
if [ -n "$bad" ]; then
  echo "systemd-analyze verify found problems:"; printf '%s\n' "$bad"; exit 1
fi
echo "accel-agentd.service: verified ($(grep -c '=' "$dir/accel-agentd.service") settings)"
