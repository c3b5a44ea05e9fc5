#!/bin/sh
# 17-identity-index-refs.t - one identity index per upstream repository: shared by its refs, never answering one ref from another's commits.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 23

U="$SCRATCH/up.git"
S="$SCRATCH/sub.git"
W="$SCRATCH/w"
export GIT_COMMITTER_NAME="Linus" GIT_COMMITTER_EMAIL="linus@example.org"
export GIT_AUTHOR_NAME="Ann" GIT_AUTHOR_EMAIL="ann@example.org"
g() { git -C "$W" "$@"; }
commit() { # FILE MESSAGE DATE
	echo "$2" >"$W/$1"
	g add "$1"
	GIT_AUTHOR_DATE="$3" GIT_COMMITTER_DATE="$3" g commit -q -m "$2"
}

# upstream: master, and a branch "side" with a fix of its own that master never took
git init -q -b master "$W"
i=0
while [ $i -lt 12 ]; do
	commit "f$i" "drivers: change $i" "2025-01-$(printf %02d $((i + 1))) 10:00 +0000"
	i=$((i + 1))
done
g checkout -q -b side master~4
commit side "lib: fix only side has

Why it is needed." "2025-02-01 10:00 +0000"
only=$(g rev-parse HEAD)
g checkout -q master
git clone -q --bare "$W" "$U"

# the sender, on master, carries a copy of side's fix (no -x: nothing names it)
g checkout -q -b topic master
GIT_COMMITTER_NAME="Sub" GIT_COMMITTER_EMAIL="sub@example.org" \
	GIT_COMMITTER_DATE="2025-03-01 10:00 +0000" g cherry-pick "$only" >/dev/null
g checkout -q master
git clone -q --bare "$W" "$S"
git -C "$S" tag for-master topic

verify() { # REF
	run "$PULLGATE" verify --json --upstream "$U:$1" "$S" for-master
}
action() { printf '%s' "$out" | jq -r '"\(.upstream_index.action) \(.upstream_index.added)"'; }
copies() { printf '%s' "$out" | jq -r '[.findings[] | select(.check == "rewritten-upstream")] | length'; }
# what a verdict is made of: the exit status, the findings, the summary
verdict() { printf '%s %s' "$rc" "$(printf '%s' "$out" | jq -c '[.findings, .summary.text]')"; }

# --- today's answers, each ref's from an index of its own (a home each) -------------
home=$PULLGATE_HOME
PULLGATE_HOME="$SCRATCH/alone-master"
verify master
alone_master=$(verdict)
is "$(copies)" 0 "against master alone, the copy of side's fix re-creates no upstream commit"
PULLGATE_HOME="$SCRATCH/alone-side"
verify side
alone_side=$(verdict)
ok "$([ "$(copies)" -gt 0 ] && echo 0 || echo 1)" "against side alone, it re-creates side's fix"
PULLGATE_HOME=$home

# --- one home: side first, then master -------------------------------------------------
verify side
is "$(action)" "built (new) 9" "the first ref builds the repository's index from its own history"
verify master
is "$(action)" "extended 4" "the second ref reads only the commits the first did not reach"
is "$(find "$PULLGATE_HOME/identity" -name '*.idx' | wc -l | tr -d ' ')" 1 \
	"both refs share one index file"
is "$(verdict)" "$alone_master" \
	"a commit only on side changes nothing for master: the verdict of master's own index"
is "$(printf '%s' "$out" | jq -r '.upstream_index.commits')" \
	"$(git -C "$U" rev-list --count master)" "and the index counts master's commits alone"
verify side
is "$(action)" "current 0" "side again: nothing read"
is "$(verdict)" "$alone_side" "and side's verdict is its own index's"

# --- the commits only side has are kept for master: a warm open walks nothing ----------
# (a test point that crashes the run if the exact walk of another ref's commits starts)
walked="index:others walked"
PULLGATE_TEST_CRASH=$walked verify master
is "$(action) $(verdict)" "current 0 $alone_master" \
	"master again: the kept set is read, nothing walked, and the verdict is master's own"
for f in "$PULLGATE_HOME"/identity/*.others; do cp "$f" "$f.good"; done
# one byte of each kept set changed: the checksum no longer holds
for f in "$PULLGATE_HOME"/identity/*.others; do
	printf x | dd of="$f" bs=1 seek=60 conv=notrunc 2>/dev/null
done
PULLGATE_TEST_CRASH=$walked verify master
is "$rc" 139 "a damaged kept set is never trusted: master's open walks again"
verify master
is "$(action) $(verdict)" "current 0 $alone_master" "and its verdict is master's own"
restored=0
for f in "$PULLGATE_HOME"/identity/*.others; do cmp -s "$f" "$f.good" && restored=$((restored + 1)); done
rm -f "$PULLGATE_HOME"/identity/*.good
is "$restored" 1 "master's kept set is written again as it was, side's is left to side"

# --- a release branch below master: held already, nothing read --------------------------
git -C "$U" branch v1 master~6
verify v1
is "$(action)" "current 0" "a ref below another needs no rebuild: no commit read"
is "$(printf '%s' "$out" | jq -r '.upstream_index.commits')" \
	"$(git -C "$U" rev-list --count v1)" "it counts its own history alone"

# --- master moves: the new commits alone ------------------------------------------------
commit g1 "net: grow one" "2025-04-01 10:00 +0000"
commit g2 "net: grow two" "2025-04-02 10:00 +0000"
g push -q "$U" master
verify master
is "$(action)" "extended 2" "master advanced by two: two commits read"

# --- clock skew, no commit-graph: "only side's" must be exact ---------------------------
# master A <- X <- C1..C6 <- T, C1..C6 dated 2001; side X <- S; the pull copies X without -x.
# Walked by date, side ^ master stops before C1 leads back to X: X and A, master's own,
# would be taken for side's alone, hidden from master's probes and from its count.
U2="$SCRATCH/skew.git"
S2="$SCRATCH/skew-sub.git"
W="$SCRATCH/skew"
git init -q -b master "$W"
commit a "drivers: base a" "2025-01-01 10:00 +0000"
commit x "drivers: the fix x

Why it is needed." "2025-01-02 10:00 +0000"
X=$(g rev-parse HEAD)
i=1
while [ $i -le 6 ]; do
	commit "c$i" "mm: skewed $i" "2001-01-0$i 10:00 +0000"
	i=$((i + 1))
done
commit t "net: master tip" "2025-03-01 10:00 +0000"
g checkout -q -b side "$X"
commit s "lib: side only" "2025-03-02 10:00 +0000"
g checkout -q master
git clone -q --bare "$W" "$U2"
rm -rf "$U2/objects/info/commit-graph" "$U2/objects/info/commit-graphs"
g checkout -q -b topic master~8
GIT_COMMITTER_NAME="Sub" GIT_COMMITTER_EMAIL="sub@example.org" \
	GIT_COMMITTER_DATE="2025-04-01 10:00 +0000" g cherry-pick "$X" >/dev/null
g checkout -q master
git clone -q --bare "$W" "$S2"
git -C "$S2" tag for-master topic
verify2() { # REF
	run "$PULLGATE" verify --json --upstream "$U2:$1" "$S2" for-master
}
commits() { printf '%s' "$out" | jq -r '.upstream_index.commits'; }

PULLGATE_HOME="$SCRATCH/skew-alone"
verify2 master
alone_skew="$(verdict) $(commits)"
is "$(copies) $(commits)" "1 9" "skewed, master alone: the copy of x is found among master's 9 commits"
PULLGATE_HOME="$SCRATCH/skew-shared"
verify2 side
verify2 master
is "$(verdict) $(commits)" "$alone_skew" \
	"side seen first: master's verdict and count are still its own index's"

# master's tip rewritten and pushed with force: a build from several tips, each commit once
g commit -q --amend -m "net: master tip, amended"
g push -q -f "$U2" master
verify2 master
is "$(action)" "built (rewritten) 10" "master rewritten: made again from both tips"
verify2 master
is "$(action)" "current 0" "and the file made holds: nothing is made again"

# --- another ref's history no longer whole: let go of, never a failed verify ------------
U3="$SCRATCH/gone.git"
S3="$SCRATCH/gone-sub.git"
W="$SCRATCH/gone"
git init -q -b master "$W"
commit z0 "base zero" "1990-01-01 10:00 +0000"
g checkout -q -b z
commit zp "z parent" "1990-01-02 10:00 +0000"
ZP=$(g rev-parse HEAD)
commit zc "z tip" "1990-01-03 10:00 +0000"
g checkout -q master
i=1
while [ $i -le 8 ]; do
	commit "m$i" "m $i" "2025-01-0$i 10:00 +0000"
	i=$((i + 1))
done
g branch y
commit t "master tip" "2025-02-01 10:00 +0000"
git init -q --bare "$U3"
g push -q "$U3" master y z
g checkout -q -b topic master
commit p "pull one" "2025-03-01 10:00 +0000"
# the sender has only its branch: z's commits are nowhere else
git clone -q --bare --single-branch -b topic "file://$W" "$S3"
git -C "$S3" tag for-master topic
verify3() { # REF
	run "$PULLGATE" verify --json --upstream "$U3:$1" "$S3" for-master
}
PULLGATE_HOME="$SCRATCH/gone-shared"
verify3 z
verify3 y
zp="$U3/objects/$(echo "$ZP" | cut -c1-2)/$(echo "$ZP" | cut -c3-)"
ok "$([ -f "$zp" ] && rm -f "$zp" && echo 0 || echo 1)" "z's parent is gone from the upstream"
verify3 master
is "$(action) $(commits)" "built (rewritten) 10 10" \
	"a tip whose history cannot be walked is let go of: made from the rest"
got=$(verdict)
PULLGATE_HOME="$SCRATCH/gone-alone"
verify3 master
is "$got" "$(verdict)" "with the verdict of a home that never saw z"
