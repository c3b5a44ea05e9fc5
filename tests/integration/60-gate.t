#!/bin/sh
# 60-gate.t - gate: each stage stops a bad pull, only approval moves the branch, reruns and kills are safe.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/gate.sh"
plan 69
gate_setup

gate() {
	run "$PULLGATE" gate --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" \
		--tree "$TREE" "$@" "$KEES" "$T2"
}
# pulls' worktrees: every worktree but the tree itself and pullgate's build worktree
pull_worktrees() {
	git --git-dir="$TREE" worktree list --porcelain | grep '^worktree ' |
		grep -v -e "^worktree $TREE\$" -e "^worktree $PULLGATE_HOME/work/build\$" | wc -l | tr -d ' '
}
# state: the tree's refs, the pulls' worktrees and what else is in the work directory
# (but the build worktree and the pulls' lock files, which stay)
state() {
	git --git-dir="$TREE" for-each-ref --format='%(objectname) %(refname)'
	pull_worktrees
	ls "$PULLGATE_HOME/work" 2>/dev/null | grep -vx -e build -e pulls || true
}
CLEAN=$(state)

# --- take one never gets past verify ------------------------------------------
run "$PULLGATE" gate --json --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" \
	--tree "$TREE" --approve "$KEES" hardening-v6.16-rc1-fix1
is "$rc" 1 "take one is rejected by the gate"
is "$(printf '%s' "$out" | jq -r '[.stages[] | "\(.name):\(.status)"] | join(" ")')" "verify:failed" \
	"at the verify stage: nothing is merged, built or booted"
is "$(state)" "$CLEAN" "the tree is untouched"
is "$(jq -r '"\(.verdict) \([.stages[].name] | join(","))"' "$PULLGATE_HOME/logs/hardening-v6.16-rc1-fix1/latest/report.json")" \
	"reject verify" "the verdict is recorded in the pull's log directory"

# --- stages run in order from merge: nothing is approved untested -------------------
gate --stages merge,approve --approve
is "$rc" 2 "approving without build and boot is a usage error"
like "$err" "in order from merge without a gap" "saying why"
is "$(state)" "$CLEAN" "and nothing is merged"

# --- a conflict with the integration branch ---------------------------------------
# the tree's master changes the file take two changes, differently
export GIT_INDEX_FILE="$SCRATCH/conflict.index"
git --git-dir="$TREE" read-tree "$BASE"
blob=$(printf 'the maintainer changed this line\n' | git --git-dir="$TREE" hash-object -w --stdin)
git --git-dir="$TREE" update-index --cacheinfo "100644,$blob,include/linux/overflow.h"
CONFLICTING=$(git --git-dir="$TREE" commit-tree -p "$BASE" -m "overflow: the maintainer's change" \
	"$(git --git-dir="$TREE" write-tree)")
unset GIT_INDEX_FILE
git --git-dir="$TREE" update-ref refs/heads/master "$CONFLICTING"
BEFORE_CONFLICT=$(state)
gate --json --approve
is "$rc" 1 "a merge conflict rejects the pull"
is "$(stage merge)" "failed" "at the merge stage"
is "$(messages merge-conflict)" "merging into refs/heads/master conflicts in 1 path" "with a merge-conflict finding"
is "$(printf '%s' "$out" | jq -r '.findings[] | select(.check == "merge-conflict") | .details[] | "\(.field) \(.pull)"')" \
	"conflict include/linux/overflow.h" "naming the conflicted path"
is "$(state)" "$BEFORE_CONFLICT" "and nothing is written: master is still the maintainer's commit"
reset_tree

# --- a build error ---------------------------------------------------------------
FAKE_BUILD=error gate --json --approve
is "$rc" 1 "a build error rejects the pull"
is "$(stage build)" "failed" "at the build stage"
is "$(messages build-error)" "lib/overflow.c:3: 'boom' undeclared" "naming file, line and message"
is "$(stage boot)" "" "and nothing is booted"
is "$(state)" "$CLEAN" "the tree, its refs and worktrees are as they were"

FAKE_BUILD=silent gate --json --approve
is "$(messages build-error)" "the build failed without a compiler diagnostic" \
	"a failure without a diagnostic is still a build-error"
like "$(printf '%s' "$out" | jq -r '.findings[] | select(.check == "build-error") | .details[0].pull')" \
	'make: \*\*\* \[Makefile:1\] Error 1' "quoting the end of the output"

# --- a boot that fails, splats, or hangs -----------------------------------------
FAKE_BOOT=fail gate --json --approve
is "$rc" 1 "a failing KUnit case rejects the pull"
is "$(messages ktap-failure)" "pullgate.randstruct_reorders failed" "naming the test"
is "$(git --git-dir="$TREE" rev-parse master)" "$BASE" "the branch does not move"
FAKE_BOOT=splat gate --json --approve
is "$(messages kernel-splat)" "warn: WARNING: CPU: 0 PID: 1 at lib/overflow.c:10 probe+0x10/0x20" \
	"a WARN splat rejects the pull, with its first line"
FAKE_BOOT=timeout gate --json --approve
is "$(messages boot-timeout)" "the kernel did not power off within 300 s" "a hung boot times out"
is "$(state)" "$CLEAN" "after all of these the tree is as it was"

# --- waiting for the maintainer ------------------------------------------------------
gate --json --no-approve
is "$rc" 0 "a clean pull passes every stage"
is "$(stage approve)" "waiting" "and waits for the maintainer"
MERGE=$(printf '%s' "$out" | jq -r .merge_commit)
is "$(git --git-dir="$TREE" rev-parse master)" "$BASE" "the integration branch has not moved"
is "$(git --git-dir="$TREE" rev-parse "refs/heads/pullgate/$KEY")" "$MERGE" \
	"the tested merge waits on its own branch"
is "$(pull_worktrees)" 0 "it leaves no worktree of its own behind"
is "$(git -C "$PULLGATE_HOME/work/build" rev-parse HEAD)" "$MERGE" \
	"the build worktree holds the tested merge, on the pull's branch"
reset_tree

# --- approval, with a new warning -------------------------------------------------------
FAKE_BUILD=warn gate --json --approve
is "$rc" 0 "a new warning alone does not reject"
is "$(messages new-warning)" "include/linux/overflow.h:2: a new warning [-Wnew]" \
	"the new warning is reported, the base build's old one is not"
is "$(printf '%s' "$out" | jq -r '[.stages[] | "\(.name):\(.status)"] | join(" ")')" \
	"verify:passed merge:passed build:passed boot:passed approve:passed" "every stage ran"
MERGE=$(printf '%s' "$out" | jq -r .merge_commit)
is "$(git --git-dir="$TREE" rev-parse master)" "$MERGE" "approval moved the branch to the tested merge"
is "$(git --git-dir="$TREE" rev-list --count "$BASE..master")" 5 \
	"exactly one new merge commit and the four commits of take two"
is "$(git --git-dir="$TREE" rev-parse master^1) $(git --git-dir="$TREE" rev-parse master^2)" \
	"$BASE $(git --git-dir="$KEES" rev-parse "$T2^{commit}")" "its parents: the old head and the tag's commit"
is "$(git --git-dir="$TREE" cat-file -p master | sed -n 's/^mergetag object //p')" \
	"$(git --git-dir="$KEES" rev-parse "$T2^{commit}")" "it embeds the tag in a mergetag header"
is "$(git --git-dir="$TREE" rev-parse master^{tree})" \
	"$(git --git-dir="$TREE" merge-tree --write-tree "$BASE" "$(git --git-dir="$KEES" rev-parse "$T2^{commit}")" 2>/dev/null ||
	   git --git-dir="$KEES" merge-tree --write-tree "$BASE" "$T2^{commit}")" \
	"its tree is what git's own merge gives"
like "$(git --git-dir="$TREE" log -1 --show-signature master 2>&1)" "^merged tag '$T2'$" \
	"git log --show-signature shows the merged tag"
like "$(git --git-dir="$TREE" log -1 --show-signature master 2>&1)" 'Good signature from "Kees Cook <kees@kernel.org>"' \
	"with a good signature"
is "$(git --git-dir="$TREE" log -1 --format=%s master)" "Merge tag '$T2' of $KEES" "the subject is kernel style"
like "$(git --git-dir="$TREE" log -1 --format=%B master)" "^Pull hardening fixes for v6.16-rc1 from Kees Cook:$" \
	"the message names what was pulled from whom"
like "$(git --git-dir="$TREE" log -1 --format=%B master)" "^  randstruct: gcc-plugin: Fix attribute addition$" \
	"and lists the merged commits"
is "$(jq -r '"\(.verdict) \(.stages[-1].name):\(.stages[-1].status)"' "$PULLGATE_HOME/logs/$KEY/latest/report.json")" \
	"accept approve:passed" "the recorded verdict says it was approved"
notice=$(cat "$PULLGATE_HOME/logs/$KEY/latest/notice.txt")
like "$notice" "^The pull request you sent on Sun, 01 Jun 2025 09:00:00 -0700:$" "a notice dated by the tag"
like "$notice" "^has been merged into $TREE:master:$" "naming the tree"
like "$notice" "^$MERGE$" "and the merge commit"

# --- rerunning an approved pull is safe -------------------------------------------------
gate --json --approve
is "$rc" 0 "rerunning the approved pull is safe"
is "$(stage merge)" "skipped" "the merge finds it already merged"
is "$(git --git-dir="$TREE" rev-parse master)" "$MERGE" "and nothing moves"
reset_tree

# --- a base made again with the same tree is not built again for its warnings ---------
SAME=$(git --git-dir="$TREE" commit-tree -p "$BASE" -m "the same tree, a new commit" "$BASE^{tree}")
git --git-dir="$TREE" update-ref refs/heads/master "$SAME"
: >"$PULLGATE_HOME/build/arm64-gcc/builds"
gate --json --no-approve
is "$rc" 0 "a pull on a new base commit with a known tree passes"
is "$(cat "$PULLGATE_HOME/build/arm64-gcc/builds")" "merged" \
	"the base's warnings are known by its tree: only the merge is built"
reset_tree

# --- the base build compiles what the pull changes: an old warning there is not new ----
# the build worktree already holds the base, built: checking it out rewrites nothing
git -C "$PULLGATE_HOME/work/build" checkout -q -f --detach "$BASE"
rm -f "$PULLGATE_HOME"/build/arm64-gcc/warnings-*
touch "$PULLGATE_HOME/build/arm64-gcc/.fake-stamp"
FAKE_STALE=1 gate --json --no-approve
is "$rc" 0 "a pull whose changed file has an old warning passes"
is "$(grep -c 'Wstale' "$PULLGATE_HOME/logs/$KEY/latest/build.log")" 2 \
	"both the base and the merge build compiled the changed file"
is "$(messages new-warning)" "" "so its old warning is not reported as new"
rm -f "$PULLGATE_HOME/build/arm64-gcc/.fake-stamp"
reset_tree

# --- the branch moves while the pull is tested: the compare-and-swap refuses ---------
OTHER=$(git --git-dir="$TREE" rev-parse master~1)
FAKE_BUILD=move FAKE_TREE="$TREE" FAKE_MOVE_TO="$OTHER" gate --approve
is "$rc" 3 "a branch that moved under the test means pullgate cannot decide"
like "$err" "moved while the pull was tested; nothing was changed" "and says so"
is "$(git --git-dir="$TREE" rev-parse master)" "$OTHER" "the other update is not overwritten"
reset_tree

# --- another writer's lock on the branch: a moment is waited for, longer is refused ----
FAKE_BUILD=lock FAKE_TREE="$TREE" gate --approve
is "$rc" 3 "a lock on the branch that stays means pullgate cannot decide"
like "$err" "'refs/heads/master' stayed locked by another writer" "and says so"
is "$(master)" "$BASE" "and the branch did not move"
rm -f "$TREE/refs/heads/master.lock"
reset_tree
# the approval's compare-and-swap meets the lock and stops there (a test point); the lock
# goes while it waits
FAKE_BUILD=lock FAKE_TREE="$TREE" PULLGATE_TEST_STOP=approve:branch-locked "$PULLGATE" gate \
	--keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" --tree "$TREE" --approve "$KEES" "$T2" \
	>/dev/null 2>"$SCRATCH/lock.err" &
pid=$!
ok "$(wait_stopped "$pid"; echo $?)" "the approval meets the lock on the branch"
rm -f "$TREE/refs/heads/master.lock"
kill -CONT "$pid"
set +e; wait "$pid"; rc=$?; set -e
is "$rc" 0 "a lock held on the branch for a moment is waited for"
is "$(git --git-dir="$TREE" rev-parse master^1)" "$BASE" "and the branch moves from the base to the merge"
reset_tree

# --- killed in the middle of a build -----------------------------------------------------
export FAKE_BUILD=sleep
rm -f "$PULLGATE_HOME/build/arm64-gcc/merged-built-once"
"$PULLGATE" gate --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" --tree "$TREE" \
	--approve "$KEES" "$T2" >/dev/null 2>&1 &
pid=$!
wait_for test -e "$PULLGATE_HOME/build/arm64-gcc/merged-built-once"
kill -INT "$pid"
set +e; wait "$pid"; rc=$?; set -e
is "$rc" 3 "SIGINT during the build stops the gate (exit 3)"
is "$(state)" "$CLEAN" "and leaves the tree as it was"

rm -f "$PULLGATE_HOME/build/arm64-gcc/merged-built-once"
"$PULLGATE" gate --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" --tree "$TREE" \
	--approve "$KEES" "$T2" >/dev/null 2>&1 &
pid=$!
wait_for test -e "$PULLGATE_HOME/build/arm64-gcc/merged-built-once"
kill -KILL "$pid"
set +e; wait "$pid" 2>/dev/null; set -e
# the orphaned stand-in build, and only it (other tests may run the same script)
kill -KILL "$(cat "$PULLGATE_HOME/build/arm64-gcc/build.pid")" 2>/dev/null || true
unset FAKE_BUILD
gate --json --approve
is "$rc" 0 "after a SIGKILL mid-build the next run goes through"
is "$(pull_worktrees)" 0 "leaving no stale worktree behind"
