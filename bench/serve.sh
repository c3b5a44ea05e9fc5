#!/bin/sh
# serve.sh - pullgate serve under load (wrk): accepted hooks, /api/pulls at 10,000 pulls, /healthz under a slow-client attack.
#
#   bench/serve.sh [PULLGATE]
#
# Starts the service on a loopback port with a scratch state directory
# (verification only, one worker, held at its first job by the worker's
# test hook PULLGATE_TEST_HOLD, so that the figures are the HTTP service's
# and the store's; BENCH_WORKER=run lets it run: the repositories do not
# exist, so each job ends in error at once, the worst case of the worker's
# writes), then:
#
#   1. hooks: wrk POSTs signed push records, each a new tag, for
#      BENCH_SECONDS (10) on BENCH_CONNECTIONS (16: a host's delivery
#      workers) connections; prints the rate of accepted hooks (202) and the
#      p99 latency;
#   2. /api/pulls: with at least 10,000 pulls in the store (filled first if
#      the hook run made fewer), wrk GETs the first page on
#      BENCH_LIST_CONNECTIONS (8) connections;
#   3. /healthz: its latency, alone and while 200 connections trickle a
#      byte a second (tests/lib/hostile.py).
#
# Each figure is printed with its ratio against the goal (rate / goal, and
# goal / p99: at least 1 meets it) or, for /healthz, against the same
# request measured without the attack in the same run.  wrk (Debian's
# package) comes from scripts/deps.sh when it is missing.  BENCH_SIGN=body
# signs the body alone, as pullgate did before X-Pullgate-Timestamp, to
# measure an older binary.
#
# A run that fails ends the bench: wrk or the slow clients failing, no hook
# accepted, the service not answering the API.  Rates count only the
# answers the figure is about (202 for hooks, 2xx for /api/pulls); the
# others are printed beside them.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
PULLGATE=${1:-$TOP/build/release/pullgate}
SECONDS_RUN=${BENCH_SECONDS:-10}
CONNS=${BENCH_CONNECTIONS:-16}
LIST_CONNS=${BENCH_LIST_CONNECTIONS:-8}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-bench-serve.XXXXXX")
SECRET=bench-secret-0123456789abcdef
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
export PULLGATE_HOME="$WORK/home"

command -v wrk >/dev/null 2>&1 || "$TOP/scripts/deps.sh"

cat >"$WORK/policy.yaml" <<EOF
repositories: ['/bench/*/*']
EOF
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
  base: /bench
pipeline:
  stages: []
  verify-workers: 1
EOF
HOLD=verify
HOLD_NAME="held at its first job"
if [ "${BENCH_WORKER:-}" = run ]; then
	HOLD=
	HOLD_NAME="running, each job ending in error at once"
fi
PULLGATE_TEST_HOLD=$HOLD "$PULLGATE" serve --config "$WORK/serve.yaml" >"$WORK/serve.out" \
	2>"$WORK/serve.err" &
PID=$!
i=0
URL=
while [ $i -lt 100 ] && [ -z "$URL" ]; do
	URL=$(sed -n 's/^pullgate: listening on //p' "$WORK/serve.out")
	sleep 0.1
	i=$((i + 1))
done
URL=${URL%/}
[ -n "$URL" ] || { cat "$WORK/serve.err" >&2; exit 1; }
PORT=${URL##*:}

# signed requests, one a line: "delivery<TAB>timestamp<TAB>signature<TAB>body", each a new tag
python3 - "$WORK/requests.tsv" "$SECRET" "${BENCH_REQUESTS:-200000}" "${BENCH_SIGN:-}" <<'EOF'
import hashlib, hmac, sys, time
out, secret, n, legacy = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3]), sys.argv[4] == "body"
ts = str(int(time.time()))
with open(out, "w") as f:
    for i in range(n):
        new = hashlib.sha1(b"%d" % i).hexdigest()
        body = ('{"repo": "bench/linux", "user": "bench", "changes": [{"ref": "refs/tags/bench-%d", '
                '"old": "0000000000000000000000000000000000000000", "new": "%s"}]}' % (i, new))
        msg = body.encode() if legacy else (ts + "." + body).encode()
        sig = hmac.new(secret, msg, hashlib.sha256).hexdigest()
        f.write("bench-%d\t%s\tsha256=%s\t%s\n" % (i, ts, sig, body))
EOF

cat >"$WORK/hooks.lua" <<'EOF'
-- each wrk thread sends its own share of the signed requests, each once
local threads, counter = {}, 0
function setup(thread)
	thread:set("id", counter)
	counter = counter + 1
	table.insert(threads, thread)
end
local reqs, i = {}, 0
accepted, other = 0, 0
function init(args)
	local n, k = tonumber(args[2]), 0
	for line in io.lines(args[1]) do
		if k % n == id then
			local d, ts, sig, body = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
			reqs[#reqs + 1] = wrk.format("POST", "/hooks/push", {
				["Content-Type"] = "application/json",
				["X-Pullgate-Delivery"] = d,
				["X-Pullgate-Timestamp"] = ts,
				["X-Pullgate-Signature"] = sig,
			}, body)
		end
		k = k + 1
	end
end
function request()
	i = i + 1
	return reqs[(i - 1) % #reqs + 1]
end
function response(status)
	if status == 202 then accepted = accepted + 1 else other = other + 1 end
end
function done(summary, latency, requests)
	local a, o = 0, 0
	for _, t in ipairs(threads) do
		a = a + t:get("accepted")
		o = o + t:get("other")
	end
	io.write(string.format("accepted %d other %d seconds %.3f\n", a, o,
		summary.duration / 1e6))
end
EOF

# p99 of a wrk --latency report, in ms
p99() { awk '$1 == "99%" { v = $2; if (v ~ /us$/) v = v / 1000; else if (v ~ /ms$/) v = v + 0; else if (v ~ /s$/) v = v * 1000; print v }' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
die() { echo "serve.sh: error: $*" >&2; exit 1; }
# pulls [QUERY]: the total /api/pulls?QUERY&limit=1 reports; fails when the service does not answer
pulls() {
	n=$(curl -fsS "$URL/api/pulls?${1:-}${1:+&}limit=1" | jq -e .total) ||
		die "/api/pulls${1:+?$1} did not answer with a total"
	echo "$n"
}

echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
echo "== hooks: wrk -t2 -c$CONNS -d${SECONDS_RUN}s POST $URL/hooks/push"
wrk -t2 -c"$CONNS" -d"${SECONDS_RUN}s" --latency -s "$WORK/hooks.lua" "$URL/hooks/push" \
	-- "$WORK/requests.tsv" 2 >"$WORK/hooks.out" 2>&1 || { cat "$WORK/hooks.out" >&2; exit 1; }
accepted=$(awk '$1 == "accepted" { print $2 }' "$WORK/hooks.out")
[ -n "$accepted" ] && [ "$accepted" -gt 0 ] || { cat "$WORK/hooks.out" >&2; die "no hook was accepted"; }
other=$(awk '$1 == "accepted" { print $4 }' "$WORK/hooks.out")
secs=$(awk '$1 == "accepted" { print $6 }' "$WORK/hooks.out")
rate=$(awk -v a="$accepted" -v s="$secs" 'BEGIN { printf "%.0f", a / s }')
hp99=$(p99 "$WORK/hooks.out")
echo "accepted hooks: $accepted in ${secs} s ($other other answers): $rate/s (goal 5000: ratio $(ratio "$rate" 5000)); p99 ${hp99} ms (goal 20: ratio $(ratio 20 "$hp99"))"
# what the worker did meanwhile: the pulls it took from the queue (held: at most one)
queued=$(pulls state=queued)
stored=$(pulls)
echo "worker ($HOLD_NAME): $((stored - queued)) of $stored pulls taken from the queue by the end of the hooks run"

total=$(pulls)
if [ "$total" -lt 10000 ]; then
	echo "== filling the store to 10000 pulls (it has $total)"
	wrk -t2 -c"$CONNS" -d60s -s "$WORK/hooks.lua" "$URL/hooks/push" -- "$WORK/requests.tsv" 2 \
		>/dev/null 2>&1 &
	FILL=$!
	while [ "$(pulls)" -lt 10000 ]; do
		kill -0 "$FILL" 2>/dev/null || die "wrk ended before the store had 10000 pulls"
		sleep 1
	done
	kill "$FILL" 2>/dev/null || true
	wait "$FILL" 2>/dev/null || true
	total=$(pulls)
fi
echo "== /api/pulls: wrk -t2 -c$LIST_CONNS -d${SECONDS_RUN}s GET $URL/api/pulls ($total pulls)"
wrk -t2 -c"$LIST_CONNS" -d"${SECONDS_RUN}s" --latency "$URL/api/pulls" >"$WORK/list.out" 2>&1 ||
	{ cat "$WORK/list.out" >&2; die "wrk failed on /api/pulls"; }
non2xx=$(awk '/Non-2xx/ { print $NF }' "$WORK/list.out")
# "N requests in 10.00s, ...": the 2xx answers a second (wrk's Requests/sec counts every answer)
lrate=$(awk -v bad="${non2xx:-0}" '$2 == "requests" && $3 == "in" {
	secs = $4; sub(/s,$/, "", secs); if (secs > 0) printf "%.0f", ($1 - bad) / secs }' "$WORK/list.out")
[ -n "$lrate" ] && [ "$lrate" -gt 0 ] || { cat "$WORK/list.out" >&2; die "/api/pulls gave no 2xx answer"; }
lp99=$(p99 "$WORK/list.out")
echo "/api/pulls at $total pulls: $lrate req/s (goal 2000: ratio $(ratio "$lrate" 2000)); p99 ${lp99} ms (goal 20: ratio $(ratio 20 "$lp99"))${non2xx:+; $non2xx non-2xx answers}"

# healthz_ms: the slowest of 20 /healthz answers, in ms (2000 when one did not answer within 2 s)
healthz_ms() {
	for i in $(seq 20); do
		t=$(curl -s -o /dev/null -m 2 -w '%{http_code} %{time_total}' "$URL/healthz" || echo "000 2")
		case $t in 200\ *) echo "${t#* }" ;; *) echo 2 ;; esac
		sleep 0.1
	done | awk '{ v = $1 * 1000; if (v > m) m = v } END { printf "%.1f", m }'
}
echo "== /healthz, alone and while 200 connections trickle a byte a second"
alone=$(healthz_ms)
python3 "$TOP/tests/lib/hostile.py" slow 127.0.0.1 "$PORT" 200 8 >"$WORK/slow.out" &
SLOW=$!
sleep 2
attacked=$(healthz_ms)
wait "$SLOW" || die "the slow clients (tests/lib/hostile.py) failed: $(cat "$WORK/slow.out")"
echo "/healthz: slowest of 20 ${alone} ms alone, ${attacked} ms under attack ($(cat "$WORK/slow.out")); goal 100 ms: ratio $(ratio 100 "$attacked"); attacked/alone $(ratio "$attacked" "$alone")"
