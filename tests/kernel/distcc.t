#!/bin/sh
# distcc.t - build.sh on two distcc daemons on loopback: both compile, the objects equal a local build's, a host down or a refused plugin costs nothing.
#
# Run by `make check-distcc` after `make check-kernel` (the tree, the build
# worktree and the configured build dir in $PULLGATE_HOME).  A bounded set
# of objects (PG_DISTCC_DIR, default lib/math/) is compiled with an empty
# ccache each time, so that every compile misses it and goes to distcc or
# the local compiler.
#
# distccd (3.3 on) refuses any compile with -fplugin= as insecure, and the
# gate's config loads the randstruct GCC plugin: with it no compile can be
# distributed.  So the farm is shown on the same config without GCC
# plugins, in a build dir of the test's own (on two daemons, locally, with
# a host down), and the real config's build is shown refused by both
# daemons and completed here, as build.sh says.
set -eu
: "${PULLGATE:?set PULLGATE to the pullgate binary}"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
: "${PULLGATE_HOME:=$HOME/.cache/pullgate}"
export PULLGATE_HOME
home=$PULLGATE_HOME
. "$TOP/tests/lib/tap.sh"
PULLGATE_HOME=$home
dir=${PG_DISTCC_DIR:-lib/math}
wt="$PULLGATE_HOME/work/build"
out="$PULLGATE_HOME/build/arm64-gcc"

command -v distccd >/dev/null || skip_all "distccd is not installed (scripts/deps.sh)"
[ -f "$out/.config" ] && [ -f "$wt/Makefile" ] ||
	{ echo "distcc.t: run make check-kernel first (no build dir in $PULLGATE_HOME)" >&2; exit 1; }
plan 17

# A free loopback port: bound by the kernel, then let go.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# distccd drops root for its own user: its log and pid files are in a
# directory of their own that user can reach ($SCRATCH is private).
D=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-distccd.XXXXXX")
chmod 1777 "$D"
TAP_CLEANUP="${TAP_CLEANUP:-} rm_distccd_dir"
rm_distccd_dir() { rm -rf "$D"; }
start_distccd() { # NAME PORT
	: >"$D/$1.log"
	chmod 666 "$D/$1.log"
	distccd --daemon --allow 127.0.0.1 --listen 127.0.0.1 --port "$2" --jobs 2 \
		--log-file "$D/$1.log" --pid-file "$D/$1.pid"
	TAP_CLEANUP="stop_distccd_$1 ${TAP_CLEANUP:-}"
}
stop_distccd() { [ -s "$D/$1.pid" ] && kill "$(cat "$D/$1.pid")"; }
stop_distccd_a() { stop_distccd a; }
stop_distccd_b() { stop_distccd b; }
port_a=$(free_port)
port_b=$(free_port)
dead_port "$SCRATCH/down.port"
port_down=$(cat "$SCRATCH/down.port")
start_distccd a "$port_a"
start_distccd b "$port_b"
wait_for test -s "$D/a.pid" -a -s "$D/b.pid" || true

# One kernel job at a time per $PULLGATE_HOME, as check.sh and the gate.
exec 9>"$PULLGATE_HOME/.kernel.lock"
flock 9

# The gate's config without the GCC plugins, in a build dir of our own,
# prepared once (with the shared ccache: this is not what is measured).
np="$SCRATCH/o-noplugins"
grep -v 'GCC_PLUGIN\|RANDSTRUCT' "$TOP/qemu-images/kernel.config" >"$SCRATCH/noplugins.config"
printf '# CONFIG_GCC_PLUGINS is not set\nCONFIG_RANDSTRUCT_NONE=y\n' >>"$SCRATCH/noplugins.config"
t0=$(date +%s)
"$TOP/scripts/kernel/build.sh" --fragment "$SCRATCH/noplugins.config" "$wt" "$np" \
	"$SCRATCH/prepare.log" prepare >"$SCRATCH/prepare.out" 2>&1 ||
	{ sed 's/^/# /' "$SCRATCH/prepare.out"; echo "Bail out! cannot prepare $np"; exit 1; }
echo "# prepared $np in $(($(date +%s) - t0)) s"

# Build the directory's objects afresh in build dir $1: no object, an empty ccache.
build() { # OUT NAME [HOSTS]
	find "$1/$dir" -name '*.o' -delete 2>/dev/null || true
	rm -rf "$SCRATCH/ccache"
	set +e
	frag=$TOP/qemu-images/kernel.config
	[ "$1" = "$np" ] && frag=$SCRATCH/noplugins.config
	CCACHE_DIR="$SCRATCH/ccache" PG_DISTCC_HOSTS="${3:-}" \
		"$TOP/scripts/kernel/build.sh" --fragment "$frag" "$wt" "$1" "$SCRATCH/$2.log" "$dir/" \
		>"$SCRATCH/$2.out" 2>&1
	rc=$?
	set -e
	mkdir -p "$SCRATCH/$2.obj"
	(cd "$1/$dir" && find . -name '*.o' | LC_ALL=C sort | cpio -pdm --quiet "$SCRATCH/$2.obj")
	return $rc
}
same_objects() { # A B: every object of A is in B, byte for byte, and no other
	(cd "$SCRATCH/$1.obj" && find . -name '*.o' | LC_ALL=C sort) >"$SCRATCH/$1.list"
	(cd "$SCRATCH/$2.obj" && find . -name '*.o' | LC_ALL=C sort) >"$SCRATCH/$2.list"
	cmp -s "$SCRATCH/$1.list" "$SCRATCH/$2.list" || return 1
	while read -r o; do cmp -s "$SCRATCH/$1.obj/$o" "$SCRATCH/$2.obj/$o" || return 1; done \
		<"$SCRATCH/$1.list"
}
compiled() { grep -c 'COMPILE_OK' "$D/$1.log" || true; }

# --- without plugins, on two daemons ----------------------------------------------------
t0=$(date +%s)
build "$np" farm "127.0.0.1:$port_a/2 127.0.0.1:$port_b/2" && rc=0 || rc=$?
t_farm=$(($(date +%s) - t0))
is "$rc" 0 "build.sh builds $dir on two distcc daemons"
nobj=$(find "$SCRATCH/farm.obj" -name '*.o' | wc -l)
ok "$([ "$nobj" -ge 4 ]; echo $?)" "$dir has objects enough for both hosts ($nobj)"
na=$(compiled a)
nb=$(compiled b)
echo "# daemon a (port $port_a) compiled $na jobs, daemon b (port $port_b) $nb"
ok "$([ "$na" -gt 0 ]; echo $?)" "the first daemon's log shows compile jobs ($na)"
ok "$([ "$nb" -gt 0 ]; echo $?)" "the second daemon's log shows compile jobs ($nb)"
summary=$(grep 'distcc: ' "$SCRATCH/farm.out" || true)
printf '%s\n' "$summary" | sed 's/^/# /'
like "$summary" "distcc: 127.0.0.1:$port_a/2 built $na objects" \
	"build.sh says how many objects the first host built"
like "$summary" "distcc: 127.0.0.1:$port_b/2 built $nb objects" "and the second"
[ "$na" -gt 0 ] && [ "$nb" -gt 0 ] ||
	grep -i 'error\|warn' "$SCRATCH/farm-distcc.log" | tail -n 10 | cut -c1-200 | sed 's/^/#   /'
like "$summary" "with -j4" "make's -j is the sum of the hosts' limits"

# --- locally ------------------------------------------------------------------------
t0=$(date +%s)
build "$np" local && rc=0 || rc=$?
t_local=$(($(date +%s) - t0))
is "$rc" 0 "build.sh builds $dir locally without hosts"
is "$(grep -c 'distcc' "$SCRATCH/local.out" || true) $(ls "$SCRATCH"/local-distcc.log 2>/dev/null | wc -l)" \
	"0 0" "without hosts nothing of distcc runs"
ok "$(same_objects farm local; echo $?)" \
	"the objects distcc built are byte for byte the local build's ($nobj objects)"
echo "# $dir: on two daemons ${t_farm} s, locally ${t_local} s (loopback: the same 2 cores)"

# --- one host down --------------------------------------------------------------------
build "$np" down "127.0.0.1:$port_down/2 127.0.0.1:$port_a/2" && rc=0 || rc=$?
is "$rc" 0 "with a host down the build still completes"
grep 'distcc: ' "$SCRATCH/down.out" | sed 's/^/# /'
like "$(cat "$SCRATCH/down.out")" "distcc: 127.0.0.1:$port_down could not be reached [0-9]+ times \\(down\\?\\)" \
	"and build.sh says which host could not be reached" ||
	grep -i "$port_down" "$SCRATCH/down-distcc.log" | head -n 5 | cut -c1-200 | sed 's/^/#   /' 
ok "$(same_objects down local; echo $?)" "the objects are the local build's still"

# --- the gate's config: GCC plugins, refused by distccd -----------------------------------
before_a=$(grep -c 'fplugin' "$D/a.log" || true)
build "$out" plugins "127.0.0.1:$port_a/2 127.0.0.1:$port_b/2" && rc=0 || rc=$?
is "$rc" 0 "with the gate's config (GCC plugins) the build completes"
grep 'distcc: ' "$SCRATCH/plugins.out" | sed 's/^/# /'
like "$(cat "$SCRATCH/plugins.out")" "distcc: warning: the config loads GCC plugins" \
	"build.sh warns that distccd refuses the plugins"
ok "$([ "$(grep -c 'fplugin' "$D/a.log" || true)" -gt "$before_a" ]; echo $?)" \
	"the daemon's log shows it refused -fplugin"
like "$(cat "$SCRATCH/plugins.out")" "distcc: 127.0.0.1:($port_a|$port_b)/2 refused or failed [0-9]+ jobs, compiled here instead" \
	"and build.sh names the hosts that refused and says the jobs were compiled here"
