#!/bin/sh
# corpus-dates.sh - real upstream commits copied with their dates kept or changed, and real topic branches: rewritten-upstream before and after.
#
#   bench/corpus-dates.sh [-b BEFORE] [-a AFTER] [-n N] [-m M] [-k K] [-s START]
#                         [-p POLICY] REPO [REF]
#
# REPO is any real repository (a bare mirror is fine; it is only read, and
# borrowed through alternates), REF its branch (default master).  It is a
# bench: `make check` never runs it.  Each of the two builds, BEFORE and
# AFTER (default build/release/pullgate; without -b only AFTER runs), runs
# pullgate verify on the same pulls with its own PULLGATE_HOME.
#
# copies   N (default 20) real upstream commits: the tips of the topic
#          branches merged by every K-th (default 10) first-parent merge
#          of START (default REF~2000) whose tip is no merge.  Each tip C
#          is cherry-picked by git onto the merge's first parent, where C's
#          change is not yet (a pick that does not apply cleanly is
#          skipped), in three variants:
#            kept         git cherry-pick C (author and author date kept)
#            amend-date   then git commit --amend --no-edit --date=<C's
#                         author date + 3 days>
#            ignore-date  the kept pick rebased by git rebase --ignore-date
#                         (author date = committer date = now)
#          Each variant gets a tag signed with the bench's own scratch key
#          and is verified against REF's tip, which holds C: a copy is
#          named when a rewritten-upstream finding gives C as its upstream.
# topics   M (default 20) real topic branches: the second parents of the
#          newest first-parent "Merge branch '...'" merges of REF, each
#          verified (a scratch signed tag on it) against the merge's first
#          parent.  They were really merged: every rewritten-upstream
#          finding on them is a false finding.
#
# POLICY defaults to policies/no-maintainer-signoff.yaml with
# tag-signature and mergetag-signature off (no keyring holds the authors'
# keys) and every finding listed.  Needs git, gpg and jq.  A verify that
# cannot decide (exit 3) is counted apart; any other failure ends the bench.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/corpus-lib.sh"

BEFORE=
AFTER=$TOP/build/release/pullgate
N=20 M=20 K=10 START=
POLICY=$TOP/policies/no-maintainer-signoff.yaml
while getopts b:a:n:m:k:s:p: opt; do
	case $opt in
	b) BEFORE=$OPTARG ;;
	a) AFTER=$OPTARG ;;
	n) N=$OPTARG ;;
	m) M=$OPTARG ;;
	k) K=$OPTARG ;;
	s) START=$OPTARG ;;
	p) POLICY=$OPTARG ;;
	*) sed -n '3,5p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '3,5p' "$0" >&2; exit 2; }
CORPUS=$(cd "$1" && pwd)
REF=${2:-master}
[ -d "$CORPUS/objects" ] || CORPUS=$CORPUS/.git
START=${START:-$REF~2000}
for tool in git gpg jq; do
	command -v "$tool" >/dev/null || { echo "corpus-dates: needs $tool" >&2; exit 2; }
done
abspath() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
AFTER=$(abspath "$AFTER")
[ -z "$BEFORE" ] || BEFORE=$(abspath "$BEFORE")
cg() { git -C "$CORPUS" "$@"; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-corpus-dates.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home-before" "$WORK/home-after" "$WORK/reports"
corpus_policy "$POLICY" "$WORK/policy.yaml" tag-signature=off mergetag-signature=off
corpus_list_all "$WORK/policy.yaml"

# the bench's own signing key, in a scratch keyring
export GNUPGHOME="$WORK/gnupg"
mkdir -m 700 "$GNUPGHOME"
gpg --batch --quiet --passphrase '' --quick-gen-key 'Bench Sender <bench@example.org>' \
	ed25519 sign never 2>/dev/null
export GIT_COMMITTER_NAME='Bench Sender' GIT_COMMITTER_EMAIL=bench@example.org

TIP=$(cg rev-parse --verify "$REF^{commit}")
echo "corpus: $CORPUS ($REF at $(printf '%.12s' "$TIP")), copies from $START"
echo "before: ${BEFORE:-(none)}"
echo "after:  $AFTER"

# verify WHICH GITDIR UPSTREAM-BRANCH TAG OUT: one pullgate verify by the
# build WHICH (before or after); exit 3 is recorded, not fatal
verify() {
	bin=$AFTER
	[ "$1" = after ] || bin=$BEFORE
	rc=0
	PULLGATE_HOME=$WORK/home-$1 "$bin" verify --json --policy "$WORK/policy.yaml" \
		--upstream "$2:$3" "$2" "$4" >"$5" 2>"$5.err" || rc=$?
	case $rc in
	0 | 1) ;;
	3) echo "corpus-dates: $1: verify $4 could not decide: $(head -n1 "$5.err")" >&2
		echo "$1 $4" >>"$WORK/undecided"
		rm -f "$5" ;;
	*) echo "corpus-dates: error: $1: verify $4 exited $rc: $(cat "$5.err")" >&2
		exit 1 ;;
	esac
}
builds() { if [ -n "$BEFORE" ]; then echo before after; else echo after; fi; }

# named REPORT UPSTREAM: 1 when the report names UPSTREAM as the original of
# a rewritten-upstream finding, else 0 (no report: 0)
named() {
	[ -f "$1" ] || { echo 0; return; }
	jq --arg u "$2" '[.findings[] | select(.check == "rewritten-upstream" and .upstream == $u)]
		| if length > 0 then 1 else 0 end' "$1"
}

# --- copies of real upstream commits ------------------------------------------------
W=$WORK/copies
git init -q "$W"
echo "$CORPUS/objects" >"$W/.git/objects/info/alternates"
git -C "$W" update-ref refs/heads/upstream "$TIP"
git -C "$W" config advice.detachedHead false
: >"$WORK/copies.list"
n=0 seen=0 skipped=0
cg log --first-parent --merges --format='%H %P' "$START" | awk 'NF == 3' >"$WORK/merges"
while read -r m p1 c; do
	[ "$n" -lt "$N" ] || break
	seen=$((seen + 1))
	[ $(((seen - 1) % K)) = 0 ] || continue
	# a topic tip that is no merge, not already in the base
	[ "$(cg rev-list --no-walk --count --merges "$c")" = 0 ] || continue
	! cg merge-base --is-ancestor "$c" "$p1" || continue
	git -C "$W" checkout -q -f --detach "$p1"
	if ! git -C "$W" cherry-pick "$c" >/dev/null 2>&1; then
		git -C "$W" cherry-pick --abort >/dev/null 2>&1 || git -C "$W" reset -q --hard
		skipped=$((skipped + 1))
		continue
	fi
	n=$((n + 1))
	kept=$(git -C "$W" rev-parse HEAD)
	ad=$(cg log -1 --format='%at %ad' --date=format:%z "$c")
	git -C "$W" commit -q --amend --no-edit --date="@$((${ad% *} + 3 * 86400)) ${ad#* }"
	amended=$(git -C "$W" rev-parse HEAD)
	git -C "$W" checkout -q --detach "$kept"
	git -C "$W" rebase -q --ignore-date "$p1" >/dev/null
	ignored=$(git -C "$W" rev-parse HEAD)
	if [ "$amended" = "$kept" ] || [ "$ignored" = "$kept" ]; then
		echo "corpus-dates: error: git did not rewrite the pick of $c" >&2
		exit 1
	fi
	for v in kept:$kept amend-date:$amended ignore-date:$ignored; do
		git -C "$W" tag -s -m "bench: $v copy of $c" "${v%%:*}-$n" "${v#*:}"
		echo "${v%%:*} $n $c" >>"$WORK/copies.list"
	done
done <"$WORK/merges"
echo
echo "copies: $n upstream commits picked (every ${K}th topic tip of $START's first-parent merges; $skipped did not apply cleanly)"

for b in $(builds); do
	while read -r v i c; do
		verify "$b" "$W" upstream "$v-$i" "$WORK/reports/$b-$v-$i.json"
		echo "$v $i $(named "$WORK/reports/$b-$v-$i.json" "$c")" >>"$WORK/named-$b"
	done <"$WORK/copies.list"
done

printf '%-12s %7s %10s %10s\n' variant copies before after
for v in kept amend-date ignore-date; do
	total=$(awk -v v="$v" '$1 == v' "$WORK/copies.list" | wc -l)
	nb=- na=-
	[ ! -f "$WORK/named-before" ] || nb=$(awk -v v="$v" '$1 == v { s += $3 } END { print s + 0 }' "$WORK/named-before")
	[ ! -f "$WORK/named-after" ] || na=$(awk -v v="$v" '$1 == v { s += $3 } END { print s + 0 }' "$WORK/named-after")
	printf '%-12s %7d %10s %10s\n' "$v" "$total" "$nb" "$na"
done
for b in $(builds); do
	for f in "$WORK"/reports/"$b"-*.json; do
		[ -f "$f" ] || continue
		jq -r '"\(.verdict // "?")"' "$f"
	done | sed 's/ (.*//' | sort | uniq -c | sed "s/^ */  $b verdicts: /"
	d=$(jq -s '[.[].findings[] | select(.check == "rewritten-upstream")
		| select(any(.details[]; .field == "author-date"))] | length' "$WORK"/reports/"$b"-*.json)
	echo "  $b: rewritten-upstream findings with an author-date delta: $d"
done

# --- real topic branches, as the pulls they were ------------------------------------
T=$WORK/topics.git
corpus_scratch "$T"
: >"$WORK/topics.list"
i=0
cg log --first-parent --merges --format='%H %P%x09%s' "$REF" |
	awk -F '\t' '$2 ~ /^Merge branch \x27/ { split($1, p, " "); if (p[4] == "") print p[1], p[2], p[3] }' |
	while read -r m p1 p2; do
		[ "$i" -lt "$M" ] || break
		! cg merge-base --is-ancestor "$p2" "$p1" || continue
		i=$((i + 1))
		git --git-dir="$T" update-ref "refs/heads/up-$i" "$p1"
		git --git-dir="$T" tag -s -m "bench: topic merged in $m" "topic-$i" "$p2"
		echo "$i $m $(cg rev-list --count "$p2" ^"$p1")" >>"$WORK/topics.list"
	done
mt=$(wc -l <"$WORK/topics.list")
commits=$(awk '{ s += $3 } END { print s + 0 }' "$WORK/topics.list")
for b in $(builds); do
	while read -r i _ _; do
		verify "$b" "$T" "up-$i" "topic-$i" "$WORK/reports/topic-$b-$i.json"
	done <"$WORK/topics.list"
done
echo
echo "topics: $mt real topic branches (second parents of $REF's newest 'Merge branch' merges), $commits commits"
printf '%-26s %10s %10s\n' '' before after
row() {
	label=$1 expr=$2
	r_before=- r_after=-
	! ls "$WORK"/reports/topic-before-*.json >/dev/null 2>&1 ||
		r_before=$(jq -s "$expr" "$WORK"/reports/topic-before-*.json)
	r_after=$(jq -s "$expr" "$WORK"/reports/topic-after-*.json)
	printf '%-26s %10s %10s\n' "$label" "$r_before" "$r_after"
}
row 'false findings' '[.[].findings[] | select(.check == "rewritten-upstream")] | length'
row 'pulls with one' '[.[] | select(any(.findings[]; .check == "rewritten-upstream"))] | length'
row 'labelled-backport notes' '[.[] | (.notes // [])[] | select(.check == "labelled-backport")] | length'
row 'rewritten-upstream notes' '[.[] | (.notes // [])[] | select(.check == "rewritten-upstream")] | length'
# each false finding, with the merge that took its topic
for b in $(builds); do
	while read -r i m _; do
		f=$WORK/reports/topic-$b-$i.json
		[ -f "$f" ] || continue
		jq -r --arg b "$b" --arg m "$(cg log -1 --format='%h %s' "$m")" '.findings[]
			| select(.check == "rewritten-upstream")
			| "  \($b): \(.commit[0:12]) copies \(.upstream // "?" | .[0:12]) (\($m)): \(.message)"' "$f"
	done <"$WORK/topics.list"
done
[ ! -s "$WORK/undecided" ] || echo "could not decide (exit 3): $(wc -l <"$WORK/undecided") verifies"
