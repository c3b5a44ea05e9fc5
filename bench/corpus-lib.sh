# corpus-lib.sh - helpers of bench/corpus.sh: real signed-tag merges as pulls (sourced).
#
# Every helper reads the corpus repository in $CORPUS (a bare mirror, never
# written) and writes only under $WORK.

# corpus_merges REF N: the newest N first-parent merges of REF with exactly
# two parents and a mergetag header, one "MERGE FIRST SECOND" per line.
corpus_merges() {
	git -C "$CORPUS" log --first-parent --merges --format='%H %P' "$1" |
		awk 'NF == 3' |
		while read -r m p1 p2; do
			if git -C "$CORPUS" cat-file commit "$m" | sed '/^$/q' | grep -q '^mergetag '; then
				echo "$m $p1 $p2"
			fi
		done | head -n "$2"
}

# corpus_mergetag MERGE: the first mergetag header of MERGE as the tag
# object it was, byte for byte (continuation lines lose their leading space).
corpus_mergetag() {
	git -C "$CORPUS" cat-file commit "$1" | awk '
		/^$/ { exit }
		/^mergetag / { if (seen++) exit; on = 1; print substr($0, 10); next }
		on && /^ / { print substr($0, 2); next }
		{ on = 0 }'
}

# corpus_scratch DIR: an empty bare repository that borrows the corpus's objects.
corpus_scratch() {
	git init -q --bare "$1"
	echo "$CORPUS/objects" >"$1/objects/info/alternates"
}

# corpus_pull DIR MERGE FIRST SECOND: DIR becomes the pull MERGE merged: its
# tag rebuilt from the mergetag (refs/tags/<the tag's own name>), the
# upstream it was merged into (refs/heads/upstream = FIRST), and in
# DIR/request.mail the text git request-pull makes for it.  Prints the tag
# name; fails when the tag is not of SECOND.
corpus_pull() {
	corpus_scratch "$1"
	corpus_mergetag "$2" >"$1/tag.txt"
	tagid=$(git --git-dir="$1" hash-object -t tag -w --literally --stdin <"$1/tag.txt")
	name=$(sed -n 's/^tag //p;/^$/q' "$1/tag.txt" | head -n1)
	obj=$(sed -n 's/^object //p;/^$/q' "$1/tag.txt" | head -n1)
	[ "$obj" = "$4" ] || return 1
	git --git-dir="$1" update-ref "refs/tags/$name" "$tagid"
	git --git-dir="$1" update-ref refs/heads/upstream "$3"
	git --git-dir="$1" request-pull upstream "$1" "refs/tags/$name" >"$1/request.mail" 2>/dev/null ||
		rm -f "$1/request.mail"
	echo "$name"
}

# corpus_policy BASE OUT [CHECK=SEVERITY...]: BASE with the given checks'
# severities overridden (the checks mapping is rewritten, not appended to).
corpus_policy() {
	base=$1 out=$2
	shift 2
	awk -v overrides="$*" '
		BEGIN { n = split(overrides, o, " ")
			for (i = 1; i <= n; i++) { split(o[i], kv, "="); sev[kv[1]] = kv[2] } }
		/^checks:/ { print; in_checks = 1
			for (k in sev) print "  " k ": " sev[k]
			done = 1; next }
		in_checks && /^[^ #]/ { in_checks = 0 }
		in_checks { key = $1; sub(/:$/, "", key); if (key in sev) next }
		{ print }
		END { if (!done && n) { print "checks:"; for (k in sev) print "  " k ": " sev[k] } }
	' "$base" >"$out"
}

# corpus_list_all FILE: FILE's policy with every finding listed
# (max-findings-per-check: 0), so that each rewritten pair is scored, not
# only the first 200 a check lists.
corpus_list_all() {
	awk '
		/^limits:/ { print; print "  max-findings-per-check: 0"; done = 1; next }
		/^[ ]+max-findings-per-check:/ { next }
		{ print }
		END { if (!done) { print "limits:"; print "  max-findings-per-check: 0" } }
	' "$1" >"$1.tmp" && mv "$1.tmp" "$1"
}

ms() { date +%s%3N; }
