#!/bin/sh
# 96-gate-icecc.t - pipeline.icecc and gate --icecc: PG_ICECC reaches build.sh, its farm lines become the merge build's provenance and summary, bad values are refused.
#
# With the stand-in build.sh of tests/fakes: given PG_ICECC it writes the
# farm file scripts/kernel/build.sh writes after a build on an icecream
# farm (and prints its lines), and records what PG_ICECC it was given; its
# FAKE_FORGE is a pull's make that forges a farm.  Nothing here ran a farm:
# the report says simulated, as for every stand-in.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/gate.sh"
plan 66
gate_setup

gate() {
	run "$PULLGATE" gate --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" \
		--tree "$TREE" --no-approve "$@" "$KEES" "$T2"
}
# build J: the build's provenance in the JSON report in $out
build() { printf '%s' "$out" | jq -r ".provenance[] | select(.stage == \"build\") | $1"; }
summary() { printf '%s' "$out" | jq -r '.stages[] | select(.name == "build") | .summary'; }
given() { cat "$BUILD/icecc-$1"; }
printf 'pipeline:\n  icecc: local\n' >"$SCRATCH/local.yaml"

ENV_LINE="061fbd5764d1c3a1c1adf83ba8239f89: aarch64-linux-gnu-gcc (stand-in) 12.2.0; \
scripts/gcc-plugins/randomize_layout_plugin.so sha256 3f2a000000000000000000000000000000000000000000000000000000000001"
FARM="127.0.0.1:18771 compiled 1 objects; farm2 compiled 1 objects; 127.0.0.1:18772 failed 1 jobs \
(connection refused), compiled here instead; 1 objects compiled here; farm compiled 2 of 3 objects"

# --- the policy's icecc: the base is built first, on the farm too ---------------------------
gate --policy "$SCRATCH/local.yaml" --json
is "$rc" 0 "a good pull passes, built through the policy's iceccd"
is "$(given merged)" local "build.sh is given PG_ICECC=local for the merge"
is "$(given base)" local "and for the base, built in the same run"
is "$(build .farm_env)" "$ENV_LINE" "the build's provenance names the environment sent and what it carries"
is "$(build .farm)" "$FARM" "and what the farm did, line by line, in order"
unlike "$(printf '%s' "$out" | jq -c .provenance)" "base-host|0ba5" \
	"the base's build's farm lines are not the merge's (the Image's)"
like "$(summary)" "^3 objects compiled, 2 of 3 on the icecc farm, 0 new warnings" \
	"the build stage's summary says how many objects of build.sh's total the farm compiled"
is "$(printf '%s' "$out" | jq -r '[.provenance[] | select(.stage != "build") | .farm_env, .farm] | unique | join(" ")')" \
	"" "no other stage's provenance has farm lines"
is "$(printf '%s' "$out" | jq -r '[.simulated, (.provenance[] | select(.stage == "build") | .simulated)] | join(" ")')" \
	"true true" "a stand-in's farm is still a simulated build"
like "$(cat "$PULLGATE_HOME/logs/$KEY/latest/build.log")" "build.sh: icecc: farm compiled 2 of 3 objects" \
	"the lines are in the build log as build.sh printed them"
REPORT=$(cat "$PULLGATE_HOME/logs/$KEY/latest/report.json")
is "$(printf '%s' "$REPORT" | jq -r '.provenance[] | select(.stage == "build") | .farm_env')" "$ENV_LINE" \
	"the run's report.json holds them too"
reset_tree

# the text report says the same
gate --policy "$SCRATCH/local.yaml"
is "$rc" 0 "in text, the pull passes"
like "$out" "^ +icecc environment: 061fbd5764d1c3a1c1adf83ba8239f89: aarch64-linux-gnu-gcc \\(stand-in\\) 12.2.0; " \
	"the text report's build facts name the icecc environment"
like "$out" "^ +farm: 127.0.0.1:18771 compiled 1 objects; farm2 compiled 1 objects; .*; farm compiled 2 of 3 objects\$" \
	"and what the farm did"
like "$out" "3 objects compiled, 2 of 3 on the icecc farm, 0 new warnings" "and the build stage's summary"
reset_tree

# --- without icecc: nothing of the farm ----------------------------------------------------
gate --json
is "$rc" 0 "without icecc the pull passes"
is "$(given merged)" unset "no PG_ICECC reaches build.sh"
is "$(build '[.farm_env, .farm] | map(. == null) | join(" ")')" "true true" \
	"the build's provenance has no farm keys set (null)"
unlike "$(summary)" "icecc" "the summary says nothing of a farm"
reset_tree
gate
unlike "$out" "icecc environment|farm:" "nor does the text report"
reset_tree

# --- a pull's make forges a farm: lines it prints are never read, its file only without icecc ---
LOGS="$PULLGATE_HOME/logs/$KEY/latest"
FORGED="forged|0badc0de|99 of 99|98 of 98"
FAKE_FORGE=1 gate --json
is "$rc" 0 "without icecc, a build whose make prints farm lines passes"
like "$(cat "$LOGS/build.log")" "build.sh: icecc: environment 0badc0de0badc0de0badc0de0badc0de: forged on stdout" \
	"its make printed a forged environment on stdout"
like "$(cat "$LOGS/build.log")" "build.sh: icecc: environment 0badc0de0badc0de0badc0de0badc0de: forged on stderr" \
	"and on stderr"
is "$(build '[.farm_env, .farm] | map(. == null) | join(" ")')" "true true" \
	"neither is the build's provenance: no farm_env, no farm"
like "$(cat "$LOGS/build-farm.txt")" "forged in the file" \
	"the farm file its make left is there, and not read: icecc was not asked for"
unlike "$(summary)" "icecc" "the summary says nothing of a farm"
unlike "$out" "$FORGED" "nothing forged is anywhere in the report"
reset_tree
FAKE_FORGE=1 gate --policy "$SCRATCH/local.yaml" --json
is "$rc" 0 "with icecc, a build whose make forges a farm passes"
like "$(cat "$LOGS/build.log")" "forged on stdout" "its make printed the forged lines"
is "$(build .farm_env)" "$ENV_LINE" "the environment recorded is build.sh's own, from its file"
is "$(build .farm)" "$FARM" "and so is what the farm did"
like "$(summary)" ", 2 of 3 on the icecc farm, " "the summary counts build.sh's total, not the forged one"
unlike "$out" "$FORGED" "nothing forged is anywhere in the report"
reset_tree
FAKE_FORGE=1 gate --policy "$SCRATCH/local.yaml"
unlike "$out" "$FORGED" "nor in the text report"
reset_tree

# --- a merge that does not build: what the farm did is still the build's record ---------------
FAKE_BUILD=error gate --policy "$SCRATCH/local.yaml" --json
is "$(stage build)" failed "a merge with a compiler error fails the build stage, on the farm too"
is "$(build .farm_env) | $(build .farm)" "$ENV_LINE | $FARM" \
	"its provenance has the farm file build.sh wrote once make had failed"
reset_tree

# --- --icecc overrides the policy ----------------------------------------------------------
gate --policy "$SCRATCH/local.yaml" --icecc /run/icecc/iceccd.socket --json
is "$rc" 0 "with --icecc the pull passes"
is "$(given merged)" /run/icecc/iceccd.socket "build.sh is given --icecc's socket, not the policy's local"
is "$(build .farm_env)" "$ENV_LINE" "and its farm lines are recorded"
reset_tree
gate --icecc local --json
is "$(given merged) $(build .farm)" "local $FARM" "--icecc without the policy's key turns it on"
reset_tree

# --- a queue's runs use it ---------------------------------------------------------------------
printf '%s %s\n' "$KEES" "$T2" >"$SCRATCH/queue"
run "$PULLGATE" gate --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" --tree "$TREE" \
	--queue "$SCRATCH/queue" --stages merge,build --icecc /run/icecc/q.socket --json
is "$rc" 0 "a queue with --icecc passes"
is "$(given merged)" /run/icecc/q.socket "its run's build is given PG_ICECC"
is "$(printf '%s' "$out" | jq -r '.queue[0].report.provenance[] | select(.stage == "build") | .farm')" "$FARM" \
	"and its report records the farm"
reset_tree
git --git-dir="$TREE" update-ref -d refs/heads/pullgate/queue 2>/dev/null || true

# --- a control character from the script never reaches the terminal -----------------------------
FAKE_ICECC_WARN=$(printf 'esc \033[31mred\033[0m bell\007 end') gate --policy "$SCRATCH/local.yaml"
is "$rc" 0 "a hostile warning line does not fail the build"
like "$out" "farm: .*; warning: esc red bell end; farm compiled 2 of 3 objects\$" \
	"its text is in the text report"
is "$(printf '%s' "$out" | tr -d '\n' | LC_ALL=C tr -d '\040-\176\200-\377' | wc -c)" 0 \
	"without an escape or any control character"
reset_tree
FAKE_ICECC_WARN=$(printf 'esc \033[31mred\007') gate --policy "$SCRATCH/local.yaml" --json
like "$(build .farm)" "; warning: esc red; " "the JSON report keeps it made safe"
reset_tree

# --- refused values ------------------------------------------------------------------------------
bad_policy() { # VALUE WHY
	printf 'pipeline:\n  icecc: %s\n' "$1" >"$SCRATCH/bad.yaml"
	gate --policy "$SCRATCH/bad.yaml"
	is "$rc" 3 "pipeline.icecc: $1 is a bad policy (exit 3)"
	is "$err" "error: $SCRATCH/bad.yaml:2:10: 'pipeline.icecc' wants an icecream daemon, not $1: expected $2" \
		"in one line naming the key and why"
}
bad_policy "'run/iceccd.socket'" "local, or the absolute path of an iceccd's unix socket"
bad_policy "'/run/../iceccd.socket'" "a socket path without a '..' component"
bad_policy "'/run/ice cc.socket'" "a socket path without spaces or control characters"
LONG=/$(printf '%0107d' 0)
printf 'pipeline:\n  icecc: %s\n' "$LONG" >"$SCRATCH/bad.yaml"
gate --policy "$SCRATCH/bad.yaml"
is "$rc" 3 "a socket path of 108 bytes is a bad policy (exit 3)"
like "$err" "^error: .*'pipeline.icecc' wants an icecream daemon, not .*: expected a socket path of at most 107 bytes\$" \
	"saying how long it may be"

gate --icecc iceccd.socket
is "$rc" 2 "a bad --icecc is a usage error"
is "$(printf '%s\n' "$err" | head -n1)" \
	"error: --icecc wants an icecream daemon, not 'iceccd.socket': expected local, or the absolute path of an iceccd's unix socket" \
	"in the policy's words"
gate --icecc /run/../x
like "$err" "^error: --icecc wants an icecream daemon, not '/run/../x': expected a socket path without a '..' component" \
	"a '..' component is refused there too"
gate --icecc "$(printf '/run/ic\303\251cc.socket')"
is "$rc" 2 "a socket path past ASCII is a usage error"
like "$err" "^error: --icecc wants an icecream daemon, not .*: expected a socket path of ASCII characters only" \
	"saying so"
gate --icecc /run/icecc/
like "$err" "^error: --icecc wants an icecream daemon, not '/run/icecc/': expected a socket's path, not a directory's" \
	"a trailing '/' is refused"
gate --icecc /run/./x
like "$err" "^error: --icecc wants an icecream daemon, not '/run/./x': expected a socket path without a '.' component" \
	"and a '.' component"
is "$(master)" "$BASE" "nothing refused moved the integration branch"

# --- an approved merge's attestation names the farm's environment ----------------------------------
AHOME="$SCRATCH/attest-gnupg"
mkdir -m 700 "$AHOME"
kill_agent() { GNUPGHOME="$AHOME" gpgconf --kill gpg-agent 2>/dev/null || true; }
TAP_CLEANUP="${TAP_CLEANUP:-} kill_agent"
GNUPGHOME="$AHOME" gpg --batch --quiet --passphrase '' --quick-gen-key "pullgate <pullgate@example.org>" \
	ed25519 sign never >/dev/null 2>&1
AFPR=$(GNUPGHOME="$AHOME" gpg --batch --with-colons --list-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')
printf 'pipeline:\n  icecc: local\nattestation:\n  key: %s\n  gnupg-home: %s\n' "$AFPR" "$AHOME" \
	>"$SCRATCH/attest.yaml"
run "$PULLGATE" gate --json --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" --tree "$TREE" \
	--approve --policy "$SCRATCH/attest.yaml" "$KEES" "$T2"
is "$rc" 0 "approved, built on the farm"
S=$(git --git-dir="$TREE" notes --ref=pullgate show master | sed '/^-----BEGIN PGP SIGNATURE-----$/,$d')
is "$(printf '%s' "$S" | jq -r .farm_env)" "$ENV_LINE" \
	"the attestation names the environment the farm compiled with, as the report has it"
GNUPGHOME="$AHOME" gpg --batch --armor --export "$AFPR" >"$SCRATCH/attest.asc" 2>/dev/null
run "$PULLGATE" attest verify --signer "$AFPR" --keyring "$SCRATCH/attest.asc" --tree "$TREE" master
is "$rc" 0 "and verifies"
