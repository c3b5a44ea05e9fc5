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
# the kernel and ramdisk with their SHA-256, a qemu boot with
# pullgate.nonce=NONCE on the kernel command line, and a test monitor that
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
# Exit status: 0 the job completed (the console is judged by the caller);
# 1 it was incomplete or cancelled, or the server refused it; 124 it timed
# out (in LAVA or here); 3 the job was exported and not submitted (no
# PG_LAVA_URL); 2 usage.
set -eu
. "$(dirname "$0")/lib.sh"

pg_boot_args "$@"
[ "$timeout" -ge 60 ] || { pg_log "TIMEOUT must be at least 60 s for a LAVA job"; exit 2; }
: "${PG_LAVA_ARTIFACTS_URL:?set PG_LAVA_ARTIFACTS_URL to the URL of \$PULLGATE_HOME}"
case $PG_LAVA_ARTIFACTS_URL in
http://*|https://*) ;;
*) pg_log "PG_LAVA_ARTIFACTS_URL must be an http(s) URL"; exit 2 ;;
esac
device_type=${PG_LAVA_DEVICE_TYPE:-qemu}
case $device_type in ''|*[!A-Za-z0-9_.-]*) pg_log "PG_LAVA_DEVICE_TYPE: letters, digits, '_.-'"; exit 2 ;; esac

pg_boot_inputs
dir=$(cd "$(dirname "$log")" && pwd)
home=$(cd "$PULLGATE_HOME" && pwd)
case $dir in
"$home"/*) rel=${dir#"$home"/} ;;
*) pg_die "'$dir' is not under \$PULLGATE_HOME: the lab could not download from it" ;;
esac
job=${PG_LAVA_JOB:-"${log%.log}-job.yaml"}
cp "$image" "$dir/Image"
cp "$initramfs" "$dir/initramfs.cpio"
base=${PG_LAVA_ARTIFACTS_URL%/}/$rel

# minutes, rounded up; the deploy and the monitor get their share of the job
minutes=$(((timeout + 59) / 60))
jq -n --arg name "pullgate ${rel#logs/}" --arg dt "$device_type" --arg nonce "$nonce" \
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
	context: { arch: "arm64", machine: "virt", cpu: "max", memory: 512,
		   console_device: "ttyAMA0",
		   extra_kernel_args: ("panic=-1 loglevel=7 pullgate.nonce=" + $nonce) },
	metadata: { "pullgate.nonce": $nonce, "pullgate.image-sha256": $ksha },
	actions: [
		{ deploy: { to: "tmpfs", timeout: { minutes: 5 },
			    images: { kernel: { url: $kernel, sha256sum: $ksha,
						image_arg: "-kernel {kernel}" },
				      ramdisk: { url: $ramdisk, sha256sum: $rsha,
						 image_arg: "-initrd {ramdisk}" } } } },
		{ boot: { method: "qemu", media: "tmpfs", timeout: { minutes: $minutes },
			  parameters: { "shutdown-message": "reboot: Power down" } } },
		{ test: { timeout: { minutes: $minutes },
			  monitors: [ { name: "kunit", start: "KTAP version",
					end: ("pullgate-init: done nonce=" + $nonce),
					pattern: "(?P<result>ok|not ok) [0-9]+ (?P<test_case_id>[^ #\\r\\n]+)",
					fixupdict: { ok: "pass", "not ok": "fail" } } ] } }
	]
}' >"$job.tmp"
mv "$job.tmp" "$job"
pg_log "LAVA job for $device_type written to $job (artifacts at $base/)"

if [ -z "${PG_LAVA_URL:-}" ]; then
	pg_log "no PG_LAVA_URL: the job was exported, not submitted; nothing was booted"
	exit 3
fi
case $PG_LAVA_URL in
http://*|https://*) ;;
*) pg_log "PG_LAVA_URL must be an http(s) URL"; exit 2 ;;
esac
: "${PG_LAVA_TOKEN_FILE:?set PG_LAVA_TOKEN_FILE to the file holding the LAVA API token}"
[ -r "$PG_LAVA_TOKEN_FILE" ] || pg_die "the token file '$PG_LAVA_TOKEN_FILE' is not readable"
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
status=$(lava POST jobs/ "$tmp/submit.json") || exit 1
case $status in
2??) ;;
*) pg_die "the LAVA server refused the job (HTTP $status): $(head -c 300 "$tmp/body" | tr -d '\r')" ;;
esac
id=$(jq -r '.job_ids[0] // .job_id // empty' "$tmp/body")
case $id in ''|*[!0-9]*) pg_die "the LAVA server gave no job id: $(head -c 300 "$tmp/body")" ;; esac
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
		pg_log "error: LAVA job $id not finished in $wait s (state '$state'): cancelled"
		exit 124
	fi
	sleep "${PG_LAVA_POLL:-10}"
done
status=$(lava GET "jobs/$id/logs/") || exit 1
[ "$status" = 200 ] || pg_die "the log of LAVA job $id could not be fetched (HTTP $status)"
cp "$tmp/body" "$log"
case $health in
Complete) pg_log "LAVA job $id complete in $(($(pg_now) - t0)) s (log: $log)"; exit 0 ;;
Canceled) pg_log "error: LAVA job $id was cancelled (log: $log)"; exit 1 ;;
esac
# LAVA's own timeouts end a job Incomplete, saying so in its failure comment
if jq -r '.failure_comment // empty' "$tmp/job.json" | grep -qi 'timed out\|timeout'; then
	pg_log "error: LAVA job $id timed out (log: $log)"
	exit 124
fi
pg_log "error: LAVA job $id ended '$health' (log: $log)"
exit 1
