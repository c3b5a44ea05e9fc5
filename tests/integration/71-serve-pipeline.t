#!/bin/sh
# 71-serve-pipeline.t - hooks to verdicts: take one rejected, take two merged, built, booted and approved.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
. "$(dirname "$0")/../lib/tlog.sh"
plan 70
serve_setup
# the policy reads the transparency log of the incident's pushes; the dashboard links its
# records in a public-inbox web view of it
tlog_build "$SCRATCH/tlog"
printf "transparency: {log: '%s'}\n" "$SCRATCH/tlog/tlog" >>"$SCRATCH/policy.yaml"
WEB=https://tlog.example.org/gitolite/
sed "s|^repositories:\$|&\\n  transparency-web: $WEB|" "$CONFIG" >"$SCRATCH/web.yaml"
mv "$SCRATCH/web.yaml" "$CONFIG"
serve_start
E1="$SCRATCH/tlog/tlog/git/1.git"
ZERO=0000000000000000000000000000000000000000
T1=hardening-v6.16-rc1-fix1
T2=hardening-v6.16-rc1-fix1-take2
BASE=$(git --git-dir="$TREE" rev-parse master)

# --- take one, by push record ---------------------------------------------------------
push_record "$SCRATCH/take1.json" "$T1"
hook push "$SCRATCH/take1.json" take1-push
is "$code" 202 "take one's push record is accepted for verification"
ID1=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID1" rejected error approved waiting)" rejected "take one is rejected"
get "$URL/api/pulls/$ID1"
is "$(printf '%s' "$out" | jq -r '"\(.verdict) \(.commits) \(.merges)"')" "reject 39 7" \
	"the API gives the verdict and the 39 commits, 7 merges"
is "$(printf '%s' "$out" | jq '[.report.findings[] | select(.check == "rewritten-upstream")] | length')" 35 \
	"the stored report names the 35 rewritten upstream commits"
is "$(printf '%s' "$out" | jq -r '[.stages[] | "\(.name):\(.status)"] | join(" ")')" "verify:failed" \
	"nothing is merged, built or booted"
get "$URL/pulls/$ID1"
is "$code" 200 "take one's dashboard page"
is "$(printf '%s' "$out" | grep -c '<article class="rewritten rewritten-merge">')" 7 \
	"shows the seven rewritten maintainer merges side by side with their originals"
like "$out" "<h3>35 rewritten upstream commits, 7 of them merges</h3>" "and counts them"
like "$out" '<th>mergetag</th><td class="pull"><pre>\(none\)</pre></td><td class="upstream"><pre>tag &#39;' \
	"each diff shows the mergetag the copy lost"

# --- take two, by pull-request mail -----------------------------------------------------
mkdir -p "$SCRATCH/mail"
"$TOP/fixtures/mail.sh" "$FX" "$SCRATCH/mail" >/dev/null
# the mail names Kees's kernel.org URL, which the configuration maps to the mirror
sed "s|$FX/kees.git|$KEES_GIT_URL|g" "$SCRATCH/mail/take2.mail" >"$SCRATCH/take2.mail"
hook pull-request "$SCRATCH/take2.mail" take2-mail
is "$code" 202 "take two's pull-request mail is accepted"
ID2=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID2" waiting rejected error approved passed)" waiting \
	"take two passes verify, merge, build and boot, then waits for the maintainer"
get "$URL/api/pulls/$ID2"
is "$(printf '%s' "$out" | jq -r '[.stages[] | "\(.name):\(.status)"] | join(" ")')" \
	"verify:passed merge:passed build:passed boot:passed approve:waiting" "every stage is recorded"
is "$(printf '%s' "$out" | jq -r '"\(.kind) \(.tag) \(.errors)"')" "mail refs/tags/$T2 0" \
	"the job came from the mail, for the tag it names, with no errors"
LORE=https://lore.kernel.org/r/202506010930.fix1@keescook
is "$(printf '%s' "$out" | jq -r .lore_url)" "$LORE" "the API links the pull to its mail's thread on lore"
REC='<1748770002.1.2@gitolite.kernel.org>'
RECURL=${WEB}1748770002.1.2@gitolite.kernel.org
is "$(printf '%s' "$out" | jq -c .transparency)" \
	"{\"message_id\":\"$REC\",\"date\":\"Sun, 01 Jun 2025 10:02:00 -0000\",\"pushed_by\":\"kees\",\"repo\":\"pub/scm/linux/kernel/git/kees/linux\",\"certified\":true,\"url\":\"$RECURL\"}" \
	"the API gives the transparency log's record of the tag's push, linked in the log's web view"
MERGE=$(printf '%s' "$out" | jq -r .merge_commit)
is "$(git --git-dir="$TREE" rev-parse master)" "$BASE" "the integration branch has not moved yet"
get "$URL/pulls/$ID2"
like "$out" "<pre class=\"merge-message\">Merge tag &#39;hardening-v6.16-rc1-fix1-take2&#39; of $KEES_GIT_URL\$" \
	"the page previews the merge commit's message, naming the URL the mail gave (not the mirror)"
like "$out" "^Link: $LORE\$" "which ends in a Link: to the mail's thread"
like "$out" "<dt>thread</dt><dd><a id=\"lore\" href=\"$LORE\" rel=\"noreferrer\">$LORE</a></dd>" \
	"the page links the pull to its thread on lore"
like "$out" "<dt>push record</dt><dd id=\"push-record\"><a id=\"tlog\" href=\"$RECURL\" rel=\"noreferrer\">&lt;1748770002.1.2@gitolite.kernel.org&gt;</a> of Sun, 01 Jun 2025 10:02:00 -0000, pushed by kees, certified by a signed push</dd>" \
	"the page shows the record, its date, its pusher and its certificate, linked to the record"
like "$out" '<tr class="ktap-pass"><td>pullgate.randstruct_reorders</td><td>pass</td>' \
	"and lists the KUnit results"
like "$out" '<div id="status" hidden><progress id="status-bar" max="1"></progress>' \
	"the pull's page has the live log's progress bar"
get "$URL/api/pulls/$ID2/log?stage=build"
like "$out" 'CC +lib/a.o' "the build log's tail is served"
get "$URL/api/pulls/$ID2/log?stage=boot"
like "$out" 'ok 2 randstruct_reorders' "and the boot console"
get "$URL/api/pulls/$ID2/log?stage=nosuch"
is "$code" 404 "a stage without a log is 404"
events=$(curl -s -N -m "$PATIENCE" "$URL/api/pulls/$ID2/events" || true)
like "$events" '^event: hello$' "the event stream says hello"
like "$events" '"stage":"build","text":"building the merge"' "replays the build progress"
like "$events" '^event: end$' "and ends, since the pull waits for a person"
like "$events" '"stage":"build","text":"[0-9]+(/[0-9]+)? objects[^"]*","time":[0-9]+,"transient":true,"done":[1-9][0-9]*,"total":[0-9]+,"elapsed_ms":[0-9]+,"eta_s":-?[0-9]+' \
	"the build's status carries its numbers for the dashboard's bar"

# --- the maintainer approves ----------------------------------------------------------------
curl -s -c "$SCRATCH/jar" -o "$SCRATCH/login.json" -X POST -H 'Content-Type: application/json' \
	-d "{\"user\":\"maintainer\",\"password\":\"$SERVE_PASSWORD\"}" "$URL/api/login"
CSRF=$(jq -r .csrf "$SCRATCH/login.json")
is "$(jq -r .user "$SCRATCH/login.json")" maintainer "the maintainer logs in"
get -b "$SCRATCH/jar" "$URL/pulls/$ID2"
like "$out" '<button type="button" class="approve" id="approve" data-action="approve">' \
	"the logged-in page offers approval"
like "$out" "<meta name=\"csrf-token\" content=\"$CSRF\">" "with the session's CSRF token"
code=$(curl -s -b "$SCRATCH/jar" -o "$SCRATCH/.r" -w '%{http_code}' -X POST \
	-H "X-CSRF-Token: $CSRF" -H "Origin: $URL" "$URL/api/pulls/$ID2/approve")
is "$code" 200 "approval with the session and its token succeeds"
is "$(jq -r .state "$SCRATCH/.r")" approved "the pull is approved"
is "$(git --git-dir="$TREE" rev-parse master)" "$MERGE" "the integration branch moved to the tested merge"
is "$(git --git-dir="$TREE" cat-file -p master | sed -n 's/^mergetag object //p')" \
	"$(git --git-dir="$KREPO" rev-parse "$T2^{commit}")" "which carries the tag in a mergetag header"
is "$(git --git-dir="$TREE" log -1 --format='%(trailers:key=Link,valueonly)' master)" "$LORE" \
	"and names the pull mail in its Link: trailer"
get "$URL/api/pulls/$ID2"
is "$(printf '%s' "$out" | jq -r '.decisions[-1] | "\(.user) \(.action)"')" "maintainer approve" \
	"the store records who approved"
is "$(printf '%s' "$out" | jq -r '.stages[-1] | "\(.name) \(.status)"')" "approve passed" \
	"and the approve stage passed"
code=$(curl -s -b "$SCRATCH/jar" -o "$SCRATCH/.r" -w '%{http_code}' -X POST \
	-H "X-CSRF-Token: $CSRF" "$URL/api/pulls/$ID2/approve")
is "$code" 409 "approving it twice is a conflict"
code=$(curl -s -b "$SCRATCH/jar" -o "$SCRATCH/.r" -w '%{http_code}' -X POST \
	-H "X-CSRF-Token: $CSRF" "$URL/api/pulls/$ID1/reject")
is "$code" 409 "a rejected pull cannot be rejected again"

# --- hostile text is escaped ------------------------------------------------------------------
xss_tag xss-1
push_record "$SCRATCH/xss.json" xss-1
hook push "$SCRATCH/xss.json" xss-push
IDX=$(printf '%s' "$out" | jq -r '.jobs[0]')
wait_state "$IDX" rejected waiting approved passed error >/dev/null
get "$URL/pulls/$IDX"
like "$out" '&lt;script&gt;alert\(1\)&lt;/script&gt;&lt;img src=x onerror=&quot;alert\(2\)&quot;&gt;' \
	"a commit subject carrying markup is shown escaped"
unlike "$out" '<script>alert|<img src=x' "and never as markup"
unlike "$out" 'id="push-record"' "a tag the log has no record of shows none"
get "$URL/api/pulls/$IDX"
like "$(printf '%s' "$out" | jq -r '.report.findings[].subject')" '^<script>alert\(1\)' \
	"the JSON API carries it as data"
is "$(printf '%s' "$out" | jq -c .transparency)" null "and no record in the API"

# --- the queue, filters and metrics --------------------------------------------------------------
get "$URL/api/pulls?state=rejected"
is "$(printf '%s' "$out" | jq -r '[.pulls[].id] | sort | join(",")')" \
	"$(printf '%s\n' "$ID1" "$IDX" | sort -n | paste -sd, -)" "the API filters by state"
get "$URL/api/pulls?limit=1&offset=1"
is "$(printf '%s' "$out" | jq -r '"\(.total) \(.pulls | length) \(.pulls[0].id)"')" "3 1 $ID2" \
	"and pages, newest first"
metrics=$(curl -s "$URL/metrics")
like "$metrics" '^pullgate_jobs\{state="approved"\} 1$' "/metrics counts jobs by state"
like "$metrics" '^pullgate_stage_duration_seconds_count\{stage="build"\} 1$' "and stage durations"
like "$metrics" '^pullgate_hook_deliveries_total\{hook="pull-request"\} 1$' "and deliveries"
bytes=$(find "$PULLGATE_HOME/identity" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
is "$([ "$bytes" -gt 0 ] && printf '%s\n' "$metrics" | grep -cx "pullgate_identity_index_bytes $bytes")" 1 \
	"and the bytes the identity indexes take ($bytes, the verifies made them)"

# --- a log followed after the pull is done is sent whole, and the stream ends -------------
follow=$(curl -s -N -m "$PATIENCE" "$URL/api/pulls/$ID2/log?stage=build&follow=1"; echo "curl:$?")
like "$follow" 'CC +lib/a.o' "a followed log streams the build log"
like "$follow" '^curl:0$' "and ends by itself when the pull is done"

# --- the maintainer rejects a pull that waits -----------------------------------------------
git --git-dir="$TREE" update-ref refs/heads/master "$BASE"
# the log records the tag pushed again, under a Message-Id with characters a URL keeps
TAG2=$(git --git-dir="$KREPO" rev-parse "refs/tags/$T2")
tlog_push "$E1" "<tlog&1'\"x@b>" kees "refs/tags/$T2" "$TAG2" "$TAG2"
push_record "$SCRATCH/again.json" "$T2"
hook push "$SCRATCH/again.json" take2-again
IDA=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$IDA" waiting rejected error approved passed)" waiting \
	"take two pushed again on the old base waits for the maintainer"
get "$URL/api/pulls/$IDA"
is "$(printf '%s' "$out" | jq -r .lore_url)" null "a pull pushed, not mailed, has no lore link"
get "$URL/pulls/$IDA"
unlike "$out" 'id="lore"' "nor a thread on its page"
like "$out" "<a id=\"tlog\" href=\"${WEB}tlog&amp;1&#39;%22x@b\" rel=\"noreferrer\">&lt;tlog&amp;1&#39;&quot;x@b&gt;</a> of Mon, 02 Jun 2025 09:00:00 -0000, pushed by kees</dd>" \
	"the newest record of the tag object is shown, its & and ' escaped in the link, its quote percent-encoded"
code=$(curl -s -b "$SCRATCH/jar" -o "$SCRATCH/.r" -w '%{http_code}' -X POST \
	-H "X-CSRF-Token: $CSRF" -H "Origin: $URL" "$URL/api/pulls/$IDA/reject")
is "$code" 200 "the maintainer rejects it"
is "$(jq -r .state "$SCRATCH/.r")" rejected "the pull is rejected"
is "$(git --git-dir="$TREE" rev-parse master)" "$BASE" "and the integration branch does not move"
get "$URL/api/pulls/$IDA"
is "$(printf '%s' "$out" | jq -r '.decisions[-1] | "\(.user) \(.action)"')" "maintainer reject" \
	"the store records who rejected it"

# --- a Message-Id's characters a URL keeps are escaped in the page ------------------------------
# and the log's newest record of the tag carries markup in its Message-Id, and its pusher's name
tlog_push "$E1" '<"><script>alert(3)</script>@b>' '<b>kees</b>' "refs/tags/$T2" "$TAG2" "$TAG2"
sed "s|^Message-ID: .*|Message-ID: <pull\\&1'\\\"x@b>|" "$SCRATCH/take2.mail" >"$SCRATCH/quote.mail"
hook pull-request "$SCRATCH/quote.mail" take2-quote
IDQ=$(printf '%s' "$out" | jq -r '.jobs[0]')
get "$URL/pulls/$IDQ"
like "$out" '<a id="lore" href="https://lore.kernel.org/r/pull&amp;1&#39;%22x@b" rel="noreferrer">https://lore.kernel.org/r/pull&amp;1&#39;%22x@b</a>' \
	"a Message-Id's & and ' are escaped in the link and its text, its quote percent-encoded"
wait_state "$IDQ" waiting rejected error approved passed >/dev/null
get "$URL/pulls/$IDQ"
like "$out" '<span id="tlog">&lt;&quot;&gt;&lt;script&gt;alert\(3\)&lt;/script&gt;@b&gt;</span> of Mon, 02 Jun 2025 09:00:00 -0000, pushed by &lt;b&gt;kees&lt;/b&gt;</dd>' \
	"a record's Message-Id that makes no link is shown escaped, unlinked, and so is its pusher"
unlike "$out" '<script>alert\(3\)|<b>kees' "never as markup"
get "$URL/api/pulls/$IDQ"
is "$(printf '%s' "$out" | jq -r '.transparency | "\(.message_id) \(.pushed_by) \(.url)"')" \
	'<"><script>alert(3)</script>@b> <b>kees</b> null' "the API carries them as data, with no link"

# --- without a web view of the log, a record is shown unlinked ------------------------------------
reloads() { grep -c "reloaded $CONFIG" "$SCRATCH/serve.err" || true; }
_reloaded() { [ "$(reloads)" -gt "$1" ]; }
before=$(reloads)
grep -v '^  transparency-web: ' "$CONFIG" >"$SCRATCH/noweb.yaml"
mv "$SCRATCH/noweb.yaml" "$CONFIG"
kill -HUP "$SERVE_PID"
wait_for _reloaded "$before" || true
is "$(reloads)" "$((before + 1))" "the configuration without transparency-web is reloaded"
get "$URL/pulls/$ID2"
like "$out" '<dd id="push-record"><span id="tlog">&lt;1748770002.1.2@gitolite.kernel.org&gt;</span> of Sun' \
	"take two's record is shown by its Message-Id, unlinked"
is "$(pull_field "$ID2" '.transparency | "\(.message_id) \(.url)"')" "$REC null" "and the API gives no URL"

serve_stop
is "$SERVE_RC" 0 "the server stops cleanly on SIGTERM"
