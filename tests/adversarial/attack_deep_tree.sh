#!/usr/bin/env bash
# Issue 17, point 3: the job directory is the user's. An ordinary user's --ipus=1 job fills its
# job directory (ACCEL_IPUOF_DIR, under IpuofDir) with 100,000 entries and a chain of
# directories 10,000 levels deep, and leaves links to files and a directory of another user
# (the victim) in it, at the top and at the bottom of the chain. The epilog must end in normal
# time (the tree is only moved aside into IpuofDir/.trash), the job COMPLETED, the node in
# service; the agent's trash thread must then remove the tree within a bounded time without
# following a link. The agent is also stopped while its trash holds such trees (the job's,
# if it is not gone yet, and one planted the way a stopped agent leaves one) and must start
# again and finish them.
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "$0")/adv_lib.sh"

EPILOG_LIMIT=10    # seconds from the end of the batch script to the job leaving squeue
REMOVAL_LIMIT=120  # seconds for the trash to let go of a tree

adv_setup 40

ipuof=$(sed -n 's/^[[:space:]]*IpuofDir[[:space:]]*=[[:space:]]*\([^[:space:]#]*\).*/\1/p' \
    "$(dirname -- "$AGENT_CONF")/vipu.conf" | tail -n 1)
[[ -n $ipuof && -d $ipuof ]] || fail "no IpuofDir in $(dirname -- "$AGENT_CONF")/vipu.conf"
trash=$ipuof/.trash
[[ -d $trash ]] || fail "the agent made no trash directory $trash"
log "IpuofDir $ipuof, trash $trash"

# The victim's file and directory the attacker's links point at.
victim_dir=$VICTIM_HOME/adv-deep-tree-$$
as_victim mkdir -p "$victim_dir/dir"
as_victim sh -c "echo keep >'$victim_dir/file' && echo keep >'$victim_dir/dir/inner'"
on_exit rm -rf -- "$victim_dir"
victim_intact() {
    [[ $(<"$victim_dir/file") == keep && $(<"$victim_dir/dir/inner") == keep ]] ||
        fail "the victim's files under $victim_dir were touched"
}

# The tree builder (perl DIR): 100 directories of 999 entries each (100,000 entries: in each
# directory a file and hard links to it, which a user makes faster than new files and which
# cost the remover the same), links to the victim's files, and a 10,000-level chain ending in another link. Perl,
# because a shell loop of mkdir would take minutes; the chain is made through chdir (its
# path is far longer than PATH_MAX).
tree_builder() {
    cat <<PERL
use strict;
my \$top = shift or die "no directory";
chdir \$top or die "chdir \$top: \$!";
mkdir "wide" or die "mkdir wide: \$!";
for my \$d (0 .. 99) {
    mkdir "wide/\$d" or die "mkdir: \$!";
    open(my \$fh, '>', "wide/\$d/0") or die "create: \$!";
    close \$fh;
    for my \$f (1 .. 998) { link "wide/\$d/0", "wide/\$d/\$f" or die "link: \$!"; }
}
symlink "$victim_dir/file", "victim-file" or die "symlink: \$!";
symlink "$victim_dir/dir", "victim-dir" or die "symlink: \$!";
mkdir "deep" or die "mkdir deep: \$!";
chdir "deep" or die;
for (1 .. 10000) { mkdir "d" or die "mkdir d: \$!"; chdir "d" or die "chdir d: \$!"; }
symlink "$victim_dir/dir", "victim-dir-deep" or die "symlink: \$!";
print "built\n";
PERL
}
builder=$(mktemp /tmp/adv-deep-tree.XXXXXX.pl)
on_exit rm -f -- "$builder"
tree_builder >"$builder"
chmod 644 "$builder"

output=$TEST_HOME/adv-deep-tree-$$.out
on_exit rm -f -- "$output"
submit --ipus=1 -o "$output" <<SCRIPT
#!/bin/bash
[[ -n \$ACCEL_IPUOF_DIR && -d \$ACCEL_IPUOF_DIR ]] || { echo "no ACCEL_IPUOF_DIR"; exit 3; }
echo "dir \$ACCEL_IPUOF_DIR"
perl "$builder" "\$ACCEL_IPUOF_DIR" || exit 4
echo "entries \$(find "\$ACCEL_IPUOF_DIR/wide" | wc -l)"
echo "ended \$(date +%s.%N)"
SCRIPT
attack_job=$JOB_ID
wait_job_final "$attack_job" 240
out=$(<"$output")
log "job output:"$'\n'"$out"
expect_eq "the attacker's job" "COMPLETED|0:0" "$JOB_FINAL"
grep -qx "dir $ipuof/$attack_job" <<<"$out" || fail "the job's ACCEL_IPUOF_DIR is not $ipuof/$attack_job"
grep -qx "entries 100001" <<<"$out" || fail "the job did not build its 100,000 entries"

# The epilog: the job leaves squeue (its epilog done) within EPILOG_LIMIT s of its script's end.
ended=$(sed -n 's/^ended //p' <<<"$out")
[[ -n $ended ]] || fail "the job printed no end time"
while [[ -n $(squeue -h -j "$attack_job" -o %T 2>/dev/null) ]]; do
    awk -v e="$ended" -v l="$EPILOG_LIMIT" -v n="$(date +%s.%N)" 'BEGIN { exit !(n - e > l) }' &&
        fail "job $attack_job still in squeue (epilog running) $EPILOG_LIMIT s after its script ended"
    sleep 0.1
done
epilog_s=$(awk -v e="$ended" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - e }')
log "ok: job $attack_job left squeue ${epilog_s} s after its script ended (limit $EPILOG_LIMIT s)"
[[ ! -e $ipuof/$attack_job ]] || fail "$ipuof/$attack_job is still there after the epilog"
expect_node_in_service

# Stop the agent at once: its trash thread may be removing the job's tree right now.
stop_agent
left=$(find "$trash" -mindepth 1 -maxdepth 1 -name "$attack_job.*" | wc -l)
log "the agent stopped with $left tree(s) of job $attack_job in its trash"
# And a tree such as a stopped agent leaves there, planted while it is down.
planted=$trash/planted-by-test.$$
mkdir "$planted"
perl "$builder" "$planted" >/dev/null || fail "could not plant a tree in $trash"
log "planted a 100,000-entry, 10,000-level tree at $planted"
start_agent
started=$SECONDS
while [[ -n $(find "$trash" -mindepth 1 -maxdepth 1 \( -name "$attack_job.*" -o -name "planted-by-test.$$" \) \
    -print -quit) ]]; do
    ((SECONDS - started <= REMOVAL_LIMIT)) ||
        fail "the restarted agent did not empty its trash within $REMOVAL_LIMIT s:" \
            "$(find "$trash" -mindepth 1 -maxdepth 1 -printf "%f " | head -c 400)"
    sleep 0.5
done
log "ok: the restarted agent emptied its trash in $((SECONDS - started)) s"
victim_intact
log "ok: the victim's files, linked from the tree, are untouched"

adv_assert_unharmed
victim_intact
log "PASS"
