#!/bin/sh
# 88-approve-kill.t - SIGKILL at each step of an approval (the maintainer's and the policy's): after a restart the branch, the store, the attestation and the notice agree, and the notice is mailed once.
#
# The approval is recorded (approving) before the branch moves; the start
# finishes one the last stop cut short when the branch moved, and undoes it
# when it did not (the maintainer approves again; the policy does by
# itself).  The service is held at a test point of the build made for tests
# (PULLGATE_TEST_HOLD) at each step and killed there: after the approval
# was recorded, before and after the compare-and-swap, after the
# attestation was signed, after the store recorded the approval (its
# notice in the outbox, not yet mailed), after the relay took the notice
# (not yet recorded as mailed).  Build and boot are the stand-ins
# of tests/fakes (simulated runs); the notice goes to a real SMTP relay on
# loopback (tests/lib/smtp_relay.py).
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
STEPS="intent-recorded before-cas after-cas signed recorded mailed"
plan 108
T2=hardening-v6.16-rc1-fix1-take2
TOP_SCRATCH=$SCRATCH
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
RELAY_PID=
AHOME="$TOP_SCRATCH/attest-gnupg"
cleanup() {
	SCRATCH=$TOP_SCRATCH
	stop_fakes
	for p in $RELAY_PID; do kill "$p" 2>/dev/null || true; done
	GNUPGHOME="$AHOME" gpgconf --kill gpg-agent 2>/dev/null || true
}
TAP_CLEANUP="cleanup"
mkdir -m 700 "$AHOME"
GNUPGHOME="$AHOME" gpg --batch --quiet --passphrase '' --quick-gen-key "pullgate <pullgate@example.org>" \
	ed25519 sign never >/dev/null 2>&1
AFPR=$(GNUPGHOME="$AHOME" gpg --batch --with-colons --list-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')

# setup NAME APPROVAL: a scratch, a relay, a tree and a state of its own for one run
setup() {
	SCRATCH="$TOP_SCRATCH/$1"
	mkdir -p "$SCRATCH/relay"
	export PULLGATE_HOME="$SCRATCH/home"
	"$PY" "$TOP/tests/lib/smtp_relay.py" accept "$SCRATCH/relay" "$SCRATCH/relay.port" \
		2>"$SCRATCH/relay.log" &
	RELAY_PID="$RELAY_PID $!"
	wait_for test -s "$SCRATCH/relay.port"
	serve_setup "attestation:
  key: $AFPR
  gnupg-home: $AHOME
notice:
  relay: 127.0.0.1
  port: $(cat "$SCRATCH/relay.port")
  from: Linus Torvalds <torvalds@linux-foundation.org>
  attempts: 3
  retry-seconds: 1
  timeout-seconds: 10"
	sed -i "s/^approval: manual$/approval: $2/" "$SCRATCH/policy.yaml"
	BASE=$(git --git-dir="$TREE" rev-parse master)
	mkdir -p "$SCRATCH/mail"
	"$TOP/fixtures/mail.sh" "$FX" "$SCRATCH/mail" >/dev/null
	sed -e "s|$FX/kees.git|$KEES_GIT_URL|g" "$SCRATCH/mail/take2.mail" >"$SCRATCH/take2.mail"
}

# approve ID: as the maintainer, through the API; the HTTP status in $SCRATCH/approve.code
approve() {
	curl -s -c "$SCRATCH/jar" -o "$SCRATCH/login.json" -X POST -H 'Content-Type: application/json' \
		-d "{\"user\":\"maintainer\",\"password\":\"$SERVE_PASSWORD\"}" "$URL/api/login"
	curl -s -b "$SCRATCH/jar" -o /dev/null -w '%{http_code}' -X POST \
		-H "X-CSRF-Token: $(jq -r .csrf "$SCRATCH/login.json")" "$URL/api/pulls/$1/approve" \
		>"$SCRATCH/approve.code" || true
}

# the pull's decisions of action ACTION, counted
decisions() { curl -s "$URL/api/pulls/$ID" | jq --arg a "$1" '[.decisions[] | select(.action == $a)] | length'; }
_noticed() { [ "$(decisions notice)" -ge 1 ]; }

# kill_at STEP APPROVAL: hold the approval at approve:STEP, SIGKILL the service, start it again
kill_at() {
	step=$1 mode=$2
	setup "$step-$mode" "$mode"
	mkdir -p "$SCRATCH/hold"
	if [ "$mode" = manual ]; then
		serve_start
		hook pull-request "$SCRATCH/take2.mail" "$step-$mode"
		ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
		wait_state "$ID" waiting rejected error >/dev/null
		serve_stop
		PULLGATE_TEST_HOLD="approve:$step" PULLGATE_TEST_HOLD_DIR="$SCRATCH/hold" serve_start
		approve "$ID" &
		APPROVER=$!
	else
		PULLGATE_TEST_HOLD="approve:$step" PULLGATE_TEST_HOLD_DIR="$SCRATCH/hold" serve_start
		hook pull-request "$SCRATCH/take2.mail" "$step-$mode"
		ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
		APPROVER=
	fi
	ok "$(wait_for test -e "$SCRATCH/hold/held"; echo $?)" "$step, $mode: the approval is held at $step"
	kill -KILL "$SERVE_PID"
	wait "$SERVE_PID" 2>/dev/null || true
	SERVE_PID=
	[ -z "$APPROVER" ] || wait "$APPROVER" || true
	stop_fakes "$TOP_SCRATCH"
	killed=$(sqlite3 "$SCRATCH/state/pullgate.db" "select state from pulls where id = $ID")
	moved=no
	[ "$(git --git-dir="$TREE" rev-parse master)" = "$BASE" ] || moved=yes
	case $step in
	intent-recorded | before-cas) want="approving no" ;;
	after-cas | signed) want="approving yes" ;;
	recorded | mailed) want="approved yes" ;;
	esac
	is "$killed $moved" "$want" "$step, $mode: killed there, the store says $killed, the branch moved: $moved"
	serve_start
	final=$(wait_state "$ID" waiting approved queued rejected error || true)
	# an approval undone waits for the maintainer to approve again (the policy does by itself)
	if [ "$final" = waiting ] && [ "$mode" = manual ]; then
		approve "$ID"
		final=$(wait_state "$ID" approved waiting queued rejected error || true)
	fi
	is "$final" approved "$step, $mode: after the restart the pull ends approved"
	head=$(git --git-dir="$TREE" rev-parse master)
	ok "$([ "$head" != "$BASE" ] && git --git-dir="$TREE" cat-file -p "$head" |
		grep -q "^mergetag object $(git --git-dir="$KREPO" rev-parse "$T2^{commit}")" && echo 0 || echo 1)" \
		"$step, $mode: the branch holds the merge that was tested and approved"
	is "$(git --git-dir="$TREE" notes --ref=pullgate show master 2>/dev/null |
		sed '/^-----BEGIN PGP SIGNATURE-----$/,$d' | jq -r .merge_commit)" "$head" \
		"$step, $mode: the merge carries its signed attestation"
	wait_for _noticed || true
	is "$(decisions approve) $(decisions notice)" "1 1" \
		"$step, $mode: one approval and one notice are recorded"
	serve_stop
	# killed once the relay took it and before the store knew, the notice is mailed again:
	# a second copy with the first one's Message-ID, which readers and archives see as one
	copies=1
	[ "$step" != mailed ] || copies=2
	is "$(ls "$SCRATCH/relay" | grep -c '\.eml$')" "$copies" \
		"$step, $mode: the relay took $copies cop$([ $copies = 1 ] && echo y || echo ies) of the notice"
	is "$(cat "$SCRATCH/relay"/*.eml | grep -i '^Message-ID:' | sort -u | wc -l)" 1 \
		"$step, $mode: with one Message-ID: the notice is one message to its readers"
	is "$(sqlite3 "$SCRATCH/state/pullgate.db" "select count(*) from notices")" 0 \
		"$step, $mode: the outbox is empty"
}

for step in $STEPS; do
	for mode in manual auto; do
		kill_at "$step" "$mode"
	done
done
