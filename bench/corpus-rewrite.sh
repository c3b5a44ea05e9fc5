#!/bin/sh
# corpus-rewrite.sh - real sub-maintainer branches rewritten as b4 trailers -u did; score pullgate verify on them.
#
#   bench/corpus-rewrite.sh PULLGATE POLICY MERGES COUNT WORKDIR [KEEPDIR]
#
# Run by bench/corpus.sh (which exports CORPUS, the repository).  MERGES
# lists "MERGE FIRST SECOND" signed-tag merges, newest first; the
# sub-maintainer of each is its mergetag's tagger (the user).  Two tools:
#
# filter-repo  b4 <= 0.14.2's rewrite, done with git-filter-repo itself:
#              --refs START..tip with a commit callback that adds a trailer
#              to the user's own non-merge commits, START the parent of the
#              user's oldest commit of the month before the tip (SECOND).
#              When that commit was already upstream, START lies before
#              upstream's merges and the rewrite re-creates them.
# b4           Debian's b4 (0.12) itself, offline: upstream's tree as
#              merged (FIRST), one new commit by the user on top, a local
#              mbox with that patch and a reply carrying a Reviewed-by, and
#              b4 trailers -u -F MSGID -m MBOX.  b4 looks for the user's
#              contiguous commits and, with a single new one, takes the
#              user's previous commit upstream as the start: the range
#              reaches back across upstream's merges, and b4 runs
#              filter-repo over it.  Skipped when b4 is not installed.
#
# COUNT branches per tool, among those whose range re-creates at least one
# upstream merge.  Fast-export drops every mergetag, and filter-repo
# rewrites the commit ids quoted in the messages it copies.  The truth is
# filter-repo's own commit-map: every upstream commit (an ancestor of
# FIRST) whose copy is in the pull.  Prints per branch and in total:
# recall and precision of the rewritten-upstream pairs, merges, dropped
# mergetags, copies with rewritten quoted ids, and the report's size.  A
# verify that cannot decide (exit 3) is counted and left unscored; any
# other failure ends the bench.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/corpus-lib.sh"
PULLGATE=$1 POLICY=$2 MERGES=$3 COUNT=$4 RW=$5 KEEP=${6:-}
: "${CORPUS:?set by bench/corpus.sh}"
mkdir -p "$RW"
cg() { git -C "$CORPUS" "$@"; }
short() { printf '%.12s' "$1"; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f%%", b ? a * 100 / b : 100 }'; }

T_EXP=0 T_TP=0 T_REP=0 T_M=0 T_MTP=0 T_T=0 T_TTP=0 T_Q=0 T_QTP=0 T_N=0 T_UNDECIDED=0

# score GITDIR TAG UPSTREAM-REF MAP LABEL: verify the rewritten tag and compare
# its rewritten-upstream findings with filter-repo's commit-map
score() {
	gd=$1 tag=$2 up=$3 map=$4 label=$5
	git --git-dir="$gd" rev-list "$tag" ^"$up" | sort >"$RW/pull"
	awk 'NR > 1 && $1 != $2 { print $2, $1 }' "$map" | sort | join - "$RW/pull" |
		while read -r new old; do
			if git --git-dir="$gd" merge-base --is-ancestor "$old" "$up"; then echo "$new $old"; fi
		done | sort >"$RW/expect"
	: >"$RW/expect.merges"
	: >"$RW/expect.tags"
	: >"$RW/expect.quoted"
	while read -r new old; do
		# (grep exits 1 when it selects no line)
		np=$(git --git-dir="$gd" cat-file commit "$old" | sed '/^$/q' | grep -c '^parent ') ||
			[ $? -eq 1 ]
		[ "$np" -lt 2 ] || echo "$new $old" >>"$RW/expect.merges"
		if git --git-dir="$gd" cat-file commit "$old" | sed '/^$/q' | grep -q '^mergetag '; then
			echo "$new $old" >>"$RW/expect.tags"
		fi
		# a message that differs beyond added trailers: filter-repo rewrote a quoted id
		a=$(git --git-dir="$gd" log -1 --format=%B "$old" | grep -v '^Reviewed-by: ') || [ $? -eq 1 ]
		b=$(git --git-dir="$gd" log -1 --format=%B "$new" | grep -v '^Reviewed-by: ') || [ $? -eq 1 ]
		[ "$a" = "$b" ] || echo "$new $old" >>"$RW/expect.quoted"
	done <"$RW/expect"

	t=$(ms)
	rc=0
	"$PULLGATE" verify --json --policy "$POLICY" --upstream "$gd:${up#refs/heads/}" "$gd" "$tag" \
		>"$RW/report.json" 2>"$RW/report.err" || rc=$?
	t=$(( $(ms) - t ))
	case $rc in
	0 | 1) ;;
	3)
		echo "  verify could not decide: $(cat "$RW/report.err")"
		T_UNDECIDED=$((T_UNDECIDED + 1))
		return 0 ;;
	*)
		echo "corpus-rewrite: error: verify exited $rc: $(cat "$RW/report.err")" >&2
		exit 1 ;;
	esac
	[ -z "$KEEP" ] || cp "$RW/report.json" "$KEEP/$label.json"
	jq -r '.findings[] | select(.check == "rewritten-upstream" and .upstream != null)
		| "\(.commit) \(.upstream)"' "$RW/report.json" | sort -u >"$RW/got"
	jq -r '.findings[] | select(.check == "rewritten-upstream")
		| select(any(.details[]; .field == "mergetag" and .pull == "(none)"))
		| "\(.commit) \(.upstream)"' "$RW/report.json" | sort -u >"$RW/got.tags"
	exp=$(wc -l <"$RW/expect") rep=$(wc -l <"$RW/got")
	tp=$(comm -12 "$RW/expect" "$RW/got" | wc -l)
	me=$(wc -l <"$RW/expect.merges") mt=$(sort "$RW/expect.merges" | comm -12 - "$RW/got" | wc -l)
	te=$(wc -l <"$RW/expect.tags") tt=$(sort "$RW/expect.tags" | comm -12 - "$RW/got.tags" | wc -l)
	qe=$(wc -l <"$RW/expect.quoted") qt=$(sort "$RW/expect.quoted" | comm -12 - "$RW/got" | wc -l)
	echo "  $(wc -l <"$RW/pull") pull commits; verify $t ms"
	echo "  upstream commits re-created: $exp; named: $tp (recall $(pct "$tp" "$exp")), $rep named in all (precision $(pct "$tp" "$rep"))"
	echo "  merges: $mt of $me named; dropped mergetags: $tt of $te named; copies with rewritten quoted ids: $qt of $qe named"
	jq -r '"  report: \(.findings | length) findings, \(.summary.verdict // "(no summary)")",
		"  summary: \(.summary.text // "(none)")"' "$RW/report.json"
	comm -23 "$RW/expect" "$RW/got" | head -n 5 | sed 's/^/  missed: /'
	comm -13 "$RW/expect" "$RW/got" | head -n 5 | sed 's/^/  not a rewrite: /'
	T_EXP=$((T_EXP + exp)) T_TP=$((T_TP + tp)) T_REP=$((T_REP + rep)) T_M=$((T_M + me))
	T_MTP=$((T_MTP + mt)) T_T=$((T_T + te)) T_TTP=$((T_TTP + tt)) T_Q=$((T_Q + qe))
	T_QTP=$((T_QTP + qt)) T_N=$((T_N + 1))
}

# --- git-filter-repo as b4 <= 0.14.2 ran it --------------------------------------------
n=0
while read -r m p1 p2; do
	[ "$n" -lt "$COUNT" ] || break
	email=$(corpus_mergetag "$m" | sed -n 's/^tagger .*<\(.*\)>.*/\1/p' | head -n1)
	[ -n "$email" ] || continue
	since=$(( $(cg log -1 --format=%ct "$p2") - 30 * 86400 ))
	oldest=$(cg rev-list --author="<$email>" --since="$since" --reverse "$p2" | head -n1)
	[ -n "$oldest" ] || continue
	start=$(cg rev-parse -q --verify "$oldest^") || continue
	base=$(cg merge-base "$p1" "$p2")
	# the range must reach into upstream and re-create at least one merge there
	cg merge-base --is-ancestor "$start" "$base" || continue
	[ "$start" != "$base" ] || continue
	[ "$(cg rev-list --count --merges "$start..$base")" -gt 0 ] || continue
	n=$((n + 1))
	S=$RW/f$n.git
	corpus_scratch "$S"
	git --git-dir="$S" update-ref refs/heads/work "$p2"
	git --git-dir="$S" update-ref refs/heads/upstream "$p1"
	if ! git --git-dir="$S" filter-repo --force --quiet --refs "$start..work" --commit-callback "
if commit.author_email == b'$email' and len(commit.parents) <= 1:
    commit.message = commit.message.rstrip(b'\n') + b'\nReviewed-by: Bench Reviewer <reviewer@example.org>\n'
" >/dev/null 2>"$RW/f$n.err"; then
		echo "filter-repo $n: failed: $(tail -n1 "$RW/f$n.err")"
		continue
	fi
	GIT_COMMITTER_NAME=$email GIT_COMMITTER_EMAIL=$email \
		git --git-dir="$S" tag -a -m "rewritten as b4 trailers -u <= 0.14.2 did" rewritten work
	echo "filter-repo $n: $email's branch $(short "$p2") (merged in $(short "$m")), --refs $(short "$start")..:"
	score "$S" rewritten refs/heads/upstream "$S/filter-repo/commit-map" "filter-repo-$n"
	rm -rf "$S"
done <"$MERGES"

# --- b4 0.12 trailers -u itself ---------------------------------------------------------
if ! command -v b4 >/dev/null; then
	echo "b4: skipped: b4 is not installed (apt-get install b4)"
else
	n=0
	while read -r m p1 p2; do
		[ "$n" -lt "$COUNT" ] || break
		tagger=$(corpus_mergetag "$m" | sed -n 's/^tagger \(.*\) [0-9]* [-+][0-9]*$/\1/p' | head -n1)
		name=${tagger% <*} email=$(printf '%s' "$tagger" | sed 's/.*<\(.*\)>.*/\1/')
		[ -n "$email" ] || continue
		at=$(cg log -1 --format=%ct "$p1")
		since=$(date -u -d "@$((at - 30 * 86400))" +%Y-%m-%d)
		# b4's start: the user's newest commit upstream before the new one, less one
		prev=$(cg log -1 --no-merges -F --committer="$email" --since="$since" --format=%H "$p1")
		[ -n "$prev" ] || continue
		[ "$(cg rev-list --count --merges "$prev..$p1")" -gt 0 ] || continue
		n=$((n + 1))
		W=$RW/b$n
		rm -rf "$W"
		git init -q "$W"
		echo "$CORPUS/objects" >"$W/.git/objects/info/alternates"
		git -C "$W" update-ref refs/heads/upstream "$p1"
		git -C "$W" update-ref refs/heads/work "$p1"
		git -C "$W" config user.name "$name"
		git -C "$W" config user.email "$email"
		# the new commit, by plumbing: a mirror may lack large blobs, which
		# write-tree would look for; mktree --missing does not
		blob=$(printf 'a change of %s\n' "$name" | git -C "$W" hash-object -w --stdin)
		tree=$( (git -C "$W" ls-tree "$p1^{tree}"; printf '100644 blob %s\tbench-b4-change.txt\n' "$blob") |
			git -C "$W" mktree --missing)
		new=$(printf 'bench: one new change\n\nSigned-off-by: %s <%s>\n' "$name" "$email" |
			GIT_AUTHOR_DATE="@$at" GIT_COMMITTER_DATE="@$at" git -C "$W" commit-tree "$tree" -p "$p1")
		git -C "$W" update-ref refs/heads/work "$new"
		# a clean checkout (filter-repo insists) of no file but the bench's own
		git -C "$W" sparse-checkout set --no-cone /bench-b4-change.txt
		git -C "$W" checkout -q work 2>/dev/null
		git -C "$W" format-patch -1 --stdout HEAD |
			sed "0,/^Subject: /s//Message-Id: <bench-b4-$n@example.org>\nSubject: /" >"$W.mbox"
		cat >>"$W.mbox" <<EOM

From nobody Mon Sep 17 00:00:00 2001
From: Bench Reviewer <reviewer@example.org>
Date: $(date -u -R -d "@$at")
Subject: Re: [PATCH] bench: one new change
Message-Id: <bench-b4-$n-reply@example.org>
In-Reply-To: <bench-b4-$n@example.org>
References: <bench-b4-$n@example.org>

Reviewed-by: Bench Reviewer <reviewer@example.org>
EOM
		if ! (cd "$W" && HOME=$RW/b4-home b4 trailers -u -S -F "bench-b4-$n@example.org" \
			-m "$W.mbox" --since "$since") >"$RW/b$n.log" 2>&1; then
			echo "b4 $n: failed: $(tail -n1 "$RW/b$n.log")"
			rm -rf "$W" "$W.mbox"
			continue
		fi
		GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email \
			git -C "$W" tag -a -m "rewritten by b4 trailers -u" rewritten work
		echo "b4 $n: $name's new change on upstream $(short "$p1"), b4 $(b4 --version) trailers -u --since $since:"
		score "$W/.git" rewritten refs/heads/upstream "$W/.git/filter-repo/commit-map" "b4-$n"
		rm -rf "$W" "$W.mbox"
	done <"$MERGES"
	[ "$n" -gt 0 ] || echo "b4: no merged branch whose user had an earlier commit upstream within a month"
fi

[ "$T_UNDECIDED" = 0 ] || echo "rewrite: $T_UNDECIDED branches verify could not decide (not scored)"
[ "$T_N" -gt 0 ] || { echo "rewrite: no branch re-creates an upstream merge"; exit 0; }
echo "rewrite total: $T_N branches, $T_TP of $T_EXP re-created upstream commits named" \
	"(recall $(pct "$T_TP" "$T_EXP")), $T_REP named in all (precision $(pct "$T_TP" "$T_REP"));" \
	"merges $T_MTP of $T_M; dropped mergetags $T_TTP of $T_T; rewritten quoted ids $T_QTP of $T_Q"
