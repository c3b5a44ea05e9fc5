#!/bin/sh
# lava.sh - boot an arm64 kernel build on a LAVA lab instead of local QEMU: export the job, submit it, fetch its log.
#
# usage: scripts/kernel/lava.sh BUILD_DIR LOG TIMEOUT [NONCE [INITRAMFS]]
#
# The arguments are boot.sh's.  The Image and the initramfs are copied
# beside LOG (the lab downloads them from PG_LAVA_ARTIFACTS_URL, the URL at
# which $PULLGATE_HOME is published read-only), and the LAVA job definition
# is written to PG_LAVA_JOB (default: LOG's name with -job.yaml): device
# type PG_LAVA_DEVICE_TYPE (default qemu) as arm64 virt, a tmpfs deploy of
# the kernel and ramdisk with their SHA-256, a qemu boot with boot.sh's
# kernel command line (pullgate.nonce=NONCE) in the kernel's image_arg
# (LAVA's qemu device type puts no job context on the command line), and a test monitor that
# reads the KTAP results off the console (the initramfs has no shell for a
# lava-test-shell definition).  The job is JSON, which is YAML.
#
# With PG_LAVA_URL (the server, e.g. https://lava.example.org/) and
# PG_LAVA_TOKEN_FILE (a file holding an API token) the job is submitted
# through LAVA's REST API (POST api/v0.2/jobs/), polled until it finishes
# or TIMEOUT seconds pass (PG_LAVA_WAIT, if set; then it is cancelled:
# the wait includes the lab's queue), and its log
# (api/v0.2/jobs/ID/logs/, LAVA's YAML, one line per record) is written to
# LOG: `pullgate ktap --lava LOG` reads the console out of it.  The token
# is read from its file into a header file of mode 0600 that curl reads:
# it is never on a command line, in the environment or in a log.
#
# With PG_LAVA_DEVICE instead (a LAVA device configuration, as a LAVA
# server renders one from its device type for a device: the shipped
# qemu-images/lava-qemu-arm64.yaml is the qemu type's for this job), the
# job is run on this machine by LAVA's own dispatcher, `lava-run` from
# Debian's lava-dispatcher, with the artifacts read from the run's
# directory (file://, unless PG_LAVA_ARTIFACTS_URL names another place),
# within TIMEOUT seconds; its log (the same records, one a line) is written
# to LOG and its output directory is LOG's name with -run.  lava-run runs
# only as root (as in a LAVA worker): as another user this is exit 4.
#
# Exit status: 0 the job completed (the console is judged by the caller);
# 1 it ended incomplete after the device started; 124 it timed out while
# running (in LAVA or here); 4 the lab could not run it, so nothing of the
# pull was booted (the server unreachable or refusing it, its log not
# fetched, the job cancelled in the lab or never started within TIMEOUT,
# lava-run failing on its configuration, a bug of its own, or in any way
# before it started QEMU); 3 the job was exported and not submitted (no
# PG_LAVA_URL or PG_LAVA_DEVICE); 2 usage.  The gate judges 1 and 124 as
# a failed boot, and gives no verdict on 3 and 4.
set -eu
. "$(dirname "$0")/lib.sh"

# the lab, not the pull: nothing was booted (exit 4)
lab_failed() { pg_log "error: $*: nothing was booted"; exit 4; }

pg_boot_args "$@"
[ "$timeout" -ge 60 ] || { pg_log "TIMEOUT must be at least 60 s for a LAVA job"; exit 2; }
device=${PG_LAVA_DEVICE:-}
if [ -n "$device" ]; then
	[ -z "${PG_LAVA_URL:-}" ] ||
		{ pg_log "PG_LAVA_URL and PG_LAVA_DEVICE: a job goes to a server or to this machine's dispatcher, not both"; exit 2; }
	[ -r "$device" ] || { pg_log "the LAVA device configuration '$device' is not readable"; exit 2; }
	command -v lava-run >/dev/null 2>&1 ||
		{ pg_log "PG_LAVA_DEVICE needs lava-run (Debian's lava-dispatcher)"; exit 2; }
	# lava-run refuses any other user ("lava-run should be executed as root")
	[ "$(id -u)" -eq 0 ] || lab_failed "lava-run runs only as root, not as $(id -un)"
fi
if [ -n "${PG_LAVA_ARTIFACTS_URL:-}" ]; then
	case $PG_LAVA_ARTIFACTS_URL in
	http://*|https://*) ;;
	*) pg_log "PG_LAVA_ARTIFACTS_URL must be an http(s) URL"; exit 2 ;;
	esac
elif [ -z "$device" ]; then
	pg_log "set PG_LAVA_ARTIFACTS_URL to the URL of \$PULLGATE_HOME"
	exit 2
fi
device_type=${PG_LAVA_DEVICE_TYPE:-qemu}
case $device_type in ''|*[!A-Za-z0-9_.-]*) pg_log "PG_LAVA_DEVICE_TYPE: letters, digits, '_.-'"; exit 2 ;; esac

pg_boot_inputs
dir=$(cd "$(dirname "$log")" && pwd)
home=$(cd "$PULLGATE_HOME" && pwd)
case $dir in
"$home"/*) rel=${dir#"$home"/} ;;
*) lab_failed "'$dir' is not under \$PULLGATE_HOME: the lab could not download from it" ;;
esac
job=${PG_LAVA_JOB:-"${log%.log}-job.yaml"}
cp "$image" "$dir/Image"
cp "$initramfs" "$dir/initramfs.cpio"
if [ -n "${PG_LAVA_ARTIFACTS_URL:-}" ]; then
	base=${PG_LAVA_ARTIFACTS_URL%/}/$rel
else
	base=file://$dir
fi

# minutes, rounded up; the deploy and the monitor get their share of the job
minutes=$(((timeout + 59) / 60))
jq -n --arg name "pullgate ${rel#logs/}" --arg dt "$device_type" --arg nonce "$nonce" --arg cmdline "$cmdline" \
	--arg kernel "$base/Image" --arg ramdisk "$base/initramfs.cpio" \
	--arg ksha "$(sha256sum <"$dir/Image" | cut -d' ' -f1)" \
	--arg rsha "$(sha256sum <"$dir/initramfs.cpio" | cut -d' ' -f1)" \
	--argjson minutes "$minutes" '{
	job_name: $name,
	device_type: $dt,
	visibility: "public",
	priority: "medium",
	timeouts: { job: { minutes: ($minutes + 10) }, action: { minutes: $minutes },
		    connection: { minutes: 2 } },
	context: { arch: "arm64", machine: "virt", cpu: "max", memory: 512 },
	metadata: { "pullgate.nonce": $nonce, "pullgate.image-sha256": $ksha },
	actions: [
		{ deploy: { to: "tmpfs", timeout: { minutes: 5 },
			    images: { kernel: { url: $kernel, sha256sum: $ksha,
						image_arg: ("-kernel {kernel} -append \"" + $cmdline + "\"") },
				      ramdisk: { url: $ramdisk, sha256sum: $rsha,
						 image_arg: "-initrd {ramdisk}" } } } },
		{ boot: { method: "qemu", media: "tmpfs", timeout: { minutes: $minutes },
			  parameters: { "shutdown-message": "reboot: Power down" } } },
		{ test: { timeout: { minutes: $minutes },
			  monitors: [ { name: "kunit", start: "KTAP version",
					end: ("pullgate-init: done nonce=" + $nonce),
					pattern: "(?P<result>ok|not ok) [0-9]+ (?P<test_case_id>[^ #\\r\\n]+)[^\\r\\n]*\\r?\\n",
					fixupdict: { ok: "pass", "not ok": "fail" } } ] } }
	]
}' >"$job.tmp"
mv "$job.tmp" "$job"
pg_log "LAVA job for $device_type written to $job (artifacts at $base/)"

if [ -n "$device" ]; then
	out=${log%.log}-run
	rm -rf "$out"
	mkdir -p "$out"
	pg_log "$(dpkg-query -W -f='lava-dispatcher ${Version}' lava-dispatcher 2>/dev/null || echo lava-run) runs the job here (device: $device)"
	t0=$(pg_now)
	set +e
	# the records go to stderr; a job id of this process's, so that two slots' jobs never share a directory
	timeout -k 10 "$timeout" lava-run --job-id "pullgate-$$" --output-dir "$out" \
		--device "$device" "$job" >"$out/stdout" 2>"$log"
	rc=$?
	set -e
	took=$(($(pg_now) - t0))
	# whether it got as far as starting QEMU: before that, nothing of the pull ran
	booted() { grep -q '"lvl": "info", "msg": "Boot command: ' "$log" 2>/dev/null; }
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		booted || lab_failed "lava-run did not start QEMU within $timeout s (log: $log)"
		pg_log "error: lava-run did not finish the job within $timeout s (log: $log)"
		exit 124
	fi
	# result.yaml: the job's own result, written as lava-run ends
	result=$(sed -n 's/^result: *//p' "$out/result.yaml" 2>/dev/null || true)
	if [ $rc -eq 0 ] && [ "$result" = pass ]; then
		pg_log "lava-run: job complete in $took s (log: $log)"
		exit 0
	fi
	why=$(sed -n 's/^error_msg: *//p' "$out/result.yaml" 2>/dev/null | head -n 1)
	type=$(sed -n 's/^error_type: *//p' "$out/result.yaml" 2>/dev/null | head -n 1)
	what="lava-run ended the job '${result:-no result}' (exit $rc${type:+, $type}${why:+: $why}; log: $log)"
	# its own configuration or a bug of its own, or anything before QEMU started
	# (validating, downloading); then a timeout is the boot's, as any other end
	case $type in Configuration|Bug) lab_failed "$what" ;; esac
	booted || lab_failed "$what"
	case $type$why in
	LAVATimeout*|*[Tt]imed\ out*|*[Tt]imeout*) pg_log "error: $what"; exit 124 ;;
	esac
	pg_log "error: $what"
	exit 1
fi
if [ -z "${PG_LAVA_URL:-}" ]; then
	pg_log "no PG_LAVA_URL or PG_LAVA_DEVICE: the job was exported, not submitted; nothing was booted"
	exit 3
fi
case $PG_LAVA_URL in
http://*|https://*) ;;
*) pg_log "PG_LAVA_URL must be an http(s) URL"; exit 2 ;;
esac
: "${PG_LAVA_TOKEN_FILE:?set PG_LAVA_TOKEN_FILE to the file holding the LAVA API token}"
[ -r "$PG_LAVA_TOKEN_FILE" ] || lab_failed "the token file '$PG_LAVA_TOKEN_FILE' is not readable"
api=${PG_LAVA_URL%/}/api/v0.2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-lava.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(umask 077 && printf 'Authorization: Token %s\n' "$(tr -d '\r\n' <"$PG_LAVA_TOKEN_FILE")" >"$tmp/auth")
# one request: curl with the header file; the body to $tmp/body, the status printed
lava() { # METHOD PATH [JSON-BODY-FILE]
	m=$1 url=$api/$2
	if [ $# -eq 3 ]; then set -- --data-binary "@$3"; else set --; fi
	curl -sS -X "$m" -H "@$tmp/auth" -H 'Content-Type: application/json' \
		-o "$tmp/body" -w '%{http_code}' --max-time 60 "$@" "$url" 2>"$tmp/curl.err" ||
		{ pg_log "error: $m $url: $(head -c 300 "$tmp/curl.err")"; return 1; }
}

jq -n --rawfile text "$job" '{definition: $text}' >"$tmp/submit.json"
status=$(lava POST jobs/ "$tmp/submit.json") || lab_failed "the LAVA server could not be reached"
case $status in
2??) ;;
*) lab_failed "the LAVA server refused the job (HTTP $status): $(head -c 300 "$tmp/body" | tr -d '\r')" ;;
esac
id=$(jq -r '.job_ids[0] // .job_id // empty' "$tmp/body")
case $id in ''|*[!0-9]*) lab_failed "the LAVA server gave no job id: $(head -c 300 "$tmp/body")" ;; esac
pg_log "submitted as LAVA job $id ($PG_LAVA_URL)"

t0=$(pg_now)
wait=${PG_LAVA_WAIT:-$timeout}
case $wait in ''|*[!0-9]*) pg_log "PG_LAVA_WAIT must be a number of seconds"; exit 2 ;; esac
state="" health=""
while :; do
	status=$(lava GET "jobs/$id/") || status=000
	if [ "$status" = 200 ]; then
		state=$(jq -r '.state // empty' "$tmp/body")
		health=$(jq -r '.health // empty' "$tmp/body")
		cp "$tmp/body" "$tmp/job.json"
		[ "$state" = Finished ] && break
	fi
	if [ $(($(pg_now) - t0)) -ge "$wait" ]; then
		lava POST "jobs/$id/cancel/" >/dev/null || true
		# still in the lab's queue: the device never ran it
		case $state in
		Running|Canceling) ;;
		*) lab_failed "LAVA job $id did not start in $wait s (state '$state'): cancelled" ;;
		esac
		pg_log "error: LAVA job $id not finished in $wait s (state '$state'): cancelled"
		exit 124
	fi
	sleep "${PG_LAVA_POLL:-10}"
done
status=$(lava GET "jobs/$id/logs/") || lab_failed "the log of LAVA job $id could not be fetched"
[ "$status" = 200 ] || lab_failed "the log of LAVA job $id could not be fetched (HTTP $status)"
cp "$tmp/body" "$log"
case $health in
Complete) pg_log "LAVA job $id complete in $(($(pg_now) - t0)) s (log: $log)"; exit 0 ;;
Canceled) lab_failed "LAVA job $id was cancelled in the lab (log: $log)" ;;
esac
# LAVA's own timeouts end a job Incomplete, saying so in its failure comment
if jq -r '.failure_comment // empty' "$tmp/job.json" | grep -qi 'timed out\|timeout'; then
	pg_log "error: LAVA job $id timed out (log: $log)"
	exit 124
fi
pg_log "error: LAVA job $id ended '$health' (log: $log)"
exit 1
