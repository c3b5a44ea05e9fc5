#!/bin/sh
# 17-identity-index-refs.t - one identity index per upstream repository: shared by its refs, never answering one ref from another's commits.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 12

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
