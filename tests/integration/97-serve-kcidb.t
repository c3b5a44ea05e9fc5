#!/bin/sh
# 97-serve-kcidb.t - the service's KCIDB documents: kcidb.origin in serve.yaml, GET /api/pulls/ID/kcidb checked against our schema, the pull page's KCIDB fact.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 41
T1=hardening-v6.16-rc1-fix1
T2=hardening-v6.16-rc1-fix1-take2
SCHEMA="$TOP/tests/kcidb/kcidb-v5.schema.json"
# check FILE: what python3-jsonschema says of FILE against the schema ("valid", or where it breaks)
check() { python3 "$TOP/tests/lib/kcidb_check.py" "$SCHEMA" "$1" || true; }
# k FILE FILTER: jq -r on a document
k() { jq -r "$2" "$1"; }
# kcidb ID FILE: GET the pull's document into FILE; $code and $ctype
kcidb() {
	set -- "$1" "$2" "$(curl -s -o "$2" -w '%{http_code} %{content_type}' "$URL/api/pulls/$1/kcidb")"
	code=${3%% *}
	ctype=${3#* }
}

# --- a bad origin is a configuration error, in one line ------------------------------------
serve_setup "kcidb:
  origin: Pull-Gate"
run "$PULLGATE" serve --config "$CONFIG"
is "$rc" 3 "serve refuses kcidb.origin: Pull-Gate"
like "$err" "serve.yaml:[0-9]+:[0-9]+: 'kcidb.origin' wants a KCIDB origin, not 'Pull-Gate': expected 1 to 64 of a-z, 0-9 and '_'\$" \
	"saying where and what an origin is"
is "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" 1 "in one line"
serve_setup "kcidb:
  url: https://kcidb.example.org/submit"
run "$PULLGATE" serve --config "$CONFIG"
is "$rc" 3 "the section takes no URL of its own: a receiver is kcidb.submit's"
like "$err" "unknown key 'url' in 'kcidb'" "an unknown key, named"

# --- the origin configured; one finding of a check kept in the store -------------------------
serve_setup "kcidb:
  origin: my_ci
limits:
  findings-per-check: 1"
serve_start
BASE=$(git --git-dir="$TREE" rev-parse master)

# --- take two by mail: merged, built, booted, waiting --------------------------------------
mkdir -p "$SCRATCH/mail"
"$TOP/fixtures/mail.sh" "$FX" "$SCRATCH/mail" >/dev/null
sed "s|$FX/kees.git|$KEES_GIT_URL|g" "$SCRATCH/mail/take2.mail" >"$SCRATCH/take2.mail"
hook pull-request "$SCRATCH/take2.mail" take2-mail
ID2=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID2" waiting rejected error approved passed)" waiting \
	"take two passes every stage and waits for the maintainer"
D="$SCRATCH/take2.json"
kcidb "$ID2" "$D"
is "$code $ctype" "200 application/json" "its KCIDB document is served as JSON"
is "$(check "$D")" valid "and is valid KCIDB v5"
is "$(k "$D" '[.checkouts, .builds, .tests | length] | join(" ")')" "1 1 5" \
	"one checkout, one build, the boot and its four KUnit cases"
is "$(k "$D" '[.checkouts[0].origin, .builds[0].origin, .tests[].origin] | unique | join(" ")')" my_ci \
	"every object's origin is kcidb.origin"
is "$(k "$D" '[.checkouts[0].id, .builds[0].id, .tests[].id] | map(startswith("my_ci:")) | all')" true \
	"and starts every id"
TAGOBJ=$(git --git-dir="$KREPO" rev-parse "refs/tags/$T2")
CHECKOUT=my_ci:$TAGOBJ-on-$BASE
is "$(k "$D" '.checkouts[0].id')" "$CHECKOUT" "the checkout is the tag object on the base it was merged onto"
is "$(k "$D" '.checkouts[0].message_id')" 202506010930.fix1@keescook \
	"it carries the pull mail's Message-Id, without the brackets"
like "$(k "$D" '.checkouts[0].comment')" "^\\[GIT PULL\\]" "and its subject"
is "$(k "$D" '.checkouts[0].git_repository_url')" "$KEES_GIT_URL" \
	"the repository is the URL the mail names, not the mirror fetched"
is "$(k "$D" '.checkouts[0].misc.integration_branch')" master "the integration branch is the service's"
is "$(k "$D" '[.checkouts[0].valid, .builds[0].status, .tests[0].status] | join(" ")')" "true PASS PASS" \
	"the merge, the build and the boot passed"
is "$(k "$D" '.builds[0].log_url')" "file://$(pull_field "$ID2" '.report.run_dir')/build.log" \
	"the build's log is the run's"
is "$(k "$D" '[.tests[1:][] | .path] | join(" ")')" "pullgate.define_flex_zeroes \
pullgate.randstruct_reorders overflow.u8_u8__u8_overflow_test overflow.shift_sane_test" \
	"each KUnit case of the console as suite.case"
kcidb "$ID2" "$SCRATCH/again.json"
is "$(cmp "$D" "$SCRATCH/again.json" && echo same)" same \
	"asked again with nothing changed, the same bytes: no time of the request goes in"

# --- the console is the job row's run's, a regular file: a symlink there is not followed ----
RUN2=$(pull_field "$ID2" '.report.run_dir')
mv "$RUN2/boot.log" "$RUN2/boot.real"
ln -s boot.real "$RUN2/boot.log"
kcidb "$ID2" "$SCRATCH/link.json"
is "$code" 200 "with a symlink for its console the document is served"
is "$(k "$SCRATCH/link.json" '[.tests[].path] | join(" ")')" boot \
	"with the boot test alone: the link is not followed"
rm "$RUN2/boot.log"
mv "$RUN2/boot.real" "$RUN2/boot.log"

# --- the pull's page links its checkout ------------------------------------------------------
get "$URL/pulls/$ID2"
like "$out" "<dt>KCIDB</dt><dd><a id=\"kcidb\" href=\"/api/pulls/$ID2/kcidb\">$CHECKOUT</a></dd></dl>" \
	"the pull's page shows the checkout's id (the origin and hex digits), linked to the document"

# --- take one by push: verify rejects it, and the store keeps one finding of a check ----------
push_record "$SCRATCH/take1.json" "$T1"
hook push "$SCRATCH/take1.json" take1-push
ID1=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID1" rejected error approved waiting)" rejected "take one is rejected by verify"
get "$URL/api/pulls/$ID1"
is "$(printf '%s' "$out" | jq -r '[.report.stored.findings_per_check, .errors > (.report.findings | length)] | join(" ")')" \
	"1 true" "its stored report was cut to one finding of a check: it no longer adds up"
D="$SCRATCH/take1.json"
kcidb "$ID1" "$D"
is "$code $ctype" "422 application/json" "a cut report makes no KCIDB document: 422, not a file of the run's"
is "$(k "$D" .error)" \
	"the stored report of pull $ID1 was cut (limits.report-size / findings-per-check): no KCIDB document" \
	"the error says why"
unlike "$(cat "$D")" "$TAGOBJ|$RUN2|$SCRATCH" "another pull's id gives none of take two's document, and no path"
get "$URL/pulls/$ID1"
is "$code" 200 "its page is served"
like "$out" "<dt>KCIDB</dt><dd><a id=\"kcidb\" href=\"/api/pulls/$ID1/kcidb\">my_ci:$(git --git-dir="$KREPO" \
	rev-parse "refs/tags/$T1")</a>" "and shows the tag object's checkout id from the pull's row all the same"

# --- no document: an unknown pull, a pull with no finished report ----------------------------
kcidb 999999 "$SCRATCH/none.json"
is "$code" 404 "an unknown pull has no document"
is "$(k "$SCRATCH/none.json" .error)" "pull 999999 does not exist" "the API's usual error says so"
cat >"$SCRATCH/gone.json" <<EOR
{ "repo": "$KEES_NAME", "user": "kees",
  "changes": [ { "ref": "refs/tags/no-such-tag", "old": "0000000000000000000000000000000000000000",
                 "new": "$TAGOBJ" } ] }
EOR
hook push "$SCRATCH/gone.json" gone-push
IDG=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$IDG" error rejected waiting)" error "a tag that is not there ends in error"
is "$(pull_field "$IDG" .report)" null "with no report"
kcidb "$IDG" "$SCRATCH/none.json"
is "$code" 404 "so it has no document"
is "$(k "$SCRATCH/none.json" .error)" "pull $IDG has no finished report yet" "which the error says"
get "$URL/pulls/$IDG"
is "$code" 200 "its page is served"
unlike "$out" '<dt>KCIDB</dt>' "and its page has no KCIDB fact"
# without kcidb.submit nothing is put in the outbox: no submission to show, none dropped
is "$(pull_field "$ID2" .kcidb_submission) $(pull_field "$ID1" .kcidb_submission)" "null null" \
	"a service that does not submit queues no submission of its decided pulls"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly"
unlike "$(cat "$SCRATCH/serve.err")" "KCIDB: .*dropped" "and drops none"
