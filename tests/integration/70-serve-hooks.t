#!/bin/sh
# 70-serve-hooks.t - the hooks and the API refuse bad requests with a 4xx and a JSON error, and keep serving.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 66
serve_setup
serve_start
T2=hardening-v6.16-rc1-fix1-take2
push_record "$SCRATCH/take2.json" "$T2"
B="$SCRATCH/take2.json"

# err: the JSON error message of the last answer
err_of() { printf '%s' "$out" | jq -r .error; }

# --- signatures -------------------------------------------------------------------
code=$(curl -s -o "$SCRATCH/.r" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-H 'X-Pullgate-Delivery: nosig-1' --data-binary "@$B" "$URL/hooks/push")
out=$(cat "$SCRATCH/.r")
is "$code" 401 "a push without a signature is refused (401)"
like "$(err_of)" "carries no signature" "with a JSON error saying why"
hook push "$B" wrongsig-1 application/json "another-secret-0123456789"
is "$code" 401 "a push signed with another secret is refused"
like "$(err_of)" "does not match the timestamp and the body" "the error says the signature does not match"
code=$(curl -s -o "$SCRATCH/.r" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-H 'X-Pullgate-Delivery: badsig-1' -H 'X-Pullgate-Signature: sha1=abcdef' \
	--data-binary "@$B" "$URL/hooks/push")
is "$code" 401 "a malformed signature header is refused"
# the pull-request hook has its own secret
hook pull-request "$B" crosssig-1 message/rfc822 "$PUSH_SECRET"
is "$code" 401 "the push secret does not sign pull-request mails"
# a signature over other bytes: the body was changed in transit
sed 's/"user": "kees"/"user": "mallory"/' "$B" >"$SCRATCH/tampered.json"
TS=$(date +%s)
code=$(curl -s -o "$SCRATCH/.r" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-H 'X-Pullgate-Delivery: tampered-1' -H "X-Pullgate-Timestamp: $TS" \
	-H "X-Pullgate-Signature: $(sign "$PUSH_SECRET" "$B" "$TS")" \
	--data-binary "@$SCRATCH/tampered.json" "$URL/hooks/push")
is "$code" 401 "a body changed after signing is refused"

# --- delivery ids and replays -------------------------------------------------------
hook push "$B" ""
is "$code" 400 "a push without a delivery id is refused"
hook push "$B" 'bad id/../x'
is "$code" 400 "a delivery id with odd characters is refused"
hook push "$B" take2-1
is "$code" 202 "a good push is accepted at once (202)"
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(printf '%s' "$out" | jq -r '.urls[0]')" "/api/pulls/$ID" "with the job's id and URL"
hook push "$B" take2-1
is "$code" 200 "the same delivery again is answered 200"
is "$(printf '%s' "$out" | jq -r '"\(.duplicate) \(.jobs[0])"')" "true $ID" \
	"and names the job it made the first time"
hook push "$SCRATCH/tampered.json" take2-1
is "$code" 409 "a delivery id reused for another body is a conflict (409)"
is "$(curl -s "$URL/api/pulls" | jq .total)" 1 "no replay made a second job"

# --- sizes and types --------------------------------------------------------------------
head -c 300000 /dev/zero | tr '\0' 'x' >"$SCRATCH/huge.json"
hook push "$SCRATCH/huge.json" huge-1
is "$code" 413 "a body over max-body is refused (413)"
like "$(err_of)" "larger than 262144 bytes" "naming the cap"
# no Content-Length: the cap holds while the body streams in
code=$(curl -s -o "$SCRATCH/.r" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-H 'Transfer-Encoding: chunked' -H 'X-Pullgate-Delivery: huge-2' -H "X-Pullgate-Timestamp: $TS" \
	-H "X-Pullgate-Signature: $(sign "$PUSH_SECRET" "$SCRATCH/huge.json" "$TS")" \
	--data-binary "@$SCRATCH/huge.json" "$URL/hooks/push")
is "$code" 413 "a chunked body over max-body is refused too"
hook push "$B" ctype-1 text/html
is "$code" 415 "a push that is not JSON or YAML is refused (415)"
hook pull-request "$B" ctype-2 application/json
is "$code" 415 "a mail hook body that is not a mail is refused (415)"

# --- malformed bodies -------------------------------------------------------------------
printf '{ "repo": "x", "changes": [ ' >"$SCRATCH/trunc.json"
hook push "$SCRATCH/trunc.json" trunc-1
is "$code" 400 "truncated JSON is refused (400)"
like "$(err_of)" "^malformed push record: line [0-9]+, column [0-9]+" "with the place of the problem"
printf 'repo: [unclosed\nuser: kees\n' >"$SCRATCH/bad.yaml"
hook push "$SCRATCH/bad.yaml" yaml-1 application/yaml
is "$code" 400 "malformed YAML is refused (400)"
printf 'a: &x [1]\nb: *x\n' >"$SCRATCH/alias.yaml"
hook push "$SCRATCH/alias.yaml" yaml-2 application/yaml
is "$code" 400 "YAML aliases are refused"
# a repeated key is refused, not "the first wins", in JSON and YAML alike
sed 's/"user": "kees"/"user": "kees", "user": "mallory"/' "$B" >"$SCRATCH/dupkey.json"
hook push "$SCRATCH/dupkey.json" dupkey-1
is "$code" 400 "a push record with a repeated key is refused (400)"
like "$(err_of)" "^malformed push record: line 1, column [0-9]+: duplicate key 'user' at the top level \(first at 1:[0-9]+\)$" \
	"the message names the key and both places"
is "$(err_of | wc -l | tr -d ' ')" 1 "on one line"
cat >"$SCRATCH/dupkey.yaml" <<EOR
repo: $KEES_NAME
changes:
  - ref: refs/tags/$T2
    old: 0000000000000000000000000000000000000000
    new: 1111111111111111111111111111111111111111
    ref: refs/tags/other
EOR
hook push "$SCRATCH/dupkey.yaml" dupkey-2 application/yaml
is "$(printf '%s %s' "$code" "$(err_of)")" \
	"400 malformed push record: line 6, column 5: duplicate key 'ref' in 'changes[0]' (first at 3:5)" \
	"a repeated key inside a YAML change too"
cat >"$SCRATCH/badref.json" <<EOR
{ "repo": "$KEES_NAME", "changes": [ { "ref": "refs/tags/a..b", "old": "0", "new": "1" } ] }
EOR
hook push "$SCRATCH/badref.json" ref-1
is "$code" 400 "an invalid ref name is refused"
cat >"$SCRATCH/escape.json" <<EOR
{ "repo": "../../etc", "changes": [ { "ref": "refs/tags/x", "old": "$(printf '0%.0s' $(seq 40))", "new": "$(printf '1%.0s' $(seq 40))" } ] }
EOR
hook push "$SCRATCH/escape.json" repo-1
is "$code" 400 "a repository name with .. is refused"
sed "s|$KEES_NAME|pub/scm/linux/kernel/git/mallory/linux|" "$B" >"$SCRATCH/unknown.json"
hook push "$SCRATCH/unknown.json" repo-2
is "$code" 422 "a repository the configuration does not map is refused (422)"
cat >"$SCRATCH/branch.json" <<EOR
{ "repo": "$KEES_NAME", "user": "kees", "changes": [ { "ref": "refs/heads/master",
  "old": "$(printf '0%.0s' $(seq 40))", "new": "$(git --git-dir="$FX/kees.git" rev-parse take2)" } ] }
EOR
hook push "$SCRATCH/branch.json" branch-1
is "$code" 200 "a branch push is acknowledged (200)"
is "$(printf '%s' "$out" | jq -c .jobs)" "[]" "and makes no job"
printf 'From: x\nSubject: hello\n\nnot a pull request at all\n' >"$SCRATCH/notpull.mail"
hook pull-request "$SCRATCH/notpull.mail" mail-1
is "$code" 400 "a mail that is no request-pull is refused (400)"
like "$(err_of)" "^malformed pull-request mail" "saying so"
head -c 4096 /dev/urandom >"$SCRATCH/garbage.mail"
hook pull-request "$SCRATCH/garbage.mail" mail-2
like "$code" '^4[0-9][0-9]$' "binary garbage as a mail is a 4xx"

# --- a mail's URL is fetched only when mapped, or a network URL the allow-list names ---
mkdir -p "$SCRATCH/mail"
"$TOP/fixtures/mail.sh" "$FX" "$SCRATCH/mail" >/dev/null
hook pull-request "$SCRATCH/mail/take2.mail" mail-local
is "$code" 422 "a mail naming a local path that is not mapped is refused (422)"
like "$(err_of)" "^repository '$FX/kees.git' is not mapped in the configuration" "saying why"
hook pull-request "$SCRATCH/mail/variants.mail" mail-file
is "$code" 422 "and so is a file:// URL"
sed "s|$FX/kees.git|https://internal.example/secret.git|g" "$SCRATCH/mail/take2.mail" >"$SCRATCH/internal.mail"
hook pull-request "$SCRATCH/internal.mail" mail-internal
is "$code" 422 "a network URL off the policy's allow-list is refused"
like "$(err_of)" "https://internal.example/secret.git" "naming it"
get "$URL/metrics"
like "$out" '^pullgate_hook_rejections_total\{hook="pull-request",reason="repository"\} 3$' \
	"each refusal is counted"
# a message that quotes the request keeps its quote, backslash and control character, escaped
odd=$(printf 'https://internal.example/a"b\\c\001d.git')
sed "s|$FX/kees.git|$(printf '%s' "$odd" | sed 's/[\\&|]/\\&/g')|g" "$SCRATCH/mail/take2.mail" \
	>"$SCRATCH/odd.mail"
hook pull-request "$SCRATCH/odd.mail" mail-odd
is "$code" 422 "a mail naming an odd URL off the allow-list is refused"
ok "$(jq -e . "$SCRATCH/.hook" >/dev/null 2>&1; echo $?)" "the answer is valid JSON"
is "$(err_of)" "repository '$odd' is not in the policy's allow-list" "with the URL intact in the message"

# --- paths and methods ------------------------------------------------------------------
get "$URL/no/such/path"
is "$code" 404 "an unknown path is 404"
is "$(printf '%s' "$out" | jq -r .status)" 404 "with a JSON error"
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/hooks/push")
is "$code" 405 "GET on a hook is 405"
is "$(curl -s -D - -o /dev/null "$URL/hooks/push" | tr -d '\r' | sed -n 's/^Allow: //p')" POST \
	"with Allow: POST"
get "$URL/api/pulls/999999"
is "$code" 404 "an unknown pull is 404"
get "$URL/api/pulls?state=bogus"
is "$code" 400 "an unknown state filter is 400"
is "$(printf '%s' "$out" | jq -r '"\(.status) \(.error | length > 0)"')" "400 true" "with a JSON error"
get "$URL/?offset=-1"
is "$code" 400 "the dashboard refuses a negative offset"
get "$URL/api/pulls?offset=12abc"
is "$code" 400 "and the API a malformed one"
code=$(curl -s -o "$SCRATCH/.m" -w '%{http_code}' -X DELETE "$URL/api/pulls")
is "$code" 405 "a wrong method on the API is 405"
is "$(jq -r .status "$SCRATCH/.m")" 405 "with a JSON error"
get "$URL/api/pulls?limit=100000"
is "$code" 400 "a limit past the maximum is 400"

# --- decisions need a maintainer's session and its CSRF token --------------------------------
code=$(curl -s -o "$SCRATCH/.r" -w '%{http_code}' -X POST "$URL/api/pulls/$ID/approve")
is "$code" 401 "approval without a session is refused (401)"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d '{"user":"maintainer","password":"wrong-password"}' "$URL/api/login")
is "$code" 401 "a wrong password does not log in"
curl -s -c "$SCRATCH/jar" -o "$SCRATCH/login.json" -D "$SCRATCH/login.h" -X POST \
	-H 'Content-Type: application/json' \
	-d "{\"user\":\"maintainer\",\"password\":\"$SERVE_PASSWORD\"}" "$URL/api/login"
like "$(tr -d '\r' <"$SCRATCH/login.h")" '^Set-Cookie: pg_session=[0-9a-f]{64}; Path=/; Max-Age=[0-9]+; HttpOnly; SameSite=Strict$' \
	"the session cookie is HttpOnly and SameSite=Strict"
CSRF=$(jq -r .csrf "$SCRATCH/login.json")
code=$(curl -s -b "$SCRATCH/jar" -o "$SCRATCH/.r" -w '%{http_code}' -X POST "$URL/api/pulls/$ID/approve")
is "$code" 403 "approval with a session but no CSRF token is refused (403)"
code=$(curl -s -b "$SCRATCH/jar" -o "$SCRATCH/.r" -w '%{http_code}' -X POST \
	-H "X-CSRF-Token: 0$CSRF" "$URL/api/pulls/$ID/approve")
is "$code" 403 "a wrong CSRF token is refused (403)"
code=$(curl -s -b "$SCRATCH/jar" -o "$SCRATCH/.r" -w '%{http_code}' -X POST \
	-H "X-CSRF-Token: $CSRF" -H 'Origin: http://evil.example' "$URL/api/pulls/$ID/approve")
is "$code" 403 "a cross-origin request is refused even with the token"

# --- and the server kept serving ----------------------------------------------------------------
get "$URL/healthz"
is "$code" 200 "after all that the server is healthy"
rejects=$(curl -s "$URL/metrics" | awk '/^pullgate_hook_rejections_total\{hook="push",reason="signature"\}/ { print $2 }')
is "$rejects" 4 "/metrics counts the push rejections by reason"
serve_stop
is "$SERVE_RC" 0 "the server stops cleanly on SIGTERM"
