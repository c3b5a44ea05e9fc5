#!/bin/sh
# demo.sh - make demo: start pullgate serve, replay the incident through its hooks, show the verdicts.
#
#   scripts/demo.sh PULLGATE
#
# The service runs with its embedded defaults: the SQLite store, the
# generated hook secret and the logs in $PULLGATE_HOME (default
# ~/.cache/pullgate), port 8080 (another free port when 8080 is taken).
# A small configuration adds what the incident needs: the fixture's policy
# (its keyring and signers), where Kees's repository is, and a maintainer
# account (user "maintainer", password "pullgate-demo").
#
# The kernel stages: the demo prepares $PULLGATE_HOME/linux (Debian's
# linux-source-6.12 with the seed series; the first time takes about a
# minute) and replays the incident on that real tree
# (fixtures/kernel-incident.sh): take two is merged, built for arm64 (the
# first build is cold: several minutes on two cores) and booted in QEMU with
# KUnit.  Only when the tree cannot be prepared does it say so and replay
# the incident on the small fixture trees, where build and boot are the
# stand-in scripts of tests/fakes: the gate marks such a run simulated, and
# so do the verdict lines and the demo's last line.
# PULLGATE_DEMO_KERNEL=real|fake forces one or the other.
#
# Kees's pushes of both tags are recorded first in a transparency log of
# the demo's own, as kernel.org's gitolite records them
# (fixtures/tlog-push.sh: take two's push signed, with its certificate),
# and the policy reads it with Kees's key mapped to his account kees:
# each pull's page shows the record of its tag's push (docs/transparency.md).
#
# Take one comes by the push hook and is rejected at verify.  Take two comes
# as Kees's pull-request mail (git request-pull, naming his kernel.org URL,
# which the configuration maps to the local copy); it passes every stage
# and waits for the maintainer; the demo then approves it as the maintainer
# through the API (PULLGATE_DEMO_APPROVE=no leaves that to you, on the
# dashboard).  The approval notice, a reply in the mail's thread with
# pr-tracker-bot's X-PR-* headers, goes to an SMTP sink the demo starts on
# loopback (tests/lib/smtp_relay.py, python3-aiosmtpd, on a free port);
# the demo prints what it received, headers and body, before its last line.
#
# The server stays up while stdin is a terminal (Ctrl-C stops it), so the
# dashboard can be looked at; otherwise (scripts, CI) or with
# PULLGATE_DEMO_STAY=no it is stopped after the verdicts.
set -eu
PULLGATE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
TOP=$(cd "$(dirname "$0")/.." && pwd)
: "${PULLGATE_HOME:=$HOME/.cache/pullgate}"
export PULLGATE_HOME
mkdir -p "$PULLGATE_HOME"
RUN="$PULLGATE_HOME/demo-run"
rm -rf "$RUN"
mkdir -p "$RUN"
PASSWORD=pullgate-demo
KEES_NAME=pub/scm/linux/kernel/git/kees/linux
T1=hardening-v6.16-rc1-fix1
T2=hardening-v6.16-rc1-fix1-take2

say() { printf '%s\n' "$*"; }

kernel=${PULLGATE_DEMO_KERNEL:-}
if [ -z "$kernel" ]; then
	# the kernel tree: unpacked and given the seed series once (about a
	# minute), kept in $PULLGATE_HOME after that
	say "== preparing the kernel tree in $PULLGATE_HOME/linux (scripts/kernel/tree.sh, series.sh apply)"
	if "$TOP/scripts/kernel/tree.sh" >"$RUN/tree.log" 2>&1 &&
	   "$TOP/scripts/kernel/series.sh" apply >>"$RUN/tree.log" 2>&1; then
		kernel=real
	else
		say "   could not: see $RUN/tree.log"
		kernel=fake
	fi
fi

if [ "$kernel" = real ]; then
	FX="$PULLGATE_HOME/incident-kernel"
	say "== replaying the incident on the kernel tree $PULLGATE_HOME/linux (fixtures/kernel-incident.sh)"
	"$TOP/fixtures/kernel-incident.sh" "$FX" >"$RUN/fixture.log" 2>&1 ||
		{ tail -n 20 "$RUN/fixture.log" >&2; exit 1; }
	# the fixture's policy approves automatically (make check needs that);
	# the demo leaves the last word to the maintainer
	sed 's/^approval: auto$/approval: manual/' "$FX/policy.yaml" >"$FX/demo-policy.yaml"
	POLICY="$FX/demo-policy.yaml"
	# the replay's own integration branch (fixtures/kernel-incident.sh)
	TREE_YAML="pipeline:
  branch: incident"
	TREE_DIR="$PULLGATE_HOME/linux"
	DATADIR="$TOP"
	WAIT_S=${PULLGATE_DEMO_TIMEOUT:-7200}
else
	FX="$PULLGATE_HOME/demo"
	say "== NOTE: the kernel tree is not ready (see $RUN/tree.log)."
	say "   This demo runs on the small fixture trees instead: merge is real (libgit2, with a"
	say "   mergetag), build and boot are the stand-in scripts of tests/fakes."
	say "== building the incident fixtures in $FX"
	"$TOP/fixtures/incident.sh" "$FX" >/dev/null
	"$TOP/fixtures/policy.sh" "$FX"
	POLICY="$FX/policy.yaml"
	rm -rf "$FX/tree.git"
	git clone -q --bare "$FX/upstream.git" "$FX/tree.git"
	TREE_YAML="pipeline:
  tree: $FX/tree.git"
	TREE_DIR="$FX/tree.git"
	DATADIR="$TOP/tests/fakes"
	WAIT_S=${PULLGATE_DEMO_TIMEOUT:-120}
fi

# kernel.org's transparency log of Kees's pushes, the demo's own (docs/transparency.md):
# his push of each tag recorded before the pull comes in, take two's signed with his key
TLOG="$RUN/tlog"
ZERO=0000000000000000000000000000000000000000
KEES_URL=git://git.kernel.org/$KEES_NAME.git
FPR_KEES=$(sed -n 's/^FPR_KEES=\([0-9A-Fa-f]\{40\}\)$/\1/p' "$FX/keys.env")
[ -n "$FPR_KEES" ] || { say "demo: no FPR_KEES in $FX/keys.env" >&2; exit 1; }
tag_object() { git --git-dir="$FX/kees.git" rev-parse "refs/tags/$1"; }
# tlog_push TAG [KEY]: the record of Kees's push of TAG (signed by KEY), a minute after he
# made the tag (its tagger's time: the record's Date, its certificate's); prints its Message-Id
tlog_push() {
	pushed=$(git --git-dir="$FX/kees.git" for-each-ref --format='%(taggerdate:unix)' "refs/tags/$1")
	GNUPGHOME="$FX/gnupg" "$TOP/fixtures/tlog-push.sh" --date $((pushed + 60)) "$TLOG" \
		"$KEES_NAME" kees "refs/tags/$1" "$ZERO" "$(tag_object "$1")" ${2:+"$2"} 2>>"$RUN/tlog.log"
}
say "== recording Kees's pushes in a transparency log, $TLOG (fixtures/tlog-push.sh)"
REC1=$(tlog_push "$T1") && REC2=$(tlog_push "$T2" "$FPR_KEES") ||
	{ cat "$RUN/tlog.log" >&2; exit 1; }
say "   $T1: $REC1; $T2: $REC2 (a signed push)"
# the policy reads it, and names the account that pushes with Kees's key
{
	sed "/^  - fingerprint: $FPR_KEES\$/a\\    account: kees" "$POLICY"
	printf "transparency: {log: '%s'}\n" "$TLOG"
} >"$FX/demo-tlog-policy.yaml"
grep -q '^    account: kees$' "$FX/demo-tlog-policy.yaml" ||
	{ say "demo: $POLICY does not list Kees's key $FPR_KEES" >&2; exit 1; }
POLICY="$FX/demo-tlog-policy.yaml"

# take two as Kees mails it: git request-pull's text, made on the local copy, naming his
# kernel.org URL instead (which the configuration maps to that copy)
BASE=$(cat "$FX/expect/base")
git -C "$FX/work" request-pull "$BASE" "$FX/kees.git" "$T2" >"$RUN/request-pull.txt" \
	2>"$RUN/request-pull.log" || {
	say "demo: git request-pull failed ($RUN/request-pull.log):" >&2
	tail -n 20 "$RUN/request-pull.log" >&2
	exit 1
}
public_url() {
	awk -v from="$FX/kees.git" -v to="$KEES_URL" '{
		i = index($0, from)
		if (i) $0 = substr($0, 1, i - 1) to substr($0, i + length(from))
		print }'
}
{
	printf 'From: Kees Cook <kees@kernel.org>\nTo: Linus Torvalds <torvalds@linux-foundation.org>\n'
	printf 'Cc: linux-kernel@vger.kernel.org, linux-hardening@vger.kernel.org\n'
	printf 'Subject: [GIT PULL] hardening fixes for v6.16-rc1\n'
	printf 'Date: Sun, 1 Jun 2025 09:30:00 -0700\nMessage-ID: <202506010930.fix1@keescook>\n'
	printf 'MIME-Version: 1.0\nContent-Type: text/plain; charset=us-ascii\n\n'
	printf 'Hi Linus,\n\nPlease pull these hardening fixes for v6.16-rc1.\n\nThanks!\n\n-Kees\n\n'
	public_url <"$RUN/request-pull.txt"
	printf '\n-- \nKees Cook\n'
} >"$RUN/take2.mail"
grep -q "^  $KEES_URL tags/$T2\$" "$RUN/take2.mail" ||
	{ say "demo: $RUN/take2.mail does not name $KEES_URL" >&2; exit 1; }

SERVE_PID=
SMTP_PID=
stop() {
	if [ -n "$SERVE_PID" ]; then
		kill -TERM "$SERVE_PID" 2>/dev/null || true
		wait "$SERVE_PID" 2>/dev/null || true
		SERVE_PID=
		# the agent that signing started in the service's home ends with the service
		GNUPGHOME="$AHOME" gpgconf --kill gpg-agent 2>/dev/null || true
	fi
	if [ -n "$SMTP_PID" ]; then
		kill -TERM "$SMTP_PID" 2>/dev/null || true
		wait "$SMTP_PID" 2>/dev/null || true
		SMTP_PID=
	fi
}
trap stop EXIT
trap 'stop; exit 130' INT TERM

# the SMTP sink the notice goes to: loopback, a free port it picks and writes down, each
# message it accepts kept in $MAILBOX (msgN.env: the envelope, msgN.eml: the data)
MAILBOX="$RUN/mailbox"
mkdir -p "$MAILBOX"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c 'import aiosmtpd' 2>/dev/null || {
	say "demo: the SMTP sink needs python3-aiosmtpd (make deps)" >&2
	exit 1
}
say "== starting an SMTP sink on 127.0.0.1 for the approval notice (tests/lib/smtp_relay.py; log: $RUN/smtp.log)"
"$PY" "$TOP/tests/lib/smtp_relay.py" accept "$MAILBOX" "$RUN/smtp.port" 2>"$RUN/smtp.log" &
SMTP_PID=$!
# seconds since $1 (a date +%s)
since() { echo $(($(date +%s) - $1)); }
SINK_S=30
t0=$(date +%s)
while [ ! -s "$RUN/smtp.port" ] && kill -0 "$SMTP_PID" 2>/dev/null && [ "$(since "$t0")" -lt "$SINK_S" ]; do
	sleep 0.1
done
[ -s "$RUN/smtp.port" ] || {
	if kill -0 "$SMTP_PID" 2>/dev/null; then
		say "demo: the SMTP sink did not write its port within $SINK_S s ($RUN/smtp.port):" >&2
	else
		say "demo: the SMTP sink ended before it wrote its port:" >&2
	fi
	tail -n 5 "$RUN/smtp.log" >&2
	exit 1
}
SMTP_PORT=$(cat "$RUN/smtp.port")
say "   listening on 127.0.0.1:$SMTP_PORT"

# the service's own OpenPGP key, which signs the attestation of an approved merge
# (docs/attestation.md): made once in $PULLGATE_HOME/gnupg, without a passphrase
AHOME="$PULLGATE_HOME/gnupg"
mkdir -p -m 700 "$AHOME"
attest_fpr() {
	GNUPGHOME="$AHOME" gpg --batch --with-colons --list-secret-keys 2>/dev/null |
		awk -F: '$1 == "fpr" { print $10; exit }'
}
AFPR=$(attest_fpr)
if [ -z "$AFPR" ]; then
	say "== making the service's attestation key in $AHOME"
	GNUPGHOME="$AHOME" gpg --batch --quiet --passphrase '' --quick-gen-key \
		"pullgate attestation <pullgate@localhost>" ed25519 sign never >/dev/null 2>&1
	AFPR=$(attest_fpr)
fi
GNUPGHOME="$AHOME" gpg --batch --armor --export "$AFPR" >"$AHOME/pullgate.asc" 2>/dev/null

HASH=$(printf '%s\n' "$PASSWORD" | "$PULLGATE" serve --hash-password)
CONFIG="$RUN/serve.yaml"
# the merges are the top-level maintainer's, and name Kees's public URL
# (git://git.kernel.org/ + the push record's repository), not the local copy
cat >"$CONFIG" <<EOF
# the demo's additions to the embedded defaults (docs/server.md)
listen:
  address: 127.0.0.1
  port: ${PULLGATE_DEMO_PORT:-8080}
policy: $POLICY
repositories:
  public-base: git://git.kernel.org/
  map:
    $KEES_NAME: $FX/kees.git
    '$KEES_URL': $FX/kees.git
accounts:
  - name: maintainer
    password-hash: '$HASH'
attestation:
  key: $AFPR
  gnupg-home: $AHOME
notice:
  relay: 127.0.0.1
  port: $SMTP_PORT
  from: Linus Torvalds <torvalds@linux-foundation.org>
  attempts: 3
  retry-seconds: 1
  timeout-seconds: 10
  tree-name: torvalds/linux.git
$TREE_YAML
  merge-name: Linus Torvalds
  merge-email: torvalds@linux-foundation.org
EOF

start() {
	: >"$RUN/serve.out"
	PULLGATE_DATADIR="$DATADIR" "$PULLGATE" serve --config "$CONFIG" "$@" \
		>"$RUN/serve.out" 2>>"$RUN/serve.log" &
	SERVE_PID=$!
	i=0
	while [ $i -lt 100 ]; do
		URL=$(sed -n 's/^pullgate: listening on //p' "$RUN/serve.out")
		[ -n "$URL" ] && return 0
		kill -0 "$SERVE_PID" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	wait "$SERVE_PID" 2>/dev/null || true
	SERVE_PID=
	return 1
}
say "== starting pullgate serve (log: $RUN/serve.log)"
if ! start; then
	say "   port ${PULLGATE_DEMO_PORT:-8080} is taken: using a free one"
	start --port 0 || { cat "$RUN/serve.log" >&2; exit 1; }
fi
URL=${URL%/}
SECRET=$(cat "$PULLGATE_HOME/hook-secret")

# hook HOOK FILE DELIVERY CONTENT-TYPE: POST a push record or a mail to /hooks/HOOK, signed
# with the hook secret, with the time it was signed (the signature covers "TIMESTAMP." and
# the body); prints the job id, or the service's answer on stderr and fails
hook() {
	ts=$(date +%s)
	sig=$( (printf '%s.' "$ts"; cat "$2") | openssl dgst -sha256 -hmac "$SECRET" -r | cut -d' ' -f1)
	answer=$(curl -s -X POST -H "Content-Type: $4" -H "X-Pullgate-Delivery: $3" \
		-H "X-Pullgate-Timestamp: $ts" -H "X-Pullgate-Signature: sha256=$sig" \
		--data-binary "@$2" "$URL/hooks/$1")
	printf '%s' "$answer" | jq -e -r '.jobs[0] // empty' 2>/dev/null ||
		{ say "demo: /hooks/$1 did not queue $2: $answer" >&2; return 1; }
}
record() {
	printf '{ "repo": "%s", "user": "kees", "changes": [ { "ref": "refs/tags/%s", "old": "%s", "new": "%s" } ] }\n' \
		"$KEES_NAME" "$2" "$ZERO" "$(tag_object "$2")" >"$1"
}
# wait_for ID STATE...: until the pull is in one of the states; prints state changes
wait_for() {
	id=$1
	shift
	last= t0=$(date +%s)
	while [ "$(since "$t0")" -lt "$WAIT_S" ]; do
		s=$(curl -s "$URL/api/pulls/$id" | jq -r .state)
		if [ "$s" != "$last" ]; then
			say "   pull $id: $s"
			last=$s
		fi
		for want in "$@"; do
			[ "$s" = "$want" ] && return 0
		done
		sleep 0.5
	done
	say "demo: pull $id is still $s after $(since "$t0") s" >&2
	return 1
}

# text the service or the sink received, made safe for a terminal: no CR, no control
# character but a tab
terminal_safe() { tr -d '\r' | tr -d '\000-\010\013-\037\177'; }
# the decision that records what became of a pull's notice, once there is one
notice_note() {
	curl -s "$URL/api/pulls/$1" | jq -r '[.decisions[] | select(.action == "notice") | "\(.user): \(.note)"] | last // empty' |
		terminal_safe
}
# the transparency log's record of a pull's push, as its page shows it
push_record() {
	curl -s "$URL/api/pulls/$1" | jq -r '.transparency | if . == null then "none" else "\(.message_id) of \(.date), pushed by \(.pushed_by)\(if .certified then ", certified by a signed push" else "" end)" end' |
		terminal_safe
}
STAMP=$(date +%s)
record "$RUN/take1.json" "$T1"
say
say "== take one: $T1, as b4 trailers -u rewrote it (push hook)"
ID1=$(hook push "$RUN/take1.json" "demo-$STAMP-take1" application/json) || exit 1
wait_for "$ID1" rejected error approved waiting passed
say
say "== take two: $T2 (Kees's pull-request mail, $RUN/take2.mail)"
ID2=$(hook pull-request "$RUN/take2.mail" "demo-$STAMP-take2" message/rfc822) || exit 1
wait_for "$ID2" waiting approved rejected error passed

if [ "$(curl -s "$URL/api/pulls/$ID2" | jq -r .state)" = waiting ] &&
	[ "${PULLGATE_DEMO_APPROVE:-yes}" != no ]; then
	say "   the maintainer approves it (POST /api/pulls/$ID2/approve with a session and its CSRF token)"
	curl -s -c "$RUN/cookies" -o "$RUN/login.json" -X POST -H 'Content-Type: application/json' \
		-d "{\"user\": \"maintainer\", \"password\": \"$PASSWORD\"}" "$URL/api/login"
	curl -s -b "$RUN/cookies" -o /dev/null -X POST -H "X-CSRF-Token: $(jq -r .csrf "$RUN/login.json")" \
		"$URL/api/pulls/$ID2/approve"
	wait_for "$ID2" approved error
	if [ "$(curl -s "$URL/api/pulls/$ID2" | jq -r .state)" = approved ]; then
		merge=$(curl -s "$URL/api/pulls/$ID2" | jq -r .merge_commit)
		say "   its attestation (git log --notes=pullgate; pullgate attest verify):"
		say "   $("$PULLGATE" attest verify --signer "$AFPR" --keyring "$AHOME/pullgate.asc" --tree "$TREE_DIR" "$merge" 2>&1)"
		# the notice is mailed by the service's sender thread: its outcome is a decision
		say "   the service mails the approval notice to the SMTP sink"
		t0=$(date +%s)
		while note=$(notice_note "$ID2") && [ -z "$note" ] && [ "$(since "$t0")" -lt 60 ]; do
			sleep 0.5
		done
		say "   ${note:-no notice decision after $(since "$t0") s: see $RUN/serve.log}"
	fi
fi

# a pull's verdict; SIMULATED when stand-in scripts built and booted it (its report says so)
verdict() {
	curl -s "$URL/api/pulls/$1" | jq -r '"\(.state)\(if .report.simulated then " (SIMULATED: stand-in build and boot scripts)" else "" end): \(.message)\n   stages: \([.stages[] | "\(.name) \(.status)"] | join(", "))"' |
		terminal_safe
}
say
say "== verdicts"
say "take one (pull $ID1): $(verdict "$ID1")"
say "take two (pull $ID2): $(verdict "$ID2")"
say "take two's push record (on its page): $(push_record "$ID2")"
say
say "dashboard: $URL/"
say "   take one: $URL/pulls/$ID1   take two: $URL/pulls/$ID2"
say "   maintainer log in: user maintainer, password $PASSWORD"
s1=$(curl -s "$URL/api/pulls/$ID1" | jq -r .state)
s2=$(curl -s "$URL/api/pulls/$ID2" | jq -r .state)
status=0
[ "$s1" = rejected ] || { say "demo: take one should be rejected, it is $s1" >&2; status=1; }
case $s2 in
approved | waiting) ;;
*) say "demo: take two should pass every stage, it is $s2" >&2; status=1 ;;
esac
[ "$(push_record "$ID2")" != none ] ||
	{ say "demo: take two's page shows no push record from the transparency log" >&2; status=1; }

# whether the server (and the sink) stay up after the demo's last line, for the dashboard
stays() { [ "$status" -eq 0 ] && [ -t 0 ] && [ "${PULLGATE_DEMO_STAY:-yes}" != no ]; }

# what the sink received: the approval notice, a reply in the pull mail's thread
say
say "== the SMTP sink's mailbox ($MAILBOX, 127.0.0.1:$SMTP_PORT)"
if [ -f "$MAILBOX/msg1.eml" ]; then
	for m in "$MAILBOX"/msg*.eml; do
		env=${m%.eml}.env
		say "-- $(basename "$m"): from $(head -n 1 "$env" | terminal_safe), to $(tail -n +2 "$env" | terminal_safe | paste -sd ' ')"
		terminal_safe <"$m"
	done
elif [ "$s2" = approved ]; then
	say "   empty: take two was approved, but its notice was not mailed (see $RUN/serve.log)"
	say "demo: the approval notice did not reach the SMTP sink" >&2
	status=1
elif [ "$s2" != waiting ]; then
	say "   empty: take two is $s2, so there is no notice"
elif stays; then
	say "   empty: take two waits for the maintainer; approved on the dashboard, its notice is"
	say "   mailed to this sink while the server runs: $MAILBOX/msg1.eml"
else
	say "   empty: take two was left waiting for the maintainer, and the server and this sink"
	say "   stop with the demo: no notice is mailed"
fi
# the last word: whether take two was really built and booted, or simulated
if [ "$(curl -s "$URL/api/pulls/$ID2" | jq -r .report.simulated)" = true ]; then
	last="demo: SIMULATED: take two's build and boot were the stand-in scripts of tests/fakes (the kernel tree could not be prepared): nothing was compiled or booted"
else
	last="demo: real: take two was cross-built for arm64 and booted in QEMU with KUnit on $PULLGATE_HOME/linux"
fi
if stays; then
	say
	say "the server keeps running for the dashboard: press Ctrl-C to stop it"
	say "$last"
	wait "$SERVE_PID" || true
else
	say "$last"
fi
exit "$status"
