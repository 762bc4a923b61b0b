#!/bin/bash
# scripts/tidy fails, naming the file, line and check, on a production file with a finding of
# .clang-tidy's checks, and passes the same file once it is fixed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/agent"
cat >"$tmp/agent/base.h" <<'CPP'
#pragma once
struct Base {
  virtual ~Base() = default;
  virtual int f() const { return 0; }
};
CPP
write() {
  printf '#include "base.h"\nstruct Derived : Base {\n  %s f() const%s { return 1; }\n};\nint g() { return Derived().f(); }\n' \
    "$1" "$2" >"$tmp/agent/derived.cpp"
}
cat >"$tmp/compile_commands.json" <<JSON
[{"directory": "$tmp", "file": "$tmp/agent/derived.cpp",
  "command": "c++ -std=c++20 -I$tmp/agent -c $tmp/agent/derived.cpp -o /dev/null"}]
JSON
write 'virtual int' ''
if out=$(ACCEL_TIDY_ROOT=$tmp bash "$repo/scripts/tidy" "$tmp" 2>&1); then
  echo "FAIL: scripts/tidy passed a virtual function without override: $out"
  exit 1
fi
grep -q "derived.cpp:3:.*\[modernize-use-override" <<<"$out" ||
  { echo "FAIL: scripts/tidy did not name the file, line and check: $out"; exit 1; }
echo "ok: refused: $(grep -m1 'derived.cpp' <<<"$out")"
write 'int' ' override'
out=$(ACCEL_TIDY_ROOT=$tmp bash "$repo/scripts/tidy" "$tmp" 2>&1) ||
  { echo "FAIL: scripts/tidy refused the fixed file: $out"; exit 1; }
echo "ok: the fixed file passes: $out"
