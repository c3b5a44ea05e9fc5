# select-lib.sh - sourced by select-check.sh and lava-check.sh: the ext4 pull through the gate in its own home, and its suites checked.
#
# Needs lib.sh sourced first, and FX (the fixture of fixtures/kernel-select.sh)
# and pullgate set.

# select_gate NAME POLICY REPORT: `pullgate gate --stages merge,build,boot` of
# the ext4 pull on refs/heads/NAME (reset to the fixture's base), with
# POLICY, the JSON report to REPORT; prints the stages' lines prefixed by
# NAME and returns the gate's exit status.  A home of its own
# ($PULLGATE_HOME/select-home: its build worktree and O= dir), the tree and
# ccache shared: the ext4 selection's config stays in its own build dir, and
# check-kernel's and check-incident's builds, with the plain config, stay
# incremental instead of flipping back.
select_gate() {
	sg_rc=0
	pg_git update-ref "refs/heads/$1" "$(cat "$FX/base")"
	GNUPGHOME="$FX/gnupg" PULLGATE_HOME="$PULLGATE_HOME/select-home" "$pullgate" gate --json \
		--stages merge,build,boot --tree "$PG_LINUX" --branch "$1" --policy "$2" \
		"$FX/sender.git" select-ext4 >"$3" || sg_rc=$?
	GNUPGHOME="$FX/gnupg" gpgconf --kill gpg-agent 2>/dev/null || true
	jq -r --arg n "$1" '.stages[] | "\($n): \(.name) \(.status): \(.summary // "")"' "$3"
	return $sg_rc
}

# select_suites_passed REPORT: dies unless ext4's suites ran and passed on the base and the merge.
select_suites_passed() {
	for s in ext4_inode_test ext4_mballoc_test; do
		ok=$(jq -r --arg s "$s" '.suites[] | select(.name == $s) |
			select(.base.passed > 0 and .base.failed == 0 and .base.crashed == 0 and
			       .merge.passed > 0 and .merge.failed == 0 and .merge.crashed == 0) | .name' "$1")
		[ "$ok" = "$s" ] || pg_die "suite $s did not run and pass on both the base and the merge"
	done
}
