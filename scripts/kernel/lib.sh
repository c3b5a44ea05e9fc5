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

# pg_icecc_tally LOG: what an icecream build compiled where, from icecc's
# own log (ICECC_LOGFILE): one line each, sorted, `HOST compiled N objects`,
# `HOST failed N jobs (WHY), compiled here instead`, `HOST: N objects
# compiled here again for their warnings (WHY)`, `N objects compiled here`,
# then `farm compiled M of T objects`.  Only the objects of the build count,
# not kbuild's compiler probes (.tmp_ files, /dev/null).  Every client
# appends to the one log, and a record is not always one write: icecc
# writes a long argument (a kernel compile's command line) at once and its
# newline after, so another client's record can land between them, on the
# same line.  A record is therefore read from its `ICECC[PID] DATE` to the
# next one, wherever the newlines are.
pg_icecc_tally() {
	awk '
	# One compile of process p, once its records are all read (a pid comes back in a long build).
	function account(p,   o, h, w) {
		o = obj[p]
		h = host[p]
		w = why[p]
		delete obj[p]; delete host[p]; delete why[p]
		if (o !~ /\.o$/ || o ~ /(^|\/)\.tmp_/) return
		total++
		if (h != "" && w == "") { by[h]++; farm++; return }
		here++
		if (w == "") return
		if (h == "") h = "(no host)"
		# icecc recompiles here a job whose warnings it cannot show as they came: no host failure
		if (w ~ /^Error 102 /) { again[h]++; areason[h] = w; return }
		failed[h]++
		reason[h] = w
	}
	function record(r,   pid, i, n, a, j, h) {
		match(r, /^ICECC\[[0-9]+\]/)
		pid = substr(r, 7, RLENGTH - 7)
		if ((i = index(r, ": invoked as: ")) > 0) {
			if (pid in obj) account(pid)
			obj[pid] = ""
			n = split(substr(r, i), a, " ")
			for (j = 1; j < n; j++)
				if (a[j] == "-o") { obj[pid] = a[j + 1]; break }
		} else if (!(pid in obj)) {
			# a record of a process whose start this log does not have
		} else if ((i = index(r, ": Have to use host ")) > 0) {
			h = substr(r, i + 19); sub(/ .*/, "", h)
			# a host as icecc names one; anything else is no host of ours
			host[pid] = h ~ /^[A-Za-z0-9.-]+:[0-9]+$/ ? h : "(unnamed host)"
		} else if (index(r, ": building myself")) {
			host[pid] = ""
		} else if ((i = index(r, ": local build forced by remote exception: ")) > 0) {
			why[pid] = substr(r, i + 42)
		} else if ((i = index(r, ": got exception ")) > 0 && why[pid] == "") {
			# the host failed the job (unreachable, the network, its environment): compiled here
			why[pid] = substr(r, i + 16)
		}
	}
	{
		s = $0
		while (match(s, /ICECC\[[0-9]+\] [0-9][0-9][0-9][0-9]-/)) {
			s = substr(s, RSTART)
			rest = substr(s, 2)
			if (match(rest, /ICECC\[[0-9]+\] [0-9][0-9][0-9][0-9]-/)) {
				at = RSTART  # record() matches too
				record(substr(s, 1, at))
				s = substr(rest, at)
			} else {
				record(s)
				s = ""
			}
		}
	}
	END {
		for (p in obj) account(p)
		for (h in by) printf "1 %s compiled %d objects\n", h, by[h]
		for (h in failed) printf "2 %s failed %d jobs (%s), compiled here instead\n", h, failed[h], reason[h]
		for (h in again) printf "2 %s: %d objects compiled here again for their warnings (%s)\n", h, again[h], areason[h]
		if (here) printf "3 %d objects compiled here\n", here
		printf "4 farm compiled %d of %d objects\n", farm, total
	}' "$1" | LC_ALL=C sort | cut -d' ' -f2-
}

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
