#!/bin/sh
# verify.sh - pullgate verify against git on kernel-shaped histories: same repos, same run, ratios.
#
#   bench/verify.sh [PULLGATE] [HISTORY]
#
# For each history shape (HISTORIES, default "kernel dense") of HISTORY
# upstream commits (default 100000; 1000000 for the real figures),
# bench/gen-history.py writes a merge-heavy upstream whose newest merges
# carry mergetags, with a commit-graph as a kernel tree has one, and
# bench/make-cases.py a fork of it with one signed tag per case:
#   incident     35 rewritten upstream merges with their mergetag dropped + 4
#   oldbase      4 commits on a base 10,500 upstream commits back
#   oldauthor7   4 commits on the tip, one authored 7 days earlier
#   oldauthor30  the same, 30 days earlier
#   pull40, pull1000, pull10000
# The dates: "kernel" runs a 70-day cycle with 70% of the commits in a
# two-week merge window, "dense" has 7 s between commits; both end at the
# moment the history was made.  Generated histories are kept in BENCH_CACHE
# (default ~/.cache/pullgate-bench), keyed by shape and size: 1M commits take
# several minutes to make once.
#
# Each case runs RUNS times (default 5), pullgate and the git baselines in
# turn (paired), and prints the medians of:
#   pg      pullgate verify --upstream UP:master PULLS TAG
#   pg+sig  the same with --keyring K --trust FPR: the tag's signature checked
#   rl      git rev-list --count master...TAG
#   ch      git log --cherry-mark --left-right --oneline master...TAG
# the ratios, the peak RSS of one run of pg and of ch (/usr/bin/time), and
# whether issue 14's goals are met (they are set for pg, as the issue
# measured it; pg+sig shows what gpg adds on top).  BEFORE=another-pullgate
# times that binary too, in the same pairs (a before/after), in a home of
# its own (its index may be of another format, which each would make
# again were the home shared).  The git
# commands only list the divergence; pullgate also diffs what it finds.
#
# Then, per history, bench/identity_index_bench.c (built by make bench)
# makes the identity index of upstream as it was 50 merges ago, extends it
# to the tip, opens it again and probes it once per commit of the incident
# pull: the cost of finding copies by identity apart from the rest of
# verify (which probes the same index, made by the first, untimed run).
#
# Then, per history (REFS=0 skips it), the identity index shared by the
# refs of one upstream repository (issue 32), on a copy of upstream that
# borrows its objects and its commit-graph, each timed RUNS times from a
# copy of the same home, against git rev-list --count master in the same run:
#   cold     the first verify against master, in an empty home
#   second   then a second ref, "fixes": master's first parent 30 merges
#            back and 3 commits of its own (the index is master's)
#   below    then a ref below master (a release branch: nothing to read)
#   advanced a home indexed at master's first parent K merges back, then
#            master: the commits upstream has since (ADVANCE, default 10000
#            or a tenth of the history, whichever is less)
# with the commits each read (the report's upstream_index.added), pg's
# time for a verify of the same ref when its index is current (warm: the
# pull against an older ref holds more commits, so warm differs by row),
# pg - warm (the index's work), and the ratios to rl.  Then the cold row's
# peak RSS (its verify of oldauthor7, the median of RUNS runs, each in an
# empty home; BEFORE's too), with git log --cherry-mark's on the incident
# and git rev-list --count's.
#
# Every run's exit status is checked, and a run that exits otherwise than
# its case says ends the bench: git's exit 0; pg exits 1 in every case,
# since without a keyring the tag's signature is an error (tag-signature,
# the only error of the clean cases: checked on the first run's report);
# pg+sig exits 1 for the incident (its rewritten upstream merges) and 0 for
# the others, whose commits are the sender's own on an upstream commit.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
PULLGATE=${1:-$TOP/build/release/pullgate}
HISTORY=${2:-${HISTORY:-100000}}
INDEX_BENCH=${INDEX_BENCH:-$(dirname "$PULLGATE")/bench/identity-index-bench}
HISTORIES=${HISTORIES:-kernel dense}
RUNS=${RUNS:-5}
BEFORE=${BEFORE:-}
REFS=${REFS:-1}
CASES=${CASES:-incident oldbase oldauthor7 oldauthor30 pull40 pull1000 pull10000}
BENCH_CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pullgate-bench}
GEN_VERSION=1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export PULLGATE_HOME="$WORK/home"
# fast-import and git gc churn malloc; trimming it costs TLB flushes on some VMs
FAST="glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=4294967295"

now_ns() { date +%s%N; }
die() { echo "verify.sh: error: $*" >&2; exit 1; }

# history RHYTHM: make (once) $BENCH_CACHE/RHYTHM-HISTORY-vN, print its path
history() {
	dir="$BENCH_CACHE/$1-$HISTORY-v$GEN_VERSION"
	if [ -f "$dir/ready" ]; then
		echo "$dir"
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "# making the $1 history of $HISTORY commits in $dir ($(date +%T))" >&2
	git init -q --bare "$dir/upstream.git"
	python3 "$TOP/bench/gen-history.py" --commits "$HISTORY" --rhythm "$1" \
		--end "$(date +%s)" --seed 14 --info "$dir/info" |
		GLIBC_TUNABLES=$FAST git --git-dir="$dir/upstream.git" fast-import --quiet \
			--active-branches=1000 --export-marks="$dir/marks"
	python3 "$TOP/bench/make-cases.py" mergetags "$dir/upstream.git" "$dir/info" "$dir/marks"
	git --git-dir="$dir/upstream.git" for-each-ref --format='delete %(refname)' \
		'refs/heads/slot*' | git --git-dir="$dir/upstream.git" update-ref --stdin
	GLIBC_TUNABLES=$FAST git --git-dir="$dir/upstream.git" commit-graph write --reachable
	# the sender's key, and the keyring the maintainer verifies with
	mkdir -m 700 "$dir/gnupg"
	GNUPGHOME="$dir/gnupg" gpg --batch --quiet --passphrase '' \
		--quick-gen-key 'Sub Maintainer <sub@example.org>' ed25519 sign never 2>/dev/null
	GNUPGHOME="$dir/gnupg" gpg --batch --with-colons --list-keys sub@example.org |
		awk -F: '/^fpr/ { print $10; exit }' >"$dir/fpr"
	GNUPGHOME="$dir/gnupg" gpg --batch --armor --export >"$dir/keyring.asc"
	GNUPGHOME="$dir/gnupg" python3 "$TOP/bench/make-cases.py" pulls "$dir/upstream.git" \
		"$dir/pulls.git" "$(cat "$dir/fpr")" >"$dir/cases"
	GNUPGHOME="$dir/gnupg" gpgconf --kill gpg-agent 2>/dev/null || true
	git --git-dir="$dir/pulls.git" update-ref refs/bench/master \
		"$(git --git-dir="$dir/upstream.git" rev-parse master)"
	touch "$dir/ready"
	echo "# made at $(date +%T)" >&2
	echo "$dir"
}

# ms STATUS CMD...: wall milliseconds of one run, output discarded; the
# bench ends unless CMD exits STATUS
ms() {
	_want=$1
	shift
	s=$(now_ns)
	_st=0
	"$@" >/dev/null 2>"$WORK/err" || _st=$?
	e=$(now_ns)
	[ "$_st" = "$_want" ] || die "'$*' exited $_st, not $_want: $(head -c 2000 "$WORK/err")"
	echo $(((e - s) / 1000000))
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

rss_mb() { # STATUS CMD...: peak RSS of one run of CMD, in MB; fails unless CMD exits STATUS
	_want=$1
	shift
	_st=0
	/usr/bin/time -f %M -o "$WORK/rss" "$@" >/dev/null 2>"$WORK/err" || _st=$?
	[ "$_st" = "$_want" ] || die "'$*' exited $_st, not $_want: $(head -c 2000 "$WORK/err")"
	tail -n 1 "$WORK/rss" | awk '{ printf "%.0f", $1 / 1024 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / (b ? b : 1) }'; }

# refs_bench RHYTHM DIR: the shared index's rows (see the top)
refs_bench() {
	rh=$1
	src=$2
	up="$WORK/refs-up.git"
	rm -rf "$up" "$WORK"/refs-home*
	git clone -q --bare --shared "$2/upstream.git" "$up"
	cp "$2/upstream.git/objects/info/commit-graph" "$up/objects/info/"
	base=$(git --git-dir="$up" rev-parse master~30)
	a=$(git --git-dir="$up" commit-tree -p "$base" -m "fixes: one" "$base^{tree}")
	a=$(git --git-dir="$up" commit-tree -p "$a" -m "fixes: two" "$base^{tree}")
	a=$(git --git-dir="$up" commit-tree -p "$a" -m "fixes: three" "$base^{tree}")
	git --git-dir="$up" update-ref refs/heads/fixes "$a"
	git --git-dir="$up" update-ref refs/heads/below master~100
	total=$(git --git-dir="$up" rev-list --count master)
	advance=${ADVANCE:-$((total / 10 < 10000 ? total / 10 : 10000))}
	# master's first parent back until upstream has ADVANCE commits since
	k=1
	while [ "$(git --git-dir="$up" rev-list --count "master~$k..master")" -lt "$advance" ]; do
		k=$((k * 2))
	done
	git --git-dir="$up" update-ref refs/heads/old "master~$k"
	git --git-dir="$up" update-ref refs/heads/adv master~$k
	since=$(git --git-dir="$up" rev-list --count "master~$k..master")
	tag=$(awk '$1 == "oldauthor7" { print $2 }' "$2/cases")
	pulls="$2/pulls.git"
	# the homes each timed run starts from: cold (empty), master's, adv's at its old tip
	mkdir -p "$WORK/refs-home0"
	PULLGATE_HOME="$WORK/refs-home1" "$PULLGATE" verify --upstream "$up:master" "$pulls" \
		"$tag" >/dev/null 2>&1 || true
	PULLGATE_HOME="$WORK/refs-home2" "$PULLGATE" verify --upstream "$up:adv" "$pulls" \
		"$tag" >/dev/null 2>&1 || true
	git --git-dir="$up" update-ref refs/heads/adv master
	for row in "cold 0 master" "second 1 fixes" "below 1 below" "advanced 2 adv"; do
		# shellcheck disable=SC2086
		set -- $row
		: >"$WORK/rp"
		: >"$WORK/rw"
		: >"$WORK/rr"
		i=0
		while [ "$i" -lt "$RUNS" ]; do
			rm -rf "$WORK/refs-run"
			cp -r "$WORK/refs-home$2" "$WORK/refs-run"
			PULLGATE_HOME="$WORK/refs-run" ms 1 "$PULLGATE" verify --upstream "$up:$3" \
				"$pulls" "$tag" >>"$WORK/rp"
			PULLGATE_HOME="$WORK/refs-run" ms 1 "$PULLGATE" verify --upstream "$up:$3" \
				"$pulls" "$tag" >>"$WORK/rw"
			ms 0 git --git-dir="$up" rev-list --count master >>"$WORK/rr"
			i=$((i + 1))
		done
		rm -rf "$WORK/refs-run"
		cp -r "$WORK/refs-home$2" "$WORK/refs-run"
		added=$(PULLGATE_HOME="$WORK/refs-run" "$PULLGATE" verify --json --upstream "$up:$3" \
			"$pulls" "$tag" 2>/dev/null | jq -r '"\(.upstream_index.action) \(.upstream_index.added)"')
		pg=$(median <"$WORK/rp")
		warm=$(median <"$WORK/rw")
		rl=$(median <"$WORK/rr")
		printf '%-7s refs %-9s %-7s read %-16s pg %6s ms  warm %5s ms  index %5s ms  rl %5s ms  pg/rl %6s  index/rl %6s\n' \
			"$rh" "$1" "$3" "$added" "$pg" "$warm" "$((pg - warm))" "$rl" \
			"$(ratio "$pg" "$rl")" "$(ratio "$((pg - warm))" "$rl")"
	done
	echo "$rh refs: $total commits on master; advanced: $since commits (master~$k..master)"
	# the cold row's peak RSS (the median of RUNS runs, each in an empty home),
	# BEFORE's, and git's on the incident and on the whole history, in turn
	: >"$WORK/mp"
	: >"$WORK/mb"
	: >"$WORK/mc"
	: >"$WORK/mr"
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		rm -rf "$WORK/refs-run"
		mkdir -p "$WORK/refs-run"
		rss_mb 1 env PULLGATE_HOME="$WORK/refs-run" "$PULLGATE" verify --upstream \
			"$up:master" "$pulls" "$tag" >>"$WORK/mp"
		echo >>"$WORK/mp"
		if [ -n "$BEFORE" ]; then
			rm -rf "$WORK/refs-run"
			mkdir -p "$WORK/refs-run"
			rss_mb 1 env PULLGATE_HOME="$WORK/refs-run" "$BEFORE" verify --upstream \
				"$up:master" "$pulls" "$tag" >>"$WORK/mb"
			echo >>"$WORK/mb"
		fi
		if grep -q '^incident ' "$src/cases"; then
			rss_mb 0 git --git-dir="$pulls" log --cherry-mark --left-right --oneline \
				"refs/bench/master...incident" >>"$WORK/mc"
			echo >>"$WORK/mc"
		fi
		rss_mb 0 git --git-dir="$up" rev-list --count master >>"$WORK/mr"
		echo >>"$WORK/mr"
		i=$((i + 1))
	done
	rm -rf "$WORK/refs-run"
	printf '%s refs cold peak RSS: pg %s MB, before %s MB, git log --cherry-mark (incident) %s MB, git rev-list --count %s MB\n' \
		"$rh" "$(median <"$WORK/mp")" "$([ -n "$BEFORE" ] && median <"$WORK/mb" || echo -)" \
		"$(grep -q . "$WORK/mc" && median <"$WORK/mc" || echo -)" "$(median <"$WORK/mr")"
}

cols='%-7s %-11s %6s %5s %8s %6s %7s %7s %7s %6s %6s %6s %6s %6s %9s  %s\n'
# shellcheck disable=SC2059
printf "$cols" history case pull found examined pg pg+sig before bef+sig rl ch pg/rl pg/ch \
	ch/pg rss_pg/ch goal
for rhythm in $HISTORIES; do
	dir=$(history "$rhythm")
	up="$dir/upstream.git"
	pulls="$dir/pulls.git"
	fpr=$(cat "$dir/fpr")
	for case in $CASES; do
		grep -q "^$case " "$dir/cases" || continue
		tag=$(awk -v c="$case" '$1 == c { print $2 }' "$dir/cases")
		want=$(awk -v c="$case" '$1 == c { print $3 }' "$dir/cases")
		set -- verify --upstream "$up:master" "$pulls" "$tag"
		sig="--keyring $dir/keyring.asc --trust $fpr"
		# the statuses the case's pulls give (see the top)
		st_sig=0
		[ "$case" != incident ] || st_sig=1
		st=0
		json=$("$PULLGATE" "$@" --json 2>"$WORK/err") || st=$?
		[ "$st" = 1 ] || die "$rhythm $case: pullgate verify exited $st, not 1: $(head -c 2000 "$WORK/err")"
		errors=$(printf '%s' "$json" |
			jq -r '[.findings[] | select(.severity == "error") | .check] | unique | join(" ")')
		if [ "$case" = incident ]; then
			case " $errors " in
			*" rewritten-upstream "*) ;;
			*) die "$rhythm $case: no rewritten-upstream error (errors: $errors)" ;;
			esac
		else
			[ "$errors" = tag-signature ] ||
				die "$rhythm $case: errors of $errors, not of tag-signature alone"
		fi
		examined=$(printf '%s' "$json" | jq -r '.upstream_examined // "-"')
		found=$(printf '%s' "$json" |
			jq '[.findings[]? | select(.check == "rewritten-upstream")] | length')
		npull=$(printf '%s' "$json" | jq -r '.commits // "-"')
		for f in pg ps bf bs rl ch; do : >"$WORK/$f"; done
		# the other binary in a home of its own, made before timing: its
		# index may be of another format, which each would make again
		[ -z "$BEFORE" ] ||
			PULLGATE_HOME="$WORK/home-before" "$BEFORE" "$@" >/dev/null 2>&1 || true
		i=0
		while [ "$i" -lt "$RUNS" ]; do
			ms 1 "$PULLGATE" "$@" >>"$WORK/pg"
			# shellcheck disable=SC2086
			ms "$st_sig" "$PULLGATE" verify $sig --upstream "$up:master" "$pulls" "$tag" >>"$WORK/ps"
			if [ -n "$BEFORE" ]; then
				PULLGATE_HOME="$WORK/home-before" ms 1 "$BEFORE" "$@" >>"$WORK/bf"
				# shellcheck disable=SC2086
				PULLGATE_HOME="$WORK/home-before" ms "$st_sig" "$BEFORE" verify $sig \
					--upstream "$up:master" "$pulls" "$tag" >>"$WORK/bs"
			fi
			ms 0 git --git-dir="$pulls" rev-list --count "refs/bench/master...$tag" >>"$WORK/rl"
			ms 0 git --git-dir="$pulls" log --cherry-mark --left-right --oneline \
				"refs/bench/master...$tag" >>"$WORK/ch"
			i=$((i + 1))
		done
		pg=$(median <"$WORK/pg")
		ps=$(median <"$WORK/ps")
		bf=$([ -z "$BEFORE" ] && echo - || median <"$WORK/bf")
		bs=$([ -z "$BEFORE" ] && echo - || median <"$WORK/bs")
		rl=$(median <"$WORK/rl")
		ch=$(median <"$WORK/ch")
		rss_pg=$(rss_mb 1 "$PULLGATE" "$@")
		rss_git=$(rss_mb 0 git --git-dir="$pulls" log --cherry-mark --left-right --oneline \
			"refs/bench/master...$tag")
		case $case in
		incident)
			goal="pg/ch<=1.2 & $want/$want found & rss<=git:"
			met=$(awk -v r="$(ratio "$pg" "$ch")" -v f="$found" -v w="$want" \
				-v a="$rss_pg" -v b="$rss_git" \
				'BEGIN { print (r <= 1.2 && f == w && a <= b) ? "met" : "NOT met" }') ;;
		oldbase)
			goal="pg/rl<=1.5 & ch/pg>=5:"
			met=$(awk -v r="$(ratio "$pg" "$rl")" -v c="$(ratio "$ch" "$pg")" \
				'BEGIN { print (r <= 1.5 && c >= 5) ? "met" : "NOT met" }') ;;
		oldauthor*)
			goal="pg<=500 ms:"
			met=$([ "$pg" -le 500 ] && echo met || echo "NOT met") ;;
		*)
			goal="(no goal)"
			met="" ;;
		esac
		# shellcheck disable=SC2059
		printf "$cols" "$rhythm" "$case" "$npull" "$found" "$examined" "$pg" "$ps" "$bf" \
			"$bs" "$rl" "$ch" "$(ratio "$pg" "$rl")" "$(ratio "$pg" "$ch")" \
			"$(ratio "$ch" "$pg")" "$rss_pg/$rss_git" "$goal $met"
	done
	if [ -x "$INDEX_BENCH" ] && grep -q '^incident ' "$dir/cases"; then
		rm -rf "$WORK/index-home"
		index=$("$INDEX_BENCH" "$up" "$pulls" refs/tags/incident "$WORK/index-home" 50 2>&1) ||
			die "$INDEX_BENCH failed: $index"
		printf '%-7s identity index: %s\n' "$rhythm" "$index"
		index_rss=$(rss_mb 0 "$INDEX_BENCH" "$up" "$pulls" refs/tags/incident "$WORK/index-home" 0)
		printf '%-7s identity index, open + probes alone: peak RSS %s MB\n' "$rhythm" "$index_rss"
	fi
	[ "$REFS" = 0 ] || refs_bench "$rhythm" "$dir"
done
