#!/bin/sh
# scale.sh - a cold arm64 Image built on distcc hosts beside the same build done locally, same run; the ratio.
#
# usage: bench/scale.sh [HOST[:PORT][/LIMIT]...]
#
# Both sides build the QEMU config without its GCC plugins (distccd refuses
# -fplugin, so with them nothing would be distributed: see docs/kernel.md,
# "distcc") from an empty build dir with an empty ccache, on the series tree
# in $PULLGATE_HOME/work/build (run make check-kernel once first).  Without
# hosts two distccd are started on loopback ports: they share this
# machine's cores, so the ratio then shows distcc's overhead, not a farm's
# speed-up; name real hosts for that.  Prints seconds, the objects each
# host built (build.sh's summary) and the ratio distcc/local.  A failed
# build on either side fails the bench (its log's tail is printed).
#
# Not in make check: two cold builds, about 20 minutes on 2 cores.  The
# pulls-per-hour figures with one build worktree and two are
# bench/throughput.sh's (docs/scale.md).
set -eu
PG_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$PG_TOP/scripts/kernel/lib.sh"
wt="$PULLGATE_HOME/work/build"
[ -f "$wt/Makefile" ] || pg_die "no build worktree; run make check-kernel first"

bench=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-bench-scale.XXXXXX")
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	rm -rf "$bench"
}
trap cleanup EXIT
chmod 1777 "$bench"

hosts="$*"
if [ -z "$hosts" ]; then
	for n in a b; do
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		: >"$bench/$n.log"
		chmod 666 "$bench/$n.log"
		distccd --daemon --allow 127.0.0.1 --listen 127.0.0.1 --port "$port" --jobs 2 \
			--log-file "$bench/$n.log" --pid-file "$bench/$n.pid"
		hosts="$hosts 127.0.0.1:$port/2"
	done
	# each daemon writes its pid file once it listens
	i=0
	until [ -s "$bench/a.pid" ] && [ -s "$bench/b.pid" ]; do
		i=$((i + 1))
		[ "$i" -le 100 ] || pg_die "distccd wrote no pid file in 10 s"
		sleep 0.1
	done
	pids="$(cat "$bench/a.pid") $(cat "$bench/b.pid")"
fi

grep -v 'GCC_PLUGIN\|RANDSTRUCT' "$PG_TOP/qemu-images/kernel.config" >"$bench/frag.config"
printf '# CONFIG_GCC_PLUGINS is not set\nCONFIG_RANDSTRUCT_NONE=y\n' >>"$bench/frag.config"

side() { # NAME [HOSTS]: build.sh's distcc lines, then the seconds; fails when the build does
	t0=$(pg_now)
	CCACHE_DIR="$bench/ccache-$1" PG_DISTCC_HOSTS="${2:-}" \
		"$PG_TOP/scripts/kernel/build.sh" --fragment "$bench/frag.config" "$wt" "$bench/$1" \
		"$bench/$1.log" Image >"$bench/$1.out" 2>&1 ||
		{ cat "$bench/$1.out" >&2; [ ! -f "$bench/$1.log" ] || tail -n 40 "$bench/$1.log" >&2
		  pg_die "the $1 build failed"; }
	t=$(($(pg_now) - t0))
	grep 'distcc: ' "$bench/$1.out" || [ $? -eq 1 ]
	echo "$t"
}
echo "bench: distcc on$hosts"
# not in $(...): a failed side ends the bench, not a subshell
side distcc "$hosts" >"$bench/distcc.side"
side local >"$bench/local.side"
sed '$d' "$bench/distcc.side" >&2
t_distcc=$(tail -n 1 "$bench/distcc.side")
t_local=$(tail -n 1 "$bench/local.side")
echo "bench: cold Image, distcc ${t_distcc} s, local ${t_local} s"
awk -v a="$t_distcc" -v b="$t_local" 'BEGIN { printf "bench: ratio distcc/local %.2f\n", a / b }'
