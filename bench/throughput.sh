#!/bin/sh
# throughput.sh - pulls per hour through `pullgate serve` with one build worktree and with two, same run; the ratio.
#
# usage: bench/throughput.sh [-f] PULLGATE_BINARY
#
# A batch of BENCH_PULLS (8) small synthetic pulls, each a signed tag of one
# commit that adds a comment at the end of a different compiled file of
# lib/ (fixtures/kernel-select.sh makes them), is delivered at once by
# signed push records to `pullgate serve` (approval manual: each pull ends
# waiting for the maintainer, so every one is tested on the same base and
# nothing but the gate is measured), first with pipeline.build-worktrees: 1,
# then with 2.  Each side runs from the first delivery until the last pull
# waits, on refs/heads/bench-throughput (reset to the base each time), with
# the kept base boots and warning baselines of every build dir removed, so
# that each side builds and boots what a first batch on a base does.  The
# policy selects no KUnit suites for a pull (kunit-select-max: 0), so that
# a pull's builds compile what it changes and relink, with no
# reconfiguration (that cost is bench/select.sh's subject).  Prints
# each side's seconds and pulls per hour, and the ratio N=2 / N=1.
#
# Real tree (the default): $PULLGATE_HOME/linux at series (make
# check-kernel first), the shipped scripts.  A warm-up (not timed) first
# runs two other pulls with two build worktrees, so that the second one's
# O= dir holds a build: its first one is cold (its own RANDSTRUCT seed, so
# slot 1's ccache does not serve it), 10 to 15 minutes on 2 cores.  The
# sides then run with CCACHE_DISABLE=1, so that neither reuses the other's
# objects of the same pulls.  Nice it.
#
# -f: the stand-ins of tests/fakes (PULLGATE_DATADIR) on a small synthetic
# tree in a scratch PULLGATE_HOME, each build taking FAKE_BUILD_DELAY (2) s:
# the whole path checked end to end in about a minute; its figures are the
# stand-ins', not a kernel's.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
fake=""
if [ "${1:-}" = -f ]; then
	fake=1
	shift
fi
[ $# -eq 1 ] || { echo "usage: bench/throughput.sh [-f] PULLGATE_BINARY" >&2; exit 2; }
PULLGATE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
PULLS=${BENCH_PULLS:-8}
FILES="lib/argv_split.c lib/bcd.c lib/bsearch.c lib/cmdline.c lib/ctype.c lib/errseq.c
	lib/glob.c lib/bitrev.c lib/base64.c lib/bust_spinlocks.c lib/checksum.c lib/clz_ctz.c
	lib/cpumask.c lib/crc32.c lib/debug_locks.c lib/dec_and_lock.c"
[ "$PULLS" -ge 1 ] && [ "$PULLS" -le 14 ] || { echo "BENCH_PULLS: 1 to 14" >&2; exit 2; }

if [ -n "$fake" ]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-bench-throughput.XXXXXX")
	export PULLGATE_HOME="$work/home" PULLGATE_DATADIR="$TOP/tests/fakes"
	export FAKE_BUILD_DELAY="${FAKE_BUILD_DELAY:-2}"
	. "$TOP/scripts/kernel/lib.sh"
	# a tree the stand-ins build: every build is of a "merged" tree (overflow.h says fix)
	linux="$work/linux.git"
	git init -q --bare "$linux"
	git init -q "$work/src"
	mkdir -p "$work/src/include/linux"
	echo "/* overflow helpers: fix */" >"$work/src/include/linux/overflow.h"
	for f in $FILES; do
		mkdir -p "$work/src/$(dirname "$f")"
		echo "/* $f */" >"$work/src/$f"
	done
	git -C "$work/src" add -A
	git -C "$work/src" commit -q -m "a small tree for the stand-ins"
	git -C "$work/src" push -q "$linux" HEAD:refs/heads/series
	base_ref=refs/heads/series
else
	. "$TOP/scripts/kernel/lib.sh"
	[ -d "$PG_LINUX/.git" ] || pg_die "no tree; run make check-kernel first"
	work="$PG_BUILD/bench-throughput"
	rm -rf "$work"
	mkdir -p "$work"
	linux=$PG_LINUX
	base_ref=$PG_REF_SERIES
	export PULLGATE_DATADIR="$TOP"
fi
# tests/lib/serve.sh's helpers: start and stop the service, sign and deliver hooks, wait
SCRATCH=$work
SERVE_DATADIR=$PULLGATE_DATADIR
PATIENCE=7200
. "$TOP/tests/lib/serve.sh"
cleanup() {
	serve_kill
	[ -z "$fake" ] || rm -rf "$work"
}
trap cleanup EXIT

# the pulls: w1 and w2 for the warm-up, batch-1... for the sides
set -- w1="$(echo $FILES | cut -d' ' -f15)" w2="$(echo $FILES | cut -d' ' -f16)"
i=1
for f in $FILES; do
	[ "$i" -le "$PULLS" ] || break
	set -- "$@" "batch-$i=$f"
	i=$((i + 1))
done
FX="$work/fx"
"$TOP/fixtures/kernel-select.sh" "$linux" "$base_ref" "$FX" "$@" >"$work/fixture.log" 2>&1 ||
	{ tail -n 20 "$work/fixture.log" >&2; pg_die "the pulls could not be made"; }
base=$(cat "$FX/base")
# beside the fixture's policy (its keyring's path is relative to it), with the sender
# allowed and no KUnit selection: a pull's build compiles what it changes, no reconfiguration
{
	sed "s|^keyring:|repositories: ['$FX/sender.git']\n\nkeyring:|" "$FX/policy.yaml"
	printf '\npipeline:\n  kunit-select-max: 0\n'
} >"$FX/policy-bench.yaml"
export GNUPGHOME="$FX/gnupg"

tree() { git -C "$linux" "$@"; }
# the refs the bench's pulls left waiting, and only those
drop_refs() {
	for t in $(cut -d' ' -f1 "$FX/pulls"); do
		for r in "refs/heads/pullgate/$t" "refs/pullgate/tags/$t"; do
			tree update-ref -d "$r" 2>/dev/null || true
		done
	done
}

# side NAME WORKTREES TAG...: one batch through a fresh service; prints its seconds
side() {
	name=$1 n=$2
	shift 2
	tree update-ref refs/heads/bench-throughput "$base"
	drop_refs
	for d in "$PULLGATE_HOME/build/arm64-gcc" "$PULLGATE_HOME"/slots/*/build/arm64-gcc; do
		if [ -d "$d" ]; then rm -rf "$d"/warnings-* "$d"/base-boot-*; fi
	done
	CONFIG="$work/serve-$name.yaml"
	cat >"$CONFIG" <<EOF
listen:
  address: 127.0.0.1
  port: 0
state: $work/state-$name
policy: $FX/policy-bench.yaml
hooks:
  push:
    secret: $PUSH_SECRET
repositories:
  map:
    bench/sender: $FX/sender.git
pipeline:
  tree: $linux
  branch: bench-throughput
  verify-workers: 2
  build-worktrees: $n
EOF
	serve_start
	t0=$(date +%s.%N)
	ids=""
	for t in "$@"; do
		cat >"$work/$t.json" <<EOF
{ "repo": "bench/sender", "user": "bench",
  "changes": [ { "ref": "refs/tags/$t", "old": "0000000000000000000000000000000000000000",
                 "new": "$(git -C "$FX/sender.git" rev-parse "refs/tags/$t")" } ] }
EOF
		hook push "$work/$t.json" "$name-$t"
		[ "$code" = 202 ] || pg_die "$name: the hook for $t was answered $code: $out"
		ids="$ids $(printf '%s' "$out" | jq -r '.jobs[0]')"
	done
	for id in $ids; do
		s=$(wait_state "$id" waiting approved passed rejected error cancelled || true)
		[ "$s" = waiting ] ||
			pg_die "$name: pull $id ended $s: $(curl -s "$URL/api/pulls/$id" | jq -r .message)"
	done
	t1=$(date +%s.%N)
	serve_stop
	echo "$t1 - $t0" | bc
}

echo "bench: $PULLS pulls; ${fake:+stand-ins (tests/fakes), FAKE_BUILD_DELAY=$FAKE_BUILD_DELAY s; }tree $linux at $base"
warm=$(side warm 2 w1 w2)
awk -v s="$warm" 'BEGIN { printf "bench: warm-up, 2 pulls with 2 build worktrees: %.1f s (not counted)\n", s }'
[ -n "$fake" ] || export CCACHE_DISABLE=1
set --
i=1
while [ "$i" -le "$PULLS" ]; do
	set -- "$@" "batch-$i"
	i=$((i + 1))
done
one=$(side one 1 "$@")
two=$(side two 2 "$@")
tree update-ref -d refs/heads/bench-throughput
drop_refs
for side in "1 $one" "2 $two"; do
	set -- $side
	awk -v n="$1" -v s="$2" -v p="$PULLS" \
		'BEGIN { printf "bench: build-worktrees %s: %d pulls in %.1f s, %.1f pulls/hour\n", n, p, s, p * 3600 / s }'
done
awk -v a="$one" -v b="$two" 'BEGIN { printf "bench: ratio 2 / 1 (pulls per hour): %.2f\n", a / b }'
