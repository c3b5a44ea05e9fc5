#!/bin/sh
# 92-serve-notice.t - the approval notice mailed to a real SMTP relay on loopback: headers, threading, body; a refusing relay.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 33
T2=hardening-v6.16-rc1-fix1-take2

# Debian's python3 has python3-aiosmtpd (a python3 earlier in PATH may not)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
RELAY_PID=
relay_start() { # MODE: the relay in $SCRATCH/relay-MODE, its port in $PORT
	mkdir -p "$SCRATCH/relay-$1"
	"$PY" "$TOP/tests/lib/smtp_relay.py" "$1" "$SCRATCH/relay-$1" "$SCRATCH/relay-$1/port" \
		2>"$SCRATCH/relay-$1/log" &
	RELAY_PID="$RELAY_PID $!"
	wait_for test -s "$SCRATCH/relay-$1/port"
	PORT=$(cat "$SCRATCH/relay-$1/port")
}
relay_kill() { for p in $RELAY_PID; do kill "$p" 2>/dev/null || true; done; }
TAP_CLEANUP="relay_kill"
notice_yaml() {
	printf 'notice:\n  relay: 127.0.0.1\n  port: %s\n  from: Linus Torvalds <torvalds@linux-foundation.org>\n  attempts: 3\n  retry-seconds: 1\n  timeout-seconds: 10\n' "$1"
}
notice_yaml_named() {
	notice_yaml "$1"
	printf '  tree-name: torvalds/linux.git\n  commit-url: https://git.kernel.org/torvalds/c/\n'
}
# approve ID: as the maintainer, through the API
approve() {
	curl -s -c "$SCRATCH/jar" -o "$SCRATCH/login.json" -X POST -H 'Content-Type: application/json' \
		-d "{\"user\":\"maintainer\",\"password\":\"$SERVE_PASSWORD\"}" "$URL/api/login"
	curl -s -b "$SCRATCH/jar" -o /dev/null -w '%{http_code}' -X POST \
		-H "X-CSRF-Token: $(jq -r .csrf "$SCRATCH/login.json")" "$URL/api/pulls/$1/approve"
}
# notice_note ID: the note of the pull's notice decision, once there is one (a test's patience at most)
notice_note() {
	wait_for _noted "$1" || return 1
	echo "$_note"
}
_noted() {
	_note=$(curl -s "$URL/api/pulls/$1" | jq -r '.decisions[] | select(.action == "notice") | "\(.user): \(.note)"')
	[ -n "$_note" ]
}

relay_start accept
ACCEPT_PORT=$PORT
serve_setup "$(notice_yaml_named "$PORT")"
serve_start
mkdir -p "$SCRATCH/mail"
"$TOP/fixtures/mail.sh" "$FX" "$SCRATCH/mail" >/dev/null
# the request as a reply in a thread of its own: References to carry on
sed -e "s|$FX/kees.git|$KEES_GIT_URL|g" \
	-e 's|^Message-ID: .*|&\nReferences: <cover.0@keescook>|' "$SCRATCH/mail/take2.mail" >"$SCRATCH/take2.mail"
grep -q '^Message-ID: <202506010930.fix1@keescook>$' "$SCRATCH/take2.mail"
hook pull-request "$SCRATCH/take2.mail" notice-take2
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" waiting rejected error approved)" waiting "take two waits for the maintainer"
is "$(approve "$ID")" 200 "the maintainer approves it"
note=$(notice_note "$ID" || true)
like "$note" "^pullgate: notice mailed to kees@kernel.org via 127.0.0.1 \\(1 attempt\\), cc linux-kernel@vger.kernel.org, linux-hardening@vger.kernel.org$" \
	"the pull records the notice as mailed, to whom"
M="$SCRATCH/relay-accept/msg1"
is "$(cat "$M.env" 2>/dev/null)" "torvalds@linux-foundation.org
kees@kernel.org
linux-kernel@vger.kernel.org
linux-hardening@vger.kernel.org" "the relay got it from the maintainer, to the sender and the lists (not back to the maintainer)"
eml=$(tr -d '\r' <"$M.eml" 2>/dev/null)
head=$(printf '%s\n' "$eml" | sed '/^$/q')
body=$(printf '%s\n' "$eml" | sed '1,/^$/d')
like "$head" "^From: Linus Torvalds <torvalds@linux-foundation.org>$" "From the maintainer"
like "$head" "^To: Kees Cook <kees@kernel.org>$" "To the sender, as the mail named him"
like "$head" "^Cc: linux-kernel@vger.kernel.org, linux-hardening@vger.kernel.org$" "Cc the lists"
# the service's scripts are the stand-ins of tests/fakes: the notice must not pass for a real test
like "$head" "^Subject: Re: \\[SIMULATED\\] \\[GIT PULL\\] hardening fixes for v6.16-rc1$" \
	"a reply's subject, marked SIMULATED"
like "$head" "^In-Reply-To: <202506010930.fix1@keescook>$" "In-Reply-To the request's Message-ID"
like "$head" "^References: <cover.0@keescook> <202506010930.fix1@keescook>$" "References carry the thread on"
like "$head" "^Message-ID: <pullgate\\.$ID\\.[0-9a-f]{32}@linux-foundation.org>$" "a Message-ID of its own, made of the pull, the request and the text"
is "$(printf '%s\n' "$body" | head -n 2)" "SIMULATED: stand-in build and boot scripts ran in place of pullgate's own,
so nothing was really built or booted before this approval." "the body says first that the run was simulated"
unlike "$head" "^Subject: .*SIMULATED.*SIMULATED" "(marked once)"
MERGE=$(git --git-dir="$TREE" rev-parse master)
# then pr-tracker-bot's reply, line by line: the mail's Date, its remote, the tree, the merge's link
is "$(printf '%s\n' "$body" | sed 1,3d)" "The pull request you sent on Sun, 1 Jun 2025 09:30:00 -0700:

> $KEES_GIT_URL tags/$T2

has been merged into torvalds/linux.git:
https://git.kernel.org/torvalds/c/$MERGE

Thank you!

-- 
Sent by pullgate, on the maintainer's behalf, once the merge was in place." \
	"the body is pr-tracker-bot's: sent on the mail's Date, the remote it names, merged into notice.tree-name at notice.commit-url + the merge"
is "$(grep -vc "$(printf '\r')\$" "$M.eml")" 0 "every line of the message ends in CRLF"
is "$(ls "$SCRATCH/relay-accept" | grep -c '\.eml$')" 1 "one message, sent once"
# pr-tracker-bot's headers, which tools read
like "$head" "^X-PR-Tracked-Message-Id: <202506010930.fix1@keescook>$" "X-PR-Tracked-Message-Id: the request"
like "$head" "^X-PR-Tracked-Remote: $KEES_GIT_URL tags/$T2$" "X-PR-Tracked-Remote: its URL and ref"
like "$head" "^X-PR-Tracked-Commit-Id: $(git --git-dir="$KREPO" rev-parse "$T2^{commit}")$" \
	"X-PR-Tracked-Commit-Id: the head it names"
like "$head" "^X-PR-Merge-Tree: torvalds/linux.git$" "X-PR-Merge-Tree: notice.tree-name"
like "$head" "^X-PR-Merge-Refname: refs/heads/master$" "X-PR-Merge-Refname: the integration branch"
like "$head" "^X-PR-Merge-Commit-Id: $MERGE$" "X-PR-Merge-Commit-Id: the merge the branch holds"
unlike "$head" "^X-PR-Tracked-List-Id:" "no X-PR-Tracked-List-Id for a request without a List-Id"
serve_stop

# --- a relay that refuses: retried, then recorded; the approval stands ----------------------------
rm -rf "$SCRATCH/state" "$TREE"
git clone -q --bare "$FX/upstream.git" "$TREE"
export PULLGATE_HOME="$SCRATCH/home-refuse"
relay_start refuse
sed -i '/^notice:/,$d' "$CONFIG"
notice_yaml "$PORT" >>"$CONFIG"
serve_start
hook pull-request "$SCRATCH/take2.mail" notice-take2-again
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
wait_state "$ID" waiting rejected error approved >/dev/null
is "$(approve "$ID")" 200 "approved while the relay refuses"
note=$(notice_note "$ID" || true)
like "$note" "^pullgate: notice not mailed after every attempt: the message: 451 4.3.0 the relay refuses for now$" \
	"after the last attempt the failure is recorded on the pull"
is "$(wc -l <"$SCRATCH/relay-refuse/refused" | tr -d ' ')" 3 "the relay was tried three times (attempts: 3)"
like "$(cat "$SCRATCH/serve.err")" "attempt 1 of 3: the message: 451 .*; again in 1 s" "with a wait between tries, logged"
is "$(curl -s "$URL/api/pulls/$ID" | jq -r .state) $(git --git-dir="$TREE" rev-parse master)" \
	"approved $(curl -s "$URL/api/pulls/$ID" | jq -r .merge_commit)" "the approval stands: the branch moved"
serve_stop

# --- a branch that no longer holds the merge when the notice goes: none is mailed ---------------
rm -rf "$SCRATCH/state" "$TREE"
git clone -q --bare "$FX/upstream.git" "$TREE"
BASE=$(git --git-dir="$TREE" rev-parse master)
export PULLGATE_HOME="$SCRATCH/home-moved"
sed -i '/^notice:/,$d' "$CONFIG"
notice_yaml "$ACCEPT_PORT" >>"$CONFIG"
mkdir -p "$SCRATCH/hold"
PULLGATE_TEST_HOLD=approve:recorded PULLGATE_TEST_HOLD_DIR="$SCRATCH/hold" serve_start
hook pull-request "$SCRATCH/take2.mail" notice-take2-moved
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
wait_state "$ID" waiting rejected error approved >/dev/null
approve "$ID" >"$SCRATCH/approve.code" &
APPROVER=$!
ok "$(wait_for test -e "$SCRATCH/hold/held"; echo $?)" "approved, held after the approval is recorded"
# someone moves the branch back before the notice goes
git --git-dir="$TREE" update-ref refs/heads/master "$BASE"
: >"$SCRATCH/hold/release"
wait "$APPROVER" || true
note=$(notice_note "$ID" || true)
like "$note" "^pullgate: notice not mailed: refs/heads/master does not hold its merge [0-9a-f]{12}: the pull is not merged$" \
	"a notice of a merge the branch does not hold is not mailed, and the pull says why"
is "$(ls "$SCRATCH/relay-accept" | grep -c '\.eml$')" 1 "the relay got nothing more"
is "$(git --git-dir="$TREE" rev-parse master)" "$BASE" "(the branch is where it was moved)"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly"
