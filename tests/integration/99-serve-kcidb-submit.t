#!/bin/sh
# 99-serve-kcidb-submit.t - kcidb.submit: each decided run's KCIDB document POSTed to a receiver on loopback with the token of a file; retried, refused, never sent twice; bad URLs and token files refused at start.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 60
T1=hardening-v6.16-rc1-fix1
SCHEMA="$TOP/tests/kcidb/kcidb-v5.schema.json"
TOKEN=eyJhbGciOiJIUzI1NiJ9.eyJvcmlnaW4iOiJwdWxsZ2F0ZSJ9.c2lnbmF0dXJl
printf '%s\n' "$TOKEN" >"$SCRATCH/token"

SINK_PIDS=
# sink_start NAME MODE: a receiver in $SCRATCH/sink-NAME answering as MODE (tests/lib/kcidb_sink.py); its port in $PORT
sink_start() {
	mkdir -p "$SCRATCH/sink-$1"
	python3 "$TOP/tests/lib/kcidb_sink.py" "$2" "$SCRATCH/sink-$1" "$SCRATCH/sink-$1.port" \
		2>"$SCRATCH/sink-$1.log" &
	SINK_PIDS="$SINK_PIDS $!"
	wait_for test -s "$SCRATCH/sink-$1.port"
	PORT=$(cat "$SCRATCH/sink-$1.port")
}
sinks_stop() { for p in $SINK_PIDS; do kill "$p" 2>/dev/null || true; done; }
TAP_CLEANUP="sinks_stop"
# requests NAME: how many requests sink NAME has had
requests() { find "$SCRATCH/sink-$1" -mindepth 1 -maxdepth 1 -type d ! -name '*.tmp' | wc -l | tr -d ' '; }
# submit_yaml URL [TOKEN-FILE]: the kcidb section
submit_yaml() {
	printf 'kcidb:\n  submit:\n    url: %s\n    token-file: %s\n    attempts: 3\n    retry-seconds: 1\n    timeout-seconds: 20\n' \
		"$1" "${2:-$SCRATCH/token}"
}
# submission ID: the pull's submission as the API says it: state, tries, status
submission() { pull_field "$1" '.kcidb_submission | "\(.state) \(.tries) \(.status)"'; }
# wait_submission ID STATE: until the pull's submission is in STATE (a test's patience at most)
wait_submission() { wait_for _submission_is "$1" "$2"; }
_submission_is() { [ "$(pull_field "$1" .kcidb_submission.state)" = "$2" ]; }
# refused YAML: serve with the kcidb section YAML; $rc, $err
refused() {
	serve_setup "$1"
	run "$PULLGATE" serve --config "$CONFIG"
}

# --- refused at start, in one line ----------------------------------------------------------
refused "$(submit_yaml http://kcidb.example.org/submit)"
is "$rc" 3 "an http:// URL to another machine is refused"
like "$err" "serve.yaml:[0-9]+:[0-9]+: 'kcidb.submit.url' wants a URL, not 'http://kcidb.example.org/submit': expected an https:// URL: the token never goes over plain http beyond this machine" \
	"saying the token never goes over plain http"
is "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" 1 "in one line"
refused "$(submit_yaml https://user@kcidb.example.org/submit)"
like "$rc $err" "^3 .*'kcidb.submit.url' wants a URL, not .*: expected a URL without a user" "a user before the host is refused"
ln -s "$SCRATCH/token" "$SCRATCH/token-link"
refused "$(submit_yaml https://kcidb.example.org/submit "$SCRATCH/token-link")"
is "$rc" 3 "a token file that is a symlink is refused"
like "$err" "'kcidb.submit.token-file': token file: '$SCRATCH/token-link' is a symbolic link, not a regular file\$" \
	"the link is not followed, and named"
printf 'first\nsecond\n' >"$SCRATCH/token-2"
refused "$(submit_yaml https://kcidb.example.org/submit "$SCRATCH/token-2")"
is "$rc" 3 "a token file of two lines is refused"
like "$err" "token file '$SCRATCH/token-2' holds more than one line" "saying so"
is "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" 1 "in one line, the token's text not in it"
: >"$SCRATCH/token-0"
refused "$(submit_yaml https://kcidb.example.org/submit "$SCRATCH/token-0")"
like "$rc $err" "^3 .*token file '$SCRATCH/token-0' is empty\$" "an empty token file is refused"
refused "$(submit_yaml https://kcidb.example.org/submit "$SCRATCH/no-such-token")"
like "$rc $err" "^3 .*'kcidb.submit.token-file': token file: " "a missing token file is refused"
refused "kcidb:
  submit:
    url: https://kcidb.example.org/submit"
like "$rc $err" "^3 .*'kcidb.submit' .*token-file" "a URL without a token file is refused"

# --- a receiver busy once: tried again, then sent ---------------------------------------------
sink_start busy fail:1
BUSY=$PORT
# a proxy the environment names, which records what it gets: the service uses none
sink_start proxy ok
PROXY=$PORT
serve_setup "$(submit_yaml "http://127.0.0.1:$BUSY/submit")"
unset no_proxy NO_PROXY
export http_proxy="http://127.0.0.1:$PROXY" https_proxy="http://127.0.0.1:$PROXY" \
	ALL_PROXY="http://127.0.0.1:$PROXY"
serve_start
unset http_proxy https_proxy ALL_PROXY
mkdir -p "$SCRATCH/mail"
"$TOP/fixtures/mail.sh" "$FX" "$SCRATCH/mail" >/dev/null
sed "s|$FX/kees.git|$KEES_GIT_URL|g" "$SCRATCH/mail/take2.mail" >"$SCRATCH/take2.mail"
hook pull-request "$SCRATCH/take2.mail" take2-mail
ID2=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID2" waiting rejected error approved passed)" waiting "take two is decided: it waits for the maintainer"
wait_submission "$ID2" sent || true
is "$(submission "$ID2")" "sent 2 201" "its document was refused with a 500, tried again and sent (201)"
is "$(requests busy)" 2 "in two POSTs"
is "$(requests proxy)" 0 "none through the proxy http_proxy and ALL_PROXY name: the token goes to no proxy"
R1="$SCRATCH/sink-busy/1" R2="$SCRATCH/sink-busy/2"
is "$(cat "$R1/method") $(cat "$R1/path")" "POST /submit" "a POST to the URL's path"
is "$(grep -i '^Authorization:' "$R2/headers")" "Authorization: Bearer $TOKEN" "with the token file's token as its bearer token"
is "$(grep -i '^Content-Type:' "$R2/headers")" "Content-Type: application/json" "as JSON"
is "$(python3 "$TOP/tests/lib/kcidb_check.py" "$SCHEMA" "$R2/body" || true)" valid \
	"the body is a valid KCIDB v5 document (python3-jsonschema)"
curl -s -o "$SCRATCH/served.json" "$URL/api/pulls/$ID2/kcidb"
is "$(cmp "$R2/body" "$SCRATCH/served.json" && cmp "$R1/body" "$R2/body" && echo same)" same \
	"the very document GET /api/pulls/ID/kcidb serves, the same each try"
is "$(pull_field "$ID2" '.kcidb_submission.note')" "201 Created" "the note is the receiver's status line"
like "$(pull_field "$ID2" '.decisions[] | select(.action == "kcidb") | "\(.user): \(.note)"')" \
	"^pullgate: KCIDB document of run [0-9]+ sent to http://127.0.0.1:$BUSY/submit: 201 Created: \\{\"status\": \"accepted\"\\} \\(2 attempts\\)\$" \
	"the outcome is among the pull's decisions"
like "$(cat "$SCRATCH/serve.err")" "pull $ID2: KCIDB document, attempt 1 of 3: 500 Internal Server Error: \\{\"detail\": \"the database is busy\"\\}; again in 1 s" \
	"the 500 is logged with the receiver's first line, and when it is tried again"
like "$(cat "$SCRATCH/serve.err")" "pull $ID2: KCIDB document of run [0-9]+ sent to " "and the outcome"
get "$URL/pulls/$ID2"
like "$out" '<dt>KCIDB submission</dt><dd id="kcidb-submission">KCIDB: sent \(201\)</dd>' "the pull's page says it was sent"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly"

# --- restarted with a receiver that refuses the token: nothing sent again, a 401 failed at once ---
sink_start refusing refuse
REFUSING=$PORT
serve_setup "$(submit_yaml "http://127.0.0.1:$REFUSING/submit")"
serve_start
push_record "$SCRATCH/take1.json" "$T1"
hook push "$SCRATCH/take1.json" take1-push
ID1=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID1" rejected error approved waiting)" rejected "take one is decided: verify rejects it"
wait_submission "$ID1" failed || true
is "$(submission "$ID1")" "failed 1 401" "its document was refused with a 401: failed at the first try"
is "$(requests refusing)" 1 "one POST: the sent document of take two was not sent again after the restart, the 401 not retried"
is "$(jq -r '.checkouts[0].id' "$SCRATCH/sink-refusing/1/body")" \
	"pullgate:$(git --git-dir="$KREPO" rev-parse "refs/tags/$T1")" "that POST is take one's document"
is "$(pull_field "$ID1" '.kcidb_submission.note')" '401 Unauthorized: {"detail": "the token is not valid"}' \
	"the note keeps the status line and the first line of the answer"
get "$URL/pulls/$ID1"
like "$out" '<dd id="kcidb-submission">KCIDB: failed: 401 Unauthorized: \{&quot;detail&quot;: &quot;the token is not valid&quot;\}</dd>' \
	"the pull's page says it failed, the answer escaped"
like "$(pull_field "$ID1" '.decisions[] | select(.action == "kcidb") | .note')" \
	"^KCIDB document of run [0-9]+ not sent: 401 Unauthorized" "the failure is among the pull's decisions"
is "$(submission "$ID2")" "sent 2 201" "take two's submission is still the one sent"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly"

# --- the token is never logged, served or shown ------------------------------------------------
serve_start
get "$URL/api/pulls/$ID1"
A=$out
get "$URL/pulls/$ID2"
unlike "$A$out$(cat "$SCRATCH/serve.err" "$SCRATCH/serve.out")" "$TOKEN" "the token is in no log, no API answer and no page"
is "$(requests refusing) $(requests busy)" "1 2" "a second restart sends nothing either"
serve_stop

# --- a stop while the receiver does not answer ends at once -----------------------------------
# a port that takes connections and never answers: the POST waits on its 20 s timeout
python3 -c 'import os, socket, sys, signal
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1]); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
signal.pause()' "$SCRATCH/mute.port" </dev/null >/dev/null 2>&1 &
SINK_PIDS="$SINK_PIDS $!"
wait_for test -s "$SCRATCH/mute.port"
MUTE=$(cat "$SCRATCH/mute.port")
serve_setup "$(submit_yaml "http://127.0.0.1:$MUTE/submit")"
serve_start
push_record "$SCRATCH/take1b.json" "$T1"
hook push "$SCRATCH/take1b.json" take1-push-again
ID1B=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID1B" rejected error)" rejected "take one again, rejected again"
wait_for grep -q "^pullgate: listening" "$SCRATCH/serve.out"
# the POST is under way once the mute port holds a connection from the service
UNDERWAY=no
wait_for sh -c "ss -Htn state established '( dport = :$MUTE )' | grep -q ." && UNDERWAY=yes
is "$UNDERWAY" yes "the service's POST is under way: the mute port holds its connection"
is "$(submission "$ID1B")" "queued 0 null" "its submission is under way, not yet tried to an end"
serve_stop
is "$SERVE_RC" 0 "a stop during the POST ends the service (the POST given up, not waited for)"
like "$(cat "$SCRATCH/serve.err")" "pull $ID1B: the KCIDB submission is left for the next start" "and says the document is left for the next start"

# --- a kill between the receiver's 201 and its record: sent again at the next start, the same document ---
sink_start crash ok
CRASH=$PORT
serve_setup "$(submit_yaml "http://127.0.0.1:$CRASH/submit")"
# the sender may reach its test point before the service says it listens: no URL is needed here
PULLGATE_TEST_STOP=kcidb:posted serve_start 2>/dev/null || true
# what the stop left queued is sent at the start, and the service stops itself once it is
wait_stopped "$SERVE_PID" || true
is "$(proc_state "$SERVE_PID")" T "the service stopped itself after the POST, before its record"
is "$(requests crash)" 1 "the document left by the stop was sent at the start"
kill -KILL "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null || true
SERVE_PID=
serve_start
wait_submission "$ID1B" sent || true
is "$(submission "$ID1B")" "sent 1 201" "killed before the record, it is sent again at the next start"
is "$(requests crash)" 2 "once more"
is "$(cmp "$SCRATCH/sink-crash/1/body" "$SCRATCH/sink-crash/2/body" && echo same)" same \
	"the same document, the same ids: KCIDB takes it as the same objects"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly"

# --- a reload reads the token file again; a bad one is refused and the running one stays ---------
# a receiver whose status line and answer hold escape sequences, BEL and backspaces
sink_start reload hostile
RELOAD=$PORT
serve_setup ""
# the first document cannot be made (an error reading it, as a busy store's): tried again
PULLGATE_TEST_FAIL=kcidb:document serve_start
printf 'second-token\n' >"$SCRATCH/token-new"
ln -sf "$SCRATCH/token-new" "$SCRATCH/token-linked"
cat "$CONFIG" >"$SCRATCH/serve.plain"
submit_yaml "http://127.0.0.1:$RELOAD/submit" "$SCRATCH/token-linked" >>"$CONFIG"
kill -HUP "$SERVE_PID"
wait_for grep -q "reload refused" "$SCRATCH/serve.err" || true
like "$(grep 'reload refused' "$SCRATCH/serve.err")" \
	"reload refused, the running configuration stays: .*token file: '$SCRATCH/token-linked' is a symbolic link" \
	"a reload with a token file that is a symlink is refused"
{ cat "$SCRATCH/serve.plain"; submit_yaml "http://127.0.0.1:$RELOAD/submit" "$SCRATCH/token-new"; } >"$CONFIG"
kill -HUP "$SERVE_PID"
wait_for grep -q "reloaded $CONFIG" "$SCRATCH/serve.err" || true
like "$(cat "$SCRATCH/serve.err")" "reloaded $CONFIG" "a reload that adds kcidb.submit is taken"
push_record "$SCRATCH/take1c.json" "$T1"
hook push "$SCRATCH/take1c.json" take1-push-reload
ID1C=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID1C" rejected error)" rejected "a pull decided after the reload"
wait_submission "$ID1C" sent || true
is "$(submission "$ID1C")" "sent 2 201" "is sent to the URL the reload gave, at the second try"
like "$(cat "$SCRATCH/serve.err")" \
	"pull $ID1C: KCIDB document, attempt 1 of 3: no document to send: kcidb document: a test's fault; again in 1 s" \
	"the document it could not make at the first try was tried again, not failed"
is "$(requests reload)" 1 "one POST"
is "$(grep -i '^Authorization:' "$SCRATCH/sink-reload/1/headers")" "Authorization: Bearer second-token" \
	"with the token the reload read"
# controls: how many bytes of C0 (but the newlines between lines) or DEL its arguments hold
controls() { printf '%s' "$*" | LC_ALL=C tr -d -c '\001-\011\013-\037\177' | wc -c | tr -d ' '; }
NOTE=$(pull_field "$ID1C" .kcidb_submission.note)
is "$NOTE" "201 Created redok" "the hostile receiver's status line is the note, its escapes, BEL and backspaces gone"
is "$(controls "$NOTE")" 0 "cleaned of escape sequences, BEL and backspaces"
is "$(controls "$(pull_field "$ID1C" '.decisions[] | select(.action == "kcidb") | .note')" \
	"$(grep "pull $ID1C: KCIDB" "$SCRATCH/serve.err")")" 0 "in the decision and the log too"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly"
