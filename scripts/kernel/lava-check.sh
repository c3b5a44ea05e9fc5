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
#     with this run's nonce and refuse it with another (exit 1).  Then two
#     of lava.sh's failure modes, for real: a kernel with a junk initramfs
#     (KUnit runs, then no root: a panic) ends lava.sh with 1 and its log
#     shows the panic; artifacts lava-run cannot fetch end it with 4, the
#     lab's failure.
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
if [ "$(id -u)" -ne 0 ]; then
	# lava-run refuses every user but root; lava.sh then exits 4 (no verdict)
	rc=0
	PG_LAVA_DEVICE="$PG_TOP/qemu-images/lava-qemu-arm64.yaml" "$PG_TOP/scripts/kernel/lava.sh" \
		"$PG_BUILD/arm64-gcc" "$PG_BUILD/lava-check-user.log" 300 2>/dev/null || rc=$?
	[ "$rc" -eq 4 ] || pg_die "as $(id -un), lava.sh with a device: exit $rc, not 4"
	why="nothing booted by LAVA: lava-run runs only as root and this is $(id -un) (lava.sh said so, exit 4)"
	echo "lava-check: SKIPPED, $why"
	[ -z "${PULLGATE_SKIP_LOG:-}" ] || echo "lava-check: $why" >>"$PULLGATE_SKIP_LOG"
	exit 0
fi
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

# the dispatcher's failure modes, run for real: a kernel that panics is the boot's failure (1) ...
printf 'not an initramfs\n' >"$dir/junk.cpio"
rc=0
PG_LAVA_DEVICE=$device "$PG_TOP/scripts/kernel/lava.sh" "$PG_BUILD/arm64-gcc" "$dir/panic.log" 300 \
	"$nonce" "$dir/junk.cpio" 2>"$dir/panic.err" || rc=$?
[ "$rc" -eq 1 ] || pg_die "a kernel without an init: lava.sh exit $rc, not 1 ($dir/panic.err)"
rc=0
"$pullgate" ktap --lava --nonce "$nonce" "$dir/panic.log" >"$dir/panic.txt" || rc=$?
# the suites ran before the panic: it is a splat, quoted as the kernel printed it
[ "$rc" -eq 1 ] && grep -q '^splat    panic at .*Unable to mount root fs on ""' "$dir/panic.txt" ||
	{ cat "$dir/panic.txt"; pg_die "the panic was not judged from lava-run's log (exit $rc)"; }
echo "lava-check: a kernel without an init panics under lava-run: lava.sh exit 1, pullgate ktap exit 1: $(grep '^splat' "$dir/panic.txt" | cut -c1-110)"
# ... and a lab that cannot fetch the kernel is the lab's (4): nothing was booted.  The
# artifacts' address answers 404 (an empty directory served on loopback); one that
# refuses connections makes lava-run retry until the boot's timeout, also 4, but slowly
mkdir -p "$dir/empty"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$dir/empty" "$port" >/dev/null 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null || true' EXIT
i=0
until curl -s -o /dev/null "http://127.0.0.1:$port/" || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
rc=0
PG_LAVA_DEVICE=$device PG_LAVA_ARTIFACTS_URL="http://127.0.0.1:$port/" \
	"$PG_TOP/scripts/kernel/lava.sh" "$PG_BUILD/arm64-gcc" "$dir/nofetch.log" 300 "$nonce" \
	"$PG_BUILD/qemu/initramfs.cpio" 2>"$dir/nofetch.err" || rc=$?
kill $srv 2>/dev/null || true
trap - EXIT
[ "$rc" -eq 4 ] || pg_die "artifacts that cannot be fetched: lava.sh exit $rc, not 4 ($dir/nofetch.err)"
echo "lava-check: artifacts lava-run cannot fetch: exit 4 ($(tail -n 1 "$dir/nofetch.err" | cut -c1-120))"

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
