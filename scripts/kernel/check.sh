#!/bin/sh
# check.sh - the whole kernel check: tree, series and seed report, arm64 build, QEMU boot, KTAP verdict, an ext4 pull's selected suites.
#
# usage: scripts/kernel/check.sh PULLGATE_BINARY
#
# Every step is incremental: the tree is unpacked once, the series refs are
# reproducible, the build is make with a persistent O= dir and ccache, and
# only the boot always runs.  Fails on a failed or crashed test, a splat,
# a missing marker (with this boot's nonce), no power-off, an incomplete
# KTAP plan, no passed test or a boot timeout.  PG_BOOT_TIMEOUT (default 300 s).
# Before the build, tests/kernel/select.t: --explain-tests on this tree.
# Then select-check.sh: a pull touching fs/ext4/ through the gate, whose
# selected ext4 suites must run and pass on the base and the merge; and
# lava-check.sh: this build and that pull booted by LAVA's dispatcher.
set -eu
. "$(dirname "$0")/lib.sh"
[ $# -eq 1 ] || pg_die "usage: check.sh PULLGATE_BINARY"
pullgate=$1
[ -x "$pullgate" ] || pg_die "'$pullgate' is not executable"
pullgate="$(cd "$(dirname "$pullgate")" && pwd)/${pullgate##*/}"

out="$PG_BUILD/arm64-gcc"
bootlog="$PG_BUILD/qemu/boot.log"
timeout=${PG_BOOT_TIMEOUT:-300}

mkdir -p "$PULLGATE_HOME"
# One kernel job at a time per $PULLGATE_HOME: the tree and build dirs are shared.
exec 9>"$PULLGATE_HOME/.kernel.lock"
flock 9

# Run a step and print its time; returns the step's status (also when the
# caller tests it, where set -e is off).
step() {
	name=$1
	shift
	s=$(pg_now)
	src=0
	"$@" || src=$?
	echo "check-kernel: $name: $(($(pg_now) - s)) s"
	return $src
}

t0=$(pg_now)
step tree "$PG_TOP/scripts/kernel/tree.sh"
step series "$PG_TOP/scripts/kernel/series.sh" apply
echo "check-kernel: per-seed report (patches/linux-6.12/seeds):"
"$PG_TOP/scripts/kernel/series.sh" report
# The selection explained on this tree (nothing built): tap.sh gives the
# test a home of its own, PG_KERNEL_HOME names this one's tree.
step explain-tests env PULLGATE="$pullgate" PG_KERNEL_HOME="$PULLGATE_HOME" \
	prove -v "$PG_TOP/tests/kernel/select.t"
# The build runs in $PULLGATE_HOME/work/build, the worktree the merge bot
# builds pulls in too: kbuild and ccache key objects on the source path, so
# one path for both keeps the objects and the cache shared.
build_worktree() {
	wt="$PULLGATE_HOME/work/build"
	if pg_git worktree list --porcelain | grep -qx "worktree $wt" && [ -d "$wt/.git" ] ||
	   [ -f "$wt/.git" ]; then
		git -C "$wt" checkout -q -f -B pullgate/build "$PG_REF_SERIES"
	else
		rm -rf "$wt"
		pg_git worktree prune
		mkdir -p "$(dirname "$wt")"
		pg_git worktree add -q -f -B pullgate/build "$wt" "$PG_REF_SERIES"
	fi
}
step worktree build_worktree
step build "$PG_TOP/scripts/kernel/build.sh" "$PULLGATE_HOME/work/build" "$out" "$out/build.log" Image
# this boot's nonce: its init prints it, so the verdict is on this boot's console only
nonce=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
step boot "$PG_TOP/scripts/kernel/boot.sh" "$out" "$bootlog" "$timeout" "$nonce" || {
	rc=$?
	"$pullgate" ktap --nonce "$nonce" "$bootlog" || true
	exit $rc
}
echo "check-kernel: KTAP summary of $bootlog:"
set +e
"$pullgate" ktap --nonce "$nonce" "$bootlog"
rc=$?
set -e
[ $rc -eq 0 ] || pg_die "KUnit failures, crashes or splats (see above and $bootlog)"
# The pull-aware selection on the real tree: an ext4 pull through the gate,
# which takes the kernel lock itself.
exec 9>&-
step select "$PG_TOP/scripts/kernel/select-check.sh" "$pullgate"
# LAVA's dispatcher (lava-run) boots this build and, through the gate, the ext4 pull's
step lava "$PG_TOP/scripts/kernel/lava-check.sh" "$pullgate"
echo "check-kernel: total $(($(pg_now) - t0)) s"
