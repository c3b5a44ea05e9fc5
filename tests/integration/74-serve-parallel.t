#!/bin/sh
# 74-serve-parallel.t - N build worktrees: kernel jobs at once, each in its own worktree and O=, and everything that was safe one at a time still safe.
#
# Build and boot are the stand-ins of tests/fakes (simulated runs).  Their
# build.sh logs each build's start and end (FAKE_BUILD_LOG) and can make two
# merge builds wait for each other (FAKE_BUILD_MEET), so that overlap is a
# fact of the run, not of the machine's speed; where one build must wait for
# another, the first is held (FAKE_BUILD_WAIT) until the other says it
# waits.  Two pulls: take two, and take three (take two plus one commit
# whose fake-build-wait file holds its merge build until $GO3 exists).
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 54
T2=hardening-v6.16-rc1-fix1-take2
T3=take3-parallel
TAP_CLEANUP="stop_fakes"
serve_setup
# each pull on the head, as before the queue: the stack tests one pull at a time (docs/server.md)
sed -i 's/^  verify-workers: 2$/  verify-workers: 2\n  queue: each/' "$CONFIG"
BASE=$(git --git-dir="$TREE" rev-parse master)
GO3="$SCRATCH/go-take3"
: >"$GO3"
kees_tag "$T3" fake-build-wait "$GO3" "parallel: a third take, built when the test says

Signed-off-by: Kees Cook <kees@kernel.org>" "$T3

- parallel: a third take"
push_record "$SCRATCH/t2.json" "$T2"
push_record "$SCRATCH/t3.json" "$T3"
SLOT1="$PULLGATE_HOME/build/arm64-gcc"
SLOT2="$PULLGATE_HOME/slots/2/build/arm64-gcc"

# worktrees N: set pipeline.build-worktrees to N in $CONFIG, with a state dir of its own
worktrees() {
	sed -i -e '/^  build-worktrees: /d' -e "s/^  verify-workers: 2\$/  verify-workers: 2\n  build-worktrees: $1/" \
		-e "s|^state: .*|state: $SCRATCH/state-$2|" "$CONFIG"
}
# merged_builds: "start end dir" of each build of a merged tree in $SCRATCH/builds.log, by start
merged_builds() {
	awk '$3 == "merged" { if ($1 == "start") { s[$5] = $2; d[$5] = $4 } else e[$5] = $2 }
		END { for (p in s) print s[p], e[p], d[p] }' "$SCRATCH/builds.log" | sort -n
}
# overlap: 0 when the first two merge builds ran at the same time
overlap() {
	merged_builds | awk '{ s[NR] = $1; e[NR] = $2 } END { exit !(NR >= 2 && s[2] < e[1]) }'
}
# both A B STATE...: until both pulls are in one of STATEs; prints their states
both() {
	a=$1 b=$2
	shift 2
	echo "$(wait_state "$a" "$@" || true) $(wait_state "$b" "$@" || true)"
}
field() { curl -s "$URL/api/pulls/$1" | jq -r ".$2"; }
pull_refs() {
	git --git-dir="$TREE" for-each-ref --format='%(refname)' refs/heads/pullgate refs/pullgate |
		sort | paste -sd' ' -
}
# deliver RUN: push records of take two and take three; their jobs in $A and $B
deliver() {
	hook push "$SCRATCH/t2.json" "$1-t2"
	A=$(printf '%s' "$out" | jq -r '.jobs[0]')
	hook push "$SCRATCH/t3.json" "$1-t3"
	B=$(printf '%s' "$out" | jq -r '.jobs[0]')
}
# why JOB...: each pull's state and message, and the service's last lines, as TAP
# comments on stderr, which prove shows without -v: a failure in make check says why
why() {
	for j in "$@"; do
		echo "#   pull $j: $(field "$j" state): $(field "$j" message)"
	done >&2
	tail -n 20 "$SCRATCH/serve.err" 2>/dev/null | sed 's/^/#   serve: /' >&2
}
# held_alone STATE: the first merge build is held (FAKE_BUILD_WAIT); until the other
# pull is in STATE, then 0 if it is the only merge build that started
held_alone() {
	wait_for merge_built_once || return 1
	_other=$A
	[ "$(field "$A" state)" != building ] || _other=$B
	wait_state "$_other" "$1" >/dev/null && [ "$(merged_starts)" = 1 ]
}
merge_built_once() { [ "$(merged_starts)" -ge 1 ]; }
# says_waiting WHAT: until one of the pulls $A and $B says, in its event stream, that
# it waits for WHAT (the other's merge build being held meanwhile)
says_waiting() {
	for j in "$A" "$B"; do
		curl -s -N "$URL/api/pulls/$j/events" >"$SCRATCH/events-$j" 2>/dev/null &
		echo $! >"$SCRATCH/events-$j.pid"
	done
	_rc=0
	wait_for grep -qs "waiting for $1" "$SCRATCH/events-$A" "$SCRATCH/events-$B" || _rc=1
	for j in "$A" "$B"; do kill "$(cat "$SCRATCH/events-$j.pid")" 2>/dev/null || true; done
	return $_rc
}
merged_starts() { grep -c '^start [^ ]* merged ' "$SCRATCH/builds.log" || true; }
worktree_list() {
	git --git-dir="$TREE" worktree list --porcelain | sed -n 's/^worktree //p' | sort | paste -sd' ' -
}

# --- the value: 1 to 16, one line when it is not -----------------------------------------
worktrees 17 bad
run "$PULLGATE" serve --config "$CONFIG"
is "$rc" 3 "serve refuses pipeline.build-worktrees: 17"
like "$err" "serve.yaml:[0-9]+:[0-9]+: 'pipeline.build-worktrees' wants at most 16, not 17" \
	"saying where and what is allowed"
is "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" 1 "in one line"
run "$PULLGATE" gate --build-worktrees 0 "$KREPO" "$T2"
is "$rc:$(printf '%s\n' "$err" | head -n1)" "2:error: --build-worktrees wants 1 to 16, not '0'" \
	"gate refuses --build-worktrees 0 as a usage error"

# --- two pulls at once in two build worktrees -------------------------------------------------
worktrees 2 two
export FAKE_BUILD_LOG="$SCRATCH/builds.log" FAKE_BUILD_MEET="$SCRATCH/meet-two"
serve_start
deliver two
states=$(both "$A" "$B" waiting rejected error approved passed)
is "$states" "waiting waiting" \
	"with build-worktrees: 2 both pulls pass every stage and wait for the maintainer"
[ "$states" = "waiting waiting" ] || why "$A" "$B"
ok "$(overlap; echo $?)" "their merge builds ran at the same time"
is "$(merged_builds | awk '{ print $3 }' | sort | paste -sd' ' -)" "$SLOT1 $SLOT2" \
	"each in an O= dir of its own: build/arm64-gcc and slots/2/build/arm64-gcc"
is "$(worktree_list)" "$PULLGATE_HOME/slots/2/work/build $PULLGATE_HOME/work/build $TREE" \
	"from a worktree of its own each: work/build and slots/2/work/build"
is "$(git --git-dir="$TREE" worktree list --porcelain | grep -c '^detached$')" 2 \
	"both detached: no build worktree holds a pull's branch"
is "$(pull_refs)" "refs/heads/pullgate/$T2 refs/heads/pullgate/$T3 refs/pullgate/tags/$T2 refs/pullgate/tags/$T3" \
	"each pull keeps its own branch and tag ref for the maintainer"
is "$(git --git-dir="$TREE" rev-parse "refs/heads/pullgate/$T2") $(git --git-dir="$TREE" rev-parse "refs/heads/pullgate/$T3")" \
	"$(field "$A" merge_commit) $(field "$B" merge_commit)" "at the merges each tested"
is "$(field "$A" merge_base) $(field "$B" merge_base)" "$BASE $BASE" "both merged on the integration head"
ok "$([ -s "$SLOT1/.pullgate-objects" ] && [ -s "$SLOT2/.pullgate-objects" ]; echo $?)" \
	"each build dir keeps its own object count for the progress"
ok "$([ "$(ls -d "$SLOT1"/base-boot-* | wc -l)" = 1 ] && [ "$(ls -d "$SLOT2"/base-boot-* | wc -l)" = 1 ]; echo $?)" \
	"and its own base boot"
is "$(git --git-dir="$TREE" rev-parse master)" "$BASE" "the integration branch has not moved"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly"

# --- one build worktree: one at a time ---------------------------------------------------------
worktrees 1 one
unset FAKE_BUILD_MEET
: >"$SCRATCH/builds.log"
FAKE_BUILD_WAIT="$SCRATCH/go-one" serve_start
deliver one
ok "$(held_alone verified; echo $?)" \
	"with build-worktrees: 1, one pull waits verified while the other's merge build is held"
: >"$SCRATCH/go-one"
is "$(both "$A" "$B" waiting rejected error approved passed)" "waiting waiting" \
	"with build-worktrees: 1 both pulls wait for the maintainer too"
ok "$(merged_builds | awk '{ s[NR] = $1; e[NR] = $2 } END { exit !(NR == 2 && s[2] >= e[1]) }'; echo $?)" \
	"but their merge builds ran one after the other"
is "$(merged_builds | awk '{ print $3 }' | sort -u)" "$SLOT1" "both in the one build dir"
serve_stop

# --- two jobs of one pull never run at once ------------------------------------------------------
# take two by push record and by mail: two open jobs, one pull key (the tag's name)
mkdir -p "$SCRATCH/mail"
"$TOP/fixtures/mail.sh" "$FX" "$SCRATCH/mail" >/dev/null
sed "s|$FX/kees.git|$KEES_GIT_URL|g" "$SCRATCH/mail/take2.mail" >"$SCRATCH/take2.mail"
worktrees 2 same
: >"$SCRATCH/builds.log"
FAKE_BUILD_WAIT="$SCRATCH/go-same" serve_start
hook push "$SCRATCH/t2.json" same-push
A=$(printf '%s' "$out" | jq -r '.jobs[0]')
hook pull-request "$SCRATCH/take2.mail" same-mail
B=$(printf '%s' "$out" | jq -r '.jobs[0]')
ok "$(says_waiting "another run of"; echo $?)" "one job of the pull waits for the other's run to end"
wait_for merge_built_once || true
is "$(merged_starts)" 1 "meanwhile only one merge build has started"
: >"$SCRATCH/go-same"
is "$(both "$A" "$B" waiting rejected error approved passed)" "waiting waiting" \
	"take two by push record and by mail: two jobs, both end waiting"
ok "$(merged_builds | awk '{ s[NR] = $1; e[NR] = $2 } END { exit !(NR == 2 && s[2] >= e[1]) }'; echo $?)" \
	"one after the other, though two build worktrees were free: they share the pull's refs"
head=$(git --git-dir="$TREE" rev-parse "refs/heads/pullgate/$T2")
ok "$([ "$head" = "$(field "$A" merge_commit)" ] || [ "$head" = "$(field "$B" merge_commit)" ]; echo $?)" \
	"the pull's branch is one of the two merges tested, whole"
get "$URL/api/pulls/$A/through"
is "$code $(printf '%s' "$out" | jq -c .through)" "200 [$A]" "each on the head: a pull is approved through itself alone"
get "$URL/api/pulls/999999/through"
is "$code" 404 "and a pull that does not wait has nothing to approve through"
serve_stop

# --- approval: auto; the branch moves under the second pull: it is tested again ----------------------
git --git-dir="$TREE" update-ref refs/heads/master "$BASE"
for r in $(pull_refs); do git --git-dir="$TREE" update-ref -d "$r"; done
sed -i 's/^approval: manual$/approval: auto/' "$SCRATCH/policy.yaml"
worktrees 2 auto
: >"$SCRATCH/builds.log"
export FAKE_BUILD_MEET="$SCRATCH/meet-auto"
: >"$SCRATCH/serve.err"
# take three's merge build waits (once it met take two's) until take two is approved
rm -f "$GO3"
serve_start
deliver auto
is "$(wait_state "$A" approved waiting rejected error passed cancelled)" approved \
	"take two, built at once with take three, is approved first"
: >"$GO3"
is "$(both "$A" "$B" approved waiting rejected error passed cancelled)" "approved approved" \
	"both pulls built at once end approved"
MA=$(field "$A" merge_commit)
MB=$(field "$B" merge_commit)
is "$(field "$A" attempts) $(field "$B" attempts)" "1 2" \
	"take three ran twice: its first approval found the branch moved by take two's"
like "$(cat "$SCRATCH/serve.err")" "pull $B: queued: 'refs/heads/master' moved while the pull was tested; nothing was changed: testing it again on the new head" \
	"the service says so, and queues it again"
is "$(field "$A" merge_base) $(field "$B" merge_base)" "$BASE $MA" \
	"take three's approved merge was tested on take two's, not on the base it first had"
is "$(git --git-dir="$TREE" rev-list --first-parent "$BASE..master" | paste -sd' ' -)" "$MB $MA" \
	"the integration branch holds the two tested merges, each on the head it was tested on"
ok "$(overlap; echo $?)" "and the first two merge builds ran at the same time"
is "$(pull_refs)" "" "no pull's ref is left after approval"
serve_stop
sed -i 's/^approval: auto$/approval: manual/' "$SCRATCH/policy.yaml"
unset FAKE_BUILD_MEET

# --- SIGKILL during two builds, then a restart: nothing left behind -------------------------------
git --git-dir="$TREE" update-ref refs/heads/master "$BASE"
worktrees 2 kill
rm -f "$SLOT1/build.pid" "$SLOT2/build.pid"
FAKE_BUILD=sleep serve_start
deliver kill
wait_for test -s "$SLOT1/build.pid" -a -s "$SLOT2/build.pid" || true
P1=$(cat "$SLOT1/build.pid" 2>/dev/null || true)
P2=$(cat "$SLOT2/build.pid" 2>/dev/null || true)
# running PID...: each is a pid, and its process runs
running() {
	for p in "$@"; do [ -n "$p" ] && kill -0 "$p" 2>/dev/null || return 1; done
}
ok "$(running "$P1" "$P2"; echo $?)" "both merge builds hang, one in each build worktree"
kill -KILL "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null || true
SERVE_PID=
ok "$(running "$P1" "$P2"; echo $?)" "SIGKILL of the service leaves both builds running"
is "$(sqlite3 "$SCRATCH/state-kill/pullgate.db" "select state from pulls order by id" | paste -sd' ' -)" \
	"building building" "and the store says building for both"
: >"$SCRATCH/serve.err"
serve_start
err_log=$(cat "$SCRATCH/serve.err")
like "$err_log" "a run of 'refs/tags/[^']*' died: removed refs/heads/pullgate/" \
	"the restarted service cleans up after the run in the first build worktree"
like "$err_log" "a run of 'refs/tags/[^']*' died in build worktree 2: removed refs/heads/pullgate/" \
	"and after the one in the second"
ok "$(wait_gone "$P1" "$P2"; echo $?)" \
	"stopping the builds both runs left running"
is "$(both "$A" "$B" waiting rejected error approved passed)" "waiting waiting" \
	"both pulls run again to the end"
is "$(field "$A" attempts) $(field "$B" attempts)" "2 2" "once more each, not more"
is "$(pull_refs)" "refs/heads/pullgate/$T2 refs/heads/pullgate/$T3 refs/pullgate/tags/$T2 refs/pullgate/tags/$T3" \
	"the tree holds the waiting pulls' refs and nothing else"
is "$(worktree_list)" "$PULLGATE_HOME/slots/2/work/build $PULLGATE_HOME/work/build $TREE" \
	"and no worktree but the two build worktrees"
ok "$([ ! -e "$PULLGATE_HOME/work/run.journal" ] && [ ! -e "$PULLGATE_HOME/slots/2/work/run.journal" ]; echo $?)" \
	"no run journal is left in either"
is "$(git --git-dir="$TREE" rev-parse master)" "$BASE" "the integration branch has not moved"
serve_stop

# --- pullgate gate takes a free build worktree, or waits for one ---------------------------------------
unset FAKE_BUILD_LOG
gate() {
	PULLGATE_DATADIR="$TOP/tests/fakes" "$PULLGATE" gate --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" --tree "$TREE" \
		--no-approve "$@" "$KREPO" "$T2"
}
# another holds the first build worktree meanwhile (the lock the service takes)
(exec 9>"$PULLGATE_HOME/.kernel.lock" && flock 9 && : >"$SCRATCH/holding" && exec sleep 100000) &
HOLDER=$!
TAP_CLEANUP="$TAP_CLEANUP stop_holder"
stop_holder() { kill "$HOLDER" 2>/dev/null || true; }
wait_for test -e "$SCRATCH/holding"
rm -f "$SLOT2/builds"
set +e
gate --build-worktrees 2 >"$SCRATCH/gate2.out" 2>"$SCRATCH/gate2.err"
rc=$?
set -e
is "$rc" 0 "gate --build-worktrees 2 passes while the first build worktree is taken"
like "$(cat "$SCRATCH/gate2.err")" "\[merge\] build worktree 2 of 2: $PULLGATE_HOME/slots/2/work/build" \
	"it says it took the second"
is "$(tail -n1 "$SLOT2/builds" 2>/dev/null)" "merged" "and built the merge there"
gate >"$SCRATCH/gate1.out" 2>"$SCRATCH/gate1.err" &
G=$!
wait_for grep -qs "waiting for a free build worktree" "$SCRATCH/gate1.err" || true
like "$(cat "$SCRATCH/gate1.err")" "\[merge\] waiting for a free build worktree: the only one is in use" \
	"with one build worktree, taken, gate waits and says so"
ok "$(kill -0 "$G"; echo $?)" "still waiting"
stop_holder
set +e
wait "$G"
rc=$?
set -e
is "$rc" 0 "once it frees, the run goes on and passes"
ok "$(! grep -q "build worktree 1 of" "$SCRATCH/gate1.err"; echo $?)" \
	"with one build worktree, nothing more is said about it"
