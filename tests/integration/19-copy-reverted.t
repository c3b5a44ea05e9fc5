#!/bin/sh
# 19-copy-reverted.t - a copy of an upstream commit that upstream has since reverted brings it back: a note, no finding.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 22

. "$(dirname "$0")/../lib/history.sh"
COMMIT_BODY="Why it is needed."
U=$SCRATCH/linus
UG() { git -C "$U" "$@"; }

# --- upstream: Ann's fixes, some of them reverted, one reverted and applied again ---
git init -q -b master "$U"
as "Linus Torvalds" torvalds@example.org "2025-05-01 10:00:00 -0700"
commit "$U" a.c "init: the first commit"
as "Ann Net" ann@example.org "2025-05-02 10:00:00 -0700"
commit "$U" n1.c "net: fix the first thing"
commit "$U" n2.c "net: fix the second thing"
commit "$U" n3.c "net: fix the third thing"
commit "$U" n4.c "net: fix the fourth thing"
N1=$(UG rev-parse HEAD~3) N2=$(UG rev-parse HEAD~2) N3=$(UG rev-parse HEAD~1) N4=$(UG rev-parse HEAD)
as "Linus Torvalds" torvalds@example.org "2025-05-03 10:00:00 -0700"
UG revert --no-edit "$N1" >/dev/null
R1=$(UG rev-parse HEAD)
# reverted, then the revert reverted: n3 is upstream's again
UG revert --no-edit "$N3" >/dev/null
UG revert --no-edit HEAD >/dev/null
# a revert that quotes its commit abbreviated, its sentence wrapped as git wraps it
UG revert --no-commit "$N4" >/dev/null
UG commit -q -m "Revert the fourth fix" -m "This reverts commit
$(printf %.12s "$N4"); it broke the build."
# a topic merged, then the merge reverted
UG checkout -q -b topic master~6
as "Tim Topic" tim@example.org "2025-05-04 10:00:00 -0700"
commit "$U" t1.c "topic: the first change"
T1=$(UG rev-parse HEAD)
UG checkout -q master
as "Linus Torvalds" torvalds@example.org "2025-05-05 10:00:00 -0700"
UG merge -q --no-ff --no-edit topic
UG revert --no-edit -m 1 HEAD >/dev/null
commit "$U" a.c "core: later upstream work"
git clone -q --bare "$U" "$SCRATCH/linus.git"
BASE=$(UG rev-parse master~11)
is "$(UG log -1 --format=%s "$BASE")" "init: the first commit" "the pulls start from upstream's first commit"

W=$SCRATCH/work
git clone -q "$SCRATCH/linus.git" "$W"
G() { git -C "$W" "$@"; }
policy=$SCRATCH/policy.yaml
cat >"$policy" <<'EOF'
# unsigned tags and sign-offs are other tests' concern: only the copies decide
checks:
  tag-signature: off
  signoff: off
EOF

# pull NAME COMMIT [DATE]: a branch on the base with COMMIT picked (its author date changed when DATE)
pull() {
	as "Sam Sender" sam@example.org "2025-05-20 10:00:00 -0700"
	G checkout -q -b "$1" "$BASE"
	G cherry-pick "$2" >/dev/null
	[ $# -lt 3 ] || G commit -q --amend --no-edit --date="$3"
	c=$(G rev-parse HEAD)
	G tag -a -m "$1" "$1"
	run "$PULLGATE" verify --json --policy "$policy" --upstream "$SCRATCH/linus.git:master" "$W" "$1"
}
copies() { # the rewritten-upstream findings: "commit upstream" lines
	printf '%s' "$out" | jq -r '.findings[] | select(.check == "rewritten-upstream")
		| "\(.commit) \(.upstream)"' | sort
}
note() { # COMMIT: the message of its rewritten-upstream note
	printf '%s' "$out" | jq -r --arg c "$1" '.notes[] | select(.check == "rewritten-upstream")
		| select(.commit == $c) | .message'
}

pull redate "$N1" "2025-05-21 09:00:00 -0700"
is "$rc" 0 "a reverted upstream commit posted again with a new date is accepted"
is "$(copies)" "" "it is named as no rewritten copy"
like "$(note "$c")" "^brings back upstream commit $(printf %.12s "$N1"), which upstream reverted in [0-9a-f]{12}" \
	"a note says it brings back what upstream reverted, and where"
like "$(printf '%s' "$out" | jq -r .summary.text)" "re-creates no upstream commit" \
	"the story counts no rewritten commit"

pull kept "$N1"
is "$rc" 0 "a cherry-pick of a reverted commit, its date kept, is accepted"
like "$(note "$c")" "^brings back upstream commit" "with the same note"

pull abbreviated "$N4" "2025-05-21 09:00:00 -0700"
is "$rc" 0 "a revert that quotes the commit abbreviated, over two lines, counts"
like "$(note "$c")" "^brings back upstream commit $(printf %.12s "$N4")" "its note names the original"

pull merged-out "$T1" "2025-05-21 09:00:00 -0700"
is "$rc" 0 "a commit whose merge upstream reverted is brought back"
like "$(note "$c")" "^brings back upstream commit $(printf %.12s "$T1")" "its note names the original"

pull reapplied "$N3" "2025-05-21 09:00:00 -0700"
is "$rc" 1 "a commit upstream reverted and applied again is a copy of what upstream holds"
is "$(copies)" "$c $N3" "it is named as the rewritten copy"
is "$(note "$c")" "" "and gets no note"

pull live "$N2" "2025-05-21 09:00:00 -0700"
is "$rc" 1 "a copy of a commit upstream never reverted is rejected"
is "$(copies)" "$c $N2" "it is named as the rewritten copy"

# a pull that re-creates the commit and its revert brings nothing back: both are copies
as "Sam Sender" sam@example.org "2025-05-20 10:00:00 -0700"
G checkout -q -b both "$BASE"
G cherry-pick "$N1" >/dev/null
c1=$(G rev-parse HEAD)
G cherry-pick "$R1" >/dev/null
c2=$(G rev-parse HEAD)
G tag -a -m both both
run "$PULLGATE" verify --json --policy "$policy" --upstream "$SCRATCH/linus.git:master" "$W" both
is "$rc" 1 "a pull that copies a commit and upstream's revert of it is rejected"
is "$(copies)" "$(printf '%s %s\n%s %s\n' "$c1" "$N1" "$c2" "$R1" | sort)" \
	"both are named as rewritten copies"
is "$(note "$c1")" "" "and the commit is not said to be brought back"

# --- the walk for reverts is made only for copies, and pullgate guard agrees -----------
guard() { guard_push "$W" origin "$SCRATCH/linus.git" "$1"; } # REF
G config pullgate.upstream origin/master
guard refs/heads/redate
is "$rc" 0 "guard lets the change brought back through"
guard refs/heads/live
is "$rc" 1 "guard refuses the copy of a live upstream commit"
like "$err" "re-creates 1 upstream commit under new ids" "and counts it"
