#!/bin/sh
# icecc.t - build.sh on an icecream farm on loopback (a scheduler, two compiling daemons): the gate's real config, GCC plugins and all, compiled remotely, byte for byte the local objects; no scheduler, no daemon: compiled here.
#
# Run by `make check-icecc` after `make check-kernel` (the tree, the build
# worktree and the configured build dir in $PULLGATE_HOME).  A bounded set
# of objects is compiled with an empty ccache each time, so that every
# compile misses it and goes to icecc: all of lib/ (PG_ICECC_DIR) locally
# and on the farm, then lib/math/ (PG_ICECC_SMALL, within it) for the ways a
# farm fails.
#
# The farm runs in a network namespace of its own (unshare --net: only its
# loopback), so that nothing the scheduler announces leaves the machine,
# with fixed ports there.  Every daemon shares 127.0.0.1, so icecc would
# take each of them for this machine and compile here: ICECC_TEST_REMOTEBUILD
# (icecream's own test switch) makes a job the scheduler gave another daemon
# go to it, as it would on another machine.  The daemons need root (they
# compile in a chroot of the environment): without it, or without
# namespaces, this says why and skips.
set -eu
: "${PULLGATE:?set PULLGATE to the pullgate binary}"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
: "${PULLGATE_HOME:=$HOME/.cache/pullgate}"
export PULLGATE_HOME

if [ -z "${PG_ICECC_NETNS:-}" ]; then
	if [ "$(id -u)" = 0 ] && command -v icecc-scheduler >/dev/null && command -v iceccd >/dev/null &&
		command -v ip >/dev/null && unshare --net true 2>/dev/null; then
		exec unshare --net env PG_ICECC_NETNS=1 sh -c 'ip link set lo up && exec sh "$0"' "$0"
	fi
fi
home=$PULLGATE_HOME
. "$TOP/tests/lib/tap.sh"
PULLGATE_HOME=$home
[ "$(id -u)" = 0 ] || skip_all "iceccd compiles in a chroot and must start as root; this runs as $(id -un)"
command -v icecc-scheduler >/dev/null && command -v iceccd >/dev/null && command -v icecc >/dev/null ||
	skip_all "icecream (icecc) is not installed (scripts/deps.sh)"
command -v ip >/dev/null || skip_all "no ip (iproute2, scripts/deps.sh) to bring up a network namespace's loopback"
[ -n "${PG_ICECC_NETNS:-}" ] ||
	skip_all "no network namespace (unshare --net failed): the farm would announce itself beyond loopback"
dir=${PG_ICECC_DIR:-lib}
small=${PG_ICECC_SMALL:-lib/math}
case $small in "$dir"/*) ;; *) echo "icecc.t: $small is not within $dir" >&2; exit 1 ;; esac
wt="$PULLGATE_HOME/work/build"
out="$PULLGATE_HOME/build/arm64-gcc"
[ -f "$out/.config" ] && [ -f "$wt/Makefile" ] ||
	{ echo "icecc.t: run make check-kernel first (no build dir in $PULLGATE_HOME)" >&2; exit 1; }
grep -qx 'CONFIG_GCC_PLUGIN_RANDSTRUCT=y' "$out/.config" ||
	{ echo "icecc.t: $out/.config builds no randstruct plugin: not the gate's config" >&2; exit 1; }
plan 29

# The daemons drop root for their own user: their logs and sockets are in
# a directory of their own that user can reach ($SCRATCH is private).
D=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-icecc.XXXXXX")
chmod 1777 "$D"
ICE_PIDS=""
stop_farm() {
	# each daemon leads its own process group (setsid): its jobs go with it
	for p in $ICE_PIDS; do kill -9 -- "-$p" 2>/dev/null || kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$D"
}
TAP_CLEANUP="stop_farm ${TAP_CLEANUP:-}"
# start NAME ARGS...: the scheduler or a daemon, in a process group of its own
start() {
	name=$1
	shift
	: >"$D/$name.log"
	chmod 666 "$D/$name.log"
	setsid "$@" -l "$D/$name.log" -vvv </dev/null >"$D/$name.out" 2>&1 &
	ICE_PIDS="$ICE_PIDS $!"
	eval "pid_$name=$!"
}
daemon() { # NAME PORT [--no-remote]
	mkdir -p "$D/$1.sock.d"
	chmod 777 "$D/$1.sock.d"
	ICECC_TEST_SOCKET="$D/$1.sock.d/sock" start "$1" iceccd -s 127.0.0.1:8765 -p "$2" \
		-b "$D/envs-$1" -N "$1" -m 2 ${3:-}
}
connected() { grep -q 'Connected to scheduler' "$D/$1.log"; }
logins() { grep -c '^.*: login ' "$D/scheduler.log" || true; }
start scheduler icecc-scheduler -p 8765
daemon here 10245 --no-remote
daemon remote1 10246
daemon remote2 10247
wait_for connected here && wait_for connected remote1 && wait_for connected remote2 ||
	{ tail -n 5 "$D"/*.log | sed 's/^/# /'; echo "Bail out! the daemons did not reach the scheduler"; exit 1; }
# a daemon that cannot chroot takes no remote job: that is this machine's limit, not build.sh's
! grep -q 'Cannot use chroot' "$D/remote1.log" "$D/remote2.log" ||
	skip_all "iceccd cannot chroot here (its log: Cannot use chroot): no daemon can compile a remote job"

# One kernel job at a time per $PULLGATE_HOME, as check.sh and the gate.
exec 9>"$PULLGATE_HOME/.kernel.lock"
flock 9

# Build a directory's objects afresh: no object, an empty ccache; keep them
# under NAME.obj by their path in the build dir.
build() { # NAME DIR [DAEMON]
	find "$out/$2" -name '*.o' -delete 2>/dev/null || true
	rm -rf "$SCRATCH/ccache"
	set +e
	CCACHE_DIR="$SCRATCH/ccache" PG_ICECC="${3:-}" ICECC_TEST_REMOTEBUILD=1 \
		ICECC_PREFERRED_HOST="${PREFER:-}" \
		"$TOP/scripts/kernel/build.sh" "$wt" "$out" "$SCRATCH/$1.log" "$2/" \
		>"$SCRATCH/$1.out" 2>&1
	rc=$?
	set -e
	mkdir -p "$SCRATCH/$1.obj"
	(cd "$out" && find "$2" -name '*.o' | LC_ALL=C sort | cpio -pdm --quiet "$SCRATCH/$1.obj")
	grep 'icecc: ' "$SCRATCH/$1.out" | cut -c1-300 | sed "s/^/# $1: /" || true
	return $rc
}
# same_objects A B DIR: the objects A and B built under DIR are the same files, byte for byte
same_objects() {
	for side in "$1" "$2"; do
		(cd "$SCRATCH/$side.obj" && find "./$3" -name '*.o' | LC_ALL=C sort) >"$SCRATCH/$side.list"
	done
	[ -s "$SCRATCH/$1.list" ] && cmp -s "$SCRATCH/$1.list" "$SCRATCH/$2.list" || return 1
	while read -r o; do cmp -s "$SCRATCH/$1.obj/$o" "$SCRATCH/$2.obj/$o" || return 1; done \
		<"$SCRATCH/$1.list"
}
# compiled NAME: the sources a daemon's log shows it compiled (not kbuild's probes, of /dev/null)
compiled() { grep 'remote compile for file ' "$D/$1.log" | grep -vc 'remote compile for file /dev/null$' || true; }
compiled_at_least() { [ "$(compiled "$1")" -ge "$2" ]; }
# said NAME HOST: the count build.sh gives for HOST, 0 when it names none
said() { sed -n "s/.*icecc: $2 compiled \\([0-9]*\\) objects\$/\\1/p" "$SCRATCH/$1.out" | head -n1 | grep . || echo 0; }
# again NAME HOST: the jobs of HOST icecc compiled here again for their warnings
again() { sed -n "s/.*icecc: $2: \\([0-9]*\\) objects compiled here again .*/\\1/p" "$SCRATCH/$1.out" | grep . || echo 0; }
sock="$D/here.sock.d/sock"
plugin="$out/scripts/gcc-plugins/randomize_layout_plugin.so"

# --- locally: the objects to compare with --------------------------------------------
build local "$dir" && rc=0 || rc=$?
is "$rc" 0 "build.sh builds $dir/ locally"
nobj=$(find "$SCRATCH/local.obj/$dir" -name '*.o' | wc -l)
ok "$([ "$nobj" -ge 20 ]; echo $?)" "$dir/ has objects enough for a farm ($nobj)"
is "$(grep -c 'icecc' "$SCRATCH/local.out" || true) $(ls "$SCRATCH"/local-farm.txt 2>/dev/null | wc -l)" "0 0" \
	"without PG_ICECC nothing of icecc runs, and no farm file is written"

# --- on the farm ------------------------------------------------------------------------
# Which daemon gets a job is the scheduler's choice; each is made to get
# every job of one build (ICECC_PREFERRED_HOST, the scheduler's own
# override), so that each is shown to compile, whatever it would choose.
PREFER=remote1 build farm "$dir" "$sock" && rc=0 || rc=$?
is "$rc" 0 "build.sh builds $dir/ through icecream"
# a daemon may write its log after the client has the object: wait for the count, then compare
wait_for compiled_at_least remote1 "$nobj" || true
n1=$(compiled remote1)
echo "# remote1 compiled $n1 sources (its log)"
# icecc compiles a job again here when it cannot show its warnings as they came (Error 102)
redone=$(again farm 127.0.0.1:10246)
is "$(($(said farm 127.0.0.1:10246) + redone))" "$nobj" \
	"build.sh says the first daemon compiled every object of $dir/ ($nobj, $redone of them again here for their warnings)"
is "$n1" "$nobj" "and the daemon's log shows as many sources"
like "$(cat "$SCRATCH/farm.out")" "icecc: farm compiled $((nobj - redone)) of $nobj objects" \
	"build.sh says how many of all the farm compiled"
ok "$(same_objects farm local "$dir"; echo $?)" \
	"the farm's objects are byte for byte the local build's ($nobj objects, randstruct plugin and all)"
ok "$(grep -q "final arguments: .*-fplugin=$plugin" "$D/remote1.log"; echo $?)" \
	"the remote compiles loaded the build dir's randstruct plugin (-fplugin= in the daemon's log)"
sum=$(sha256sum <"$plugin" | cut -d' ' -f1)
env_line=$(grep 'icecc: environment ' "$SCRATCH/farm.out" || true)
like "$env_line" "icecc: environment [0-9a-f]{32}: aarch64-linux-gnu-gcc .*; scripts/gcc-plugins/randomize_layout_plugin.so sha256 $sum" \
	"build.sh names the environment: its id, the compiler, the plugin and its SHA-256"
id=$(printf '%s\n' "$env_line" | sed -n 's/.*icecc: environment \([0-9a-f]\{32\}\):.*/\1/p')
ok "$(tar -tzf "$(find "$PULLGATE_HOME/icecc-envs" -name "$id.tar.gz")" | grep -qx "${plugin#/}"; echo $?)" \
	"the environment carries the plugin at the path -fplugin= names"
is "$(cat "$SCRATCH/farm-farm.txt" 2>&1)" \
	"$(sed -n 's/^build.sh: icecc: //p' "$SCRATCH/farm.out" | grep -v '^made the environment')" \
	"build.sh writes the same lines, once make has ended, to the farm file beside the log (the gate reads it)"
ok "$(zcat "$SCRATCH/farm-icecc.log.gz" | grep -q 'Have to use host 127.0.0.1:10246'; echo $?)" \
	"icecc's own log is kept, gzipped, beside the build log"
PREFER=remote2 build farm2 "$small" "$sock" && rc=0 || rc=$?
nsmall=$(find "$SCRATCH/local.obj/$small" -name '*.o' | wc -l)
wait_for compiled_at_least remote2 "$nsmall" || true
is "$rc $(said farm2 127.0.0.1:10247) $(compiled remote2)" "0 $nsmall $nsmall" \
	"the second daemon compiles every object of $small/ ($nsmall), as build.sh and its log say"
ok "$(same_objects farm2 local "$small"; echo $?)" "byte for byte the local build's"

# --- the environment is made once, and made again when damaged -------------------------
build again "$small" "$sock" && rc=0 || rc=$?
is "$rc" 0 "a build where the scheduler places every job"
m=$(sed -n 's/.*icecc: farm compiled \([0-9]*\) of [0-9]* objects$/\1/p' "$SCRATCH/again.out")
here=$(sed -n 's/.*icecc: \([0-9]*\) objects compiled here$/\1/p' "$SCRATCH/again.out" | grep . || echo 0)
is "$(($(said again 127.0.0.1:10246) + $(said again 127.0.0.1:10247))) $((m + here))" "$m $nsmall" \
	"build.sh accounts for every object: the hosts' counts make the farm's, with those compiled here all of $small/"
is "$(grep -c 'made the environment' "$SCRATCH/again.out" || true) $(grep -c "icecc: environment $id:" "$SCRATCH/again.out" || true)" \
	"0 1" "it reuses the environment: the same id, nothing made"
tarball=$(find "$PULLGATE_HOME/icecc-envs" -name "$id.tar.gz")
printf 'x' >>"$tarball"
build damaged "$small" "$sock" && rc=0 || rc=$?
like "$(cat "$SCRATCH/damaged.out")" "icecc: warning: the cached environment .* is damaged: making it again" \
	"a damaged cached environment is noticed"
like "$(cat "$SCRATCH/damaged.out")" "icecc: environment $id:" "and made again, the same (its id is its content's)"
ok "$([ "$rc" = 0 ] && same_objects damaged local "$small"; echo $?)" "and the objects are the local build's"

# --- no daemon at the socket given: compiled here -------------------------------------
build nosock "$small" "$D/nowhere.sock" && rc=0 || rc=$?
like "$(cat "$SCRATCH/nosock.out")" "icecc: warning: no iceccd socket at $D/nowhere.sock: compiling here" \
	"with no daemon at the socket build.sh says so"
ok "$([ "$rc" = 0 ] && same_objects nosock local "$small"; echo $?)" "and builds here, the same objects"

# --- the scheduler gone: the daemon gives every job back -------------------------------
kill -9 "$pid_scheduler"
wait_for gone "$pid_scheduler"
before=$(($(compiled remote1) + $(compiled remote2)))
build nosched "$small" "$sock" && rc=0 || rc=$?
is "$rc" 0 "with no scheduler the build completes"
like "$(cat "$SCRATCH/nosched.out")" "icecc: farm compiled 0 of $nsmall objects" "and build.sh says the farm compiled none of the $nsmall"
is "$(($(compiled remote1) + $(compiled remote2)))" "$before" "(the daemons' logs agree)"
ok "$(same_objects nosched local "$small"; echo $?)" "the objects are the local build's"

# --- the local daemon gone (its socket left behind): the rest compiled here -------------
kill -9 "$pid_here"
wait_for gone "$pid_here"
build gone "$small" "$sock" && rc=0 || rc=$?
like "$(cat "$SCRATCH/gone.out")" "icecc: warning: the iceccd at $sock went away during the build: compiling the rest here" \
	"when the daemon is gone build.sh says so"
ok "$([ "$rc" = 0 ] && same_objects gone local "$small"; echo $?)" "and completes here, the same objects"
