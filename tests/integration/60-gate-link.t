#!/bin/sh
# 60-gate-link.t - gate --pull-request: the merge names the pull mail in a Link: trailer, and only a mail's valid Message-Id makes one.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/gate.sh"
plan 12
gate_setup
M="$SCRATCH/mail"
"$TOP/fixtures/mail.sh" "$FX" "$M" >/dev/null

# merge [MAIL]: the merge stage alone on take two, with the mail when given; $MERGE its commit
merge() {
	run "$PULLGATE" gate --json --stages merge --keyring "$KEYRING" --trust "$FPR_KEES" \
		--upstream "$UP" --tree "$TREE" ${1:+--pull-request "$1"} "$KEES" "$T2"
	MERGE=$(printf '%s' "$out" | jq -r .merge_commit)
}
message() { git --git-dir="$TREE" cat-file commit "$MERGE" | sed '1,/^$/d'; }
trailers() { message | git interpret-trailers --parse; }

# --- by mail: the Link: trailer, last ---------------------------------------------
merge "$M/take2.mail"
is "$rc $(stage merge)" "0 passed" "take two with its request mail merges"
is "$(message | tail -n 1)" "Link: https://lore.kernel.org/r/202506010930.fix1@keescook" \
	"the merge commit's message ends in a Link: to the mail's thread on lore"
is "$(message | tail -n 3 | paste -sd'|' -)" \
	"  wifi: iwlwifi: mld: Work around Clang loop unrolling bug||Link: https://lore.kernel.org/r/202506010930.fix1@keescook" \
	"after the shortlog and a blank line, as a paragraph of its own"
is "$(trailers)" "Link: https://lore.kernel.org/r/202506010930.fix1@keescook" \
	"git reads it as the message's one trailer"
like "$(cat "$PULLGATE_HOME/logs/$KEY/latest/merge.txt")" '^Link: https://lore\.kernel\.org/r/202506010930\.fix1@keescook$' \
	"the merge preview the dashboard shows has it too"

# --- without a mail: no Link ----------------------------------------------------------
merge
is "$rc $(stage merge)" "0 passed" "take two without a mail merges"
is "$(trailers)" "" "and its message has no trailer"
unlike "$(message)" "Link:" "no Link: at all"

# --- a Message-Id that would add a line, or break the URL, makes none --------------------
sed 's/^Message-ID: .*/Message-ID: <a@b>\n\tSigned-off-by: Mallory <m@evil.example>/' "$M/take2.mail" >"$SCRATCH/folded.mail"
merge "$SCRATCH/folded.mail"
is "$rc $(trailers)" "0 " "a Message-Id folded over two lines, with a blank in it, adds no line"
printf 'Message-ID: <a\rSigned-off-by: Mallory <m@evil.example>@b>\n' >"$SCRATCH/cr.hdr"
sed "/^Message-ID: /{r $SCRATCH/cr.hdr
d}" "$M/take2.mail" >"$SCRATCH/cr.mail"
merge "$SCRATCH/cr.mail"
is "$rc $(trailers)" "0 " "nor does one with a carriage return in it"
unlike "$(message)" "Mallory|evil" "nothing of either reaches the message"

# --- what a URL cannot hold is percent-encoded ---------------------------------------------
sed 's|^Message-ID: .*|Message-ID: <pull/1?x#y%z@example.org>|' "$M/take2.mail" >"$SCRATCH/odd.mail"
merge "$SCRATCH/odd.mail"
is "$(trailers)" "Link: https://lore.kernel.org/r/pull%2F1%3Fx%23y%25z@example.org" \
	"a Message-Id with / ? # % in it is percent-encoded, as public-inbox links it"
