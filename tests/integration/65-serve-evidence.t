#!/bin/sh
# 65-serve-evidence.t - serve keeps the gate's rules: the push record's tag only, approve and reject serialised, cleanup at start-up after a run killed in the build or the boot, runs marked simulated.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
. "$(dirname "$0")/../lib/gate.sh"
plan 53
serve_setup
# the maintainer's identity for merges
sed -i 's/^  verify-workers: 2$/  verify-workers: 2\n  merge-name: Linus Torvalds\n  merge-email: torvalds@linux-foundation.org/' "$CONFIG"
T1=hardening-v6.16-rc1-fix1
T2=hardening-v6.16-rc1-fix1-take2
BASE=$(git --git-dir="$TREE" rev-parse master)
T1_OBJ=$(git --git-dir="$KREPO" rev-parse "refs/tags/$T1")
T2_OBJ=$(git --git-dir="$KREPO" rev-parse "refs/tags/$T2")
BUILD="$PULLGATE_HOME/build/arm64-gcc"
state() { curl -s "$URL/api/pulls/$1" | jq -r .state; }
# record FILE TAG ID: a push record of TAG saying it now points at ID
record() {
	printf '{ "repo": "%s", "user": "kees", "changes": [ { "ref": "refs/tags/%s", "old": "%s", "new": "%s" } ] }\n' \
		"$KEES_NAME" "$2" 0000000000000000000000000000000000000000 "$3" >"$1"
}
login() {
	curl -s -c "$SCRATCH/jar" -o "$SCRATCH/login.json" -X POST -H 'Content-Type: application/json' \
		-d "{\"user\":\"maintainer\",\"password\":\"$SERVE_PASSWORD\"}" "$URL/api/login"
	CSRF=$(jq -r .csrf "$SCRATCH/login.json")
}
master_moved() { [ "$(master)" != "$BASE" ]; }

# --- with approval: auto, only the tag object the push record named is merged ------------------
sed 's/^approval: manual$/approval: auto/' "$SCRATCH/policy.yaml" >"$SCRATCH/auto.yaml"
cp "$SCRATCH/policy.yaml" "$SCRATCH/manual.yaml"
cp "$SCRATCH/auto.yaml" "$SCRATCH/policy.yaml"
serve_start
# the record says take two points at take one's tag object: not what the repository has
record "$SCRATCH/wrong.json" "$T2" "$T1_OBJ"
hook push "$SCRATCH/wrong.json" wrong-id
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" error approved rejected waiting passed)" error \
	"a push record naming another tag object ends in error"
like "$(curl -s "$URL/api/pulls/$ID" | jq -r .message)" "not the ${T1_OBJ%????????????????????????????} the push record names" \
	"saying the tag is not the one the record named"
is "$(master)" "$BASE" "and nothing was approved: the branch did not move"
is "$(pull_refs)" "" "nor was anything merged"
# the sender pushes the tag again while the pull is built
record "$SCRATCH/take2.json" "$T2" "$T2_OBJ"
serve_kill
FAKE_BUILD=retag FAKE_SENDER="$KREPO" FAKE_RETAG="$T2" FAKE_RETAG_TO="$T1_OBJ" serve_start
hook push "$SCRATCH/take2.json" retag
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" error approved rejected waiting passed)" error \
	"a tag pushed again between verify and approval: not approved"
like "$(curl -s "$URL/api/pulls/$ID" | jq -r .message)" "moved since it was verified" "saying the tag moved"
is "$(master)" "$BASE" "the branch did not move"
git --git-dir="$KREPO" update-ref "refs/tags/$T2" "$T2_OBJ"
serve_kill

# --- a maintainer's approval and a reject of the same pull: one wins, the branch agrees --------
git --git-dir="$TREE" update-ref refs/heads/master "$BASE"
cp "$SCRATCH/manual.yaml" "$SCRATCH/policy.yaml"
# started with another public base, then reloaded to the default one: the merge must take the reloaded one
cp "$CONFIG" "$SCRATCH/serve-default.yaml"
sed -i 's|^repositories:$|repositories:\n  public-base: git://old.example.org/|' "$CONFIG"
# the service stops itself when the reject is about to wait for the approval (a test point)
PULLGATE_TEST_STOP=reject:before-lock serve_start
reloads() { grep -c "reloaded $CONFIG" "$SCRATCH/serve.err" || true; }
_reloaded() { [ "$(reloads)" -gt "$1" ]; }
before=$(reloads)
cp "$SCRATCH/serve-default.yaml" "$CONFIG"
kill -HUP "$SERVE_PID"
ok "$(wait_for _reloaded "$before"; echo $?)" "the service reloads a configuration whose public base changed"
hook push "$SCRATCH/take2.json" race
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" waiting error rejected)" waiting "take two waits for the maintainer"
get "$URL/api/pulls/$ID"
MERGE=$(printf '%s' "$out" | jq -r .merge_commit)
RUN_DIR=$(printf '%s' "$out" | jq -r .report.run_dir)
is "$RUN_DIR" "$PULLGATE_HOME/logs/job-$ID/run-2" "the kernel run had a run directory of its own (verify had run-1)"
# hold the approval after the branch moved: its notice is written into a FIFO nobody reads yet
for d in "$RUN_DIR" "$PULLGATE_HOME/logs/job-$ID"; do
	[ ! -d "$d" ] || mkfifo "$d/notice.txt.tmp.$SERVE_PID"
done
login
curl -s -m "$PATIENCE" -b "$SCRATCH/jar" -o "$SCRATCH/approve.json" -w '%{http_code}' -X POST \
	-H "X-CSRF-Token: $CSRF" "$URL/api/pulls/$ID/approve" >"$SCRATCH/approve.code" &
A=$!
wait_for master_moved
curl -s -m "$PATIENCE" -b "$SCRATCH/jar" -o "$SCRATCH/reject.json" -w '%{http_code}' -X POST \
	-H "X-CSRF-Token: $CSRF" "$URL/api/pulls/$ID/reject" >"$SCRATCH/reject.code" &
R=$!
ok "$(wait_stopped "$SERVE_PID"; echo $?)" "the reject arrives while the approval is held after the branch moved"
kill -CONT "$SERVE_PID"
READERS=
for d in "$RUN_DIR" "$PULLGATE_HOME/logs/job-$ID"; do
	[ ! -p "$d/notice.txt.tmp.$SERVE_PID" ] && continue
	cat "$d/notice.txt.tmp.$SERVE_PID" >/dev/null 2>&1 &
	READERS="$READERS $!"
done
wait "$A" || true
wait "$R" || true
# the FIFO the approval did not write to has a reader still waiting
for p in $READERS; do kill "$p" 2>/dev/null || true; done
is "$(cat "$SCRATCH/approve.code") $(cat "$SCRATCH/reject.code")" "200 409" \
	"the approval that began first wins; the reject waits for it, then finds the pull approved"
is "$(state "$ID")" approved "the pull is approved"
is "$(master)" "$MERGE" "and the branch is at its merge: the store and the tree agree"
get "$URL/api/pulls/$ID"
is "$(printf '%s' "$out" | jq -r '[.decisions[].action] | join(" ")')" "approving approve" \
	"only the approval is recorded (before the branch moved, and once it had)"
is "$(pull_refs)" "" "an approved pull leaves no ref behind"

# --- the merge as a push record brings it: the public URL and the maintainer ------------------
is "$(git --git-dir="$TREE" log -1 --format=%s "$MERGE")" \
	"Merge tag '$T2' of git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux" \
	"the merge names the repository's public URL (the reloaded configuration's), not the mirror it was fetched from"
is "$(git --git-dir="$TREE" log -1 --format='%an <%ae>' "$MERGE")" \
	"Linus Torvalds <torvalds@linux-foundation.org>" "and is the maintainer's, as configured"

# --- the dashboard: simulated, base against merge, provenance ---------------------------------
get "$URL/pulls/$ID"
like "$out" '<span class="simulated" id="simulated" title="stand-in build and boot scripts ran' \
	"the pull's page shows a simulated badge"
like "$out" '<section id="base-vs-merge"><h2>KUnit: base against merge</h2>' \
	"and the KUnit suites of the base against the merge"
like "$out" '<tr class="suite suite-ok"><th>overflow</th><td>2 passed, 0 failed, 0 skipped, 0 crashed</td><td>2 passed, 0 failed, 0 skipped, 0 crashed</td><td>ok</td></tr>' \
	"a row per suite"
like "$out" '<section id="provenance"><h2>Provenance</h2>' "and what ran in each stage"
like "$out" '<section id="selection"><h2>KUnit selection</h2>$' "and the KUnit selection"
like "$out" '^<p class="note">nothing added beyond the baseline: no .kunitconfig or Kconfig test option covers the 4 changed paths</p>$' \
	"which says when it adds nothing beyond the baseline"
like "$out" "tests/fakes/scripts/kernel/boot.sh</code> sha256 <code>$(sha256sum <"$TOP/tests/fakes/scripts/kernel/boot.sh" | cut -d' ' -f1)</code>" \
	"naming each script by its SHA-256"
get "$URL/api/pulls/$ID"
is "$(printf '%s' "$out" | jq -r .report.simulated)" true "the API's report says simulated"
like "$(printf '%s' "$out" | jq -r '.decisions[0].note')" "approved by maintainer" "(the approval's note)"

# --- a maintainer's approval too is only of the tag object that was verified ------------------
git --git-dir="$TREE" update-ref refs/heads/master "$BASE"
hook push "$SCRATCH/take2.json" moved-before-approval
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" waiting error rejected)" waiting "take two waits for the maintainer again"
git --git-dir="$KREPO" update-ref "refs/tags/$T2" "$T1_OBJ"
curl -s -m "$PATIENCE" -b "$SCRATCH/jar" -o "$SCRATCH/approve.json" -w '%{http_code}' -X POST \
	-H "X-CSRF-Token: $CSRF" "$URL/api/pulls/$ID/approve" >"$SCRATCH/approve.code"
is "$(cat "$SCRATCH/approve.code")" 409 "the tag was pushed again before the maintainer approved: refused"
like "$(jq -r .error "$SCRATCH/approve.json")" "moved since it was verified.*tested again" \
	"saying the tag moved, and that the pull is tested again"
is "$(master)" "$BASE" "the branch did not move"
is "$(wait_state "$ID" error approved waiting)" error \
	"tested again, the tag is not the object the push record named"
git --git-dir="$KREPO" update-ref "refs/tags/$T2" "$T2_OBJ"
reset_tree
serve_kill

# --- serve cleans up, at start-up, after a gate run that died ----------------------------------
# killed_in STATE WHAT PIDFILE DELIVERY: serve runs a pull whose WHAT (a stand-in set in the
# environment by the caller's serve_start) hangs in STATE, writing its pid to PIDFILE; serve is
# killed there, then started again with no kernel stage: only the start-up cleanup can remove
# what the run left
killed_in() {
	hook push "$SCRATCH/take2.json" "$4"
	ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
	is "$(wait_state "$ID" "$1")" "$1" "killed while $1: the pull got there (a $2 that hangs)"
	wait_for test -s "$3"
	kill -KILL "$SERVE_PID"
	wait "$SERVE_PID" 2>/dev/null || true
	SERVE_PID=
	PID=$(cat "$3")
	is "$(pull_refs)" "refs/heads/pullgate/$T2 refs/pullgate/tags/$T2" "killed while $1: the run left its refs"
	ok "$([ -n "$PID" ] && kill -0 "$PID"; echo $?)" "killed while $1: and its $2 running"
	sed -i 's/^  verify-workers: 2$/  verify-workers: 2\n  stages: []/' "$CONFIG"
	: >"$SCRATCH/serve.err"
	serve_start
	like "$(cat "$SCRATCH/serve.err")" "a run of 'refs/tags/$T2' died: removed refs/heads/pullgate/$T2 and its tag's ref from '$TREE', and stopped the script it left running" \
		"killed while $1: serve says, at start-up, that it cleaned up after the run that died"
	is "$(pull_refs)" "" "killed while $1: its refs are gone"
	ok "$(wait_gone "$PID"; echo $?)" "killed while $1: and its $2 was stopped"
	ok "$([ ! -e "$PULLGATE_HOME/work/run.journal" ]; echo $?)" "killed while $1: and its journal removed"
	is "$(wait_state "$ID" verified error)" verified "killed while $1: the pull runs again (verify only now)"
	is "$(curl -s "$URL/api/queue" | jq '.queue | length')" 0 \
		"killed while $1: verify only, a verified pull is decided: no merge window holds it"
	is "$(curl -s "$URL/" | grep -c 'id="window"')" 0 "killed while $1: and the front page shows none"
	serve_kill
	sed -i '/^  stages: \[\]$/d' "$CONFIG"
}
git --git-dir="$TREE" update-ref refs/heads/master "$BASE"
rm -f "$BUILD/merged-built-once" "$BUILD/build.pid" "$BUILD/boot.pid"
FAKE_BUILD=sleep serve_start
killed_in building build "$BUILD/build.pid" killed-in-build
FAKE_BOOT=sleep serve_start
killed_in booting boot "$BUILD/boot.pid" killed-in-boot
serve_start
serve_stop
is "$SERVE_RC" 0 "the server stops cleanly"
