# serve.sh - run `pullgate serve` for a test on an ephemeral loopback port (sourced after fixtures.sh).
#
# serve_setup writes a configuration for the incident fixtures: the policy of
# fixtures/policy.sh, Kees's kernel.org repository name and URL mapped to
# a mirror of the fixture's kees.git, a bare clone of upstream.git as the maintainer's tree,
# the stand-in build and boot scripts of tests/fakes, and one maintainer
# account (user "maintainer", password $SERVE_PASSWORD).  serve_start runs
# the server in the background (stopped in the EXIT trap) and sets $URL.

. "$TOP/tests/lib/wait.sh"

SERVE_PASSWORD=correct-horse-battery
PUSH_SECRET=push-secret-0123456789abcdef
MAIL_SECRET=mail-secret-0123456789abcdef
KEES_NAME=pub/scm/linux/kernel/git/kees/linux
KEES_GIT_URL=git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux.git

# serve_setup [EXTRA-YAML]: $CONFIG, the tree at $TREE, the sender's repository
# at $KREPO (a mirror of the fixture's kees.git that tests may add tags to)
# and the policy at $SCRATCH/policy.yaml (the fixture's, for $KREPO).
serve_setup() {
	fixture_incident
	"$TOP/fixtures/policy.sh" "$FX"
	TREE="$SCRATCH/tree.git"
	KREPO="$SCRATCH/kees.git"
	[ -d "$TREE" ] || git clone -q --bare "$FX/upstream.git" "$TREE"
	[ -d "$KREPO" ] || git clone -q --mirror "$FX/kees.git" "$KREPO"
	sed -e "s|$FX/kees.git|$KREPO|g" -e "s|file: keyring.asc|file: $FX/keyring.asc|" \
		"$FX/policy.yaml" >"$SCRATCH/policy.yaml"
	hash=$(printf '%s\n' "$SERVE_PASSWORD" | "$PULLGATE" serve --hash-password)
	CONFIG="$SCRATCH/serve.yaml"
	cat >"$CONFIG" <<EOC
listen:
  address: 127.0.0.1
  port: 0
state: $SCRATCH/state
policy: $SCRATCH/policy.yaml
hooks:
  push:
    secret: $PUSH_SECRET
  pull-request:
    secret: $MAIL_SECRET
  max-body: 262144
repositories:
  map:
    $KEES_NAME: $KREPO
    '$KEES_GIT_URL': $KREPO
pipeline:
  tree: $TREE
  verify-workers: 2
accounts:
  - name: maintainer
    password-hash: '$hash'
${1:-}
EOC
}

# serve_start: start the server; $URL, $SERVE_PID; its stderr in $SCRATCH/serve.err
serve_start() {
	: >"$SCRATCH/serve.out"
	PULLGATE_DATADIR="${SERVE_DATADIR:-$TOP/tests/fakes}" "$PULLGATE" serve --config "$CONFIG" \
		>"$SCRATCH/serve.out" 2>>"$SCRATCH/serve.err" &
	SERVE_PID=$!
	TAP_CLEANUP="${TAP_CLEANUP:-} serve_kill"
	URL=
	wait_for _serve_listening || true
	URL=$(sed -n 's/^pullgate: listening on //p' "$SCRATCH/serve.out")
	URL=${URL%/}
	[ -n "$URL" ] || { cat "$SCRATCH/serve.err" >&2; return 1; }
}
# the server said where it listens, or it is gone (or stopped itself at a test point)
_serve_listening() {
	grep -q '^pullgate: listening on ' "$SCRATCH/serve.out" || _stopped_or_ended "$SERVE_PID"
}

# stop_fakes [DIR]: end the stand-in builds and boots (tests/fakes) that a killed server
# left running for this test (those whose arguments name DIR, by default $SCRATCH), by
# their process groups
stop_fakes() {
	ps -eo pid=,pgid=,args= | awk -v dir="${1:-$SCRATCH}" '
		index($0, "tests/fakes/scripts/kernel/") && index($0, dir) { print $2 }' |
		sort -u | while read -r g; do kill -KILL -- "-$g" 2>/dev/null || true; done
}

serve_kill() {
	[ -n "${SERVE_PID:-}" ] || return 0
	kill -TERM "$SERVE_PID" 2>/dev/null || true
	# one that stopped itself at a test point (PULLGATE_TEST_STOP) takes the TERM once it runs
	kill -CONT "$SERVE_PID" 2>/dev/null || true
	wait "$SERVE_PID" 2>/dev/null || true
	SERVE_PID=
}

# serve_kill_held: SIGKILL, for a service that may hold a thread at a test point
# (PULLGATE_TEST_HOLD: its shutdown would wait for it), and the stand-in builds it left
serve_kill_held() {
	[ -n "${SERVE_PID:-}" ] && kill -KILL "$SERVE_PID" 2>/dev/null || true
	SERVE_PID=
	stop_fakes
}

# serve_stop: SIGTERM, and $SERVE_RC is the server's exit status (non-zero
# under the sanitizers when it leaked or misbehaved)
serve_stop() {
	kill -TERM "$SERVE_PID"
	set +e
	wait "$SERVE_PID"
	SERVE_RC=$?
	set -e
	SERVE_PID=
}

# sign SECRET FILE TIMESTAMP: the X-Pullgate-Signature value of "TIMESTAMP." and FILE's bytes
sign() {
	perl -MDigest::SHA=hmac_sha256_hex -e 'local $/; binmode STDIN; print "sha256=", hmac_sha256_hex("$ARGV[1]." . <STDIN>, $ARGV[0])' \
		"$1" "$3" <"$2"
}

# hook PATH FILE DELIVERY [CONTENT-TYPE [SECRET [TIMESTAMP]]]: POST a body signed with
# TIMESTAMP (also left in $TS).  Without one, the time now, or the second
# before the earliest this body was already signed at: a request signed
# anew is never the same bytes as an earlier one, however fast the test
# runs (an identical one is rightly a replay).  Sets $code and $out (its headers in $SCRATCH/.hook.h).
hook() {
	case $1 in
	push) ctype=${4:-application/json} secret=${5:-$PUSH_SECRET} ;;
	*) ctype=${4:-message/rfc822} secret=${5:-$MAIL_SECRET} ;;
	esac
	_body=$(cksum <"$2")
	TS=${6:-$(date +%s)}
	if [ -z "${6:-}" ]; then
		while grep -qxF "$TS $_body" "$SCRATCH/.signed" 2>/dev/null; do TS=$((TS - 1)); done
	fi
	echo "$TS $_body" >>"$SCRATCH/.signed"
	code=$(curl -s -o "$SCRATCH/.hook" -D "$SCRATCH/.hook.h" -w '%{http_code}' -X POST \
		-H "Content-Type: $ctype" -H "X-Pullgate-Delivery: $3" \
		-H "X-Pullgate-Timestamp: $TS" -H "X-Pullgate-Signature: $(sign "$secret" "$2" "$TS")" \
		--data-binary "@$2" "$URL/hooks/$1")
	out=$(cat "$SCRATCH/.hook")
}

# push_record FILE TAG: a push record for one of kees.git's tags
push_record() {
	new=$(git --git-dir="$KREPO" rev-parse "refs/tags/$2")
	cat >"$1" <<EOR
{ "repo": "$KEES_NAME", "user": "kees",
  "changes": [ { "ref": "refs/tags/$2", "old": "0000000000000000000000000000000000000000",
                 "new": "$new" } ] }
EOR
}

# get PATH: $code and $out of a GET
get() {
	code=$(curl -s -o "$SCRATCH/.get" -w '%{http_code}' "$@")
	out=$(cat "$SCRATCH/.get")
}

# wait_state ID STATE...: until the pull is in one of STATEs (a test's
# $PATIENCE at most); prints the state it was last seen in
wait_state() {
	_ws_id=$1
	shift
	_ws_rc=0
	wait_for _in_state "$_ws_id" "$@" || _ws_rc=1
	echo "$_ws_state"
	return $_ws_rc
}
_in_state() {
	_ws_state=$(curl -s "$URL/api/pulls/$1" | jq -r .state)
	shift
	for _ws_want in "$@"; do
		[ "$_ws_state" = "$_ws_want" ] && return 0
	done
	return 1
}

# kees_tag NAME FILE CONTENT MESSAGE TAG-MESSAGE: a tag signed by Kees in $KREPO:
# take two plus one commit (MESSAGE) that writes CONTENT to FILE
kees_tag() {
	w="$SCRATCH/tag-work"
	rm -rf "$w" "$SCRATCH/gnupg-tag"
	# a private copy of the keys, without the agent sockets another test may have made
	mkdir -m 700 "$SCRATCH/gnupg-tag"
	for f in "$FX/gnupg"/*; do
		case ${f##*/} in
		S.*) ;;
		*) cp -r "$f" "$SCRATCH/gnupg-tag/" ;;
		esac
	done
	git clone -q --no-checkout "$KREPO" "$w"
	(
		cd "$w"
		export GNUPGHOME="$SCRATCH/gnupg-tag" GIT_AUTHOR_NAME="Kees Cook" \
			GIT_AUTHOR_EMAIL=kees@kernel.org GIT_COMMITTER_NAME="Kees Cook" \
			GIT_COMMITTER_EMAIL=kees@kernel.org
		git checkout -q -b "work-$1" "refs/tags/hardening-v6.16-rc1-fix1-take2^{commit}"
		printf '%s\n' "$3" >"$2"
		git add "$2"
		git commit -q -m "$4"
		git -c tag.gpgSign=true tag -s -u "$FPR_KEES" -m "$5" "$1"
		git push -q origin "refs/tags/$1"
		gpgconf --kill gpg-agent 2>/dev/null || true
	)
	rm -rf "$SCRATCH/gnupg-tag" "$w"
}

# xss_tag NAME: a tag signed by Kees in $KREPO: take two plus one commit whose
# subject is an HTML/JS payload and which has no Signed-off-by (a finding
# quotes it).  Prints the payload.
XSS='<script>alert(1)</script><img src=x onerror="alert(2)">'
xss_tag() {
	kees_tag "$1" xss.txt xss "$XSS" "$1

- $XSS"
}

# pull_field ID JQ: a field of pull ID, as the API gives it
pull_field() { curl -s "$URL/api/pulls/$1" | jq -r "$2"; }

# deliver_tag TAG: a push record of $KREPO's TAG, delivered; prints the new pull's id
deliver_tag() {
	push_record "$SCRATCH/$1.json" "$1"
	hook push "$SCRATCH/$1.json" "deliver-$1"
	printf '%s' "$out" | jq -r '.jobs[0]'
}

# maintainer_login: the maintainer's session in $SCRATCH/jar, its CSRF token in $CSRF
maintainer_login() {
	curl -s -c "$SCRATCH/jar" -o "$SCRATCH/login.json" -X POST -H 'Content-Type: application/json' \
		-d "{\"user\":\"maintainer\",\"password\":\"$SERVE_PASSWORD\"}" "$URL/api/login"
	CSRF=$(jq -r .csrf "$SCRATCH/login.json")
}

# maintainer_post ID ACTION: the maintainer's POST to /api/pulls/ID/ACTION, as the page's
# buttons send it; $code and $out
maintainer_post() {
	code=$(curl -s -o "$SCRATCH/.r" -w '%{http_code}' -b "$SCRATCH/jar" -X POST \
		-H "X-CSRF-Token: $CSRF" -H "Origin: $URL" "$URL/api/pulls/$1/$2")
	out=$(cat "$SCRATCH/.r")
}
