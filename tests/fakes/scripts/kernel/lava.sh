#!/bin/sh
# lava.sh - a stand-in for scripts/kernel/lava.sh in the gate tests: BUILD LOG TIMEOUT [NONCE].
#
# Without PG_LAVA_URL or PG_LAVA_DEVICE it "exports" a job (writes LOG's
# directory's lava-job.yaml, a stand-in) and exits 3, as the real one does.
# With either (the log's first record names the device, if any),
# the stand-in boot.sh beside it "boots" (FAKE_BOOT and FAKE_BASE_BOOT
# apply) and its console is written to LOG as a LAVA job log, one target
# record a line; its exit status is boot.sh's.  No lab, no QEMU.
set -eu
log=$2
dir=$(dirname "$log")
rm -f "$log"
if [ -z "${PG_LAVA_URL:-}" ] && [ -z "${PG_LAVA_DEVICE:-}" ]; then
	echo '# a stand-in LAVA job' >"$dir/lava-job.yaml"
	exit 3
fi
# FAKE_LAVA=down: the lab could not run the job, as the real one says with exit 4
if [ "${FAKE_LAVA:-}" = down ]; then
	echo "lava.sh: error: the LAVA server could not be reached: nothing was booted" >&2
	exit 4
fi
rc=0
"$(dirname "$0")/boot.sh" "$1" "$log.console" "$3" "${4:-}" || rc=$?
{
	echo '- {"dt": "2026-12-03T22:00:00.000000", "lvl": "info", "msg": "start: 1 tmpfs-deploy"}'
	[ -z "${PG_LAVA_DEVICE:-}" ] ||
		printf -- '- {"dt": "2026-12-03T22:00:00.000000", "lvl": "info", "msg": "device %s"}\n' "$PG_LAVA_DEVICE"
	if [ -f "$log.console" ]; then
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' \
			-e 's/^/- {"dt": "2026-12-03T22:00:01.000000", "lvl": "target", "msg": "/' \
			-e 's/$/"}/' "$log.console"
	fi
} >"$log"
rm -f "$log.console"
exit $rc
