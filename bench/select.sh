#!/bin/sh
# select.sh - what the pull-aware KUnit selection adds to a warm gate run: objects compiled and seconds, as a ratio.
#
# usage: bench/select.sh PULLGATE_BINARY
#
# The pulls of fixtures/kernel-select.sh go through `pullgate gate --stages
# merge,build,boot` on refs/heads/bench-select (reset to series each time),
# all in the same run, on the warm build dir and ccache of $PULLGATE_HOME:
#   without  the ext4 pull with kunit-select-max: 0 (the fixed suites only)
#   with     the same pull with the default cap (fs/ext4/.kunitconfig added)
#   back     the Documentation pull (selects nothing) right after: the
#            reconfiguration back to the fixed suites
# Before "without" and "with" the Documentation pull puts the build dir's
# config back to the fixed suites, and the kept base boots and warning
# baselines are removed, so both sides build and boot the base as the
# first pull on a base does.  Prints per side the objects compiled (the
# base's and the merge's builds, from the run's build.log), the build and
# boot stages' seconds and the run's, and the ratios with/without.  Needs `make check-kernel` first; nice it.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/scripts/kernel/lib.sh"
[ $# -eq 1 ] || pg_die "usage: bench/select.sh PULLGATE_BINARY"
pullgate=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -d "$PG_LINUX/.git" ] || pg_die "no tree; run make check-kernel first"
bench="$PG_BUILD/bench-select"
FX="$bench/fx"
rm -rf "$bench"
mkdir -p "$bench"
"$TOP/fixtures/kernel-select.sh" "$PG_LINUX" "$PG_REF_SERIES" "$FX" >"$bench/fixture.log" 2>&1
export GNUPGHOME="$FX/gnupg"
{ cat "$FX/policy.yaml"; printf '\npipeline:\n  kunit-select-max: 0\n'; } >"$FX/policy-off.yaml"

# run SIDE POLICY TAG: one gate run; prints "objects build_s boot_s total_s"
run() {
	pg_git update-ref refs/heads/bench-select "$(cat "$FX/base")"
	t0=$(date +%s.%N)
	"$pullgate" gate --json --stages merge,build,boot --branch bench-select --policy "$2" \
		"$FX/sender.git" "$3" >"$bench/$1.json" 2>"$bench/$1.err" ||
		pg_die "the gate failed on the $1 side (see $bench/$1.json)"
	t1=$(date +%s.%N)
	# the base's build and the merge's both write the run's build.log
	# (grep -c exits 1 when it counts none: a build with nothing to compile)
	log="$(jq -r .run_dir "$bench/$1.json")/build.log"
	[ -f "$log" ] || pg_die "the $1 side left no build log ($log)"
	n=$(grep -cE '^  (CC|AS) ' "$log") || [ $? -eq 1 ] || pg_die "cannot read $log"
	jq -r --arg total "$(echo "$t1 - $t0" | bc)" --arg n "$n" '
		(.stages[] | select(.name == "build") | .seconds) as $b |
		(.stages[] | select(.name == "boot") | .seconds) as $o |
		"\($n) \($b) \($o) \($total)"' "$bench/$1.json"
}

# the base's kept boots and warning baselines: a first pull on the base needs both
forget_base() { rm -rf "$PG_BUILD/arm64-gcc"/base-boot-* "$PG_BUILD/arm64-gcc"/warnings-*; }
run warm1 "$FX/policy.yaml" select-docs >/dev/null
forget_base
without=$(run without "$FX/policy-off.yaml" select-ext4)
run warm2 "$FX/policy.yaml" select-docs >/dev/null
forget_base
with=$(run with "$FX/policy.yaml" select-ext4)
back=$(run back "$FX/policy.yaml" select-docs)
pg_git update-ref -d refs/heads/bench-select

echo "pull select-ext4, selection: $(jq -r .selection.note "$bench/with.json")"
printf '%-8s %8s %8s %8s %8s\n' side objects build_s boot_s total_s
printf '%-8s %8s %8s %8s %8s\n' without $without
printf '%-8s %8s %8s %8s %8s\n' with $with
printf '%-8s %8s %8s %8s %8s\n' back $back
# shellcheck disable=SC2086
set -- $without $with
echo "ratio with/without: total $(echo "scale=2; $8 / $4" | bc), build $(echo "scale=2; $6 / $2" | bc)," \
	"objects $5 vs $1"
