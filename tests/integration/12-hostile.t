#!/bin/sh
# 12-hostile.t - escapes, controls, invalid UTF-8, huge and malformed objects: clean output, no crash.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 15
"$TOP/fixtures/hostile.sh" "$SCRATCH/hx" >/dev/null
UP="$SCRATCH/hx/upstream.git:master"
PULL="$SCRATCH/hx/pull.git"

# no_controls FILE: no C0 control other than newline, no DEL, no C1 CSI, no bidi override
no_controls() {
	! LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177]')" "$1" &&
	! LC_ALL=C grep -q "$(printf '\302[\200-\237]')" "$1" &&
	! LC_ALL=C grep -q "$(printf '\342\200[\252-\256]')" "$1"
}

set +e
"$PULLGATE" verify --upstream "$UP" "$PULL" hostile >"$SCRATCH/text" 2>"$SCRATCH/err"
rc=$?
set -e
is "$rc" 1 "the hostile pull gives a report and a verdict"
ok "$(no_controls "$SCRATCH/text"; echo $?)" "the text report holds no control characters or escapes"
ok "$(no_controls "$SCRATCH/err"; echo $?)" "nor does stderr"
like "$(cat "$SCRATCH/text")" "  x: subject with red, bell, cr, gnp.exe and 31m$" \
	"escape sequences, controls and the bidi override are stripped from a subject"
like "$(cat "$SCRATCH/text")" "committer: pull Sender <sender@example.org>" \
	"identities are printed clean"
ok "$(iconv -f UTF-8 -t UTF-8 "$SCRATCH/text" >/dev/null 2>&1; echo $?)" \
	"the text report is valid UTF-8 (the invalid bytes of a subject are replaced)"
like "$(cat "$SCRATCH/text")" "author: Sender $(printf '\357\277\275\357\277\275') <sender@example.org>" \
	"each invalid byte of an author becomes U+FFFD"
longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$SCRATCH/text")
ok "$([ "$longest" -lt 400 ]; echo $?)" "a 5 MB subject is cut short on the terminal ($longest columns)"
like "$(cat "$SCRATCH/text")" "z: a huge message A+…$" "and marked as cut"
is "$(grep -c '^error    rewritten-upstream' "$SCRATCH/text")" 3 \
	"all three re-created hostile commits are found"

set +e
"$PULLGATE" verify --json --upstream "$UP" "$PULL" hostile >"$SCRATCH/json" 2>/dev/null
set -e
ok "$(jq -e . "$SCRATCH/json" >/dev/null; echo $?)" "the JSON report is valid JSON"
ok "$(iconv -f UTF-8 -t UTF-8 "$SCRATCH/json" >/dev/null 2>&1; echo $?)" "and valid UTF-8"
is "$(jq -r '[.findings[] | select(.check == "rewritten-upstream") | select((.subject // "") | test("\u001b\\[31mred"))] | length' "$SCRATCH/json")" 1 \
	"JSON keeps the data, escaped, for programs to read"

run "$PULLGATE" verify --upstream "$UP" "$PULL" malformed
is "$rc" 3 "a malformed commit means pullgate cannot decide"
like "$err" "^error: commit [0-9a-f]{40} is malformed: " "and the one-line error names the commit"
