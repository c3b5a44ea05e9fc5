#!/bin/sh
# make-repo-seeds.sh - the graph and pack fuzz targets' seeds: real files git writes for a tiny history.
#
#   tests/fuzz/make-repo-seeds.sh
#
# Writes tests/fuzz/graph/*.in and tests/fuzz/pack/*.in (the committed
# seeds; run again only to remake them).  A seed is the files a target lays
# out in its object directory, joined by the separator line SEP below
# (tests/fuzz/fuzz_graph.c and fuzz_pack.c split on it):
#
#   graph: the commit-graph file alone (objects/info/commit-graph), or the
#          commit-graph-chain file and then its layers, in its order
#   pack:  pack-X.idx, pack-X.pack and optionally one loose commit's file
#
# The history has merges, an octopus merge (the EDGE chunk) and a commit
# dated 120 years before its parent (a corrected-date offset of more than
# 2^31 s: the GDO2 chunk).  Dates and names are fixed, so that the files
# come out the same each time with the same git.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
SEP='=pgfuzz-file='
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

export GIT_AUTHOR_NAME='A U Thor' GIT_AUTHOR_EMAIL='author@example.org'
export GIT_COMMITTER_NAME='C O Mitter' GIT_COMMITTER_EMAIL='committer@example.org'
export GIT_CONFIG_NOSYSTEM=1 HOME="$tmp"
t=1700000000

# commit MESSAGE [PARENT...]: a commit of the tree of HEAD, dated one minute after the last
commit() {
	msg=$1
	shift
	t=$((t + 60))
	args=
	for p; do args="$args -p $p"; done
	# shellcheck disable=SC2086 # the parents, one word each
	GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" \
		git commit-tree $args -m "$msg" "$tree"
}

# join OUT FILE...: the files joined by the separator line
join() {
	out=$1
	shift
	first=1
	for f; do
		[ $first = 1 ] || printf '\n%s\n' "$SEP"
		cat "$f"
		first=0
	done >"$out"
}

git init -q -b main "$tmp/r"
cd "$tmp/r"
git config pack.threads 1
echo one >a
git add a
tree=$(git write-tree)
base=$(commit 'base')
c1=$(commit 'left' "$base")
c2=$(commit 'right' "$base")
c3=$(commit 'third' "$base")
m=$(commit 'merge left and right' "$c1" "$c2")
oct=$(commit 'octopus of three' "$c1" "$c2" "$c3")
tip=$(commit 'after the merges' "$m" "$oct")
# a parent far in the future and a child far in the past: GDO2
t=4102444800
future=$(commit 'dated 2100' "$tip")
t=315532800
past=$(commit 'dated 1980' "$future")
git update-ref refs/heads/main "$past"

mkdir -p "$top/tests/fuzz/graph" "$top/tests/fuzz/pack"

# one file, corrected dates (GDA2, GDO2), changed paths (BIDX, BDAT: skipped)
git commit-graph write --reachable --changed-paths
join "$top/tests/fuzz/graph/single-v2.in" .git/objects/info/commit-graph
# one file, topological levels only
git -c commitGraph.generationVersion=1 commit-graph write --reachable
join "$top/tests/fuzz/graph/single-v1.in" .git/objects/info/commit-graph
rm -f .git/objects/info/commit-graph

# a chain of three layers, each naming those below it (BASE)
git update-ref refs/heads/main "$m"
git commit-graph write --reachable --split=no-merge
git update-ref refs/heads/main "$tip"
git commit-graph write --reachable --split=no-merge
git update-ref refs/heads/main "$past"
git commit-graph write --reachable --split=no-merge
set -- .git/objects/info/commit-graphs/commit-graph-chain
while read -r h; do
	set -- "$@" ".git/objects/info/commit-graphs/graph-$h.graph"
done <.git/objects/info/commit-graphs/commit-graph-chain
[ $# -eq 4 ] || { echo "make-repo-seeds: expected a chain of three layers" >&2; exit 1; }
join "$top/tests/fuzz/graph/chain-3.in" "$@"
rm -rf .git/objects/info/commit-graphs

# every object whole in one pack, and a loose commit made after it
git repack -adfq --window=0
loose=$(commit 'loose after the repack' "$past")
join "$top/tests/fuzz/pack/whole-loose.in" .git/objects/pack/pack-*.idx \
	.git/objects/pack/pack-*.pack ".git/objects/$(echo "$loose" | cut -c1-2)/$(echo "$loose" | cut -c3-)"

# commits sharing a long message, packed as deltas of each other
body=$(seq 1 40 | sed 's/^/a long line that the commits share, number /')
c=$past
for i in 1 2 3; do
	c=$(commit "delta $i

$body" "$c")
done
git update-ref refs/heads/main "$c"
git repack -adfq --window=10 --depth=5
join "$top/tests/fuzz/pack/deltas.in" .git/objects/pack/pack-*.idx .git/objects/pack/pack-*.pack
ls -l "$top/tests/fuzz/graph" "$top/tests/fuzz/pack"
