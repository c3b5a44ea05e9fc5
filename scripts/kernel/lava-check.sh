#!/bin/sh
# lava-check.sh - LAVA's own dispatcher boots the gate's kernels: lava-run on this machine, its log judged by pullgate.
#
# usage: scripts/kernel/lava-check.sh PULLGATE_BINARY
#
# Run by check.sh after select-check.sh, whose fixture and home it reuses.
# No LAVA server can be reached here, but Debian's lava-dispatcher runs a
# job locally (lava-run) with a device configuration; the shipped
# qemu-images/lava-qemu-arm64.yaml is the qemu device type's for lava.sh's
# jobs.
#  1. lava.sh exports the job for check.sh's build and lava-run runs it:
#     the job must complete, and `pullgate ktap --lava` must accept its log
#     with this run's nonce and refuse it with another (exit 1).
#  2. `pullgate gate --boot-on lava` with pipeline.lava.device: the ext4
#     pull of select-check merged, built (select-check built it: nothing to
#     compile) and its base and merge booted by lava-run, on a branch of its
#     own (refs/heads/lava-check, reset each run).  The gate must pass, with
#     ext4's suites passing on the base and the merge, read back from LAVA's
#     logs.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/select-lib.sh"
[ $# -eq 1 ] || pg_die "usage: lava-check.sh PULLGATE_BINARY"
pullgate=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
command -v lava-run >/dev/null 2>&1 || pg_die "lava-run is missing: run scripts/deps.sh (lava-dispatcher)"
device="$PG_TOP/qemu-images/lava-qemu-arm64.yaml"

# 1. check.sh's kernel, booted by lava-run
dir="$PG_BUILD/lava-check"
rm -rf "$dir"
mkdir -p "$dir"
nonce=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
PG_LAVA_DEVICE=$device "$PG_TOP/scripts/kernel/lava.sh" "$PG_BUILD/arm64-gcc" "$dir/boot.log" 300 \
	"$nonce" "$PG_BUILD/qemu/initramfs.cpio" ||
	pg_die "lava-run did not complete the job (exit $?; $dir/boot.log)"
grep -q '"lvl": "results", "msg": {"case": "job", "definition": "lava", "result": "pass"}' "$dir/boot.log" ||
	pg_die "LAVA's log does not say the job passed ($dir/boot.log)"
"$pullgate" ktap --lava --nonce "$nonce" "$dir/boot.log" >"$dir/ktap.txt" ||
	{ cat "$dir/ktap.txt"; pg_die "pullgate ktap --lava refused lava-run's log"; }
echo "lava-check: lava-run's log, read by pullgate ktap --lava: $(tail -n 1 "$dir/ktap.txt"); $(grep '^boot:' "$dir/ktap.txt")"
rc=0
"$pullgate" ktap --lava --nonce "0$nonce" "$dir/boot.log" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] || pg_die "with another nonce the log was not refused (exit $rc, not 1)"
echo "lava-check: with another run's nonce the same log is refused (exit 1)"

# 2. the gate, booting the base and the merge on this machine's dispatcher
FX="$PULLGATE_HOME/select-kernel"
[ -f "$FX/policy.yaml" ] || pg_die "no select-check fixture: run select-check.sh first"
{
	cat "$FX/policy.yaml"
	printf '\npipeline:\n  boot-on: lava\n  lava:\n    device: %s\n' "$device"
} >"$FX/policy-lava.yaml"
report="$PG_BUILD/lava-check.json"
rc=0
select_gate lava-check "$FX/policy-lava.yaml" "$report" || rc=$?
[ "$rc" -eq 0 ] || pg_die "the gate did not pass the ext4 pull booted by lava-run (exit $rc; $report)"
select_suites_passed "$report"
run=$(jq -r .run_dir "$report")
grep -q '"msg": "Job finished correctly"' "$run/lava.log" ||
	pg_die "the merge's LAVA log does not say the job finished ($run/lava.log)"
pg_git update-ref -d refs/heads/lava-check
echo "lava-check: the gate booted the base and the merge with lava-run; ext4's suites passed on both"
