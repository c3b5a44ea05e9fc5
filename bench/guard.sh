#!/bin/sh
# guard.sh - pullgate guard (the pre-push hook) against the git push it guards, same repos, same run.
#
#   bench/guard.sh [PULLGATE] [HISTORY]
#
# A synthetic upstream with HISTORY commits (default 100000), a clone of it
# in which a sub-maintainer's branch sits 100 commits below upstream's tip,
# and a public bare repository that already has upstream.  For each of 5
# runs it commits one more change and times
#   git push --no-verify pub BRANCH     (the push alone: the baseline)
#   git push pub BRANCH                 (the push with the guard as pre-push hook)
# and times the guard alone on the same pre-push line, for that branch and
# for a rewrite of it that re-creates 35 upstream commits (the refusal).
# Prints medians and the guard's time as a ratio of the push's.  Times vary
# by machine; the ratios are the result.  Each timed run must exit as it
# should (the pushes and the clean guard 0, the refusal 1), else the bench
# fails.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/synthetic.sh"
PULLGATE=$(realpath "${1:-$TOP/build/release/pullgate}")
HISTORY=${2:-100000}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1

ms() { date +%s%3N; }
median() { sort -n | sed -n 3p; }

synthetic_upstream "$WORK/upstream.git" "$HISTORY"
git clone -q --bare "$WORK/upstream.git" "$WORK/pub.git"
git clone -q "$WORK/upstream.git" "$WORK/work"
cd "$WORK/work"
git config user.name "Sub Maintainer"
git config user.email sub@example.org
git config pullgate.upstream origin/master
git remote add pub "$WORK/pub.git"
"$PULLGATE" guard --install >/dev/null
git checkout -q -b pull master~100
for i in 1 2 3 4; do
	echo "$i" >"own$i"
	git add "own$i"
	git commit -q -m "sub: own change $i"
done
git checkout -q -b rewritten pull
git filter-repo --force --quiet --refs master~135..rewritten --commit-callback '
if commit.committer_email == b"top@example.org":
    t, tz = commit.committer_date.split()
    commit.committer_date = b"%d %s" % (int(t) + 1, tz)' >/dev/null
git checkout -q pull

# guard_line REF: the guard on the line git gives it for REF as a new branch
guard_line() {
	printf '%s %s refs/heads/x 0000000000000000000000000000000000000000\n' "$1" "$(git rev-parse "$1")" |
		"$PULLGATE" guard pub "$WORK/pub.git" >/dev/null 2>&1
}
# time_ms STATUS CMD...: CMD's wall milliseconds; the bench ends unless it exits STATUS
time_ms() {
	want=$1
	shift
	s=$(ms)
	st=0
	"$@" >/dev/null 2>"$WORK/err" || st=$?
	e=$(ms)
	[ "$st" = "$want" ] ||
		{ echo "guard.sh: '$*' exited $st, not $want: $(head -c 2000 "$WORK/err")" >&2; exit 1; }
	echo $((e - s))
}

: >"$WORK/plain" && : >"$WORK/hooked" && : >"$WORK/clean" && : >"$WORK/refuse"
for i in 1 2 3 4 5; do
	echo "more $i" >>own1 && git commit -q -a -m "sub: more $i"
	time_ms 0 git push -q --no-verify pub "HEAD:refs/heads/plain$i" >>"$WORK/plain"
	echo "hooked $i" >>own2 && git commit -q -a -m "sub: hooked $i"
	time_ms 0 git push -q pub "HEAD:refs/heads/hooked$i" >>"$WORK/hooked"
	time_ms 0 guard_line refs/heads/pull >>"$WORK/clean"
	time_ms 1 guard_line refs/heads/rewritten >>"$WORK/refuse"
done
[ -n "$(git --git-dir="$WORK/pub.git" rev-parse -q --verify refs/heads/hooked5)" ] ||
	{ echo "guard.sh: the hooked push did not go through" >&2; exit 1; }
guard_line refs/heads/rewritten && { echo "guard.sh: the rewrite was not refused" >&2; exit 1; }

plain=$(median <"$WORK/plain") hooked=$(median <"$WORK/hooked")
clean=$(median <"$WORK/clean") refuse=$(median <"$WORK/refuse")
printf 'history %s commits; medians of 5 runs, ms\n' "$HISTORY"
printf '%-34s %6s\n' "git push --no-verify (baseline)" "$plain" "git push with the guard hook" "$hooked" \
	"guard alone, clean branch" "$clean" "guard alone, rewrite (refused)" "$refuse"
awk -v p="$plain" -v h="$hooked" -v c="$clean" -v r="$refuse" 'BEGIN {
	p = p < 1 ? 1 : p
	printf "hooked push / push:        %.2f\n", h / p
	printf "guard (clean) / push:      %.2f\n", c / p
	printf "guard (refusal) / push:    %.2f\n", r / p
}'
