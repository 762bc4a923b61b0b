#!/usr/bin/env bash
# Checks accel-aggregatord.service with systemd-analyze verify, pointing
# ExecStart at the freshly built binary. Fails on any complaint about the unit.
set -euo pipefail
template=$1 binary=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unit=$dir/accel-aggregatord.service
sed -e "s|@ACCEL_SBIN_DIR@/accel-aggregatord|$binary|" -e "s|@ACCEL_DOC_DIR@|/usr/share/doc/accel-agent|" \
  "$template" > "$unit"
if grep -q '@' "$unit"; then
  echo "unfilled placeholder in the unit:"; grep -n '@' "$unit"; exit 1
fi
out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$unit" 2>&1 || true)
# Without systemd as PID 1 verify still parses the unit; bus and other-unit
# complaints are noise here.
bad=$(printf '%s\n' "$out" | grep -F "$dir/" | grep -viE "bus|Failed to (connect|create)|slurmdbd.service|munge.service" || true)
if [ -n "$bad" ]; then
  echo "systemd-analyze verify found problems:"; printf '%s\n' "$bad"; exit 1
fi
echo "accel-aggregatord.service: verified ($(grep -c '=' "$unit") settings)"
