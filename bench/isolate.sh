#!/bin/sh
# isolate.sh - what running each verify in a child process costs the service: seconds a pull, one binary against another, same run.
#
#   bench/isolate.sh BASELINE CANDIDATE
#
# For each binary in turn (BASELINE, CANDIDATE, then both again: two rounds,
# so that a warm cache favours neither), starts `pullgate serve` (verification
# only, one worker) on the incident fixture's kees.git as a local path, and
# sends BENCH_PULLS (40) signed push records of the take-two tag one after
# the other, each once the previous pull is decided; each is rejected after
# every check ran (the policy's max-commits is 1, take two has 4 commits):
# a whole verify, and a decided pull that the same tag may be pushed again
# after.  Prints each round's seconds a pull
# and the ratio CANDIDATE / BASELINE of the two rounds' totals (above 1:
# the candidate is slower).  Build the baseline from the commit before the
# change (git worktree add, make), e.g. c85b95c, in-process verify.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: bench/isolate.sh BASELINE CANDIDATE" >&2; exit 2; }
N=${BENCH_PULLS:-40}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-isolate.XXXXXX")
SECRET=isolate-secret-0123456789abcdef
PID=
cleanup() {
	rc=$?
	set +e
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$WORK"
	exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM
PATIENCE=${PATIENCE:-300}
. "$TOP/tests/lib/wait.sh"

if [ -n "${PULLGATE_FIXTURES:-}" ] && [ -f "$PULLGATE_FIXTURES/incident/expect/base" ]; then
	FX=$PULLGATE_FIXTURES/incident
else
	FX=$WORK/incident
	"$TOP/fixtures/incident.sh" "$FX" >/dev/null
fi
export GNUPGHOME="$FX/gnupg"
TAG=hardening-v6.16-rc1-fix1-take2
git clone -q --mirror "$FX/kees.git" "$WORK/kees.git"
TAGID=$(git --git-dir="$WORK/kees.git" rev-parse "refs/tags/$TAG")
"$TOP/fixtures/policy.sh" "$FX"
# take two's 4 commits are over the limit, an error: rejected, after every check ran
sed -e "s|$FX/kees.git|$WORK/kees.git|g" -e "s|file: keyring.asc|file: $FX/keyring.asc|" \
	-e "s|^  range-size: warning$|  range-size: error|" "$FX/policy.yaml" >"$WORK/policy.yaml"
grep -q '^  range-size: error$' "$WORK/policy.yaml"
printf 'limits:\n  max-commits: 1\n' >>"$WORK/policy.yaml"

# round BINARY: seconds for N pulls through a fresh service of BINARY, into $WORK/seconds
# (not in a subshell: the EXIT trap must see $PID to stop the service)
round() {
	rm -rf "$WORK/state" "$WORK/home"
	cat >"$WORK/serve.yaml" <<EOF
listen:
  address: 127.0.0.1
  port: 0
state: $WORK/state
policy: $WORK/policy.yaml
hooks:
  push:
    secret: $SECRET
repositories:
  map:
    bench/kees: $WORK/kees.git
pipeline:
  stages: []
  verify-workers: 1
EOF
	PULLGATE_HOME="$WORK/home" "$1" serve --config "$WORK/serve.yaml" >"$WORK/serve.out" \
		2>"$WORK/serve.err" &
	PID=$!
	listening() { grep -qs '^pullgate: listening on ' "$WORK/serve.out" || gone "$PID"; }
	wait_for listening
	URL=$(sed -n 's/^pullgate: listening on //p' "$WORK/serve.out")
	[ -n "$URL" ] || { cat "$WORK/serve.err" >&2; exit 1; }
	(python3 - "${URL%/}" "$SECRET" "$TAGID" "$TAG" "$N" "$PATIENCE" <<'EOF'
import hashlib, hmac, http.client, json, sys, time, urllib.parse

url, secret, tagid, tag = sys.argv[1], sys.argv[2].encode(), sys.argv[3], sys.argv[4]
n, patience = int(sys.argv[5]), int(sys.argv[6])
host = urllib.parse.urlsplit(url)


def request(method, path, body=None, headers=None):
    conn = http.client.HTTPConnection(host.hostname, host.port, timeout=60)
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    out = r.status, r.read()
    conn.close()
    return out


def push(i):
    body = json.dumps({"repo": "bench/kees", "user": "kees%d" % i, "changes": [
        {"ref": "refs/tags/" + tag, "old": "0" * 40, "new": tagid}]}).encode()
    stamp = str(int(time.time()))
    sig = hmac.new(secret, stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    status, out = request("POST", "/hooks/push", body, {
        "Content-Type": "application/json", "X-Pullgate-Delivery": "bench-%d" % i,
        "X-Pullgate-Timestamp": stamp, "X-Pullgate-Signature": "sha256=" + sig})
    if status != 202:
        raise SystemExit("isolate: %d %s" % (status, out[:300]))
    return json.loads(out)["jobs"][0]


def decided(job):
    end = time.monotonic() + patience
    while True:
        state = json.loads(request("GET", "/api/pulls/%d" % job)[1])["state"]
        if state in ("rejected", "verified", "error"):
            return state
        if time.monotonic() > end:
            raise SystemExit("isolate: pull %d still %s after %d s" % (job, state, patience))
        time.sleep(0.005)


# one pull first, not timed: the identity index and the caches are made
decided(push(0))
t0 = time.monotonic()
states = [decided(push(i)) for i in range(1, n + 1)]
elapsed = time.monotonic() - t0
if set(states) != {"rejected"}:
    raise SystemExit("isolate: pulls ended %s, not all rejected" % sorted(set(states)))
print("%.3f" % elapsed)
EOF
	) >"$WORK/seconds"
	kill "$PID"
	wait "$PID" || { echo "isolate: $1 did not stop cleanly" >&2; exit 1; }
	PID=
}

round "$1"; b1=$(cat "$WORK/seconds")
round "$2"; c1=$(cat "$WORK/seconds")
round "$1"; b2=$(cat "$WORK/seconds")
round "$2"; c2=$(cat "$WORK/seconds")
python3 - "$N" "$b1" "$c1" "$b2" "$c2" <<'EOF'
import sys
n = int(sys.argv[1])
b1, c1, b2, c2 = (float(a) for a in sys.argv[2:6])
for r, (b, c) in enumerate(((b1, c1), (b2, c2)), 1):
    print("round %d: baseline %.1f ms a pull, candidate %.1f ms a pull" % (r, b * 1000 / n, c * 1000 / n))
print("candidate / baseline: %.2f (%d pulls a round, 2 rounds)" % ((c1 + c2) / (b1 + b2), n))
EOF
