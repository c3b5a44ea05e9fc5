#!/bin/sh
# window.sh - a merge window of 12 pulls through `pullgate serve`: the queue (1 and 2 build worktrees) against each pull on the head, same run.
#
# usage: bench/window.sh -f PULLGATE_BINARY
#
# Twelve pulls, delivered at once by signed push records, each a signed tag
# of one commit on a common base: eight good ones; one that breaks the
# build by itself; a pair green alone that breaks the build together (a
# renamed function and a new caller); a pair green alone that fails a KUnit
# case together (a limit changed and a test of it); a pair with a textual
# conflict.  They are all tested first (they came overnight); then the
# maintainer approves every pull that may be approved, in queue order, as
# soon as it may (a pull refused because the branch moved is approved again
# once it was tested again).  Three sides, each a fresh
# service and branch: pipeline.queue stack with 1 and 2 build worktrees,
# and each (every pull on the head, tested again when the branch moved).
# For each side it prints: kernel runs (each merge, build and boot of a
# pull, reruns to attribute a failure included), builds and boots, wall
# seconds until every pull was tested and until the last was decided, the failures named with their
# cause against what was built into them (alone, or with which pull), and
# whether every commit the branch took was built and booted.
#
# -f: the stand-ins of tests/fakes (FAKE_BUILD=tree judges the tree's
# fake/ files, tests/lib/stack.sh; every build takes FAKE_BUILD_DELAY, 1
# s): the counts are those of the queue's scheduling, the seconds those of
# the stand-ins, not a kernel's.  The real tree is not done yet.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
[ "${1:-}" = -f ] && [ $# -eq 2 ] || { echo "usage: bench/window.sh -f PULLGATE_BINARY" >&2; exit 2; }
PULLGATE=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-bench-window.XXXXXX")
export PULLGATE_HOME="$SCRATCH/home" FAKE_BUILD=tree FAKE_BUILD_DELAY="${FAKE_BUILD_DELAY:-1}"
PATIENCE=${PATIENCE:-1800}
. "$TOP/tests/lib/fixtures.sh"
. "$TOP/tests/lib/serve.sh"
. "$TOP/tests/lib/stack.sh"
cleanup() {
	serve_kill
	rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

serve_setup
stack_upstream
sed -i "s|^  url: .*|  url: '$UPQ'|" "$SCRATCH/policy.yaml"
# every build of a tree, the base's too, takes FAKE_BUILD_DELAY: the stand-ins build a tree
# whose overflow.h says fix ("merged") after its delay
W="$SCRATCH/fix"
git clone -q "$TREE" "$W"
(cd "$W" && mkdir -p include/linux && echo '/* overflow helpers: fix */' >include/linux/overflow.h &&
	git add include/linux/overflow.h &&
	GIT_AUTHOR_NAME="Linus Torvalds" GIT_AUTHOR_EMAIL=torvalds@linux-foundation.org \
	GIT_COMMITTER_NAME="Linus Torvalds" GIT_COMMITTER_EMAIL=torvalds@linux-foundation.org \
	git commit -q -m "overflow: fix" && git push -q "$UPQ" HEAD:master)
BASE=$(git --git-dir="$UPQ" rev-parse master)
git --git-dir="$TREE" fetch -q "$UPQ" "+master:refs/heads/master"
git --git-dir="$KREPO" fetch -q "$UPQ" "+master:refs/heads/upstream-base"

# name, files; and what a failure is due to: "alone", "with NAME", or "" (good)
stack_pull w-a fake/a.c='def a_fn'
stack_pull w-broken fake/broken.c='call nowhere'
stack_pull w-b fake/b.c='def b_fn'
stack_pull w-caller fake/caller.c='call beta'
stack_pull w-c fake/c.c='def c_fn'
stack_pull w-rename fake/core.c='def beta_renamed'
stack_pull w-assert fake/limit_test.c='assert LIMIT == 1'
stack_pull w-limit fake/limits.c='set LIMIT = 2'
stack_pull w-edit-a fake/shared.c='value = 2'
stack_pull w-edit-b fake/shared.c='value = 3'
stack_pull w-d fake/d.c='def d_fn'
stack_pull w-e fake/e.c='def e_fn'
PULLS="w-a w-broken w-b w-caller w-c w-rename w-assert w-limit w-edit-a w-edit-b w-d w-e"
cause() {
	case $1 in
	w-broken) echo alone ;;
	w-rename) echo "with w-caller" ;;
	w-limit) echo "with w-assert" ;;
	w-edit-b) echo "with w-edit-a" ;;
	*) echo "" ;;
	esac
}
base_config=$(cat "$CONFIG")

approve() {
	curl -s -o /dev/null -w '%{http_code}' -b "$SCRATCH/jar" -X POST -H "X-CSRF-Token: $CSRF" \
		-H "Origin: $URL" "$URL/api/pulls/$1/approve"
}
moved_on() { [ "$(pull_field "$1" .state)" != waiting ]; }

# side NAME QUEUE WORKTREES: one window through a fresh service; a line of figures
side() {
	name=$1
	git --git-dir="$TREE" update-ref refs/heads/master "$BASE"
	rm -rf "$PULLGATE_HOME" "$SCRATCH/state"
	printf '%s\n' "$base_config" |
		sed "s/^  verify-workers: 2$/  verify-workers: 1\n  queue: $2\n  build-worktrees: $3/" >"$CONFIG"
	serve_start
	maintainer_login
	t0=$(date +%s.%N)
	ids=""
	for t in $PULLS; do
		push_record "$SCRATCH/$t.json" "$t"
		hook push "$SCRATCH/$t.json" "$name-$t"
		[ "$code" = 202 ] || { echo "window: $name: $t answered $code: $out" >&2; exit 1; }
		ids="$ids $(printf '%s' "$out" | jq -r '.jobs[0]')"
	done
	# overnight: every pull is tested before the maintainer looks
	for id in $ids; do
		wait_state "$id" waiting rejected error approved >/dev/null || true
	done
	t_tested=$(date +%s.%N)
	# the morning: in queue order (one verify worker: the order they came), each as soon as it may
	for id in $ids; do
		while :; do
			s=$(wait_state "$id" waiting rejected error approved || true)
			[ "$s" = waiting ] || break
			[ "$(approve "$id")" != 200 ] || break
			# refused: the branch moved since its test (each); it is tested again
			wait_for moved_on "$id" || true
		done
	done
	t1=$(date +%s.%N)
	logs="$PULLGATE_HOME/logs"
	# each kernel run: a report with a merge stage, the pull's own runs and the reruns
	runs=$(cat "$logs"/*/run-*/report.json 2>/dev/null | jq -s '[.[] | select(any(.stages[]; .name == "merge"))]')
	nruns=$(printf '%s' "$runs" | jq length)
	nbuilds=$(printf '%s' "$runs" | jq '[.[] | select(any(.stages[]; .name == "build" and .status != "skipped"))] | length')
	nboots=$(printf '%s' "$runs" | jq '[.[] | select(any(.stages[]; .name == "boot" and .status != "skipped"))] | length')
	named=0 failed=0 approved=0
	for id in $ids; do
		t=$(pull_field "$id" .tag | sed 's|refs/tags/||')
		st=$(pull_field "$id" .state)
		[ "$st" != approved ] || approved=$((approved + 1))
		want=$(cause "$t")
		[ -n "$want" ] || continue
		failed=$((failed + 1))
		got=$(pull_field "$id" .attribution)
		with=$(pull_field "$id" .with)
		case $want in
		alone) [ "$with" = null ] && case $got in *"by itself"*) true ;; *) false ;; esac && named=$((named + 1)) || true ;;
		with\ *)
			[ "$with" != null ] && [ "$(pull_field "$with" .tag)" = "refs/tags/${want#with }" ] &&
				named=$((named + 1)) || true ;;
		esac
	done
	# every commit the branch took on its first-parent line: a merge some run built and booted
	tested=$(printf '%s' "$runs" | jq -r '.[] | select(any(.stages[]; .name == "boot" and .status == "passed")) | .merge_commit')
	untested=0
	for c in $(git --git-dir="$TREE" rev-list --first-parent "$BASE..master"); do
		printf '%s\n' "$tested" | grep -qx "$c" || untested=$((untested + 1))
	done
	serve_stop
	awk -v n="$name" -v r="$nruns" -v b="$nbuilds" -v o="$nboots" -v s="$(echo "$t1 - $t0" | bc)" \
		-v st="$(echo "$t_tested - $t0" | bc)" -v a="$approved" -v f="$failed" -v m="$named" \
		-v u="$untested" 'BEGIN {
		printf "window: %-8s kernel runs %2d (builds %2d, boots %2d), tested in %6.1f s, all decided in %6.1f s, approved %d, failures named with their cause %d of %d, untested commits on the branch %d\n",
			n, r, b, o, st, s, a, m, f, u }'
	echo "$nruns $(echo "$t1 - $t0" | bc)" >"$SCRATCH/side-$name"
}

echo "window: 12 pulls; stand-ins (tests/fakes, FAKE_BUILD=tree), FAKE_BUILD_DELAY=$FAKE_BUILD_DELAY s a build"
side each each 1
side stack-1 stack 1
side stack-2 stack 2
read -r er es <"$SCRATCH/side-each"
for s in stack-1 stack-2; do
	read -r r t <"$SCRATCH/side-$s"
	awk -v n="$s" -v er="$er" -v es="$es" -v r="$r" -v t="$t" 'BEGIN {
		printf "window: each / %s: kernel runs %.2fx, wall time %.2fx\n", n, er / r, es / t }'
done
