#!/bin/sh
# build.sh - a stand-in for scripts/kernel/build.sh in the gate tests: [--select FILE] SRC BUILD LOG.
#
# FAKE_BUILD picks what it does with the merged tree (the one whose
# include/linux/overflow.h carries take two's "fix"); the base tree always
# builds with one old warning.  Each build appends "base" or "merged" to
# BUILD/builds.  FAKE_BUILD:
#   ok      compile three objects
#   warn    and print a new warning
#   error   fail with a compiler error
#   silent  fail with no diagnostic
#   sleep   hang (to be killed or timed out), its pid in BUILD/build.pid
#   move    move the integration branch of FAKE_TREE to FAKE_MOVE_TO meanwhile
#   lock    leave a lock on FAKE_TREE's master, as another writer does (the test removes it)
#   retag   point FAKE_SENDER's refs/tags/FAKE_RETAG at FAKE_RETAG_TO meanwhile
#           (the sender pushes the tag again while the pull is tested)
#   tree    the tree's files under fake/ decide, for the base and the merge
#           alike (a queue's stack is both): a line "call NAME" with no line
#           "def NAME" fails the build ("fake/x.c:3: error: implicit
#           declaration of function 'NAME'"); a line "assert NAME == V" where
#           a line says "set NAME = V2", V2 not V, builds but leaves
#           BUILD/fake-kunit-fail naming the case, the assert's file and line
#           and the values, which boot.sh turns into a failing KUnit case
#           ("fake_NAME: EXPECTATION FAILED at fake/x.c:1").  Every build
#           removes that file first.
# FAKE_BUILD_DELAY: seconds to wait before building the merge (a workload
# for the benchmarks, never a test's synchronisation).
# FAKE_BUILD_WAIT=FILE: the merge's build waits until FILE exists (a test
# lets it go when it is ready), for a test's patience at most; a merged
# tree with a file fake-build-wait waits for the file it names too.
# FAKE_BUILD_LOG=FILE: each build appends "start SECONDS KIND BUILD PID" and
# "end SECONDS KIND BUILD PID" (date +%s.%N), for tests of builds run at once.
# FAKE_BUILD_MEET=DIR: a merge's build leaves a file in DIR and waits (a
# test's patience at most) until another has left one too: two builds that
# overlap, for sure.
# Every build writes a stand-in BUILD/arch/arm64/boot/Image naming its tree
# (tests/fakes' boot.sh reads it) and a BUILD/.config.
# As scripts/kernel/build.sh, it removes LOG's farm file (LOG's name with
# .log replaced by -farm.txt) when it starts.  With PG_ICECC (the gate's
# pipeline.icecc or --icecc) it says what an icecream farm did
# (pipeline/farm.h): an environment, two hosts, a failed one, here, the
# total; on stderr behind "build.sh: icecc: ", and, when it ends (built or
# not), in the farm file, renamed into place.  The base's environment and
# hosts are others than the merge's.  FAKE_ICECC_WARN=TEXT adds a line
# "warning: TEXT".  Every build writes what PG_ICECC it was given ("unset":
# none) to BUILD/icecc-KIND.  FAKE_FORGE=1: its "make" forges a farm, as a
# pull's Makefile could: "build.sh: icecc: " lines of another environment
# on stdout and stderr, and a farm file of its own.
# FAKE_OBJECTS=N compiles N more objects, FAKE_OBJECT_DELAY seconds each (for
# progress: docs/terminal-gate.txt); with FAKE_OBJECTS_HOLD=K and
# FAKE_OBJECTS_GO=FILE it stops after the K-th until FILE exists (a test's
# patience at most), so that a test sees a build part of the way.
set -eu
# the KUnit selection: kept beside the build, for the tests to read
select=""
if [ "${1:-}" = --select ]; then select=$2; shift 2; fi
src=$1 out=$2 log=$3
mkdir -p "$out"
kind=merged
grep -q fix "$src/include/linux/overflow.h" 2>/dev/null || kind=base
stamp() { [ -z "${FAKE_BUILD_LOG:-}" ] || echo "$1 $(date +%s.%N) $kind $out $$" >>"$FAKE_BUILD_LOG"; }
stamp start
# how long a wait for a test may last: tests/lib/tap.sh's PATIENCE
patience=$(($(date +%s) + ${PULLGATE_TEST_PATIENCE:-900}))
farm_file="${log%.log}-farm.txt"
rm -f "$farm_file"
if [ "$kind" = base ]; then
	icenv=00000000000000000000000000000ba5 host=base-host
else
	icenv=061fbd5764d1c3a1c1adf83ba8239f89 host=127.0.0.1:18771
fi
farm_lines() {
	echo "environment $icenv: aarch64-linux-gnu-gcc (stand-in) 12.2.0;" \
		"scripts/gcc-plugins/randomize_layout_plugin.so sha256" \
		"3f2a000000000000000000000000000000000000000000000000000000000001"
	echo "$host compiled 1 objects"
	echo "farm2 compiled 1 objects"
	echo "127.0.0.1:18772 failed 1 jobs (connection refused), compiled here instead"
	echo "1 objects compiled here"
	[ -z "${FAKE_ICECC_WARN:-}" ] || printf 'warning: %s\n' "$FAKE_ICECC_WARN"
	echo "farm compiled 2 of 3 objects"
}
# once "make" has ended, built or not: the farm file, whole or not at all
farm_done() {
	[ -n "${PG_ICECC:-}" ] || return 0
	farm_lines >"$farm_file.new.$$" && mv -f "$farm_file.new.$$" "$farm_file"
}
trap 'farm_done; stamp end' EXIT
if [ -n "${FAKE_FORGE:-}" ]; then
	forged="build.sh: icecc: environment 0badc0de0badc0de0badc0de0badc0de: forged"
	echo "$forged on stdout"
	echo "build.sh: icecc: farm compiled 99 of 99 objects"
	echo "$forged on stderr" >&2
	printf 'environment 0badc0de0badc0de0badc0de0badc0de: forged in the file\n%s\n' \
		"farm compiled 98 of 98 objects" >"$farm_file"
fi
echo "  CC      lib/a.o"
echo "  CC      lib/b.o"
echo "  AS      arch/arm64/kernel/entry.o"
i=0
while [ "$i" -lt "${FAKE_OBJECTS:-0}" ]; do
	i=$((i + 1))
	echo "  CC      drivers/fake/obj$i.o"
	[ -z "${FAKE_OBJECT_DELAY:-}" ] || sleep "$FAKE_OBJECT_DELAY"
	if [ "$i" = "${FAKE_OBJECTS_HOLD:-}" ]; then
		until [ -e "$FAKE_OBJECTS_GO" ] || [ "$(date +%s)" -ge "$patience" ]; do sleep 0.05; done
	fi
done
echo "lib/old.c:1:1: warning: an old warning [-Wold]"
printf '%s\n' "${PG_ICECC-unset}" >"$out/icecc-$kind"
# for people: the farm's lines on stderr too (the gate reads the file)
[ -z "${PG_ICECC:-}" ] || farm_lines | sed 's/^/build.sh: icecc: /' >&2
# FAKE_STALE: as make, compile include/linux/overflow.h (and print its old
# warning) only when it is newer than the last build
if [ -n "${FAKE_STALE:-}" ]; then
	if [ ! -e "$out/.fake-stamp" ] ||
	   [ -n "$(find "$src/include/linux/overflow.h" -newer "$out/.fake-stamp")" ]; then
		echo "include/linux/overflow.h:1:1: warning: an old warning of a changed file [-Wstale]"
	fi
	touch "$out/.fake-stamp"
fi
mkdir -p "$out/arch/arm64/boot"
echo "# stand-in config of tests/fakes" >"$out/.config"
# a selected option "holds" unless its name says it cannot
[ -z "$select" ] || grep -v '_UNBUILDABLE_' "$select" >>"$out/.config" || true
rm -f "$out/fake-kunit-fail"
# FAKE_BUILD=tree: a tree with a file fake/meet-NAME meets as FAKE_BUILD_MEET
# does, in the directory the file names: a build of it (the merge's, or a
# base's holding that merge) leaves a file there and waits until another
# has left one too, so that two runs on one stack overlap for sure
if [ "${FAKE_BUILD:-}" = tree ]; then
	for m in "$src"/fake/meet-*; do
		[ -f "$m" ] || continue
		d=$(cat "$m")
		mkdir -p "$d"
		: >"$d/$$"
		until [ "$(ls "$d" | wc -l)" -ge 2 ] || [ "$(date +%s)" -ge "$patience" ]; do
			sleep 0.05
		done
	done
fi
if [ "${FAKE_BUILD:-}" = tree ] && [ -d "$src/fake" ]; then
	files=$(cd "$src" && find fake -type f | LC_ALL=C sort)
	kunit=$(cd "$out" && pwd)/fake-kunit-fail
	if [ -n "$files" ] && ! (cd "$src" && awk -v kunit="$kunit" '
		{ sub(/^[ \t]+/, "") }
		$1 == "def" && NF >= 2 { def[$2] = 1 }
		$1 == "call" && NF >= 2 { n++; cfile[n] = FILENAME; cline[n] = FNR; cname[n] = $2 }
		$1 == "set" && $3 == "=" { val[$2] = $4 }
		$1 == "assert" && $3 == "==" {
			m++; aname[m] = $2; aval[m] = $4; afile[m] = FILENAME; aline[m] = FNR
		}
		END {
			for (i = 1; i <= n; i++)
				if (!(cname[i] in def)) {
					printf "%s:%d: error: implicit declaration of function '\''%s'\''\n",
						cfile[i], cline[i], cname[i]
					bad = 1
				}
			for (i = 1; i <= m; i++)
				if ((aname[i] in val) && val[aname[i]] != aval[i])
					printf "fake_%s %s:%d %s == %s, but %s == %s\n", aname[i],
						afile[i], aline[i], aname[i], aval[i], aname[i],
						val[aname[i]] >>kunit
			exit bad
		}' $files); then
		exit 2
	fi
fi
if [ "$kind" = base ]; then
	echo base >>"$out/builds"
	echo "stand-in Image of the base tree" >"$out/arch/arm64/boot/Image"
	exit 0
fi
if [ -n "${FAKE_BUILD_MEET:-}" ]; then
	mkdir -p "$FAKE_BUILD_MEET"
	: >"$FAKE_BUILD_MEET/$$"
	until [ "$(ls "$FAKE_BUILD_MEET" | wc -l)" -ge 2 ] || [ "$(date +%s)" -ge "$patience" ]; do
		sleep 0.05
	done
fi
for go in "${FAKE_BUILD_WAIT:-}" "$(cat "$src/fake-build-wait" 2>/dev/null || true)"; do
	[ -n "$go" ] || continue
	until [ -e "$go" ] || [ "$(date +%s)" -ge "$patience" ]; do sleep 0.05; done
done
sleep "${FAKE_BUILD_DELAY:-0}"
echo merged >>"$out/builds"
echo "stand-in Image of the merged tree" >"$out/arch/arm64/boot/Image"
# the pid of a hanging build is known before anyone waits on merged-built-once
if [ "${FAKE_BUILD:-ok}" = sleep ]; then
	echo $$ >"$out/build.pid"
fi
: >"$out/merged-built-once"
case ${FAKE_BUILD:-ok} in
ok) ;;
warn) echo "include/linux/overflow.h:2:5: warning: a new warning [-Wnew]" ;;
error) echo "lib/overflow.c:3:7: error: 'boom' undeclared"; exit 2 ;;
silent) echo "make: *** [Makefile:1] Error 1"; exit 2 ;;
sleep) exec sleep 100000 ;; # until the test or the gate kills it
move) git --git-dir="$FAKE_TREE" update-ref refs/heads/master "$FAKE_MOVE_TO" ;;
lock) : >"$FAKE_TREE/refs/heads/master.lock" ;;
retag) git --git-dir="$FAKE_SENDER" update-ref "refs/tags/$FAKE_RETAG" "$FAKE_RETAG_TO" ;;
esac
exit 0
