#!/bin/sh
# 67-gate-lava.t - gate --boot-on lava: the policy's lab settings, a job exported but not run is no verdict, a lab's log is judged as a local console.
#
# With the stand-in scripts of tests/fakes: lava.sh there writes the
# stand-in boot's console as a LAVA job log (scripts/kernel/lava.sh and
# the REST conversation are tested in 66-lava.t).
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/gate.sh"
plan 22
gate_setup

gate() {
	run "$PULLGATE" gate --json --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" \
		--tree "$TREE" --no-approve "$@" "$KEES" "$T2"
}
printf 'tok-0123456789\n' >"$SCRATCH/token"
cat >"$SCRATCH/export.yaml" <<EOC
pipeline:
  boot-on: lava
  lava:
    artifacts-url: https://pullgate.example.org/home/
EOC
cat >"$SCRATCH/here.yaml" <<EOC
pipeline:
  boot-on: lava
  lava:
    device: $TOP/qemu-images/lava-qemu-arm64.yaml
EOC
cat >"$SCRATCH/both.yaml" <<EOC
pipeline:
  lava:
    url: https://lava.example.org/
    token-file: $SCRATCH/token
    device: $TOP/qemu-images/lava-qemu-arm64.yaml
EOC
cat >"$SCRATCH/lab.yaml" <<EOC
pipeline:
  lava:
    url: https://lava.example.org/
    token-file: $SCRATCH/token
    artifacts-url: https://pullgate.example.org/home/
EOC

gate --boot-on lava
is "$rc" 3 "--boot-on lava without the policy's lava settings: no verdict (exit 3)"
like "$err" "names no pipeline.lava.artifacts-url" "saying what is missing"
reset_tree

gate --policy "$SCRATCH/export.yaml"
is "$rc" 3 "a job exported and not run is no verdict (exit 3)"
like "$err" "lava-job.yaml and was not run" "saying where the job is and that nothing was booted"
# the base is booted first, for the merge's boot to be judged against: its job is the first
job=$(printf '%s\n' "$err" | sed -n 's/.*job is written to \([^ ]*lava-job.yaml\) .*/\1/p')
ok "$([ -s "$job" ]; echo $?)" "the job is where the message says ($job)"
is "$(master)" "$BASE" "the integration branch does not move"
reset_tree

gate --policy "$SCRATCH/lab.yaml" --boot-on lava
is "$rc" 0 "booted on the lab, the pull passes"
is "$(stage boot)" passed "at the boot stage"
like "$(printf '%s' "$out" | jq -r '.stages[] | select(.name == "boot") | .summary')" \
	"^4 passed, 0 failed" "judged on the console read out of the LAVA log"
like "$(printf '%s' "$out" | jq -r '.provenance[] | select(.stage == "boot") | .files[0].path')" \
	"scripts/kernel/lava.sh\$" "the boot's provenance names lava.sh"
NONCE=$(printf '%s' "$out" | jq -r '.provenance[] | select(.stage == "boot") | .nonce')
like "$(cat "$PULLGATE_HOME/logs/$KEY/latest/boot.log")" "pullgate-init: done nonce=$NONCE\$" \
	"the console is written as boot.log, with this run's nonce"
unlike "$(cat "$PULLGATE_HOME/logs/$KEY/latest/"*)" "tok-0123456789" "the token is in no log"
reset_tree

gate --policy "$SCRATCH/here.yaml"
is "$rc" 0 "with a device configuration and no artifacts URL, this machine's dispatcher boots it"
like "$(cat "$PULLGATE_HOME/logs/$KEY/latest/lava.log")" "device $TOP/qemu-images/lava-qemu-arm64.yaml" \
	"lava.sh is given the policy's device configuration"
reset_tree

gate --policy "$SCRATCH/both.yaml" --boot-on lava
is "$rc" 3 "a policy naming a LAVA server and a device at once is refused (exit 3)"
like "$err" "not both" "saying a job runs on one of them"
reset_tree

FAKE_LAVA=down gate --policy "$SCRATCH/lab.yaml" --boot-on lava
is "$rc" 3 "a lab that cannot run the job gives no verdict (exit 3): the pull is not rejected"
like "$err" "LAVA lab could not run the job" "saying so"
is "$(master)" "$BASE" "and the integration branch does not move"
reset_tree

FAKE_BOOT=fail gate --policy "$SCRATCH/lab.yaml" --boot-on lava
is "$rc" 1 "a KUnit failure on the lab rejects the pull"
like "$(findings ktap-failure)" "^error: " "as a ktap-failure"

gate --policy "$SCRATCH/lab.yaml" --boot-on qemu
is "$(printf '%s' "$out" | jq -r '.provenance[] | select(.stage == "boot") | .files[0].path' | sed 's|.*/||')" \
	boot.sh "--boot-on qemu boots locally whatever the policy says"
