#!/bin/sh
# 79-serve-window-page.t - the dashboard's merge window: the queue in order with what each pull was tested on, a queued pull's buttons, approve through, why a pull failed, hostile text escaped.
#
# Take two, then take three (take two plus one commit, signed by Kees)
# pass every stage of the stand-ins of tests/fakes: take three on the
# merge of take two.  What the store cannot get from a hook (a tag that
# carries markup, an attribution) is written into it while the service is
# stopped.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 36
T2=hardening-v6.16-rc1-fix1-take2
T3=take3-window
TAP_CLEANUP="stop_fakes"
serve_setup
kees_tag "$T3" window.txt window "window: a third take, on top of take two

Signed-off-by: Kees Cook <kees@kernel.org>" "$T3

- window: a third take"
push_record "$SCRATCH/t2.json" "$T2"
push_record "$SCRATCH/t3.json" "$T3"
serve_start

# rows: "place pull" of each row of the front page's merge window, in the page's order
rows() {
	curl -s "$URL/" | sed -n 's/^<tr class="window-pull" data-pull="\([0-9]*\)" data-place="\([0-9]*\)">.*/\2 \1/p' |
		paste -sd' ' -
}
# cell ID CLASS: the text of pull ID's cell of that class in the window, tags stripped
cell() {
	curl -s "$URL/" | grep "^<tr class=\"window-pull\" data-pull=\"$1\"" |
		sed -n "s/.*<td class=\"$2\">//p" | sed -e 's/<\/td>.*//' -e 's/<[^>]*>//g'
}

# --- an empty window -------------------------------------------------------------------------
get "$URL/"
like "$out" '^<section id="window"><h2>Merge window</h2>$' "the front page heads the list with the merge window"
like "$out" '<p class="empty">No pull is in the window' "which says when it is empty"

# --- two pulls, the second on the first's merge --------------------------------------------------
hook push "$SCRATCH/t2.json" window-t2
ID2=$(printf '%s' "$out" | jq -r '.jobs[0]')
# take three comes after take two is accepted: its place is behind it
wait_state "$ID2" verified merging building booting waiting >/dev/null || true
hook push "$SCRATCH/t3.json" window-t3
ID3=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID2" waiting rejected error) $(wait_state "$ID3" waiting rejected error)" \
	"waiting waiting" "take two and take three both wait for the maintainer"
is "$(rows)" "1 $ID2 2 $ID3" "the window lists them in the queue's order, take two first"
is "$(curl -s "$URL/api/queue" | jq -r '[.queue[] | "\(.position) \(.id)"] | join(" ")')" \
	"1 $ID2 2 $ID3" "as GET /api/queue does"
is "$(cell "$ID2" tested-on)" "the branch" "take two was tested on the branch"
is "$(cell "$ID3" tested-on)" "#$ID2 ($T2)" "take three on the merge of take two, named with its tag"
is "$(cell "$ID3" tag)" "$T3" "each row shows its tag"
is "$(cell "$ID2" eta) $(cell "$ID3" eta)" "tested tested" "both are tested"
like "$(curl -s "$URL/")" "<p id=\"window-eta\">The head of the window, <a href=\"/pulls/$ID2\">#$ID2</a>, is approvable now \\(a kernel run takes [0-9]+ s on average here\\)\\.</p>" \
	"the window says when its head is approvable, from the runs so far"
get "$URL/"
like "$out" "^<tr class=\"window-pull\" data-pull=\"$ID3\" data-place=\"2\"><td>2</td><td><a href=\"/pulls/$ID3\">#$ID3</a></td>" \
	"and links its pull"
is "$(printf '%s\n' "$out" | grep -c "^<tr data-id=\"$ID3\">")" 1 "the list below still has one row for the pull"

# --- a queued pull's page ----------------------------------------------------------------------
get "$URL/pulls/$ID3"
like "$out" "<p id=\"window-place\">Place 2 of 2 in the <a href=\"/#window\">merge window</a>; tested on: <span id=\"tested-on\"><a href=\"/pulls/$ID2\">#$ID2</a> \\($T2\\)</span>" \
	"take three's page gives its place and what it was tested on"
unlike "$out" 'data-action="(hold|approve-through)"' "a visitor is offered no button"
maintainer_login
get -b "$SCRATCH/jar" "$URL/pulls/$ID3"
like "$out" "<ol id=\"through-list\"><li data-pull=\"$ID2\"><a href=\"/pulls/$ID2\">#$ID2</a> \\($T2\\)</li><li data-pull=\"$ID3\"><a href=\"/pulls/$ID3\">#$ID3</a> \\($T3\\)</li></ol>" \
	"the maintainer sees what approving take three through approves, take two first"
like "$out" "<button type=\"button\" class=\"approve\" id=\"approve-through\" data-action=\"approve-through\">Approve through #$ID3 \\(2 pulls\\)</button>" \
	"beside Approve, a button that posts to approve-through"
is "$(curl -s "$URL/api/pulls/$ID3/through" | jq -r '.through | map(tostring) | join(" ")')" "$ID2 $ID3" \
	"the list the page shows is the worker's"
like "$out" 'data-action="hold">Hold</button> <button type="button" class="up" id="up" data-action="up">Up</button> <p id="action-result"' \
	"the last pull can be held or moved up, not down"
get -b "$SCRATCH/jar" "$URL/pulls/$ID2"
unlike "$out" 'id="through' "the first pull has nothing under it to approve through"
like "$out" 'data-action="hold">Hold</button> <button type="button" class="down" id="down" data-action="down">Down</button> <p' \
	"and can be held or moved down, not up"

# --- held, then released; the window's readers told at once ----------------------------------
# sse_from FILE [GENERATION]: the window's stream read into FILE in the background ($SSE its pid),
# from the generation a reader last saw when one is given
sse_from() {
	if [ -n "${2:-}" ]; then
		curl -sN -H "Last-Event-ID: $2" "$URL/api/queue/events" >"$1" 2>/dev/null &
	else
		curl -sN "$URL/api/queue/events" >"$1" 2>/dev/null &
	fi
	SSE=$!
}
sse_from "$SCRATCH/queue.sse"
ok "$(wait_for grep -q '^event: hello$' "$SCRATCH/queue.sse"; echo $?)" "the window's stream says hello first"
GEN=$(sed -n 's/^data: {"generation": \([0-9]*\)}$/\1/p' "$SCRATCH/queue.sse" | head -n1)
maintainer_post "$ID3" hold
is "$code" 200 "the maintainer holds take three"
ok "$(wait_for grep -q '^event: queue$' "$SCRATCH/queue.sse"; echo $?)" "the stream tells its readers the window changed"
kill "$SSE" 2>/dev/null || true
wait "$SSE" 2>/dev/null || true
LAST=$(sed -n 's/^id: //p' "$SCRATCH/queue.sse" | tail -n1)
like "$LAST" "^[0-9]+\$" "as a generation a reader comes back with"
ok "$([ "$LAST" -gt "$GEN" ]; echo $?)" "past the one it said hello with"
sse_from "$SCRATCH/queue2.sse" "$GEN"
ok "$(wait_for grep -q '^event: queue$' "$SCRATCH/queue2.sse"; echo $?)" \
	"a reader back from an older generation is told at once that it changed"
kill "$SSE" 2>/dev/null || true
wait "$SSE" 2>/dev/null || true
is "$(cell "$ID3" hold)" held "the window marks it held"
get -b "$SCRATCH/jar" "$URL/pulls/$ID3"
like "$out" '<button type="button" class="release" id="release" data-action="release">Release</button>' \
	"its page offers to release it"
maintainer_post "$ID3" release
is "$(cell "$ID3" hold)" "" "released, it is held no more"

# --- why a pull failed; markup in what the store holds -----------------------------------------
maintainer_post "$ID3" reject
is "$code" 200 "the maintainer rejects take three: it leaves the window"
serve_stop
XTAG='refs/tags/<script>alert(3)</script>"&x'
XWHY="pull $ID3 (<img src=x onerror=alert(4)>) and pull $ID2 (t) each pass without the other and fail build together"
sqlite3 "$SCRATCH/state/pullgate.db" "UPDATE pulls SET tag = '$XTAG' WHERE id = $ID2;
	UPDATE pulls SET attribution = '$XWHY', with_pull = $ID2 WHERE id = $ID3;"
serve_start
is "$(rows)" "1 $ID2" "after a restart the window holds take two alone"
get "$URL/"
window=$(printf '%s\n' "$out" | sed -n '/^<section id="window">/,/<\/section>/p')
like "$window" "<td class=\"tag\">&lt;script&gt;alert\\(3\\)&lt;/script&gt;&quot;&amp;x</td>" \
	"a tag carrying markup is escaped in the window"
unlike "$out" '<script>alert' "and never shown as markup"
get "$URL/pulls/$ID3"
like "$out" "<p class=\"attribution\" id=\"attribution\">pull $ID3 \\(&lt;img src=x onerror=alert\\(4\\)&gt;\\) and pull $ID2 \\(t\\) each pass without the other and fail build together</p>" \
	"a failed pull's page says why, escaped"
like "$out" "<p>Together with <a id=\"with\" href=\"/pulls/$ID2\">pull #$ID2</a>.</p>" \
	"with a link to the pull it fails with"
serve_stop
is "$SERVE_RC" 0 "the server stops cleanly"
