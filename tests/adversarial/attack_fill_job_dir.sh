#!/usr/bin/env bash
# Issue 34, point 1: a user's files never share a file system with the agent's state. An
# ordinary user's jobs fill their job directory ($ACCEL_JOB_DIR), one with bytes and one with
# files, each trying for more than JobDirSize (128 MiB by default) or JobDirInodes (131072):
# the writes must fail for lack of space in the job's own tmpfs, whose file system is not
# RunDir's, where the agent keeps its job table. Both jobs end COMPLETED, their epilogs record
# them, the node stays in service and the next job runs. Before the fix the directory was on
# RunDir's file system, unbounded: the writes went on into RunDir's space (the issue saw a
# 48 MiB RunDir filled, the epilog fail and the node drained).
# shellcheck source=tests/adversarial/adv_lib.sh
source "$(dirname -- "$0")/adv_lib.sh"

adv_setup 5

work=$TEST_HOME/adv-fill-$$
mkdir -p "$work"
chown "$TEST_USER" "$work"
on_exit rm -rf -- "$work"
state_fs=$(stat -f -c %i "$AGENT_RUN_DIR/state") || fail "cannot stat RunDir's state directory"

# fill KIND: the job's script. "bytes": one file written in 1 MiB pieces up to 192 MiB; "files":
# empty files up to 200,000. Each prints how far it got, why it stopped, and the job
# directory's file system.
fill() {
    cat <<SCRIPT
#!/bin/bash
echo "fs \$(stat -f -c '%T %i' "\$ACCEL_JOB_DIR")"
python3 - "\$ACCEL_JOB_DIR" $1 <<'PY'
import errno, os, sys
top, kind = sys.argv[1], sys.argv[2]
done, why = 0, "limit of the attack"
try:
    if kind == "bytes":
        with open(os.path.join(top, "big"), "wb", buffering=0) as f:
            piece = b"x" * (1 << 20)
            while done < 192:
                f.write(piece)
                done += 1
    else:
        while done < 200000:
            os.close(os.open(os.path.join(top, "f%d" % done), os.O_CREAT | os.O_WRONLY, 0o600))
            done += 1
except OSError as e:
    why = errno.errorcode.get(e.errno, str(e.errno))
print(kind, done, why)
PY
SCRIPT
}

fill bytes >"$work/bytes.sh"
fill files >"$work/files.sh"
chown "$TEST_USER" "$work"/*.sh
submit -J adv-fill-bytes -o "$work/bytes.out" "$work/bytes.sh"
bytes_job=$JOB_ID
submit -J adv-fill-files -o "$work/files.out" --ipus=1 "$work/files.sh"
files_job=$JOB_ID
for job in "$bytes_job" "$files_job"; do
    wait_job_final "$job" 120
    expect_eq "job $job, which filled its directory" "COMPLETED|0:0" "$JOB_FINAL"
done
for kind in bytes files; do
    out=$(<"$work/$kind.out")
    log "$kind: $(xargs <<<"$out")"
    read -r fs_type fs_id < <(sed -n 's/^fs //p' <<<"$out")
    [[ $fs_type == tmpfs ]] || fail "$kind: the job directory is on $fs_type, not a tmpfs of its own"
    [[ $fs_id != "$state_fs" ]] || fail "$kind: the job directory shares RunDir's file system"
    read -r _ got why < <(grep "^$kind " <<<"$out")
    [[ $why == ENOSPC ]] || fail "$kind: the job's writes stopped at $got for '$why', not for lack of space"
done
(($(sed -n 's/^bytes \([0-9]*\) .*/\1/p' "$work/bytes.out") <= 128)) ||
    fail "the bytes job wrote more than JobDirSize (128 MiB)"
(($(sed -n 's/^files \([0-9]*\) .*/\1/p' "$work/files.out") < 131072)) ||
    fail "the files job made more files than JobDirInodes (131072)"
log "ok: both jobs hit ENOSPC in a tmpfs of their own, not on RunDir's file system"
# The epilogs recorded both jobs.
for job in "$bytes_job" "$files_job"; do
    wait_comment "$job" 60
    [[ $(summary_of "$COMMENT") == *'"result":"ok"'* ]] || fail "job $job's summary is not ok: $COMMENT"
done
log "ok: both summaries say ok"
adv_assert_unharmed
log "PASS"
