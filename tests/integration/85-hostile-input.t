#!/bin/sh
# 85-hostile-input.t - FIFOs for files, an mbox past its message cap, an incomplete history, a report too large to keep.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 20
fixture_incident
T1=hardening-v6.16-rc1-fix1
T2=hardening-v6.16-rc1-fix1-take2
M="$SCRATCH/mail"
"$TOP/fixtures/mail.sh" "$FX" "$M" >/dev/null

# --- a FIFO where a file is wanted: refused at once, never waited on ---------------------------
mkfifo "$SCRATCH/fifo"
run timeout "$PATIENCE" "$PULLGATE" policy check "$SCRATCH/fifo"
is "$rc:$err" "3:error: cannot read the policy: '$SCRATCH/fifo' is a FIFO, not a regular file" \
	"policy check on a FIFO nobody writes is refused at once"
run timeout "$PATIENCE" "$PULLGATE" verify --policy "$SCRATCH/fifo" --upstream "$UP" "$KEES" "$T2"
is "$rc" 3 "and so is verify --policy"
run timeout "$PATIENCE" "$PULLGATE" verify --keyring "$KEYRING" --trust "$FPR_KEES" \
	--pull-request "$SCRATCH/fifo" --upstream "$UP" "$KEES" "$T2"
is "$rc:$err" "3:error: '$SCRATCH/fifo': not a git request-pull mail: no 'The following changes since commit <id>:' line" \
	"a pull-request mail on a FIFO nobody writes reads as empty (a mail may come on a pipe)"
run timeout "$PATIENCE" "$PULLGATE" verify --keyring "$SCRATCH/fifo" --trust "$FPR_KEES" --upstream "$UP" "$KEES" "$T2"
# (the progress of the identity index this first verify builds comes first: "[index] ...")
like "$rc:$(printf '%s\n' "$err" | grep -v '^\[')" "^3:error: .*'$SCRATCH/fifo' is a FIFO, not a regular file" "a keyring"
run timeout "$PATIENCE" "$PULLGATE" serve --config "$SCRATCH/fifo"
is "$rc:$err" "3:error: configuration: '$SCRATCH/fifo' is a FIFO, not a regular file" "a configuration"
printf 'hooks:\n  push:\n    secret-file: %s\n' "$SCRATCH/fifo" >"$SCRATCH/secret.yaml"
run timeout "$PATIENCE" "$PULLGATE" serve --config "$SCRATCH/secret.yaml"
like "$rc:$err" "^3:error: .*is a FIFO, not a regular file" "and a hook's secret file"
run timeout "$PATIENCE" "$PULLGATE" verify --keyring /dev/null --trust "$FPR_KEES" --upstream "$UP" "$KEES" "$T2"
like "$rc:$err" "^3:error: .*'/dev/null' is a device, not a regular file" "a device is no keyring either"

# --- an mbox whose request-pull mail is past the cap of messages looked at ---------------------
{
	i=0
	while [ $i -lt 10000 ]; do
		printf 'From noise@example.org Mon Jan  1 00:00:00 2024\nSubject: noise %d\n\nnothing\n\n' "$i"
		i=$((i + 1))
	done
	printf 'From torvalds@example.org Mon Jan  1 00:00:00 2024\n'
	cat "$M/take2.mail"
} >"$SCRATCH/long.mbox"
run "$PULLGATE" verify --keyring "$KEYRING" --trust "$FPR_KEES" --pull-request "$SCRATCH/long.mbox" \
	--upstream "$UP" "$KEES" "$T2"
is "$rc:$err" "3:error: '$SCRATCH/long.mbox': the mbox holds more than 4096 messages and none of the first 4096 is a [GIT PULL] mail: the search stops there" \
	"an mbox with its request-pull mail at message 10,001 says the cap was hit, not 'no request-pull'"
{
	head -n 500 "$SCRATCH/long.mbox"
	printf 'From torvalds@example.org Mon Jan  1 00:00:00 2024\n'
	cat "$M/take2.mail"
} >"$SCRATCH/short.mbox"
run "$PULLGATE" verify --keyring "$KEYRING" --trust "$FPR_KEES" --pull-request "$SCRATCH/short.mbox" \
	--upstream "$UP" "$KEES" "$T2"
is "$rc" 0 "within the cap, the request-pull mail of an mbox is found and agrees"

# --- an incomplete history: the missing commit is named, and why --------------------------------
git init -q --bare "$SCRATCH/shallow.git"
git --git-dir="$SCRATCH/shallow.git" fetch -q --depth 3 "file://$KEES" "refs/tags/$T2:refs/tags/$T2"
run "$PULLGATE" verify --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" "$SCRATCH/shallow.git" "$T2"
is "$rc" 3 "a shallow pull could not be decided (exit 3)"
like "$err" "^error: commit [0-9a-f]{40}, a parent of [0-9a-f]{40}, is not in the repository: its history is incomplete \(a shallow clone or a partial fetch\?\)" \
	"naming the missing commit and the commit that needs it, and why"
unlike "$err" "malformed" "not calling either of them malformed"
git init -q --bare "$SCRATCH/shallow-up.git"
git --git-dir="$SCRATCH/shallow-up.git" fetch -q --depth 2 "file://$FX/upstream.git" master:master
run "$PULLGATE" verify --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$SCRATCH/shallow-up.git" "$KEES" "$T2"
is "$rc" 3 "a shallow upstream could not be decided either"
like "$err" "is not in the repository: its history is incomplete" "and says the history is incomplete"

# --- a report too large to keep whole ------------------------------------------------------------
serve_setup 'limits:
  findings-per-check: 5'
serve_start
push_record "$SCRATCH/take1.json" "$T1"
hook push "$SCRATCH/take1.json" take1
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" rejected error)" rejected "take one is rejected"
get "$URL/api/pulls/$ID"
is "$(printf '%s' "$out" | jq '[.report.findings[] | select(.check == "rewritten-upstream")] | length')" 5 \
	"the store keeps 5 of its 35 rewritten-upstream findings (findings-per-check)"
is "$(printf '%s' "$out" | jq -r '.report.stored.omitted[] | select(.check == "rewritten-upstream") | "\(.severity) \(.count)"')" \
	"error 30" "and counts the 30 others"
is "$(printf '%s' "$out" | jq -r '"\(.errors == .report.errors) \(.report.verdict) \(.report.errors > (.report.findings | length))"')" \
	"true reject true" "the verdict and counts are the whole report's"
get "$URL/pulls/$ID"
like "$out" '<li><span class="count">30</span> more <span class="check">rewritten-upstream</span> error findings</li>' \
	"the page says what was left out"
serve_stop
is "$SERVE_RC" 0 "the server stops cleanly"
