#!/bin/sh
# build.sh - configure and cross-build an arm64 kernel out of tree (O=) with ccache.
#
# usage: scripts/kernel/build.sh [--llvm] [--fragment FILE] [--select FILE] SRC_TREE BUILD_DIR LOG [TARGET...]
#
#   --llvm           build with LLVM=1 (clang, lld) instead of the GNU cross tools
#   --fragment FILE  config fragment (default qemu-images/kernel.config), applied
#                    with KCONFIG_ALLCONFIG over allnoconfig and then verified
#   --select FILE    options selected for a pull (pullgate's KUnit selection),
#                    applied before the fragment, whose lines win; not verified
#                    here: Kconfig may refuse them, and pullgate reads .config
#   TARGET...        make targets (default: Image)
#
# With PG_BUILD_STREAM=1 in the environment make's output goes to stdout
# instead of LOG (the caller logs it), and kbuild's step lines are kept.
#
# With PG_DISTCC_HOSTS="HOST[:PORT][/LIMIT] ..." (the policy's
# pipeline.distcc-hosts) the compiles that miss ccache run on those distcc
# hosts (CCACHE_PREFIX=distcc), make's -j is the sum of their
# limits (4 when a host names none, as distcc counts) and at least PG_JOBS,
# and at the end one line per host says how many objects it built; a host
# that is down costs nothing but time: distcc compiles its jobs here and
# the summary says so.  distcc's own log is LOG's name with -distcc.log.
#
# With PG_ICECC=DAEMON (the policy's pipeline.icecc) the compiles that miss
# ccache go through icecream (CCACHE_PREFIX=icecc): DAEMON is `local` (the
# machine's iceccd on its default socket) or the absolute path of an
# iceccd's socket (given to icecc as ICECC_TEST_SOCKET, its only way to name
# one).  The farm compiles inside an environment made here per toolchain and
# per plugin build (the cross compiler, cc1, as, and this build dir's GCC
# plugins, whose randstruct seed is compiled into the plugin), cached under
# $PULLGATE_HOME/icecc-envs by the SHA-256 of what it holds, checked before
# each use, and named to the farm by icecc's digest of its content (a host
# installs it under that name; it does not check the content against it, so
# the farm's hosts are trusted as the compiler is).  The plugins are built
# from the tree, the pull's code, and run inside cc1 on every farm host, in
# the environment's chroot as the daemon's user.  The lines
# `icecc: environment ID: CARRIES`, then per host `icecc: HOST compiled N
# objects`, `icecc: HOST failed N jobs (WHY), compiled here instead`, `icecc:
# HOST: N objects compiled here again for their warnings (WHY)` (icecc's
# own workaround for a compile's stderr), `icecc: N objects compiled here`
# and `icecc: farm compiled M of T objects` say what ran where; once make
# has ended they are also written, without `icecc: `, to LOG's name with
# -farm.txt, which the gate reads.  No daemon, no scheduler, a host gone:
# compiled here.  make's -j is PG_ICECC_JOBS (default twice PG_JOBS).
# icecc's log is LOG's name with -icecc.log, gzipped after the summary.
#
# Output of every step is appended to LOG; on failure the end of it is
# shown.  The config is regenerated only when the fragment or the tree's
# Kconfig inputs change (a stamp in BUILD_DIR), so a rerun is incremental.
# Exit status: 0 built, 1 failed, 2 usage.
set -eu
. "$(dirname "$0")/lib.sh"

llvm=""
select=""
fragment="$PG_TOP/qemu-images/kernel.config"
while [ $# -gt 0 ]; do
	case $1 in
	--llvm) llvm=1; shift ;;
	--fragment) [ $# -ge 2 ] || exit 2; fragment=$2; shift 2 ;;
	--select) [ $# -ge 2 ] || exit 2; select=$2; shift 2 ;;
	--) shift; break ;;
	-*) pg_log "usage: build.sh [--llvm] [--fragment FILE] [--select FILE] SRC_TREE BUILD_DIR LOG [TARGET...]"; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -lt 3 ]; then
	pg_log "usage: build.sh [--llvm] [--fragment FILE] [--select FILE] SRC_TREE BUILD_DIR LOG [TARGET...]"
	exit 2
fi
src=$1 out=$2 log=$3
shift 3
# The farm file of an earlier build beside this LOG (the gate's base build
# shares it) goes first: no way out of this script leaves it for this one.
farm_file="${log%.log}-farm.txt"
farm_tmp="$farm_file.new.$$"
rm -f "$farm_file" "$farm_tmp"
trap 'rm -f "$farm_tmp"' EXIT
[ $# -gt 0 ] || set -- Image
targets="$*"
[ -f "$src/Makefile" ] || pg_die "'$src' is not a kernel tree"
[ -r "$fragment" ] || pg_die "'$fragment' not readable"
[ -z "$select" ] || [ -r "$select" ] || pg_die "'$select' not readable"

mkdir -p "$out" "$(dirname "$log")" "$CCACHE_DIR"
out=$(cd "$out" && pwd)
: >>"$log"

if [ -n "$llvm" ]; then
	set -- ARCH=arm64 LLVM=1 "CC=ccache clang"
	stamp_tool=$(clang --version | head -n1)
else
	set -- ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- \
		"CC=ccache aarch64-linux-gnu-gcc"
	stamp_tool=$(aarch64-linux-gnu-gcc --version | head -n1)
fi

# PG_BUILD_STREAM=1 (the merge bot): make's output, with kbuild's "  CC ..."
# lines, goes to stdout for the caller to follow and to log itself.
kmake() {
	if [ -n "${PG_BUILD_STREAM:-}" ]; then
		make -C "$src" O="$out" -j"$PG_JOBS" "$@" 2>&1
	else
		make -s -C "$src" O="$out" -j"$PG_JOBS" "$@" >>"$log" 2>&1
	fi
}

fail() {
	pg_log "error: $1 (log: $log)"
	tail -n 40 "$log" | sed 's/^/  | /' >&2
	exit 1
}

# distcc: hosts are data (checked here again, as the policy's schema does)
distcc_log=""
if [ -n "${PG_DISTCC_HOSTS:-}" ] && [ -n "${PG_ICECC:-}" ]; then
	pg_log "distcc: warning: icecc is asked for too: the build compiles through icecc, not on $PG_DISTCC_HOSTS"
	PG_DISTCC_HOSTS=""
fi
if [ -n "${PG_DISTCC_HOSTS:-}" ]; then
	jobs=0
	for h in $PG_DISTCC_HOSTS; do
		printf '%s\n' "$h" | grep -Eqx '[A-Za-z0-9][A-Za-z0-9.-]*(:[1-9][0-9]{0,4})?(/[1-9][0-9]{0,2})?' ||
			pg_die "PG_DISTCC_HOSTS: '$h' is not HOST[:PORT][/LIMIT]"
		case $h in */*) jobs=$((jobs + ${h##*/})) ;; *) jobs=$((jobs + 4)) ;; esac
	done
	[ "$jobs" -ge "$PG_JOBS" ] && PG_JOBS=$jobs
	distcc_log="${log%.log}-distcc.log"
	: >"$distcc_log"
	# DISTCC_VERBOSE: the log names the host of every compile, for the summary
	export DISTCC_HOSTS="$PG_DISTCC_HOSTS" DISTCC_LOG="$distcc_log" DISTCC_VERBOSE=1
	mkdir -p "$out/.distcc"
	export DISTCC_DIR="$out/.distcc" CCACHE_PREFIX=distcc
	pg_log "distcc: compiling on $PG_DISTCC_HOSTS with -j$PG_JOBS"
fi

# icecream: the daemon is data (checked here again, as the policy's schema does).
# What the farm did is said on stderr and written, once make has ended, to
# LOG's name with -farm.txt (the same lines without the prefix), which the
# gate reads: a line make prints (the pull's Makefiles run in it) is never
# taken for one of ours.  A stale one is removed first.
icecc_log=""
icecc_sock=""
# one line, no control character: paths in it are the tree's (the pull's)
farm_say() {
	line=$(printf '%s' "$*" | LC_ALL=C tr -d '\000-\037\177')
	pg_log "icecc: $line"
	printf '%s\n' "$line" >>"$farm_tmp"
}
farm_done() { [ ! -f "$farm_tmp" ] || mv -f "$farm_tmp" "$farm_file"; }
if [ -n "${PG_ICECC:-}" ]; then
	nl='
'
	case $PG_ICECC in
	*"$nl"*) pg_die "PG_ICECC: a socket path of more than one line" ;;
	local) ;;
	/*)
		# as the policy's schema: printable ASCII, at most 107 bytes, no . or .. component, no trailing /
		printf '%s\n' "$PG_ICECC" | LC_ALL=C grep -Eqx '/[!-~]{0,105}[!-.0-~]' &&
			! printf '%s\n' "$PG_ICECC" | grep -Eq '(^|/)\.\.?(/|$)' ||
			pg_die "PG_ICECC: '$PG_ICECC' is neither 'local' nor an absolute socket path"
		icecc_sock=$PG_ICECC ;;
	*) pg_die "PG_ICECC: '$PG_ICECC' is neither 'local' nor an absolute socket path" ;;
	esac
	if [ -n "$llvm" ]; then
		farm_say "warning: an LLVM build is not sent to the farm: compiling here"
	elif ! command -v icecc >/dev/null || ! command -v icecc-create-env >/dev/null; then
		farm_say "warning: icecc is not installed (scripts/deps.sh): compiling here"
	elif [ -n "$icecc_sock" ] && [ ! -S "$icecc_sock" ]; then
		farm_say "warning: no iceccd socket at $icecc_sock: compiling here"
	elif [ -z "$icecc_sock" ] && [ ! -S /var/run/icecc/iceccd.socket ] &&
		[ ! -S /var/run/iceccd.socket ] && [ ! -S "${HOME:-/nonexistent}/.iceccd.socket" ]; then
		farm_say "warning: no iceccd runs on this machine: compiling here"
	else
		icecc_log="${log%.log}-icecc.log"
	fi
	case ${PG_ICECC_JOBS:-} in
	'' | [1-9] | [1-9][0-9] | [1-9][0-9][0-9]) ;;
	*) pg_die "PG_ICECC_JOBS: '$PG_ICECC_JOBS' is not a number of jobs (1 to 999)" ;;
	esac
fi

# The environment the farm compiles in, made once per toolchain and plugin
# build and checked before each use; sets icecc_tarball and icecc_carries.
icecc_environment() {
	gcc=$(readlink -f "$(command -v aarch64-linux-gnu-gcc)")
	cc1=$(readlink -f "$(aarch64-linux-gnu-gcc -print-prog-name=cc1)")
	as=$(readlink -f "$(aarch64-linux-gnu-gcc -print-prog-name=as)")
	plugins=$(find "$out/scripts/gcc-plugins" -maxdepth 1 -name '*.so' -type f 2>/dev/null | LC_ALL=C sort)
	# the tree (the pull) names its plugins: a name that is not a plain one is
	# not sent anywhere (split on blanks, each part must be a whole path)
	set -f
	for p in $plugins; do
		case $p in "$out"/scripts/gcc-plugins/*) ;; *) p="" ;; esac
		case ${p#"$out"/scripts/gcc-plugins/} in
		"" | *[!A-Za-z0-9_.-]* | .*)
			fail "icecc: a GCC plugin in $out/scripts/gcc-plugins has a name icecc is not given" ;;
		esac
	done
	if grep -qx 'CONFIG_GCC_PLUGINS=y' "$out/.config" && [ -z "$plugins" ]; then
		fail "icecc: the config loads GCC plugins and make prepare built none in $out/scripts/gcc-plugins"
	fi
	icecc_carries=$(aarch64-linux-gnu-gcc --version | head -n1)
	for p in $plugins; do
		icecc_carries="$icecc_carries; ${p#"$out"/} sha256 $(sha256sum <"$p" | cut -d' ' -f1)"
	done
	[ -n "$plugins" ] || icecc_carries="$icecc_carries; no GCC plugins"
	# the plugins' paths are part of the key: the environment holds them where -fplugin= names them
	key=$({ icecc --version 2>&1 | head -n1
		for f in "$gcc" "$cc1" "$as" $plugins; do printf '%s ' "$f"; sha256sum <"$f"; done
	} | sha256sum | cut -d' ' -f1)
	envs="$PULLGATE_HOME/icecc-envs"
	dir="$envs/$key"
	mkdir -p "$envs"
	exec 8>"$envs/.lock"
	flock 8
	# environments a killed build left half made
	rm -rf "$envs"/.new.*
	icecc_tarball=""
	if [ -d "$dir" ] && [ ! -L "$dir" ] && [ -f "$dir/manifest" ] && [ ! -L "$dir/manifest" ]; then
		id=$(sed -n 's/^id \([0-9a-f]\{32\}\)$/\1/p' "$dir/manifest")
		sum=$(sed -n 's/^sha256 \([0-9a-f]\{64\}\)$/\1/p' "$dir/manifest")
		if [ -n "$id" ] && [ -n "$sum" ] && [ -f "$dir/$id.tar.gz" ] && [ ! -L "$dir/$id.tar.gz" ] &&
			[ "$(sha256sum <"$dir/$id.tar.gz" | cut -d' ' -f1)" = "$sum" ]; then
			icecc_tarball="$dir/$id.tar.gz"
		else
			farm_say "warning: the cached environment $dir is damaged: making it again"
		fi
	fi
	if [ -z "$icecc_tarball" ]; then
		rm -rf "$dir"
		tmp=$(mktemp -d "$envs/.new.XXXXXX")
		add=""
		for p in $plugins; do add="$add --addfile $p"; done
		echo "### icecc-create-env ($icecc_carries)" >>"$log"
		# The kernel is C: the C compiler stands in for the C++ one icecc-create-env asks for.
		# shellcheck disable=SC2086
		(cd "$tmp" && icecc-create-env --gcc "$gcc" "$gcc" $add) >>"$log" 2>&1 ||
			{ rm -rf "$tmp"; fail "icecc-create-env failed"; }
		made=$(find "$tmp" -maxdepth 1 -name '*.tar.gz' -type f)
		id=$(basename "$made" .tar.gz)
		printf '%s\n' "$id" | grep -Eqx '[0-9a-f]{32}' ||
			{ rm -rf "$tmp"; fail "icecc-create-env made no environment (${made:-nothing})"; }
		printf 'id %s\nsha256 %s\ncarries %s\n' "$id" "$(sha256sum <"$made" | cut -d' ' -f1)" \
			"$icecc_carries" >"$tmp/manifest"
		mv "$tmp" "$dir"
		icecc_tarball="$dir/$id.tar.gz"
		pg_log "icecc: made the environment $id in $dir"
	fi
	exec 8>&-
	set +f
	icecc_id=$id
}

# What the farm compiled, per host, from icecc's own log (pg_icecc_tally).
icecc_summary() {
	[ -n "$icecc_log" ] && [ -f "$icecc_log" ] || return 0
	pg_icecc_tally "$icecc_log" | cut -c1-400 |
		while IFS= read -r line; do farm_say "$line"; done
	gzip -f "$icecc_log"
}

# Which host built how many objects, and which jobs fell back to this
# machine (kbuild's compiler probes, which distcc runs here, are no objects).
distcc_summary() {
	[ -n "$distcc_log" ] || return 0
	sed -n 's/.* compile \([^ ]*\) on \([^ ]*\) completed ok$/\1 \2/p' "$distcc_log" |
		grep -v '^(null) ' | cut -d' ' -f2 | sort | uniq -c |
		while read -r n h; do pg_log "distcc: $h built $n objects"; done
	sed -n 's/.*connect to \([^ ]*\) failed: .*/\1/p' "$distcc_log" | sort | uniq -c |
		while read -r n h; do
			pg_log "distcc: $h could not be reached $n times (down?): its jobs went to the other hosts or here"
		done
	sed -n 's/.*still in backoff period for \([^ ]*\)$/\1/p' "$distcc_log" | sort | uniq -c |
		while read -r n h; do pg_log "distcc: $h skipped $n times, backing off after a failure"; done
	sed -n 's/.*failed to distribute .* to \([^ ]*\), running locally instead$/\1/p' "$distcc_log" |
		sort | uniq -c | while read -r n h; do
			pg_log "distcc: $h refused or failed $n jobs, compiled here instead"
		done
	n=$(grep -c 'failed to distribute, running locally instead' "$distcc_log" || true)
	[ "$n" = 0 ] || pg_log "distcc: $n jobs could not be distributed and were compiled here"
}

# The config depends on the fragment, the toolchain and the tree's Kconfig
# files (a series or a pull may change them).  Only those: re-running
# allnoconfig for a change elsewhere would make every object look stale.
kconfigs=$(cd "$src" && find . -name 'Kconfig*' -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum)
# no selection keeps the stamp of a build without one
selected=""
[ -z "$select" ] || selected=$(sha256sum <"$select")
stamp=$(printf '%s\n%s\n%s\n%s\n%s' "$(sha256sum <"$fragment")" "$stamp_tool" "$llvm" "$kconfigs" \
	"${selected:+$selected
}" | sha256sum | cut -d' ' -f1)

t0=$(pg_now)
if [ -f "$out/.config" ] && [ "$(cat "$out/.pullgate-config" 2>/dev/null)" = "$stamp" ]; then
	pg_log "config: up to date"
else
	# the selection first: a line of the fragment for the same option comes later and wins
	allconfig=$fragment
	if [ -n "$select" ]; then
		allconfig="$out/.pullgate-allconfig"
		cat "$select" "$fragment" >"$allconfig"
	fi
	echo "### allnoconfig + $fragment${select:+ + $select}" >>"$log"
	# Kconfig reads the fragment through the environment, so only this make sees it.
	KCONFIG_ALLCONFIG="$allconfig" make -s -C "$src" O="$out" "$@" allnoconfig \
		>>"$log" 2>&1 || fail "allnoconfig failed"
	rm -f "$out/.pullgate-config"
	# Check that every option of the fragment holds (or is refused on purpose).
	unset_next=""
	bad=""
	while IFS= read -r line; do
		case $line in
		"# pullgate: expect-unset") unset_next=1; continue ;;
		"# CONFIG_"*" is not set")
			opt=${line#"# "}; opt=${opt%% *}
			if grep -q "^$opt=" "$out/.config"; then bad="$bad $opt(want unset)"; fi ;;
		CONFIG_*=*)
			opt=${line%%=*}
			if [ -n "$unset_next" ]; then
				if grep -q "^$opt=" "$out/.config"; then
					bad="$bad $opt(requested to prove it is refused, but it was enabled)"
				else
					pg_log "config: $opt requested and refused by Kconfig, as expected"
				fi
			elif ! grep -qx "$line" "$out/.config"; then
				bad="$bad $opt(want ${line#*=})"
			fi ;;
		esac
		unset_next=""
	done <"$fragment"
	[ -z "$bad" ] || fail "the config does not honour the fragment:$bad"
	echo "$stamp" >"$out/.pullgate-config"
fi

# distccd (3.3 on) refuses -fplugin: with the kernel's GCC plugins every
# compile is refused and runs here.  Safe (never an object without its
# plugin), but no farm: say so before the build, not only after it.
if [ -n "$distcc_log" ] && grep -qx 'CONFIG_GCC_PLUGINS=y' "$out/.config"; then
	pg_log "distcc: warning: the config loads GCC plugins (-fplugin), which distccd refuses as insecure: those compiles run here"
fi

if [ -n "$icecc_log" ]; then
	# the plugins first (make prepare, here): the environment carries them
	echo "### make prepare (icecc: the GCC plugins, for the environment)" >>"$log"
	kmake "$@" prepare || fail "make prepare failed"
	icecc_environment
	farm_say "environment $icecc_id: $icecc_carries"
	: >"$icecc_log"
	export CCACHE_PREFIX=icecc ICECC_VERSION="$icecc_tarball" ICECC_LOGFILE="$icecc_log" \
		ICECC_DEBUG=debug ICECC_IGNORE_UNVERIFIED=1
	[ -z "$icecc_sock" ] || export ICECC_TEST_SOCKET="$icecc_sock"
	here_jobs=$PG_JOBS
	PG_JOBS=${PG_ICECC_JOBS:-$((PG_JOBS * 2))}
fi

echo "### make $targets" >>"$log"
# shellcheck disable=SC2086
if ! kmake "$@" $targets; then
	# icecc fails a compile when the daemon it was given went away (test
	# socket): the rest is compiled here, the objects made so far kept
	if [ -n "$icecc_log" ] && grep -q 'test socket error' "$icecc_log"; then
		farm_say "warning: the iceccd at $icecc_sock went away during the build: compiling the rest here"
		unset CCACHE_PREFIX ICECC_VERSION ICECC_TEST_SOCKET
		PG_JOBS=$here_jobs
		echo "### make $targets (here)" >>"$log"
		# shellcheck disable=SC2086
		kmake "$@" $targets || { distcc_summary; icecc_summary; farm_done; fail "make $targets failed"; }
	else
		distcc_summary
		icecc_summary
		farm_done
		fail "make $targets failed"
	fi
fi
distcc_summary
icecc_summary
farm_done
pg_log "built $targets in $(($(pg_now) - t0)) s ($out)"
