#!/bin/sh
# 86-hostile-kill.t - SIGKILL in each stage (verify, merge, build, boot, approve), a restart, and nothing lost, doubled or left behind.
#
# The service's run is held at a known line of each stage (PULLGATE_TEST_HOLD,
# a test point of the build made for tests: the hook is still answered),
# the service is killed there with SIGKILL, and started again without it.  Build and boot are the stand-ins of tests/fakes
# (simulated runs).  After the restart the pull must end where a run that
# was never killed ends, with the same refs in the maintainer's tree, no
# extra worktree, no temporary GnuPG home, and a sound database.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 38
T2=hardening-v6.16-rc1-fix1-take2
TOP_SCRATCH=$SCRATCH
# at exit: every run's stand-ins, and the whole scratch (each run moved $SCRATCH into it)
kill_cleanup() {
	SCRATCH=$TOP_SCRATCH
	stop_fakes
}
TAP_CLEANUP="kill_cleanup"

# setup NAME APPROVAL: a scratch of its own (state, tree, home) for one run
setup() {
	SCRATCH="$TOP_SCRATCH/$1"
	mkdir -p "$SCRATCH"
	export PULLGATE_HOME="$SCRATCH/home"
	serve_setup
	sed -i "s/^approval: manual$/approval: $2/" "$SCRATCH/policy.yaml"
	BASE=$(git --git-dir="$TREE" rev-parse master)
	push_record "$SCRATCH/take2.json" "$T2"
}

# the tree's refs and worktrees, as a run leaves them (worktrees relative to the run's scratch)
tree_state() {
	git --git-dir="$TREE" for-each-ref --format='%(refname)' | sort
	git --git-dir="$TREE" worktree list --porcelain | sed -n 's/^worktree //p' |
		sed "s|^$SCRATCH/||"
}

# what a clean run leaves, for each approval mode
for mode in manual auto; do
	setup "clean-$mode" "$mode"
	serve_start
	hook push "$SCRATCH/take2.json" clean
	ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
	wait_state "$ID" waiting approved rejected error passed >"$SCRATCH/final"
	serve_stop
	tree_state >"$TOP_SCRATCH/clean-$mode.tree"
	cp "$SCRATCH/final" "$TOP_SCRATCH/clean-$mode.final"
done
is "$(cat "$TOP_SCRATCH/clean-manual.final") $(cat "$TOP_SCRATCH/clean-auto.final")" "waiting approved" \
	"a run never killed waits for the maintainer (manual) or is approved (auto)"

# kill STAGE HOLD APPROVAL [LOCKS]: hold the service at HOLD, SIGKILL it, start it again, and check
kill_in() {
	stage=$1
	setup "kill-$stage" "$3"
	mkdir -p "$SCRATCH/hold"
	PULLGATE_TEST_HOLD=$2 PULLGATE_TEST_HOLD_DIR="$SCRATCH/hold" serve_start
	hook push "$SCRATCH/take2.json" "kill-$stage"
	ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
	ok "$(wait_for test -e "$SCRATCH/hold/held"; echo $?)" "$stage: the service's run is held in the $stage stage"
	kill -KILL "$SERVE_PID"
	wait "$SERVE_PID" 2>/dev/null || true
	SERVE_PID=
	stop_fakes "$TOP_SCRATCH"
	# a kill inside a checkout (no test point stops libgit2 there) leaves the locks
	# of the build worktree's index and HEAD: left here as it leaves them
	locks=
	if [ -n "${4:-}" ]; then
		locks=$(ls -d "$TREE"/worktrees/build-*)
		locks="$locks/index.lock $locks/HEAD.lock"
		for f in $locks; do : >"$f"; done
	fi
	killed=$(sqlite3 "$SCRATCH/state/pullgate.db" "select state from pulls where id = $ID")
	serve_start
	want=$(cat "$TOP_SCRATCH/clean-$3.final")
	final=$(wait_state "$ID" waiting approved rejected error passed cancelled || true)
	get "$URL/api/pulls/$ID"
	case $stage:$final in
	approve:passed | approve:approved) verdict=ok ;; # approved before the kill, or again
	*:"$want") verdict=ok ;;
	*) verdict="ended $final" ;;
	esac
	is "$verdict" ok "$stage: killed while $killed, the pull resumes and ends $final ($(printf '%s' "$out" | jq -r .message))"
	is "$(printf '%s' "$out" | jq -r .attempts)" 2 "$stage: it ran once more, not more"
	[ -z "$locks" ] || is "$(ls $locks 2>/dev/null)" "" "$stage: the locks a checkout killed halfway left are gone"
	is "$(sqlite3 "$SCRATCH/state/pullgate.db" "select count(*) from pulls")" 1 \
		"$stage: no pull was lost or made twice"
	hook push "$SCRATCH/take2.json" "kill-$stage"
	is "$code:$(printf '%s' "$out" | jq -r '.jobs[0]')" "200:$ID" "$stage: the delivery is still known (its retry names the pull)"
	# the integration branch: where it was, or the merge this pull tested and approved
	head=$(git --git-dir="$TREE" rev-parse master)
	if [ "$3" = manual ]; then
		is "$head" "$BASE" "$stage: the integration branch has not moved (the pull waits for approval)"
	else
		ok "$([ "$head" != "$BASE" ] && git --git-dir="$TREE" cat-file -p "$head" |
			grep -q "^mergetag object $(git --git-dir="$KREPO" rev-parse "$T2^{commit}")" && echo 0 || echo 1)" \
			"$stage: the integration branch holds only the merge that was built, booted and approved"
	fi
	serve_stop
	tree_state | sort >"$SCRATCH/tree"
	sort "$TOP_SCRATCH/clean-$3.tree" >"$SCRATCH/clean.tree"
	is "$(comm -23 "$SCRATCH/tree" "$SCRATCH/clean.tree")" "" \
		"$stage: no ref or worktree is left that a run never killed does not leave"
	is "$(ls "$PULLGATE_HOME/tmp" 2>/dev/null)" "" "$stage: no temporary GnuPG home is left"
	is "$(sqlite3 "$SCRATCH/state/pullgate.db" "pragma integrity_check")" ok "$stage: the database is sound"
}

kill_in verify verify manual
kill_in merge merge:passed manual
kill_in build "build:building the merge" manual locks
kill_in boot "boot:booting" manual
# approval: 88-approve-kill.t
