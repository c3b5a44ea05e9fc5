#!/bin/sh
# 96-icecc-tally.t - pg_icecc_tally (scripts/kernel/lib.sh), build.sh's reading of icecc's log: what each host compiled, what fell back here and why, however the clients' writes met in the one log.
#
# Every icecc client appends to ICECC_LOGFILE, and a record is not always
# one write: a long argument (a kernel compile's command line) goes out
# with its prefix in one writev and the newline in another write, so a
# record of another client can land between them, on the same line.  These
# logs are written here, line by line as icecc writes them.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 7

tally() { (PG_TOP=$TOP; . "$TOP/scripts/kernel/lib.sh"; pg_icecc_tally "$1"); }
D="ICECC[%s] 2026-12-06 02:12:54: "
# ARGS PID OBJ: the record of a compile's start, with a long command line
args=""
i=0
while [ $i -lt 60 ]; do args="$args -DPG_LONG_ARGUMENT_$i=1"; i=$((i + 1)); done
invoked() { printf "$D%s" "$1" "invoked as: /usr/bin/icecc /usr/bin/aarch64-linux-gnu-gcc$args -c -o $2 ../$2.c"; }
rec() { printf "$D%s\n" "$1" "$2"; }

# The compiles of one build, each record on its own line.
{
	invoked 101 lib/a.o; echo; rec 101 "Have to use host 127.0.0.1:10246 - Job ID: 1 - env: x86_64"
	invoked 102 lib/b.o; echo; rec 102 "Have to use host 127.0.0.1:10247 - Job ID: 2 - env: x86_64"
	invoked 103 lib/c.o; echo; rec 103 "Have to use host 127.0.0.1:10246 - Job ID: 3 - env: x86_64"
	rec 103 "command needs stdout/stderr workaround, recompiling locally"
	rec 103 "local build forced by remote exception: Error 102 - command needs stdout/stderr workaround, recompiling locally"
	invoked 104 lib/d.o; echo; rec 104 "Have to use host 127.0.0.1:10247 - Job ID: 4 - env: x86_64"
	rec 104 "got exception Error 24 - connection refused (127.0.0.1:10247)"
	invoked 105 lib/e.o; echo; rec 105 "building myself, but telling localhost"
	invoked 106 lib/.tmp_probe.o; echo; rec 106 "Have to use host 127.0.0.1:10246 - Job ID: 5 - env: x86_64"
	# a pid that comes back later in the build
	invoked 101 lib/f.o; echo; rec 101 "Have to use host 127.0.0.1:10246 - Job ID: 6 - env: x86_64"
} >"$SCRATCH/apart.log"
want="127.0.0.1:10246 compiled 2 objects
127.0.0.1:10247 compiled 1 objects
127.0.0.1:10246: 1 objects compiled here again for their warnings (Error 102 - command needs stdout/stderr workaround, recompiling locally)
127.0.0.1:10247 failed 1 jobs (Error 24 - connection refused (127.0.0.1:10247)), compiled here instead
3 objects compiled here
farm compiled 3 of 6 objects"
is "$(tally "$SCRATCH/apart.log")" "$want" \
	"each record on a line of its own: each host's objects, the fallbacks with their reasons, probes left out"

# The same build, its clients' writes met: 102's start between 101's command
# line and its newline, 104's host choice after 103's, a record between
# another's start and newline and an empty line where the newlines came after.
{
	invoked 101 lib/a.o; invoked 102 lib/b.o; echo; echo
	rec 101 "Have to use host 127.0.0.1:10246 - Job ID: 1 - env: x86_64"
	rec 102 "Have to use host 127.0.0.1:10247 - Job ID: 2 - env: x86_64"
	invoked 103 lib/c.o; invoked 104 lib/d.o; rec 103 "Have to use host 127.0.0.1:10246 - Job ID: 3 - env: x86_64"
	echo; rec 104 "Have to use host 127.0.0.1:10247 - Job ID: 4 - env: x86_64"; echo
	rec 103 "command needs stdout/stderr workaround, recompiling locally"
	rec 103 "local build forced by remote exception: Error 102 - command needs stdout/stderr workaround, recompiling locally"
	rec 104 "got exception Error 24 - connection refused (127.0.0.1:10247)"
	invoked 105 lib/e.o; invoked 106 lib/.tmp_probe.o; echo; echo
	rec 105 "building myself, but telling localhost"
	rec 106 "Have to use host 127.0.0.1:10246 - Job ID: 5 - env: x86_64"
	invoked 101 lib/f.o; rec 101 "Have to use host 127.0.0.1:10246 - Job ID: 6 - env: x86_64"; echo
} >"$SCRATCH/met.log"
is "$(tally "$SCRATCH/met.log")" "$want" "records that met on one line are read apart: the same tally"
is "$(grep -c 'invoked as: .*invoked as: ' "$SCRATCH/met.log")" 3 "(the log has three lines with two starts on each)"

# A start this log does not have: its later records count for nothing, and
# do not stick to the next process with that pid.
{
	rec 201 "Have to use host 127.0.0.1:10246 - Job ID: 7 - env: x86_64"
	invoked 201 lib/g.o; echo; rec 201 "building myself, but telling localhost"
} >"$SCRATCH/orphan.log"
is "$(tally "$SCRATCH/orphan.log")" "1 objects compiled here
farm compiled 0 of 1 objects" "a host chosen before the log's start of that pid is not the next compile's"

# A host icecc names in no form of ours, a job that failed with no host.
{
	invoked 301 lib/h.o; echo; rec 301 "Have to use host <script>x</script> - Job ID: 8"
	invoked 302 lib/i.o; echo; rec 302 "got exception Error 1 - scheduler gone"
} >"$SCRATCH/odd.log"
is "$(tally "$SCRATCH/odd.log")" "(unnamed host) compiled 1 objects
(no host) failed 1 jobs (Error 1 - scheduler gone), compiled here instead
1 objects compiled here
farm compiled 1 of 2 objects" "a host named otherwise is '(unnamed host)', a failure before any host '(no host)'"

: >"$SCRATCH/empty.log"
is "$(tally "$SCRATCH/empty.log")" "farm compiled 0 of 0 objects" "an empty log: nothing compiled"
printf 'garbage\nICECC[x] 2026-12-06: invoked as: -o lib/z.o\n\001\002\n' >"$SCRATCH/junk.log"
is "$(tally "$SCRATCH/junk.log")" "farm compiled 0 of 0 objects" "lines that are no records of icecc's count for nothing"
