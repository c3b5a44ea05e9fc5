#!/bin/sh
# 94-gate-kcidb.t - gate --kcidb FILE: the run's checkout, build and KUnit cases as a KCIDB v5 document, each checked against our schema.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/gate.sh"
plan 66
gate_setup

SCHEMA="$TOP/tests/kcidb/kcidb-v5.schema.json"
# gate TAG [ARG...]: gate the pull TAG of kees.git, not approving
gate() {
	tag=$1
	shift
	run "$PULLGATE" gate --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" \
		--tree "$TREE" --no-approve "$@" "$KEES" "$tag"
}
# check FILE: what python3-jsonschema says of FILE against the schema ("valid", or where it breaks)
check() { python3 "$TOP/tests/lib/kcidb_check.py" "$SCHEMA" "$1" || true; }
# k FILE FILTER: jq -r on a document
k() { jq -r "$2" "$1"; }
# results FILE: each test's "path:status", in order
results() { k "$1" '[.tests[] | "\(.path):\(.status)"] | join(" ")'; }

# --- the schema can fail ----------------------------------------------------------
echo '{"version": {"major": 5, "minor": 0}}' >"$SCRATCH/empty.json"
is "$(check "$SCRATCH/empty.json")" valid "the schema takes a document with nothing in it"
echo '{"checkouts": []}' >"$SCRATCH/noversion.json"
like "$(check "$SCRATCH/noversion.json")" "^invalid at /: .*'version' is a required property" \
	"and refuses one without a version"

# --- a passing run ----------------------------------------------------------------
mkdir -p "$BUILD"
gate "$T2" --kcidb "$SCRATCH/pass.json" --url https://git.kernel.org/pub/scm/linux/kernel/git/kees/linux.git
D="$SCRATCH/pass.json"
is "$rc" 0 "a good pull passes with --kcidb"
is "$(check "$D")" valid "its document is valid KCIDB v5"
is "$(k "$D" '"\(.version.major).\(.version.minor)"')" 5.0 "of schema version 5.0"
is "$(k "$D" '[.checkouts, .builds, .tests | length] | join(" ")')" "1 1 5" \
	"one checkout, one build, the boot and its four cases"
is "$(k "$D" '.checkouts[0] | has("message_id")')" false "without a mail, no Message-Id"
is "$(k "$D" '.checkouts[0].git_commit_hash')" "$(git --git-dir="$KEES" rev-parse "$T2^{commit}")" \
	"the checkout is the pull's commit"
is "$(k "$D" '.checkouts[0].git_repository_url')" \
	https://git.kernel.org/pub/scm/linux/kernel/git/kees/linux.git "at the URL --url names"
is "$(k "$D" '.checkouts[0].git_commit_tags | join(" ")')" "$T2" "named by its tag"
is "$(k "$D" '.checkouts[0].valid')" true "the merge succeeded: the checkout is valid"
is "$(k "$D" '.checkouts[0].misc.merge_base')" "$BASE" "on the integration branch's head"
is "$(k "$D" '[.checkouts[0].origin, .builds[0].origin, .tests[].origin] | unique | join(" ")')" \
	pullgate "every object's origin is pullgate"
like "$(k "$D" '.checkouts[0].id')" "^pullgate:$(git --git-dir="$KEES" rev-parse "$T2")-on-$BASE\$" \
	"the checkout's id is the origin's, the tag object's and the base's"
is "$(k "$D" '.builds[0].checkout_id == .checkouts[0].id')" true "the build is of that checkout"
is "$(k "$D" '[.builds[0].architecture, .builds[0].status] | join(" ")')" "arm64 PASS" \
	"an arm64 build that passed"
like "$(k "$D" '.builds[0].compiler')" "aarch64-linux-gnu-gcc" "with the cross compiler's version"
is "$(k "$D" '.builds[0].log_url')" "file://$PULLGATE_HOME/logs/$KEY/run-1/build.log" \
	"and its log"
is "$(k "$D" '.builds[0].id as $b | [.tests[] | .build_id == $b] | all')" true "every test is of that build"
is "$(results "$D")" "boot:PASS pullgate.define_flex_zeroes:PASS pullgate.randstruct_reorders:PASS \
overflow.u8_u8__u8_overflow_test:PASS overflow.shift_sane_test:PASS" "the boot and each KUnit case as suite.case, passed"
is "$(k "$D" '[.tests[].id] | unique | length')" 5 "each test has an id of its own"
is "$(k "$D" '.tests[0].log_url')" "file://$PULLGATE_HOME/logs/$KEY/run-1/boot.log" "the boot's log is its console"
is "$(k "$D" '[.builds[0].misc.simulated, .tests[0].misc.simulated] | join(" ")')" "true true" \
	"a stand-in's results say they are simulated"
is "$(k "$D" '[.. | select(. == null)] | length')" 0 "nothing is null"

# a broken document is refused: the checks above can fail
jq '.tests[1].status = "BROKEN"' "$D" >"$SCRATCH/broken.json"
like "$(check "$SCRATCH/broken.json")" "^invalid at /tests/1/status: " "a test status outside the enum is refused"
jq '.tests[1].path = "pullgate.a case"' "$D" >"$SCRATCH/broken.json"
like "$(check "$SCRATCH/broken.json")" "^invalid at /tests/1/path: " "a path with a space is refused"
jq '.builds[0].duration = null' "$D" >"$SCRATCH/broken.json"
like "$(check "$SCRATCH/broken.json")" "^invalid at /builds/0/duration: " "a null is refused"
jq '.checkouts[0].origin = "Pull-Gate"' "$D" >"$SCRATCH/broken.json"
like "$(check "$SCRATCH/broken.json")" "^invalid at /checkouts/0/origin: " "an origin outside the pattern is refused"
jq 'del(.builds[0].checkout_id)' "$D" >"$SCRATCH/broken.json"
like "$(check "$SCRATCH/broken.json")" "^invalid at /builds/0: .*'checkout_id' is a required property" \
	"a build without its checkout is refused"
jq '.checkouts[0].git_repository_url = "/srv/git/linux.git"' "$D" >"$SCRATCH/broken.json"
like "$(check "$SCRATCH/broken.json")" "^invalid at /checkouts/0/git_repository_url: " \
	"a repository that is no https:// or git:// URL is refused"
reset_tree

# --- a failing boot ---------------------------------------------------------------
FAKE_BOOT=fail gate "$T2" --kcidb "$SCRATCH/fail.json" --kcidb-origin my_ci
D="$SCRATCH/fail.json"
is "$rc" 1 "a failing KUnit case rejects the pull, --kcidb or not"
is "$(check "$D")" valid "its document is valid too"
is "$(results "$D")" "boot:FAIL pullgate.define_flex_zeroes:PASS pullgate.randstruct_reorders:FAIL \
overflow.u8_u8__u8_overflow_test:PASS overflow.shift_sane_test:PASS" "the boot and the failing case fail, the rest pass"
is "$(k "$D" '[.checkouts[0].origin, .builds[0].origin, .tests[].origin] | unique | join(" ")')" my_ci \
	"--kcidb-origin names the origin"
like "$(k "$D" '.tests[2].id')" "^my_ci:" "and starts every id"
is "$(k "$D" '.checkouts[0].misc.verdict')" reject "the checkout says the pull was rejected"
is "$(k "$D" '.checkouts[0] | has("git_repository_url")')" false \
	"a local repository is no URL KCIDB takes: none is sent"
reset_tree

# --- hostile text: a case name with quotes, a backslash, an escape, a dot and a bell -----
HOSTILE=$(printf 'evil"q\047\\\033[31m.dot\007x')
FAKE_KUNIT_FAIL=$HOSTILE gate "$T2" --kcidb "$SCRATCH/hostile.json"
D="$SCRATCH/hostile.json"
is "$rc" 1 "a hostile case name that fails rejects the pull"
is "$(check "$D")" valid "the document is still valid KCIDB"
is "$(k "$D" '.tests[] | select(.status == "FAIL" and .path != "boot") | .path')" \
	"pullgate.evil_q____31m_dot_x" "the name is reduced to the schema's characters, its dot too"
is "$(k "$D" '.tests[] | select(.path == "pullgate.evil_q____31m_dot_x") | .misc.ktap_path')" \
	"pullgate.$HOSTILE" "the name as printed is kept in misc, byte for byte"
reset_tree

# --- a pull that came by mail: its Message-Id and subject --------------------------------
M="$SCRATCH/mail"
"$TOP/fixtures/mail.sh" "$FX" "$M" >/dev/null
gate "$T2" --stages merge --pull-request "$M/take2.mail" --kcidb "$SCRATCH/mail.json"
is "$rc $(check "$SCRATCH/mail.json")" "0 valid" "a pull with its request mail gives a valid document"
is "$(k "$SCRATCH/mail.json" '.checkouts[0].message_id')" "202506010930.fix1@keescook" \
	"its checkout carries the mail's Message-Id, without the brackets"
like "$(k "$SCRATCH/mail.json" '.checkouts[0].comment')" "^\\[GIT PULL\\]" "and its subject"

# --- a pull verify rejects: only the checkout, decided by nothing after verify -------------
gate "$T1" --kcidb "$SCRATCH/take1.json"
D="$SCRATCH/take1.json"
is "$rc" 1 "take one is rejected by verify"
is "$(check "$D")" valid "its document is valid"
is "$(k "$D" '[(.checkouts | length), (.builds // [] | length), (.tests // [] | length)] | join(" ")')" "1 0 0" \
	"it holds the checkout alone: nothing was built or booted"
is "$(k "$D" '.checkouts[0] | has("valid")')" false "no merge was tried: validity is not claimed"
is "$(k "$D" '.checkouts[0].misc.verdict')" reject "the verdict is reject"
reset_tree

# --- a build that fails: the build, no tests ---------------------------------------------
FAKE_BUILD=error gate "$T2" --kcidb "$SCRATCH/build.json"
D="$SCRATCH/build.json"
is "$rc" 1 "a build error rejects the pull"
is "$(check "$D")" valid "its document is valid"
is "$(k "$D" '.builds[0].status')" FAIL "the build failed"
is "$(k "$D" '.tests // [] | length')" 0 "nothing was booted: no tests"
reset_tree

# --- what is refused, and what could not decide ----------------------------------------
gate "$T2" --kcidb "$SCRATCH/no/such/dir/k.json"
is "$rc" 2 "a --kcidb file in a directory that does not exist is a usage error"
like "$err" "^error: --kcidb wants a file in a directory that exists, not '$SCRATCH/no/such/dir/k.json'\$" \
	"saying so on one line"
gate "$T2" --kcidb "$SCRATCH"
is "$rc" 2 "a directory is no --kcidb file"
gate "$T2" --kcidb ""
is "$rc" 2 "nor is an empty name"
gate "$T2" --kcidb "$SCRATCH/x.json" --kcidb-origin Pull-Gate
is "$rc" 2 "an origin outside KCIDB's pattern is a usage error"
like "$err" "^error: --kcidb-origin wants 1 to 64 of a-z, 0-9 and '_' \\(a KCIDB origin\\), not 'Pull-Gate'\$" \
	"naming the pattern"
gate "$T2" --kcidb-origin my_ci
is "$rc" 2 "--kcidb-origin without --kcidb is a usage error"
printf '%s %s\n' "$KEES" "$T2" >"$SCRATCH/queue"
run "$PULLGATE" gate --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" --tree "$TREE" \
	--queue "$SCRATCH/queue" --kcidb "$SCRATCH/queue.json"
is "$rc" 2 "--kcidb with --queue is refused"
like "$err" "^error: --kcidb is one pull's, not a queue's" "a queue is several checkouts: gate each pull"
ok "$([ ! -e "$SCRATCH/queue.json" ]; echo $?)" "and nothing is written"
gate no-such-tag --kcidb "$SCRATCH/undecided.json"
is "$rc" 3 "a run that cannot decide exits 3"
ok "$([ ! -e "$SCRATCH/undecided.json" ]; echo $?)" "and writes no document"
is "$(master)" "$BASE" "no run moved the integration branch"
