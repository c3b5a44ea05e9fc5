#!/bin/sh
# 50-ktap.t - "pullgate ktap": verdict and exit status on generated boot logs.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 14

good="$SCRATCH/good.log"
cat >"$good" <<'LOG'
[    0.500000] KTAP version 1
[    0.500001] 1..1
[    0.500002]     KTAP version 1
[    0.500003]     # Subtest: pullgate_flex
[    0.500004]     1..2
[    0.500005]     ok 1 pg_raw_flex_zeroed
[    0.500006]     ok 2 pg_flex_zeroed_and_counted # SKIP not today
[    0.500007] ok 1 pullgate_flex
[    0.900000] pullgate-init: done
[    0.910000] reboot: Power down
LOG

run "$PULLGATE" ktap "$good"
is "$rc" 0 "a clean boot exits 0"
like "$out" '^ktap: 1 passed, 0 failed, 1 skipped$' "the summary counts leaves"
like "$out" '^boot: 0\.900 s, marker seen, powered off$' "boot time is the marker's timestamp"
like "$out" '^skip +pullgate_flex\.pg_flex_zeroed_and_counted  # not today$' "skips keep their reason"

crash="$SCRATCH/crash.log"
head -n 6 "$good" >"$crash"
printf '[    0.6] Unable to handle kernel paging request at virtual address dead\n' >>"$crash"
printf '[    0.6] Internal error: Oops: 96000004 [#1] SMP\n' >>"$crash"
run "$PULLGATE" ktap "$crash"
is "$rc" 1 "a crash mid-suite exits 1"
like "$out" '^crashed: 1, splats: 1$' "the crash and the Oops are counted"
like "$out" '^CRASHED +pullgate_flex\.#2' "the missing test is named"

run "$PULLGATE" ktap --json "$crash"
is "$rc" 1 "--json keeps the exit status"
like "$out" '"kind": "oops"' "--json lists the splat"

run "$PULLGATE" ktap "$SCRATCH/nonexistent.log"
is "$rc" 3 "an unreadable log exits 3"

run "$PULLGATE" ktap
is "$rc" 2 "no LOGFILE is a usage error"

printf 'ok 1 \033[31mred\n' >"$SCRATCH/esc.log"
run "$PULLGATE" ktap "$SCRATCH/esc.log"
is "$rc" 1 "a log of one result and no boot exits 1 (evidence missing)"
like "$out" '^ok +red$' "its test is listed, named without the sequence"
unlike "$out" "$(printf '\033')" "escape sequences from the log are stripped"
