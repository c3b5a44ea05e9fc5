#!/bin/sh
# 30-mail-malformed.t - a mail pullgate cannot read is one clear error line and exit status 3.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
plan 22
fixture_incident
M="$SCRATCH/mail"
"$TOP/fixtures/mail.sh" "$FX" "$M" >/dev/null
T2=hardening-v6.16-rc1-fix1-take2

# bad FILE: verify take two with FILE as its mail
bad() {
	run "$PULLGATE" verify --pull-request "$1" --upstream "$UP" "$KEES" "$T2"
}
# undecided FILE MESSAGE NAME: exit 3, nothing on stdout, exactly one error line
undecided() {
	bad "$1"
	is "$rc:$(printf '%s' "$out" | wc -c | tr -d ' ')" "3:0" "$3: exit 3, no report"
	is "$err" "error: '$1': $2" "$3: one clear error line"
}

undecided "$M/truncated.mail" \
	"the shortlog says 'Kees Cook' has 4 commits but lists 2: truncated or edited mail" \
	"a mail cut inside the shortlog"
undecided "$M/garbage.mail" "the mail's text contains NUL bytes: binary data, not a mail" \
	"binary garbage"
undecided "$M/huge.mail" "mail exceeds 4 MiB" "a mail past 4 MiB"

# Cut before the diffstat summary, before the head, inside the headers.
sed '/ files changed, /,$d' "$M/take2.mail" >"$SCRATCH/no-summary.mail"
undecided "$SCRATCH/no-summary.mail" \
	"truncated mail: it ends in the diffstat, before its summary ('N files changed')" \
	"a mail cut before the diffstat summary"
sed '/^for you to fetch/,$d' "$M/take2.mail" >"$SCRATCH/no-head.mail"
undecided "$SCRATCH/no-head.mail" "truncated mail: it ends after the repository URL" \
	"a mail cut before the head"
head -n 3 "$M/take2.mail" >"$SCRATCH/headers.mail"
undecided "$SCRATCH/headers.mail" \
	"not a git request-pull mail: no 'The following changes since commit <id>:' line" \
	"a mail cut inside its headers"

undecided /dev/null \
	"not a git request-pull mail: no 'The following changes since commit <id>:' line" \
	"an empty file"
undecided "$SCRATCH/absent.mail" "cannot open: No such file or directory" "a missing file"
undecided "$SCRATCH" "is a directory, not a mail" "a directory"

# Streams are capped too: the size is not known before reading a pipe.
run sh -c 'cat "$1" | "$2" verify --pull-request /dev/stdin --upstream "$3" "$4" "$5"' \
	sh "$M/huge.mail" "$PULLGATE" "$UP" "$KEES" "$T2"
is "$rc:$err" "3:error: '/dev/stdin': mail exceeds 4 MiB" "a huge mail on a pipe"

# What the mail says is quoted in the error, stripped of terminal escapes.
sed "s/^are available in the Git repository at:/are $(printf '\033')]0;pwned$(printf '\007')missing/" \
	"$M/take2.mail" >"$SCRATCH/escape.mail"
bad "$SCRATCH/escape.mail"
is "$rc" 3 "a mail that does not follow the format is undecided"
is "$err" "error: '$SCRATCH/escape.mail': expected 'are available in the Git repository at:', got 'are missing'" \
	"and the offending line is quoted without its escape sequences"

# A mail error is a mail error, not a usage error; a missing argument still is.
run "$PULLGATE" verify --pull-request
is "$rc" 2 "--pull-request without a file is a usage error"
