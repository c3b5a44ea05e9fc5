#!/bin/sh
# 61-gate-evidence.t - a boot passes only on this run's evidence: hostile boot scripts are refused; results are judged against the base's boot.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/gate.sh"
plan 95
gate_setup

gate() {
	run "$PULLGATE" gate --json --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" \
		--tree "$TREE" "$@" "$KEES" "$T2"
}
# the base's kept boot, forgotten: the next run boots the base again (FAKE_BASE_BOOT)
forget_base() { rm -rf "$BUILD"/base-boot-*; }
# refused NAME EVIDENCE: the last gate refused the pull at the boot stage, saying EVIDENCE
refused() {
	is "$rc" 1 "$1: the pull is refused (exit 1)"
	is "$(stage boot)" failed "$1: at the boot stage"
	like "$(findings boot-evidence)" "^error: no evidence of a good boot: $2" "$1: $2"
	is "$(master)" "$BASE" "$1: the integration branch does not move"
	is "$(stage approve)" "" "$1: nothing is approved"
	reset_tree
}

# --- a clean boot passes, and the base is booted once per base ------------------------------
mkdir -p "$BUILD"
: >"$BUILD/boots"
gate --no-approve
is "$rc" 0 "a good boot of the merge passes"
is "$(stage boot)" passed "at the boot stage"
is "$(printf '%s' "$out" | jq -r '[.suites[] | "\(.name):\(.base.passed)/\(.merge.passed):\(.verdict)"] | join(" ")')" \
	"pullgate:2/2:ok overflow:2/2:ok" "the report has each suite on the base and the merge"
NONCE=$(printf '%s' "$out" | jq -r '(.provenance // [])[] | select(.stage == "boot") | .nonce')
like "$NONCE" '^[0-9a-f]{32}$' "the boot had a random nonce of its own"
like "$(cat "$(printf '%s' "$out" | jq -r '.stages[] | select(.name == "boot") | .log')")" \
	"pullgate-init: done nonce=$NONCE\$" "which its console's marker carries"
is "$(printf '%s' "$out" | jq -r '.run_dir')" "$PULLGATE_HOME/logs/$KEY/run-1" \
	"the run wrote into a fresh run directory"
reset_tree
gate --no-approve
is "$(printf '%s' "$out" | jq -r '.run_dir')" "$PULLGATE_HOME/logs/$KEY/run-2" "a second run gets another"
is "$(readlink "$PULLGATE_HOME/logs/$KEY/latest")" run-2 "and latest points at it"
is "$(sort "$BUILD/boots" | uniq -c | awk '{print $2 ":" $1}' | paste -sd' ' -)" "base:1 merged:2" \
	"the base was booted once, its boot kept for the second run"
is "$(printf '%s' "$out" | jq -r '.provenance[] | select(.stage == "base-boot") | .cached')" true \
	"and the report says the base's boot was kept from before"
reset_tree

# --- hostile boot scripts: each is refused --------------------------------------------------
# the issue's reproduction: "KTAP version 1", "1..0", and exit 1
FAKE_BOOT=empty FAKE_BOOT_EXIT=1 gate --approve
refused "1..0 and exit 1" "boot.sh exited with status 1"
like "$(findings boot-evidence)" "no test passed" "1..0 and exit 1: and no test passed"
FAKE_BOOT=empty gate --approve
refused "1..0" "no test passed"
FAKE_BOOT_EXIT=1 gate --approve
refused "exit 1 with a good log" "boot.sh exited with status 1"
FAKE_BOOT=truncated gate --approve
refused "a truncated plan" "the KTAP plan announced 2 results and 1 arrived"
FAKE_BOOT=nomarker gate --approve
refused "no marker" "the init's marker \(pullgate-init: done\) never appeared"
FAKE_BOOT=noktap gate --approve
refused "the marker but no KTAP" "the console shows no KTAP output"
FAKE_BOOT=wrongnonce gate --approve
refused "another boot's marker" "the init's marker carries nonce 0123456789abcdef0123456789abcdef, not this boot's"
FAKE_BOOT=nopoweroff gate --approve
refused "no power-off" "the kernel did not power off after the init's marker"
# a stale log: the script copies an earlier run's good console
FAKE_BOOT=stale gate --approve
refused "a stale log" "the init's marker carries nonce [0-9a-f]{32}, not this boot's"
# the issue's second reproduction: a good run, then a boot script that fails at once
gate --no-approve
is "$rc" 0 "a good run"
reset_tree
FAKE_BOOT=nolog gate --approve
refused "a boot script that stops before writing a console" "boot.sh exited with status 1"
like "$(findings boot-evidence)" "boot.sh wrote no console log" "and none is read in its place"
FAKE_BOOT=vanish gate --approve
refused "a vanished suite" "suite overflow ran on the base and did not report on the merge"
is "$(printf '%s' "$out" | jq -r '.suites[] | select(.name == "overflow") | "\(.base.passed) \(.merge) \(.verdict)"')" \
	"2 null vanished" "the suite table shows it on the base only"
is "$(git --git-dir="$TREE" for-each-ref refs/heads/pullgate refs/pullgate | wc -l | tr -d ' ')" 0 \
	"no refused run leaves a ref behind"

# --- splats and failures against the base ---------------------------------------------------
FAKE_BOOT=splat gate --approve
is "$rc" 1 "a new splat: refused"
is "$(findings kernel-splat)" "error: warn: WARNING: CPU: 0 PID: 1 at lib/overflow.c:10 probe+0x10/0x20" \
	"a new splat is an error"
is "$(master)" "$BASE" "a new splat: the branch does not move"
# a splat on the base only is not the merge's doing: the merge is judged on its own
# console, which is clean and complete, so it passes; the base's splat is in the report
forget_base
FAKE_BASE_BOOT=splat gate --approve
is "$rc" 0 "a splat on the base only: the merge's own evidence is clean, so it passes"
is "$(findings kernel-splat)" "" "and the base's splat is not held against it"
is "$(printf '%s' "$out" | jq -r .base_boot)" "4 passed, 0 failed, 0 skipped, 0 crashed, 1 splats" \
	"the report says what the base's boot showed"
is "$(master)" "$(printf '%s' "$out" | jq -r .merge_commit)" "it is approved"
reset_tree
# the same splat on both (the base's boot is kept: it still shows it)
FAKE_BOOT=splat gate --approve
is "$rc" 0 "a splat the base shows too does not block"
is "$(findings kernel-splat)" \
	"warning: warn: WARNING: CPU: 0 PID: 1 at lib/overflow.c:10 probe+0x10/0x20 (pre-existing: the base's boot shows it too)" \
	"it is reported as pre-existing, a warning"
reset_tree
forget_base
FAKE_BASE_BOOT=fail FAKE_BOOT=fail gate --no-approve
is "$rc" 0 "a KUnit failure the base has too does not block"
is "$(findings ktap-failure)" "warning: pullgate.randstruct_reorders failed (pre-existing: the base's boot shows it too)" \
	"it is reported as pre-existing"
is "$(printf '%s' "$out" | jq -r '.suites[] | select(.name == "pullgate") | "\(.base.failed) \(.merge.failed) \(.verdict)"')" \
	"1 1 pre-existing" "the suite table says so"
reset_tree
FAKE_BOOT=fail gate --no-approve
is "$rc" 0 "(the base's failing boot is kept)"
forget_base
FAKE_BOOT=fail gate --approve
is "$rc" 1 "a KUnit failure the base does not have blocks"
is "$(findings ktap-failure)" "error: pullgate.randstruct_reorders failed" "as a new failure"
is "$(printf '%s' "$out" | jq -r '.suites[] | select(.name == "pullgate") | .verdict')" new-failures \
	"the suite table says so"
# a base that proves nothing excuses nothing: its failures are not pre-existing
forget_base
FAKE_BASE_BOOT=nomarker gate --no-approve
is "$rc" 0 "a base without evidence: a clean merge is judged on its own and passes"
like "$(printf '%s' "$out" | jq -r .base_boot)" "^no evidence, so the merge is judged on its own: the init's marker" \
	"the report says the base's boot is no evidence"
reset_tree
forget_base

# --- the text report shows base against merge -----------------------------------------------
run "$PULLGATE" gate --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" --tree "$TREE" \
	--no-approve "$KEES" "$T2"
like "$out" '^  overflow +2/0/0/0 +2/0/0/0 +ok$' "the text report has the suite table"
like "$out" '^base boot: 4 passed, 0 failed, 0 skipped, 0 crashed, 0 splats$' "and the base's boot"
reset_tree

# --- pullgate ktap judges a console the same way ----------------------------------------------
good=$(ls "$PULLGATE_HOME/logs/$KEY"/run-*/boot.log | head -n1)
n=$(sed -n 's/.*pullgate-init: done nonce=\([0-9a-f]*\).*/\1/p' "$good" | head -n1)
run "$PULLGATE" ktap --nonce "$n" "$good"
is "$rc" 0 "ktap accepts a console with its boot's nonce"
run "$PULLGATE" ktap --nonce 00000000 "$good"
is "$rc" 1 "and refuses it for another nonce"
like "$out" "carries nonce $n, not this boot's 00000000|does not carry nonce 00000000" "saying why"
printf 'KTAP version 1\n1..0\npullgate-init: done\nreboot: Power down\n' >"$SCRATCH/empty.log"
run "$PULLGATE" ktap "$SCRATCH/empty.log"
is "$rc" 1 "ktap refuses a console where no test passed"
like "$out" '^evidence missing: no test passed$' "saying so"
