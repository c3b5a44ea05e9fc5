#!/bin/sh
# gate-stages.sh - wall time of each pullgate gate stage on the real tree against kunit.py run --arch=arm64, same run.
#
# usage: bench/gate-stages.sh PULLGATE_BINARY [cold|warm]
#
# Replays take two of the incident (fixtures/kernel-incident.sh) through
# `pullgate gate` and then runs `kunit.py run --arch=arm64` on the merged
# tree with the same KUnit options (the CONFIG_*=y lines of
# qemu-images/kernel.config that kunit.py can take).  "cold" (the default)
# empties the gate's build dir and turns ccache off for both sides; "warm"
# keeps the gate's build dir and ccache as they are (what a maintainer's
# second pull costs) while kunit.py still starts cold.  Needs `make
# check-kernel` first.  Prints each stage's seconds and its ratio to
# kunit.py's total.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/scripts/kernel/lib.sh"
[ $# -ge 1 ] || pg_die "usage: bench/gate-stages.sh PULLGATE_BINARY [cold|warm]"
pullgate=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mode=${2:-cold}
[ -d "$PG_LINUX/.git" ] || pg_die "no tree; run make check-kernel first"
FX="$PULLGATE_HOME/incident-kernel"
bench="$PG_BUILD/bench-gate"
rm -rf "$bench"
mkdir -p "$bench"

"$TOP/fixtures/kernel-incident.sh" "$FX" >"$bench/fixture.log" 2>&1
if [ "$mode" = cold ]; then
	export CCACHE_DISABLE=1
	rm -rf "$PG_BUILD/arm64-gcc"
fi
GNUPGHOME="$FX/gnupg" "$pullgate" gate --json --branch incident --policy "$FX/policy.yaml" "$FX/kees.git" \
	hardening-v6.16-rc1-fix1-take2 >"$bench/gate.json" 2>"$bench/gate.err" ||
	{ tail -n 20 "$bench/gate.err" >&2; pg_die "the gate did not approve take two"; }

# kunit.py on the tree the gate built, always cold, with the same KUnit options
grep -E '^CONFIG_[A-Z0-9_]+=y$' "$TOP/qemu-images/kernel.config" |
	grep -v -e '^CONFIG_UBSAN_SIGNED_WRAP=' >"$bench/kunitconfig"
t0=$(pg_now)
(cd "$PULLGATE_HOME/work/build" && CCACHE_DISABLE=1 python3 tools/testing/kunit/kunit.py run \
	--arch=arm64 --cross_compile=aarch64-linux-gnu- --build_dir="$bench/kunit" \
	--kunitconfig="$bench/kunitconfig" --jobs="$PG_JOBS" --timeout=300) \
	>"$bench/kunit.log" 2>&1 || { tail -n 20 "$bench/kunit.log" >&2; pg_die "kunit.py failed"; }
kunit=$(($(pg_now) - t0))

echo "bench: mode $mode; kunit.py run --arch=arm64 (cold): $kunit s"
grep -E 'Testing complete|Ran [0-9]+ tests' "$bench/kunit.log" | tail -n 1 | sed 's/^/bench: kunit.py: /'
jq -r '.stages[] | "\(.name) \(.seconds) \(.summary)"' "$bench/gate.json" |
	while read -r name secs summary; do
		awk -v n="$name" -v s="$secs" -v k="$kunit" -v m="$summary" \
			'BEGIN { printf "bench: gate %-8s %8.1f s  ratio to kunit.py %.2f  (%s)\n", n, s, s / k, m }'
	done
jq -r '[.stages[].seconds] | add' "$bench/gate.json" |
	awk -v k="$kunit" '{ printf "bench: gate total    %8.1f s  ratio to kunit.py %.2f\n", $1, $1 / k }'
rm -rf "$bench/kunit"
