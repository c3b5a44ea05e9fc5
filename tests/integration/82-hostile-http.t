#!/bin/sh
# 82-hostile-http.t - the Host header (DNS rebinding), log-in throttling with backoff, duplicate keys in every input.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 33
# the first wait of a throttled log-in is 3 s (limits.login-backoff), on a clock the test
# sets (PULLGATE_TEST_CLOCK, a build for tests): it moves only when the test moves it
serve_setup 'limits:
  login-backoff: 3'
CLOCK="$SCRATCH/clock"
echo 1000000 >"$CLOCK"
# advance SECONDS: the service's log-in clock moves on
advance() { echo $(($(cat "$CLOCK") + $1 * 1000)) >"$CLOCK"; }
PULLGATE_TEST_CLOCK=$CLOCK serve_start
PORT=${URL##*:}
metric() { curl -s "$URL/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }

# --- Host: a page of another name rebound to this address is refused ----------------------------
get -H "Host: evil.example:$PORT" "$URL/api/pulls"
is "$code" 421 "a request for another host name is refused (421), as DNS rebinding would send it"
like "$(printf '%s' "$out" | jq -r .error)" "does not answer to that Host name" "with a JSON error saying why"
get -H "Host: evil.example:$PORT" "$URL/api/session"
is "$code" 421 "the session too"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Host: evil.example" -H 'Content-Type: application/json' \
	-d '{}' "$URL/hooks/push")
is "$code" 421 "and the hooks"
get -H "Host: localhost:$PORT" "$URL/api/pulls"
is "$code" 200 "localhost is this service by default"
get -H "Host: 127.0.0.1:$PORT" "$URL/healthz"
is "$code" 200 "and so is its listen address"
get -H "Host: [::1]:$PORT" "$URL/healthz"
is "$code" 200 "and ::1"
get -H "Host: LOCALHOST." "$URL/healthz"
is "$code" 200 "names are compared without case and a final dot"
code=$(curl -s -0 -o "$SCRATCH/.r" -w '%{http_code}' -H 'Host:' "$URL/healthz")
is "$code" 400 "an HTTP/1.0 request without Host is refused (400)"
get -H "Host: a:b:c" "$URL/healthz"
is "$code" 400 "and so is a malformed Host"
is "$(metric pullgate_http_misdirected_total)" 5 "/metrics counts the refusals"

# --- log-ins: throttled per account and per address, refused cheaply ------------------------------
# login USER PASSWORD: $code, $out, and $after (the Retry-After header)
login() {
	code=$(curl -s -D "$SCRATCH/.h" -o "$SCRATCH/.r" -w '%{http_code}' -X POST \
		-H 'Content-Type: application/json' -d "{\"user\":\"$1\",\"password\":\"$2\"}" "$URL/api/login")
	out=$(cat "$SCRATCH/.r")
	after=$(tr -d '\r' <"$SCRATCH/.h" | sed -n 's/^Retry-After: //p')
}
codes=
for i in 1 2 3 4 5; do
	login maintainer "wrong-$i"
	codes="$codes$code "
done
is "$codes" "401 401 401 401 401 " "five wrong passwords are each answered 401"
checks=$(metric pullgate_password_checks_total)
login maintainer "wrong-6"
is "$code" 429 "the sixth at once is refused with 429"
like "$after" '^[1-9][0-9]*$' "with Retry-After"
login maintainer "$SERVE_PASSWORD"
is "$code" 429 "and so is the right password while the account is throttled"
like "$(printf '%s' "$out" | jq -r .error)" "too many failed log-ins" "saying why"
is "$(metric pullgate_password_checks_total)" "$checks" "a refused attempt checks no password (no PBKDF2)"
advance $((after - 1))
login maintainer "wrong-7"
is "$code:$after" 429:1 "a second before the wait is over, still refused, for one more second"
advance 1
login maintainer "wrong-7"
is "$code" 401 "after the wait, another wrong password is checked (401)"
login maintainer "$SERVE_PASSWORD"
is "$code" 429 "and the wait doubles"
ok "$([ "$after" -gt 3 ] && [ "$after" -le 6 ] && echo 0 || echo 1)" \
	"to 6 s, longer than the first 3 s (Retry-After: $after)"
advance "$after"
login maintainer "$SERVE_PASSWORD"
is "$code" 200 "after it, the right password logs in"
# from one address, many accounts: the address is throttled too
n=0
while [ $n -lt 30 ]; do
	login "nobody-$n" "guess"
	[ "$code" = 429 ] && break
	n=$((n + 1))
done
is "$n" 20 "an address that failed 20 times over many accounts is throttled"
is "$(metric pullgate_login_throttled_total)" 5 "/metrics counts the throttled attempts"
serve_stop

serve_setup
sed -i "s/^  port: 0$/&\n  hosts: [pullgate.example.org]/" "$CONFIG"
serve_start
PORT=${URL##*:}
get -H "Host: pullgate.example.org" "$URL/healthz"
is "$code" 200 "a configured name is this service (listen.hosts)"
get -H "Host: localhost:$PORT" "$URL/healthz"
is "$code" 421 "the list replaces the loopback defaults"
get -H "Host: 127.0.0.1:$PORT" "$URL/healthz"
is "$code" 200 "the listen address is always this service"
serve_stop

# --- a repeated key is refused in every input, not "the first (or last) wins" ----------------------
serve_setup
serve_start
code=$(curl -s -o "$SCRATCH/.r" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d "{\"user\":\"maintainer\",\"user\":\"mallory\",\"password\":\"$SERVE_PASSWORD\"}" "$URL/api/login")
is "$code" 400 "a log-in body with a repeated key is refused (400)"
like "$(jq -r .error "$SCRATCH/.r")" "duplicate" "naming the duplicate"
serve_stop
printf 'listen:\n  port: 0\n  port: 1\n' >"$SCRATCH/dup.yaml"
run "$PULLGATE" serve --config "$SCRATCH/dup.yaml"
is "$rc:$err" "3:error: $SCRATCH/dup.yaml:3:3: duplicate key 'port' in 'listen' (first at 2:3)" \
	"a configuration with a repeated key is refused"
printf 'repositories:\n  map:\n    a/b: /x\n    a/b: /y\n' >"$SCRATCH/dupmap.yaml"
run "$PULLGATE" serve --config "$SCRATCH/dupmap.yaml"
like "$rc:$err" "^3:error: $SCRATCH/dupmap.yaml:4:5: duplicate key 'a/b'" "and a repeated repository name in its map"
printf 'hooks:\n  push:\n    secret: 0123456789abcdef0123\n  push:\n    secret: 0123456789abcdef0124\n' >"$SCRATCH/duphook.yaml"
run "$PULLGATE" serve --config "$SCRATCH/duphook.yaml"
like "$rc:$err" "^3:error: $SCRATCH/duphook.yaml:4:3: duplicate key 'push' in 'hooks'" "and a repeated hook"
printf 'signers:\n  - fingerprint: 5C5B56B539F09EBE7365A51E2CE9E494EF8D0CB8\n    identities: [a@b.c]\n    identities: [d@e.f]\n' >"$SCRATCH/dupsigner.yaml"
run "$PULLGATE" policy check "$SCRATCH/dupsigner.yaml"
like "$err" "dupsigner.yaml:4:5: duplicate key 'identities' in 'signers\[0\]'" "a policy with a repeated key inside a signer is refused"
