#!/usr/bin/env bash
# The Debian package: built with cpack from the build tree, it installs the binaries, the
# SPANK plugin, the unit files and the commented examples where the operator guide says, the
# installed unit files verify, the example configuration passes `accelctl config check`, and
# `dpkg -r` removes every file again. Needs root and dpkg; changes the system only between
# install and removal (the package must not be installed before).
set -euo pipefail
build=${ACCEL_BUILD_DIR:?ACCEL_BUILD_DIR must name the build tree}
fail() { echo "deb: FAIL: $*" >&2; exit 1; }
log() { echo "deb: $*"; }
((EUID == 0)) || fail "needs root (dpkg -i)"
if dpkg -s accel-agent >/dev/null 2>&1; then
    fail "accel-agent is already installed on this machine; remove it first (dpkg -r accel-agent)"
fi
work=$(mktemp -d)
trap 'dpkg -r accel-agent >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

(cd "$build" && cpack -G DEB -B "$work" >"$work/cpack.log" 2>&1) || fail "cpack: $(tail -5 "$work/cpack.log")"
deb=$(find "$work" -maxdepth 1 -name 'accel-agent_*.deb' | head -n1)
[[ -n $deb ]] || fail "cpack made no accel-agent_*.deb"
log "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
deps=$(dpkg-deb -f "$deb" Depends)
log "depends: $deps"
grep -q 'libzmq5' <<<"$deps" || fail "Depends lacks libzmq5: $deps"

plugin=$(dpkg-deb -c "$deb" | awk '{print $6}' | grep 'spank_accel\.so$' | sed 's|^\.||')
[[ -n $plugin ]] || fail "the package holds no spank_accel.so"
dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || fail "dpkg -i: $(tail -5 "$work/dpkg.log")"
for f in /usr/sbin/accel-agentd /usr/sbin/accelctl /usr/sbin/accel-aggregatord /usr/sbin/accel-keygen \
    /usr/lib/systemd/system/accel-agentd.service /usr/lib/systemd/system/accel-aggregatord.service \
    "$plugin" /usr/share/doc/accel-agent/examples/accel.conf /usr/share/doc/accel-agent/operator-guide.md; do
    [[ -e $f ]] || fail "$f is not installed"
done
[[ $(readlink /usr/sbin/accel-prolog) == accelctl && $(readlink /usr/sbin/accel-epilog) == accelctl ]] ||
    fail "accel-prolog and accel-epilog are not links to accelctl"
/usr/sbin/accel-agentd --version | grep -q '^accel-agentd ' || fail "the installed accel-agentd does not run"
systemd-analyze verify /usr/lib/systemd/system/accel-agentd.service \
    /usr/lib/systemd/system/accel-aggregatord.service >"$work/verify.log" 2>&1 ||
    fail "installed unit files do not verify: $(cat "$work/verify.log")"
/usr/sbin/accelctl config check /usr/share/doc/accel-agent/examples/accel.conf ||
    fail "the example accel.conf (with vipu.conf beside it) does not pass accelctl config check"
log "installed and checked"

files=$(dpkg -L accel-agent | while read -r f; do [[ -f $f || -L $f ]] && echo "$f"; done)
dpkg -r accel-agent >"$work/dpkg-r.log" 2>&1 || fail "dpkg -r: $(tail -5 "$work/dpkg-r.log")"
while read -r f; do
    [[ ! -e $f && ! -L $f ]] || fail "$f is still there after dpkg -r"
done <<<"$files"
log "removed: $(wc -l <<<"$files") files gone"
log "PASS"
