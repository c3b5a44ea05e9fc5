#!/bin/sh
# verify.sh - pullgate verify against git rev-list and git log --cherry-mark, same repos, same run.
#
#   bench/verify.sh [PULLGATE] [HISTORY]
#
# Builds the incident fixtures and a synthetic tree with HISTORY upstream
# commits (default 100000) whose pull re-dates 35 upstream commits, then
# times, on each, the median of 5 runs of:
#   pullgate verify --upstream UP:master PULL TAG
#   git rev-list --count master...TAG
#   git log --cherry-mark --left-right --oneline master...TAG
# and prints pullgate's time as a ratio of each git command's.  The git
# commands are the baseline: they only list the divergence, they do not
# diff metadata.  Times vary by machine; the ratios are the result.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/synthetic.sh"
PULLGATE=${1:-$TOP/build/release/pullgate}
HISTORY=${2:-100000}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export PULLGATE_HOME="$WORK/home"

ms() { date +%s%3N; }

# median_ms CMD...: the median wall time of 5 runs, in milliseconds
median_ms() {
	for i in 1 2 3 4 5; do
		s=$(ms)
		"$@" >/dev/null 2>&1 || true
		e=$(ms)
		echo $((e - s))
	done | sort -n | sed -n 3p
}

"$TOP/fixtures/incident.sh" "$WORK/incident" >/dev/null
export GNUPGHOME="$WORK/incident/gnupg"

# --- a synthetic upstream with a long history ------------------------------------
mkdir -p "$WORK/big"
synthetic_upstream "$WORK/big/upstream.git" "$HISTORY"
git clone -q "$WORK/big/upstream.git" "$WORK/big/work"
(
	cd "$WORK/big/work"
	git config user.name "Sub Maintainer"
	git config user.email sub@example.org
	git checkout -q -b pull master~100
	for i in 1 2 3 4; do
		echo "$i" >"own$i"
		git add "own$i"
		git commit -q -m "sub: own change $i"
	done
	git tag -a -m "sub fixes

- sub: own change 1
- sub: own change 2
- sub: own change 3
- sub: own change 4" clean pull
	# the rewrite: re-date the 35 upstream commits below the pull's own
	git checkout -q -b rewritten pull
	git filter-repo --force --quiet --refs master~135..rewritten --commit-callback '
if commit.committer_email == b"top@example.org":
    t, tz = commit.committer_date.split()
    commit.committer_date = b"%d %s" % (int(t) + 1, tz)' >/dev/null
	git tag -a -m "sub fixes

- sub: own change 1" rewritten rewritten
	git push -q "$WORK/big/upstream.git" master
	git init -q --bare "$WORK/big/pull.git"
	git push -q "$WORK/big/pull.git" clean rewritten pull rewritten 2>/dev/null ||
		git push -q "$WORK/big/pull.git" refs/tags/clean refs/tags/rewritten
)

printf '%-16s %8s %5s %6s %8s %9s %10s %9s %9s %9s\n' case history pull copies examined verify_ms \
	revlist_ms cherry_ms "v/revlist" "v/cherry"
bench_case() { # NAME UPSTREAM-GIT-DIR PULL-DIR TAG
	up=$2
	hist=$(git --git-dir="$up" rev-list --count master)
	git --git-dir="$3" fetch -q "$up" master:refs/bench/master 2>/dev/null || true
	npull=$(git --git-dir="$3" rev-list --count "$4" --not refs/bench/master)
	# the first run warms the cache and tells how many upstream commits were read
	json=$("$PULLGATE" verify --json --upstream "$up:master" "$3" "$4" 2>/dev/null) || true
	examined=$(printf '%s' "$json" | jq -r .upstream_examined)
	found=$(printf '%s' "$json" | jq '[.findings[] | select(.check == "rewritten-upstream")] | length')
	v=$(median_ms "$PULLGATE" verify --upstream "$up:master" "$3" "$4")
	r=$(median_ms git --git-dir="$3" rev-list --count refs/bench/master..."$4")
	c=$(median_ms git --git-dir="$3" log --cherry-mark --left-right --oneline refs/bench/master..."$4")
	printf '%-16s %8s %5s %6s %8s %9s %10s %9s %9s %9s\n' "$1" "$hist" "$npull" "$found" "$examined" \
		"$v" "$r" "$c" \
		"$(awk -v a="$v" -v b="$r" 'BEGIN { printf "%.1f", a / (b ? b : 1) }')" \
		"$(awk -v a="$v" -v b="$c" 'BEGIN { printf "%.1f", a / (b ? b : 1) }')"
}
echo "# setup done at $(date +%T)" >&2
bench_case incident-take1 "$WORK/incident/upstream.git" "$WORK/incident/kees.git" hardening-v6.16-rc1-fix1
bench_case incident-take2 "$WORK/incident/upstream.git" "$WORK/incident/kees.git" hardening-v6.16-rc1-fix1-take2
bench_case big-clean "$WORK/big/upstream.git" "$WORK/big/pull.git" clean
bench_case big-rewritten "$WORK/big/upstream.git" "$WORK/big/pull.git" rewritten
