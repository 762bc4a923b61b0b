#!/usr/bin/env bash
# The shipped alert rules load in Prometheus (promtool check rules) and fire
# as accel-alerts.test.yml says (promtool test rules). promtool comes with
# Debian's prometheus package (scripts/bootstrap installs it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v promtool >/dev/null; then
  echo "alert_rules: promtool not found; install Debian's prometheus package (scripts/bootstrap)" >&2
  exit 1
fi
promtool check rules "$here/../../packaging/examples/accel-alerts.yml"
cd "$here"
promtool test rules accel-alerts.test.yml
