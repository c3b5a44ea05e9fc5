#!/bin/sh
# 17-identity-index.t - copies found by one probe of upstream's identity index: made, extended, remade.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 23

U="$SCRATCH/up.git"
S="$SCRATCH/sub.git"
W="$SCRATCH/w"
export GIT_COMMITTER_NAME="Linus" GIT_COMMITTER_EMAIL="linus@example.org"
export GIT_AUTHOR_NAME="Ann Old" GIT_AUTHOR_EMAIL="ann@example.org"
g() { git -C "$W" "$@"; }
commit() { # FILE MESSAGE AUTHOR-DATE COMMITTER-DATE
	echo "$2" >"$W/$1"
	g add "$1"
	GIT_AUTHOR_DATE="$3" GIT_COMMITTER_DATE="$4" g commit -q -m "$2"
}

# upstream: a fix from 2019, its file dropped, then five years of history, the newest in 2025
git init -q -b master "$W"
commit a "lib: first" "2019-01-01 10:00 +0000" "2019-01-01 10:00 +0000"
commit old "lib: fix the old bug

It was wrong since the start." "2019-03-01 10:00 +0000" "2019-03-02 10:00 +0000"
old=$(g rev-parse HEAD)
g rm -q old
GIT_AUTHOR_DATE="2019-06-01 10:00 +0000" GIT_COMMITTER_DATE="2019-06-01 10:00 +0000" \
	g commit -q -m "lib: drop the old file"
i=0
while [ $i -lt 30 ]; do
	y=$((2020 + i / 6))
	m=$((1 + i % 6 * 2))
	commit "f$i" "drivers: change $i" "$y-$(printf %02d $m)-01 10:00 +0000" \
		"$y-$(printf %02d $m)-02 10:00 +0000"
	i=$((i + 1))
done
git clone -q --bare "$W" "$U"

# the sender copies the 2019 fix onto today's tip (no -x: nothing names it)
g checkout -q -b topic
GIT_COMMITTER_NAME="Sub" GIT_COMMITTER_EMAIL="sub@example.org" \
	GIT_COMMITTER_DATE="2025-12-01 10:00 +0000" g cherry-pick "$old" >/dev/null
copy=$(g rev-parse HEAD)
g checkout -q master
git clone -q --bare "$W" "$S"
git -C "$S" tag old-copy "$copy"

verify() { # [OPTION...]
	run "$PULLGATE" verify --json "$@" --upstream "$U:master" "$S" old-copy
}
found() { printf '%s' "$out" | grep -c "$old" || true; }
action() { printf '%s' "$out" | jq -r '"\(.upstream_index.action) \(.upstream_index.added)"'; }
index_file() { find "$PULLGATE_HOME/identity" -name '*.idx'; }

# --- the first verify makes the index; the years-old original is one probe away ----
verify
is "$(action)" "built (new) 33" "the first verify makes upstream's identity index, every commit read once"
ok "$([ "$(found)" -gt 0 ] && echo 0 || echo 1)" "the copy of a commit six years older than upstream's tip is found"
is "$(printf '%s' "$out" | jq -r '.upstream_examined')" 1 \
	"by one probe: the original is the only upstream commit read (no date window)"
is "$(printf '%s' "$out" | jq -r '.upstream_window_since')" null "and no window is reported"

verify
is "$(action)" "current 0" "the next verify at the same tip reads no commit to index"

# --- without an index, the date window (a year back) cannot see it --------------------
home=$PULLGATE_HOME
PULLGATE_HOME="$SCRATCH/noindex"
mkdir -p "$PULLGATE_HOME"
: >"$PULLGATE_HOME/identity"
verify
PULLGATE_HOME=$home
is "$(printf '%s' "$out" | jq -r '.upstream_index')" null \
	"a home where no index can be made falls back to the date window"
is "$(found)" 0 "which cannot reach a six-year-old original (what the index is for)"

# --- upstream grows: the index is extended by the new commits alone ----------------
commit g1 "net: grow one" "2025-11-10 10:00 +0000" "2025-11-11 10:00 +0000"
commit g2 "net: grow two" "2025-11-12 10:00 +0000" "2025-11-13 10:00 +0000"
g push -q "$U" master
verify
is "$(action)" "extended 2" "after upstream grew, the index is extended by what is new"
ok "$([ "$(found)" -gt 0 ] && echo 0 || echo 1)" "and the copy is still found"

# --- upstream rewritten: the index is made again ------------------------------------
g checkout -q -b rewritten "$old"
commit r1 "lib: another road" "2025-11-20 10:00 +0000" "2025-11-21 10:00 +0000"
g push -q -f "$U" rewritten:master
verify
is "$(action)" "built (rewritten) 3" "upstream's history rewritten: the index is made again from scratch"
ok "$([ "$(found)" -gt 0 ] && echo 0 || echo 1)" "and the original, still upstream's, is found"

# --- a damaged index file is made again, never trusted ---------------------------------
f=$(index_file)
printf 'garbage' >"$f"
verify
is "$(action)" "built (damaged) 3" "garbage in the index file: made again"
printf 'PGIDENT1' | dd of="$f" bs=1 seek=0 conv=notrunc 2>/dev/null
truncate -s -5 "$f"
verify
is "$(action)" "built (damaged) 3" "a truncated index: made again"
ok "$([ "$(found)" -gt 0 ] && echo 0 || echo 1)" "and the copy is found through the new one"
is "$(find "$PULLGATE_HOME/identity" -type f | sed 's/.*\.//' | sort | tr '\n' ' ')" "idx subj " \
	"written atomically: no temporary file is left beside the index and its date fallback's"

# --- the working memory of making it: the same index, the same verdict; a bad one refused ---
home=$PULLGATE_HOME
PULLGATE_HOME="$SCRATCH/small-memory"
verify --index-memory 1048576
is "$(action)" "built (new) 3" "--index-memory: the index is made under the working memory given"
ok "$(cmp -s "$(index_file)" "$(find "$home/identity" -name '*.idx')" && echo 0 || echo 1)" \
	"the same bytes as the index made with the default"
PULLGATE_HOME=$home
verify --index-memory 4096
is "$rc:$(printf '%s' "$err" | grep -c 'index-memory wants a number of bytes, at least')" "2:1" \
	"--index-memory below 1 MiB is a usage error"

# --- a history of 12,000 commits under 1 MiB: sorted in runs on disk, the same files ---------
# (a fault at a run's write proves the build took runs: without the index, the date window)
U2="$SCRATCH/big.git"
git clone -q --bare "$W" "$U2"
awk -v from="$(git -C "$U2" rev-parse master)" 'BEGIN {
	for (i = 0; i < 12000; i++) {
		print "commit refs/heads/master"
		print "author A" i % 97 " <a" i % 97 "@example.org> " 1764000000 + i * 60 " +0000"
		print "committer Linus <linus@example.org> " 1764000000 + i * 60 " +0000"
		print "data " length("mm: step " i); print "mm: step " i
		if (i == 0) print "from " from
		print "M 100644 inline big"; print "data " length(i ""); print i
	}
}' | git -C "$U2" fast-import --quiet
big() { # [OPTION...]
	run "$PULLGATE" verify --json "$@" --upstream "$U2:master" "$S" old-copy
}
verdict() { printf '%s' "$out" | jq -r '"\(.verdict) \(.upstream_index.action) \(.upstream_index.added)"'; }
home=$PULLGATE_HOME
PULLGATE_HOME="$SCRATCH/big-default"
big
want=$(verdict)
like "$want" " built \(new\) 120[0-9][0-9]\$" "a first index of 12,000 commits, made in memory"
PULLGATE_HOME="$SCRATCH/big-fault"
run env PULLGATE_TEST_FAIL="index:run written" "$PULLGATE" verify --json --index-memory 1048576 \
	--upstream "$U2:master" "$S" old-copy
is "$(printf '%s' "$out" | jq -r '.upstream_index')" null \
	"under 1 MiB its entries go through runs on disk (a fault at the first run's write: no index)"
PULLGATE_HOME="$SCRATCH/keys-differ"
run env PULLGATE_TEST_FAIL="index:sample keys" "$PULLGATE" verify --json --upstream "$U:master" \
	"$S" old-copy
is "$(printf '%s' "$out" | jq -r '.upstream_index')+$(find "$PULLGATE_HOME" -name '*.idx' | wc -l)" \
	"null+0" "a sample commit whose keys read alone hash other than its parse's: no index made"
PULLGATE_HOME="$SCRATCH/big-small"
big --index-memory 1048576
is "$(verdict)" "$want" "under 1 MiB, through runs: the same verdict, the same index made"
same=0
for ext in idx subj; do
	cmp -s "$(find "$SCRATCH/big-default/identity" -name "*.$ext")" \
		"$(find "$PULLGATE_HOME/identity" -name "*.$ext")" || same=1
done
ok "$same" "and the same bytes, the index and its subjects', as the default's"
PULLGATE_HOME=$home
