#!/bin/sh
# boot.sh - boot an arm64 kernel build in qemu-system-aarch64 (TCG) and keep the console log.
#
# usage: scripts/kernel/boot.sh BUILD_DIR LOG TIMEOUT [INITRAMFS]
#
#   BUILD_DIR  kernel O= dir holding arch/arm64/boot/Image
#   LOG        the serial console is written here (replaced)
#   TIMEOUT    seconds before QEMU is killed
#   INITRAMFS  cpio archive (default: packed from qemu-images/ into
#              $PULLGATE_HOME/build/qemu)
#
# Exit status: 0 the guest printed the init marker and powered off;
# 1 QEMU ended without the marker (panic, crash); 124 timeout; 2 usage.
# Judging the tests is left to the KTAP parser (pullgate ktap LOG).
set -eu
. "$(dirname "$0")/lib.sh"

MARKER="pullgate-init: done"

if [ $# -lt 3 ] || [ $# -gt 4 ]; then
	pg_log "usage: boot.sh BUILD_DIR LOG TIMEOUT [INITRAMFS]"
	exit 2
fi
build=$1 log=$2 timeout=$3
case $timeout in ''|*[!0-9]*) pg_log "TIMEOUT must be a number of seconds"; exit 2 ;; esac
image="$build/arch/arm64/boot/Image"
[ -r "$image" ] || pg_die "'$image' missing; build the kernel first"
if [ $# -eq 4 ]; then
	initramfs=$4
else
	initramfs=$("$PG_TOP/qemu-images/mkinitramfs.sh" "$build" "$PG_BUILD/qemu")
fi
[ -r "$initramfs" ] || pg_die "'$initramfs' missing"
mkdir -p "$(dirname "$log")"

t0=$(pg_now)
set +e
timeout -k 10 "$timeout" qemu-system-aarch64 \
	-M virt -cpu max -nographic -no-reboot \
	-m 512 -smp 1 -nic none \
	-kernel "$image" -initrd "$initramfs" \
	-append "console=ttyAMA0 panic=-1 loglevel=7" \
	</dev/null >"$log" 2>&1
rc=$?
set -e
took=$(($(pg_now) - t0))

if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
	pg_log "error: no power-off within $timeout s (log: $log)"
	exit 124
fi
if ! grep -q "$MARKER" "$log"; then
	pg_log "error: QEMU exited ($rc) after $took s without the init marker (log: $log)"
	exit 1
fi
pg_log "booted and powered off in $took s (log: $log)"
exit 0
