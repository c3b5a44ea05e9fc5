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
[ $# -eq 1 ] || pg_die "usage: select-check.sh PULLGATE_BINARY"
pullgate=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
FX="$PULLGATE_HOME/select-kernel"
branch=select-check

"$PG_TOP/fixtures/kernel-select.sh" "$PG_LINUX" "$PG_REF_SERIES" "$FX" >"$PG_BUILD/select-fixture.log" 2>&1 ||
	{ cat "$PG_BUILD/select-fixture.log" >&2; pg_die "the selection fixture failed"; }
pg_git update-ref "refs/heads/$branch" "$(cat "$FX/base")"
export GNUPGHOME="$FX/gnupg"
report="$PG_BUILD/select-check.json"
rc=0
# A home of its own for the gate (its build worktree and O= dir), the tree and ccache shared:
# the ext4 selection's config then stays in its own build dir, and the next run's check-kernel
# and check-incident builds, with the plain config, stay incremental instead of flipping back.
PULLGATE_HOME="$PULLGATE_HOME/select-home" "$pullgate" gate --json --stages merge,build,boot \
	--tree "$PG_LINUX" --branch "$branch" --policy "$FX/policy.yaml" \
	"$FX/sender.git" select-ext4 >"$report" || rc=$?
gpgconf --kill gpg-agent 2>/dev/null || true
jq -r '.stages[] | "select-check: \(.name) \(.status): \(.summary // "")"' "$report"
jq -r '.selection.options[]? | "select-check: \(.option) \(.status) \(.reason // "")"' "$report"
jq -r '.suites[] | select(.name | startswith("ext4")) |
	"select-check: suite \(.name): base \(.base.passed // "-")/\(.base.failed // "-") merge \(.merge.passed // "-")/\(.merge.failed // "-") \(.verdict)"' \
	"$report"
[ "$rc" -eq 0 ] || pg_die "the gate did not pass the ext4 pull (exit $rc; $report)"
enabled=$(jq -r '.selection.options[] | select(.option == "CONFIG_EXT4_KUNIT_TESTS") | .status' "$report")
[ "$enabled" = enabled ] || pg_die "CONFIG_EXT4_KUNIT_TESTS is '$enabled', not enabled"
for s in ext4_inode_test ext4_mballoc_test; do
	ok=$(jq -r --arg s "$s" '.suites[] | select(.name == $s) |
		select(.base.passed > 0 and .base.failed == 0 and .base.crashed == 0 and
		       .merge.passed > 0 and .merge.failed == 0 and .merge.crashed == 0) | .name' "$report")
	[ "$ok" = "$s" ] || pg_die "suite $s did not run and pass on both the base and the merge"
done
echo "select-check: ext4's suites ran and passed on the base and the merge"
