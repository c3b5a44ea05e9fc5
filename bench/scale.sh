#!/bin/sh
# scale.sh - a cold arm64 Image built locally, on distcc and on an icecream farm, same run: seconds, objects compiled remotely, objects equal.
#
# usage: bench/scale.sh [--no-plugins] [SIDE...]
#
# SIDEs (default: local distcc icecc) build the gate's real config
# (qemu-images/kernel.config, with its GCC plugins: randstruct) from an
# empty build dir with an empty ccache, on the series tree in
# $PULLGATE_HOME/work/build (run make check-kernel once first), one after
# the other, each in the same build dir path (moved aside after it), each
# with the randstruct seed of the first side and the same build timestamp,
# user and host, so that the objects can be compared byte for byte:
#   local   build.sh alone
#   distcc  two distccd on loopback ports (distccd refuses -fplugin: with
#           the plugins nothing is expected to be compiled remotely)
#   icecc   an icecream scheduler, the daemon this machine's compiles go
#           through and two daemons that compile, in a network namespace of
#           their own (so needs root and unshare --net), as check-icecc runs it
# Every daemon shares this machine's two cores: the figures are the share
# compiled remotely and the overhead, not a farm's speed-up (docs/scale.md
# says what N real cores would give).  --no-plugins builds the config
# without its GCC plugins instead (what distcc can distribute).
#
# Prints, per side, the seconds and build.sh's distcc or icecc lines, then
# how many of the first side's objects each other side built byte for byte
# the same.  A failed build fails the bench (its log's tail is printed).
# Not in make check: three cold builds, about 20 minutes on 2 cores.
set -eu
PG_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$PG_TOP/scripts/kernel/lib.sh"
wt="$PULLGATE_HOME/work/build"
[ -f "$wt/Makefile" ] || pg_die "no build worktree; run make check-kernel first"

plugins=1
if [ "${1:-}" = --no-plugins ]; then
	plugins=""
	shift
fi
sides=${*:-local distcc icecc}
case " $sides " in
*" icecc "*)
	if [ -z "${PG_SCALE_NETNS:-}" ]; then
		[ "$(id -u)" = 0 ] || pg_die "the icecc side starts iceccd, which needs root"
		set -- $sides
		[ -n "$plugins" ] || set -- --no-plugins "$@"
		exec unshare --net env PG_SCALE_NETNS=1 sh -c 'ip link set lo up && exec sh "$0" "$@"' \
			"$0" "$@"
	fi ;;
esac

bench=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-bench-scale.XXXXXX")
pids=""
cleanup() {
	for p in $pids; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
	rm -rf "$bench"
}
trap cleanup EXIT
chmod 1777 "$bench"
# until CMD succeeds, at most 60 s: a daemon states that it is ready
ready() {
	i=0
	until "$@"; do
		i=$((i + 1))
		[ "$i" -le 600 ] || return 1
		sleep 0.1
	done
}

frag="$PG_TOP/qemu-images/kernel.config"
if [ -z "$plugins" ]; then
	grep -v 'GCC_PLUGIN\|RANDSTRUCT' "$frag" >"$bench/frag.config"
	printf '# CONFIG_GCC_PLUGINS is not set\nCONFIG_RANDSTRUCT_NONE=y\n' >>"$bench/frag.config"
	frag="$bench/frag.config"
fi

distcc_hosts=""
start_distcc() {
	for n in a b; do
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		: >"$bench/distcc-$n.log"
		chmod 666 "$bench/distcc-$n.log"
		distccd --daemon --allow 127.0.0.1 --listen 127.0.0.1 --port "$port" --jobs 2 \
			--log-file "$bench/distcc-$n.log" --pid-file "$bench/distcc-$n.pid" 9>&-
		distcc_hosts="$distcc_hosts 127.0.0.1:$port/2"
	done
	ready test -s "$bench/distcc-a.pid" -a -s "$bench/distcc-b.pid" || pg_die "distccd wrote no pid file"
	pids="$pids $(cat "$bench/distcc-a.pid") $(cat "$bench/distcc-b.pid")"
}

icecc_sock="$bench/ice-here.d/sock"
start_icecc() {
	ice() { # NAME CMD...
		n=$1
		shift
		: >"$bench/ice-$n.log"
		chmod 666 "$bench/ice-$n.log"
		# -vv: a daemon says "Connected to scheduler" only from this verbosity on
		setsid "$@" -l "$bench/ice-$n.log" -vv </dev/null >/dev/null 2>&1 9>&- &
		pids="$pids $!"
	}
	ice scheduler icecc-scheduler -p 8765
	mkdir -p "$bench/ice-here.d"
	chmod 777 "$bench/ice-here.d"
	ICECC_TEST_SOCKET="$icecc_sock" ice here iceccd --no-remote -s 127.0.0.1:8765 -p 10245 \
		-b "$bench/envs-here" -N here -m 2
	for n in 1 2; do
		mkdir -p "$bench/ice-r$n.d"
		chmod 777 "$bench/ice-r$n.d"
		ICECC_TEST_SOCKET="$bench/ice-r$n.d/sock" ice "r$n" iceccd -s 127.0.0.1:8765 \
			-p $((10245 + n)) -b "$bench/envs-r$n" -N "remote$n" -m 2
	done
	for n in here r1 r2; do
		ready grep -q 'Connected to scheduler' "$bench/ice-$n.log" ||
			pg_die "iceccd $n did not reach the scheduler"
	done
}

o="$bench/o"
first=""
side() { # NAME: build.sh's farm lines, then the seconds; fails when the build does
	mkdir -p "$o/scripts/basic"
	if [ -n "$first" ]; then
		cp -p "$bench/$first/scripts/basic/randstruct.seed" \
			"$bench/$first/scripts/basic/.randstruct.seed.cmd" "$o/scripts/basic/"
	fi
	t0=$(pg_now)
	# no icecc test switch outside the icecc side: each daemon on loopback is "this machine"
	(
		case $1 in
		distcc) export PG_DISTCC_HOSTS="$distcc_hosts" ;;
		icecc) export PG_ICECC="$icecc_sock" ICECC_TEST_REMOTEBUILD=1 ;;
		esac
		CCACHE_DIR="$bench/ccache-$1" KBUILD_BUILD_TIMESTAMP="2025-06-01 00:00:00 UTC" \
			KBUILD_BUILD_USER=pullgate KBUILD_BUILD_HOST=bench \
			"$PG_TOP/scripts/kernel/build.sh" --fragment "$frag" "$wt" "$o" "$bench/$1.log" Image
	) >"$bench/$1.out" 2>&1 ||
		{ cat "$bench/$1.out" >&2; [ ! -f "$bench/$1.log" ] || tail -n 40 "$bench/$1.log" >&2
		  pg_die "the $1 build failed"; }
	t=$(($(pg_now) - t0))
	mv "$o" "$bench/$1"
	[ -n "$first" ] || first=$1
	grep -E '(distcc|icecc): ' "$bench/$1.out" | grep -v 'made the environment' | cut -c1-240 || true
	echo "$t"
}

what="the config without GCC plugins"
[ -z "$plugins" ] || what="the gate's config with its GCC plugins"
echo "bench: cold Image, $what; sides: $sides"
# one kernel job at a time per $PULLGATE_HOME (the tree is check-kernel's and the gate's)
exec 9>"$PULLGATE_HOME/.kernel.lock"
flock 9
for s in $sides; do
	case $s in
	local) ;;
	distcc) start_distcc ;;
	icecc) start_icecc ;;
	*) pg_die "unknown side '$s' (local, distcc, icecc)" ;;
	esac
	# not in $(...): a failed side ends the bench, not a subshell
	side "$s" >"$bench/$s.side"
	sed '$d' "$bench/$s.side" | sed "s/^/bench: $s: /"
	echo "bench: $s: $(tail -n 1 "$bench/$s.side") s"
done

# Every object of the first side against each other side's, byte for byte.
(cd "$bench/$first" && find . -name '*.o' | LC_ALL=C sort) >"$bench/objects"
total=$(wc -l <"$bench/objects")
for s in $sides; do
	[ "$s" != "$first" ] || continue
	same=0
	differ=""
	while read -r f; do
		if cmp -s "$bench/$first/$f" "$bench/$s/$f"; then
			same=$((same + 1))
		else
			differ="$differ $f"
		fi
	done <"$bench/objects"
	echo "bench: $s: $same of the $total objects of $first byte for byte the same${differ:+; differ:$(echo "$differ" | cut -c1-300)}"
done
t_first=$(tail -n 1 "$bench/$first.side")
for s in $sides; do
	[ "$s" != "$first" ] || continue
	awk -v a="$(tail -n 1 "$bench/$s.side")" -v b="$t_first" -v s="$s" -v f="$first" \
		'BEGIN { printf "bench: ratio %s/%s %.2f\n", s, f, a / b }'
done
