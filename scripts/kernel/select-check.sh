#!/bin/sh
# select-check.sh - the pull-aware KUnit selection on the real tree: an ext4 pull's suites built, booted and passing.
#
# usage: scripts/kernel/select-check.sh PULLGATE_BINARY
#
# Run by check.sh after its own build and boot (it holds no lock: the gate
# takes $PULLGATE_HOME/.kernel.lock itself).  A synthetic pull touching
# fs/ext4/inode.c (fixtures/kernel-select.sh, on series) goes through
# `pullgate gate --stages merge,build,boot` on an integration branch of its
# own, refs/heads/select-check (reset to series each run; master is never
# touched).  The selection adds fs/ext4/.kunitconfig: the base and the
# merge are built with ext4 and its tests (one incremental build; ccache
# keeps it for the next run) and booted, in a build dir of its own
# ($PULLGATE_HOME/select-home, the tree and ccache shared).  Fails unless the gate passes,
# CONFIG_EXT4_KUNIT_TESTS is enabled, and ext4_inode_test and
# ext4_mballoc_test ran on the base and the merge with passes and no failure.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/select-lib.sh"
[ $# -eq 1 ] || pg_die "usage: select-check.sh PULLGATE_BINARY"
pullgate=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
FX="$PULLGATE_HOME/select-kernel"
branch=select-check

"$PG_TOP/fixtures/kernel-select.sh" "$PG_LINUX" "$PG_REF_SERIES" "$FX" >"$PG_BUILD/select-fixture.log" 2>&1 ||
	{ cat "$PG_BUILD/select-fixture.log" >&2; pg_die "the selection fixture failed"; }
report="$PG_BUILD/select-check.json"
rc=0
select_gate "$branch" "$FX/policy.yaml" "$report" || rc=$?
jq -r '.selection.options[]? | "select-check: \(.option) \(.status) \(.reason // "")"' "$report"
jq -r '.suites[] | select(.name | startswith("ext4")) |
	"select-check: suite \(.name): base \(.base.passed // "-")/\(.base.failed // "-") merge \(.merge.passed // "-")/\(.merge.failed // "-") \(.verdict)"' \
	"$report"
[ "$rc" -eq 0 ] || pg_die "the gate did not pass the ext4 pull (exit $rc; $report)"
enabled=$(jq -r '.selection.options[] | select(.option == "CONFIG_EXT4_KUNIT_TESTS") | .status' "$report")
[ "$enabled" = enabled ] || pg_die "CONFIG_EXT4_KUNIT_TESTS is '$enabled', not enabled"
select_suites_passed "$report"
echo "select-check: ext4's suites ran and passed on the base and the merge"
