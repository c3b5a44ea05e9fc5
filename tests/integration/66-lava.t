#!/bin/sh
# 66-lava.t - scripts/kernel/lava.sh: the LAVA job it exports passes LAVA's own schema; submitted to a stand-in server, its log comes back through pullgate ktap.
#
# The Image and initramfs are stand-in bytes and the server is
# tests/lib/lava-server.py on a loopback port: what is tested is the job,
# the REST conversation, the token's handling and the way back to the KTAP
# parser, never a boot.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
PY=/usr/bin/python3
if ! "$PY" -c 'import lava_common.schemas' 2>/dev/null; then
	skip_all "lava-common is not installed (scripts/deps.sh)"
fi
plan 38

LAVA="$TOP/scripts/kernel/lava.sh"
export PG_LAVA_ARTIFACTS_URL=https://pullgate.example.org/home/
build="$SCRATCH/build"
mkdir -p "$build/arch/arm64/boot" "$PULLGATE_HOME/logs/pull/run-1"
printf 'stand-in Image\n' >"$build/arch/arm64/boot/Image"
printf 'stand-in initramfs\n' >"$SCRATCH/initramfs.cpio"
LOG="$PULLGATE_HOME/logs/pull/run-1/boot.log"
NONCE=0123456789abcdef0123456789abcdef

# validate FILE: LAVA's own validator, strict, as a LAVA server runs it on submission
validate() {
	"$PY" -c 'import sys, yaml
from lava_common.schemas import validate
validate(yaml.safe_load(open(sys.argv[1])), strict=True, extra_context_variables=[])' "$1"
}

# --- exported, not submitted ----------------------------------------------------------
run "$LAVA" "$build" "$LOG" 300 "$NONCE" "$SCRATCH/initramfs.cpio"
is "$rc" 3 "without a server the job is exported and lava.sh says nothing was booted (exit 3)"
like "$err" "nothing was booted" "and says so"
JOB="$PULLGATE_HOME/logs/pull/run-1/boot-job.yaml"
ok "$([ -s "$JOB" ]; echo $?)" "the job is written beside the log"
run validate "$JOB"
is "$rc" 0 "the exported job passes lava_common's schema, strict"
[ "$rc" = 0 ] || printf '%s\n' "$err" | sed 's/^/# /'
q() { jq -r "$1" "$JOB"; }
is "$(q .device_type) $(q .context.arch) $(q .context.machine)" "qemu arm64 virt" \
	"a qemu device type as arm64 virt"
is "$(q '[.actions[] | keys[0]] | join(" ")')" "deploy boot test" "deploy, boot and test actions"
is "$(q '.actions[0].deploy.images.kernel.url')" \
	"https://pullgate.example.org/home/logs/pull/run-1/Image" \
	"the kernel is downloaded from the artifacts URL of the run's directory"
is "$(q '.actions[0].deploy.images.kernel.sha256sum')" \
	"$(sha256sum <"$build/arch/arm64/boot/Image" | cut -d' ' -f1)" "with the Image's SHA-256"
is "$(q '.actions[0].deploy.images.ramdisk.sha256sum')" \
	"$(sha256sum <"$SCRATCH/initramfs.cpio" | cut -d' ' -f1)" "and the initramfs's"
cmp -s "$PULLGATE_HOME/logs/pull/run-1/Image" "$build/arch/arm64/boot/Image"
ok $? "the Image is copied where the URL points"
like "$(q '.actions[0].deploy.images.kernel.image_arg')" "^-kernel \\{kernel\\} -append \"console=ttyAMA0 .*pullgate\\.nonce=$NONCE\"\$" \
	"this run's nonce is on the kernel command line, in the kernel's image_arg (LAVA's qemu type puts no context there)"
is "$(q '.actions[2].test.monitors[0].end')" "pullgate-init: done nonce=$NONCE" \
	"the KTAP monitor ends at the init's marker of this nonce"

# the validator can fail: a job without its visibility, or with a key LAVA has not
jq 'del(.visibility)' "$JOB" >"$SCRATCH/bad1.yaml"
run validate "$SCRATCH/bad1.yaml"
ok "$([ "$rc" != 0 ]; echo $?)" "the validator refuses a job without visibility"
jq '.actions[1].boot.pullgate = 1' "$JOB" >"$SCRATCH/bad2.yaml"
run validate "$SCRATCH/bad2.yaml"
ok "$([ "$rc" != 0 ]; echo $?)" "and, strict, a key LAVA does not know"

run env PG_LAVA_ARTIFACTS_URL='file:///x' "$LAVA" "$build" "$LOG" 300 "$NONCE" "$SCRATCH/initramfs.cpio"
is "$rc" 2 "an artifacts URL that is not http(s) is a usage error"
run env -u PG_LAVA_ARTIFACTS_URL "$LAVA" "$build" "$LOG" 300 "$NONCE" "$SCRATCH/initramfs.cpio"
is "$rc" 2 "so is none, for a lab"
like "$err" "set PG_LAVA_ARTIFACTS_URL" "saying what to set"
run env PG_LAVA_DEVICE="$SCRATCH/no-such-device.yaml" "$LAVA" "$build" "$LOG" 300 "$NONCE" "$SCRATCH/initramfs.cpio"
is "$rc" 2 "a device configuration for this machine's dispatcher that is not there is a usage error"
run env PG_LAVA_DEVICE="$TOP/qemu-images/lava-qemu-arm64.yaml" PG_LAVA_URL=https://lava.example.org/ \
	"$LAVA" "$build" "$LOG" 300 "$NONCE" "$SCRATCH/initramfs.cpio"
is "$rc" 2 "and so are a server and a device at once"
like "$err" "not both" "saying a job goes to one of them"
run env PG_LAVA_DEVICE_TYPE='qemu"; x' "$LAVA" "$build" "$LOG" 300 "$NONCE" "$SCRATCH/initramfs.cpio"
is "$rc" 2 "so is a device type with other characters than a name's"

# --- a stand-in server -------------------------------------------------------------
TOKEN=tok-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$TOKEN" >"$SCRATCH/token"
chmod 600 "$SCRATCH/token"
export PG_LAVA_TOKEN_FILE="$SCRATCH/token" PG_LAVA_POLL=0.1
# NONCE: the stand-in server puts the job's nonce there
cat >"$SCRATCH/console.ok" <<EOF
[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x000f0510]
[    0.000001] Kernel command line: console=ttyAMA0 panic=-1 loglevel=7 pullgate.nonce=NONCE
[    1.000000] KTAP version 1
[    1.000001] 1..1
[    1.000002]     KTAP version 1
[    1.000003]     # Subtest: pullgate
[    1.000004]     1..2
[    1.000005]     ok 1 define_flex_zeroes
[    1.000006]     ok 2 randstruct_reorders
[    1.000007] ok 1 pullgate
[    2.000000] pullgate-init: done nonce=NONCE
[    2.100000] reboot: Power down
EOF
sed 's/    ok 2 randstruct_reorders/    not ok 2 randstruct_reorders/; s/^\(\[    1.000007\]\) ok 1/\1 not ok 1/' \
	"$SCRATCH/console.ok" >"$SCRATCH/console.fail"

# start_server SCENARIO CONSOLE: $SRV is its directory, $URL its address
n_srv=0
start_server() {
	n_srv=$((n_srv + 1))
	SRV="$SCRATCH/srv$n_srv"
	mkdir -p "$SRV"
	cp "$2" "$SRV/console.txt"
	"$PY" "$TOP/tests/lib/lava-server.py" "$SRV" "$SCRATCH/token" "$1" 2>"$SRV/stderr" &
	echo $! >"$SRV/pid"
	TAP_CLEANUP="${TAP_CLEANUP:-} kill_server_$n_srv"
	eval "kill_server_$n_srv() { kill \$(cat '$SRV/pid'); }"
	wait_for test -s "$SRV/port" || true
	URL="http://127.0.0.1:$(cat "$SRV/port")/"
}

start_server complete "$SCRATCH/console.ok"
run env PG_LAVA_URL="$URL" "$LAVA" "$build" "$LOG" 300 "$NONCE" "$SCRATCH/initramfs.cpio"
is "$rc" 0 "a job the server ran to Complete: exit 0"
[ "$rc" = 0 ] || printf '%s\n' "$err" | sed 's/^/# /'
like "$err" "submitted as LAVA job 1" "submitted over the REST API"
ok "$(cmp -s "$SRV/job-1.yaml" "$JOB"; echo $?)" "the server received the job lava.sh wrote"
run "$PULLGATE" ktap --lava --nonce "$NONCE" "$LOG"
is "$rc" 0 "pullgate ktap --lava reads the console out of LAVA's log: this nonce, KTAP passed"
[ "$rc" = 0 ] || printf '%s\n' "$out" "$err" | sed 's/^/# /'
like "$out" "ktap: 2 passed, 0 failed" "with the device's results"
unlike "$(cat "$LOG" "$JOB" "$SRV/requests" "$SRV/stderr"; echo "$out$err"; ls -R "$PULLGATE_HOME")" \
	"$TOKEN" "the token is in no log, job, output or file name"

start_server complete "$SCRATCH/console.fail"
run env PG_LAVA_URL="$URL" "$LAVA" "$build" "$LOG" 300 "$NONCE" "$SCRATCH/initramfs.cpio"
run "$PULLGATE" ktap --lava --nonce "$NONCE" "$LOG"
is "$rc" 1 "a failing KUnit case on the device is a rejection, by the same parser"

printf 'wrong-token\n' >"$SCRATCH/token.bad"
run env PG_LAVA_URL="$URL" PG_LAVA_TOKEN_FILE="$SCRATCH/token.bad" "$LAVA" "$build" "$LOG" 300 \
	"$NONCE" "$SCRATCH/initramfs.cpio"
is "$rc" 4 "a token the server refuses: the lab could not run it (exit 4), not a failed boot"
like "$err" "refused the job \\(HTTP 401\\).*nothing was booted" "saying the server refused it and nothing was booted"
dead_port "$SCRATCH/dead.port"
run env PG_LAVA_URL="http://127.0.0.1:$(cat "$SCRATCH/dead.port")/" "$LAVA" "$build" "$LOG" 300 "$NONCE" "$SCRATCH/initramfs.cpio"
is "$rc" 4 "a server that cannot be reached: exit 4"

start_server incomplete "$SCRATCH/console.ok"
run env PG_LAVA_URL="$URL" "$LAVA" "$build" "$LOG" 300 "$NONCE" "$SCRATCH/initramfs.cpio"
is "$rc" 124 "a job LAVA ended Incomplete on a timeout: exit 124, a boot timeout"

start_server canceled "$SCRATCH/console.ok"
run env PG_LAVA_URL="$URL" "$LAVA" "$build" "$LOG" 300 "$NONCE" "$SCRATCH/initramfs.cpio"
is "$rc" 4 "a job cancelled in the lab: nothing of the pull's was judged (exit 4)"
like "$err" "was cancelled in the lab" "saying so"

start_server queued "$SCRATCH/console.ok"
run env PG_LAVA_URL="$URL" PG_LAVA_WAIT=1 "$LAVA" "$build" "$LOG" 300 "$NONCE" "$SCRATCH/initramfs.cpio"
is "$rc" 4 "a job still in the lab's queue when the time is up: cancelled, exit 4, not a boot timeout"
like "$(cat "$SRV/requests")" "POST /api/v0.2/jobs/1/cancel/" "and cancelled on the server"

start_server never "$SCRATCH/console.ok"
run env PG_LAVA_URL="$URL" PG_LAVA_WAIT=1 "$LAVA" "$build" "$LOG" 300 "$NONCE" "$SCRATCH/initramfs.cpio"
is "$rc" 124 "a job that does not finish in time: exit 124"
like "$(cat "$SRV/requests")" "^POST /api/v0.2/jobs/1/cancel/" "and lava.sh cancelled it on the server"
