#!/bin/sh
# corpus.sh - pullgate verify on real history: clean signed-tag merges, and real branches rewritten as b4 did.
#
#   bench/corpus.sh [-b PULLGATE] [-n N] [-p POLICY] [-w N] [-k DIR] [-m yes|no]
#                   [-s sweep,rewrite,timing] REPO [REF]
#
# REPO is a repository whose maintainer merges signed tags, so that merges
# carry mergetag headers (a bare mirror is fine; it is only read), REF its
# branch (default HEAD).  It is a bench: `make check` never runs it.
#
# sweep    The newest N (default 64) two-parent merges of REF with a
#          mergetag, each verified as the pull it was: the pull is the
#          merge's second parent, upstream its first parent, the tag the
#          mergetag rebuilt byte for byte in a scratch repository.  These
#          pulls were really merged, so every finding on them is a false
#          alarm unless the project's rules say otherwise.  Each is verified
#          with the request-pull mail git request-pull makes for it (-m no:
#          without), so that range-size and pull-request-* run on real
#          shortlogs and diffstats.  Prints, per
#          check, on how many pulls it fired, and its errors and warnings.
# rewrite  Real sub-maintainer branches (up to -w, default 2) rewritten the
#          way b4 trailers -u <= 0.14.2 did: git-filter-repo --refs START..
#          with a commit callback adding a trailer to the sub-maintainer's
#          own commits, START the parent of their oldest commit of the month
#          before their tip, which lies before upstream's merges.  The
#          rewritten upstream commits pullgate names are scored against
#          filter-repo's own commit-map: precision, recall, merges, dropped
#          mergetags, and copies whose quoted commit ids filter-repo rewrote.
#          Then the same with Debian's b4 (0.12) itself, offline, when it is
#          installed: b4 trailers -u on one new commit over upstream's tree,
#          whose range search reaches back across upstream's merges.
# timing   fixes-tag's share of verify's time over the swept pulls: each is
#          verified with the policy as given and with fixes-tag off, in the
#          same run, and the difference is divided by the total.
#
# POLICY defaults to policies/no-maintainer-signoff.yaml, with every finding
# listed (max-findings-per-check: 0).  tag-signature and
# mergetag-signature are turned off: the custodians' public keys are not
# available offline, so signatures are "not checked", and say so.  -k DIR
# keeps every JSON report there.  Needs git, jq and, for `rewrite`,
# git-filter-repo (Debian package git-filter-repo) and optionally b4 (Debian
# package b4); what is missing is skipped, and the bench says so.
#
# A verify that cannot decide (exit 3: a malformed commit, say) is
# pullgate's answer on that pull: listed, and left out of the counts and
# the timing.  Any other failure (a crash, a usage error) ends the bench.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/corpus-lib.sh"

PULLGATE=$TOP/build/release/pullgate
N=64
POLICY=$TOP/policies/no-maintainer-signoff.yaml
NREWRITE=2
KEEP=
SECTIONS=sweep,rewrite,timing
MAILS=yes
while getopts b:n:p:w:k:s:m: opt; do
	case $opt in
	b) PULLGATE=$OPTARG ;;
	n) N=$OPTARG ;;
	p) POLICY=$OPTARG ;;
	w) NREWRITE=$OPTARG ;;
	k) KEEP=$OPTARG ;;
	s) SECTIONS=$OPTARG ;;
	m) [ "$OPTARG" = yes ] || MAILS= ;;
	*) sed -n '3,5p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '3,5p' "$0" >&2; exit 2; }
CORPUS=$(cd "$1" && pwd)
REF=${2:-HEAD}
[ -d "$CORPUS/objects" ] || CORPUS=$CORPUS/.git
export CORPUS
PULLGATE=$(cd "$(dirname "$PULLGATE")" && pwd)/$(basename "$PULLGATE")
for tool in git jq; do
	command -v "$tool" >/dev/null || { echo "corpus: needs $tool" >&2; exit 2; }
done
want() { case ",$SECTIONS," in *",$1,"*) return 0 ;; esac; return 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-corpus.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export PULLGATE_HOME="$WORK/home"
mkdir -p "$WORK/reports" "$PULLGATE_HOME"
[ -z "$KEEP" ] || mkdir -p "$KEEP"

corpus_policy "$POLICY" "$WORK/policy.yaml" tag-signature=off mergetag-signature=off
corpus_policy "$POLICY" "$WORK/policy-nofixes.yaml" tag-signature=off mergetag-signature=off \
	fixes-tag=off
corpus_list_all "$WORK/policy.yaml"
corpus_list_all "$WORK/policy-nofixes.yaml"
echo "corpus: $CORPUS ($REF), pullgate: $PULLGATE"
echo "policy: $POLICY, with tag-signature and mergetag-signature off (signatures not checked: no keyring)"

# verify DIR TAG POLICY OUT: one pullgate verify, with the request-pull mail
# when there is one; prints its milliseconds
verify() {
	s=$(ms)
	rc=0
	if [ -n "$MAILS" ] && [ -f "$1/request.mail" ]; then
		"$PULLGATE" verify --json --policy "$3" --upstream "$1:upstream" \
			--pull-request "$1/request.mail" "$1" "$2" >"$4" 2>"$4.err" || rc=$?
	else
		"$PULLGATE" verify --json --policy "$3" --upstream "$1:upstream" "$1" "$2" \
			>"$4" 2>"$4.err" || rc=$?
	fi
	e=$(ms)
	case $rc in
	0 | 1) ;;
	3)
		echo "corpus: verify $2 could not decide: $(cat "$4.err")" >&2
		rm -f "$4"
		grep -qxF "$2" "$WORK/failed" 2>/dev/null || echo "$2" >>"$WORK/failed" ;;
	*)
		echo "corpus: error: verify $2 exited $rc: $(cat "$4.err")" >&2
		exit 1 ;;
	esac
	echo $((e - s))
}

# --- the sweep ---------------------------------------------------------------------
corpus_merges "$REF" "$N" >"$WORK/merges"
if want sweep || want timing; then
	i=0
	: >"$WORK/pulls"
	while read -r m p1 p2; do
		i=$((i + 1))
		if name=$(corpus_pull "$WORK/p$i.git" "$m" "$p1" "$p2"); then
			echo "$i $name $m" >>"$WORK/pulls"
		else
			echo "corpus: skipped $m: its mergetag does not tag its second parent" >&2
		fi
	done <"$WORK/merges"
fi

if want sweep; then
	total_ms=0
	while read -r i name m; do
		t=$(verify "$WORK/p$i.git" "$name" "$WORK/policy.yaml" "$WORK/reports/$i.json")
		total_ms=$((total_ms + t))
		[ -z "$KEEP" ] || [ ! -f "$WORK/reports/$i.json" ] || cp "$WORK/reports/$i.json" "$KEEP/$i-$name.json"
	done <"$WORK/pulls"
	npulls=$(ls "$WORK/reports"/*.json 2>/dev/null | wc -l)
	[ "$npulls" -gt 0 ] || { echo "corpus: no pull could be verified" >&2; exit 1; }
	commits=$(cat "$WORK/reports"/*.json | jq -s 'map(.commits) | add // 0')
	echo
	echo "sweep: $npulls clean real pulls (newest signed-tag merges of $REF), $commits commits, verify ${total_ms} ms in all"
	printf '%-24s %7s %6s %8s %8s %10s %10s\n' check pulls '%' errors warnings 'err-pulls' 'warn-pulls'
	cat "$WORK/reports"/*.json | jq -rs '
		[ .[] | . as $r | [.findings[] | {check, severity}] | group_by(.check)[]
		  | { check: .[0].check,
		      errors: map(select(.severity == "error")) | length,
		      warnings: map(select(.severity == "warning")) | length } ]
		| group_by(.check)[]
		| [ .[0].check, length, (map(.errors) | add), (map(.warnings) | add),
		    (map(select(.errors > 0)) | length), (map(select(.warnings > 0)) | length) ]
		| @tsv' >"$WORK/fired"
	# every check verify runs, those that never fired too
	for c in tag-signature mergetag-signature rewritten-upstream foreign-committer range-size \
		pull-request-base pull-request-head pull-request-url pull-request-shortlog \
		pull-request-diffstat signoff fixes-tag back-merge recent-rebase date-anomaly; do
		awk -F'\t' -v c="$c" -v n="$npulls" '
			$1 == c { found = 1
				printf "%-24s %7d %6.1f %8d %8d %10d %10d\n", $1, $2, $2 * 100 / n, $3, $4, $5, $6 }
			END { if (!found) printf "%-24s %7d %6.1f %8d %8d %10d %10d\n", c, 0, 0, 0, 0, 0, 0 }
		' "$WORK/fired"
	done
	echo "(tag-signature and mergetag-signature are off: no keyring)"
	cat "$WORK/reports"/*.json | jq -rs '
		"notes: \(map(.notes // [] | length) | add) on \(map(select((.notes // []) | length > 0)) | length) pulls"'
	cat "$WORK/reports"/*.json | jq -rs '
		"pulls rejected: \(map(select(.verdict == "reject")) | length); " +
		"pulls with a warning: \(map(select(.warnings > 0)) | length)"'
	[ ! -s "$WORK/failed" ] || echo "could not decide (exit 3): $(wc -l <"$WORK/failed") pulls"
	if [ -n "$MAILS" ]; then
		nomail=0
		while read -r i name m; do
			[ -f "$WORK/p$i.git/request.mail" ] || nomail=$((nomail + 1))
		done <"$WORK/pulls"
		[ "$nomail" = 0 ] ||
			echo "verified without a mail: $nomail pulls (git request-pull could not make one)"
	fi
fi

# --- fixes-tag's share of verify ------------------------------------------------------
if want timing; then
	all=0 nofixes=0 nfixes=0 undecided=0
	while read -r i name m; do
		# alternate the order so that neither side always runs on a warm cache
		if [ $((i % 2)) = 0 ]; then
			a=$(verify "$WORK/p$i.git" "$name" "$WORK/policy.yaml" "$WORK/t.json")
			b=$(verify "$WORK/p$i.git" "$name" "$WORK/policy-nofixes.yaml" "$WORK/t2.json")
		else
			b=$(verify "$WORK/p$i.git" "$name" "$WORK/policy-nofixes.yaml" "$WORK/t2.json")
			a=$(verify "$WORK/p$i.git" "$name" "$WORK/policy.yaml" "$WORK/t.json")
		fi
		# a pull either run could not decide is not timed
		if grep -qxF "$name" "$WORK/failed" 2>/dev/null; then
			undecided=$((undecided + 1))
			continue
		fi
		all=$((all + a))
		nofixes=$((nofixes + b))
		git --git-dir="$WORK/p$i.git" log --format=%B "$name" ^upstream >"$WORK/messages"
		# grep -c exits 1 when it counts none
		n=$(grep -ci '^fixes:' "$WORK/messages") || [ $? -eq 1 ]
		nfixes=$((nfixes + n))
	done <"$WORK/pulls"
	echo
	echo "timing: verify over the swept pulls, $nfixes Fixes: trailers in them" \
		"(${undecided} undecided pulls left out)"
	echo "  with fixes-tag:    $all ms"
	echo "  without fixes-tag: $nofixes ms"
	awk -v a="$all" -v b="$nofixes" 'BEGIN {
		printf "  fixes-tag share:   %.1f%% of verify\n", (a > 0 ? (a - b) * 100 / a : 0) }'
fi

# --- rewritten real branches ----------------------------------------------------------
if want rewrite; then
	echo
	if ! command -v git-filter-repo >/dev/null; then
		echo "rewrite: skipped: git-filter-repo is not installed (apt-get install git-filter-repo)"
		exit 0
	fi
	"$TOP/bench/corpus-rewrite.sh" "$PULLGATE" "$WORK/policy.yaml" "$WORK/merges" "$NREWRITE" \
		"$WORK/rewrite" "${KEEP:-}"
fi
