#!/usr/bin/env bash
# The appliance time limit of an IPU-POD job that launches no appliance job. Its IPUs are remote
# (reached over IPUoF), so what the limit measures is the time its steps run on the node, from
# the end of the prolog: `--ipus=2 --appliance-time=0:06 --appliance-signal=USR1@3`, and a script
# that would compute for 25 s. The warning (USR1) comes about 3 s after the script starts and
# SIGTERM about 6 s after it (queue and prolog do not count), the job ends there, and its
# summary says time_limit with about 6 s used. Before, such a job ran all 25 s, unwarned, and its
# summary said ok with 0 s used.
# shellcheck source=tests/integration/lib.sh
source "$(dirname -- "$0")/lib.sh"

require_root
require_sandbox
ensure_test_user

tag=ipu-limit-$$-$RANDOM
output=$TEST_HOME/$tag.out
trap 'rm -f "$output"' EXIT

submit -J "$tag" -o "$output" --time=5 --ipus=2 --appliance-time=0:06 --appliance-signal=USR1@3 <<'SCRIPT'
#!/bin/bash
now() { date +%s.%N; }
echo "started $(now)"
trap 'echo "warned $(now)"' USR1
trap 'echo "term $(now)"; exit 143' TERM
# 25 s of work, in short sleeps so that the traps run at once.
for ((i = 0; i < 125; i++)); do sleep 0.2; done
echo "finished $(now)"
SCRIPT

start=$SECONDS
wait_job_final "$JOB_ID" 90
elapsed=$((SECONDS - start))
out=$(<"$output")
log "job output:"$'\n'"$out"
grep -q '^finished ' <<<"$out" && fail "the job ran its whole 25 s: its limit of 6 s was not enforced"
at() { sed -n "s/^$1 \\([0-9.]*\\)$/\\1/p" <<<"$out" | head -1; }
started=$(at started) warned=$(at warned) term=$(at term)
[[ -n $started ]] || fail "the job script did not start"
[[ -n $warned ]] || fail "no warning signal reached the job script"
[[ -n $term ]] || fail "no SIGTERM reached the job script"
expect_eq "warnings" 1 "$(grep -c '^warned ' <<<"$out")"
w=$(echo "$warned - $started" | bc) t=$(echo "$term - $started" | bc)
log "warning after $w s, SIGTERM after $t s (limit 6 s, lead 3 s); the job took $elapsed s"
(($(echo "$w >= 2.5 && $w <= 4.5" | bc))) || fail "warning after $w s, expected about 3"
(($(echo "$t >= 5.5 && $t <= 7.5" | bc))) || fail "SIGTERM after $t s, expected about 6"

wait_comment "$JOB_ID" 60
summary=$(summary_of "$COMMENT")
log "summary: $summary"
expect_eq "summary: result, kind, limit" "time_limit ipu 6" \
    "$(jq -r '"\(.result) \(.accel) \(.appliance_limit_s)"' <<<"$summary")"
used=$(jq -r .appliance_s <<<"$summary")
((used >= 5 && used <= 8)) || fail "appliance_s is $used; the job's steps ran about 6 s"
log "PASS"
