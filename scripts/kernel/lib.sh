# lib.sh - shared settings for the kernel scripts (sourced, not run).
#
# Layout under $PULLGATE_HOME (see docs/kernel.md):
#   linux/                    git repo of the Debian linux-source-6.12 tree
#     refs/heads/debian-6.12  the pristine tarball (base commit)
#     refs/heads/pre-fixes    base with the seed changes already present reverted
#     refs/heads/series       base + patches/linux-6.12/series (checked out)
#   build/arm64-gcc/          O= dir of the QEMU kernel (GCC, plugins)
#   build/arm64-clang-iwlwifi/ O= dir of the clang build test
#   build/qemu/               init, initramfs, boot logs
#   ccache/                   CCACHE_DIR

# Callers outside scripts/kernel/ set PG_TOP first.
PG_TOP=${PG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
PULLGATE_HOME=${PULLGATE_HOME:-"$HOME/.cache/pullgate"}
PG_TARBALL=${PG_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
PG_LINUX="$PULLGATE_HOME/linux"
PG_BUILD="$PULLGATE_HOME/build"
PG_PATCHES=${PG_PATCHES:-"$PG_TOP/patches/linux-6.12"}
PG_REF_BASE=refs/heads/debian-6.12
PG_REF_PRE=refs/heads/pre-fixes
PG_REF_SERIES=refs/heads/series
PG_JOBS=${PG_JOBS:-$(nproc 2>/dev/null || echo 2)}

export CCACHE_DIR="${CCACHE_DIR:-$PULLGATE_HOME/ccache}"
# Absolute paths under $PULLGATE_HOME are hashed relative to it, and the
# working directory is not hashed, so a tree at another path still hits.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PULLGATE_HOME}"
export CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"

# Commits made by these scripts are reproducible: same input, same ids.
export GIT_AUTHOR_NAME=pullgate GIT_AUTHOR_EMAIL=pullgate@invalid
export GIT_COMMITTER_NAME=pullgate GIT_COMMITTER_EMAIL=pullgate@invalid
export GIT_AUTHOR_DATE="2025-06-01T00:00:00Z" GIT_COMMITTER_DATE="2025-06-01T00:00:00Z"

pg_log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
pg_die() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit 1; }

pg_git() { git -C "$PG_LINUX" "$@"; }

# Run git against a throwaway index so the working tree is never touched.
pg_git_tmpidx() {
	GIT_INDEX_FILE="$PG_TMPIDX" git -C "$PG_LINUX" "$@"
}

pg_now() { date +%s; }

# The arguments boot.sh and lava.sh share: BUILD_DIR LOG TIMEOUT [NONCE
# [INITRAMFS]].  pg_boot_args checks them and sets build, log, timeout,
# nonce (a random one when none is given) and cmdline, the kernel command
# line with the nonce, which the init prints back in its marker; exit 2 on
# a usage error.
pg_boot_args() {
	if [ $# -lt 3 ] || [ $# -gt 5 ]; then
		pg_log "usage: ${0##*/} BUILD_DIR LOG TIMEOUT [NONCE [INITRAMFS]]"
		exit 2
	fi
	build=$1 log=$2 timeout=$3 initramfs=${5:-}
	nonce=${4:-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')}
	case $timeout in ''|*[!0-9]*) pg_log "TIMEOUT must be a number of seconds"; exit 2 ;; esac
	case $nonce in ''|*[!A-Za-z0-9]*) pg_log "NONCE must be letters and digits"; exit 2 ;; esac
	[ ${#nonce} -le 64 ] || { pg_log "NONCE must be at most 64 characters"; exit 2; }
	cmdline="console=ttyAMA0 panic=-1 loglevel=7 pullgate.nonce=$nonce"
}

# Then pg_boot_inputs removes LOG (an earlier console is never left for this
# run's) and sets image and initramfs (packed from qemu-images/ when not given).
pg_boot_inputs() {
	mkdir -p "$(dirname "$log")"
	rm -f "$log"
	image="$build/arch/arm64/boot/Image"
	[ -r "$image" ] || pg_die "'$image' missing; build the kernel first"
	[ -n "$initramfs" ] ||
		initramfs=$("$PG_TOP/qemu-images/mkinitramfs.sh" "$build" "$PG_BUILD/qemu")
	[ -r "$initramfs" ] || pg_die "'$initramfs' missing"
}
