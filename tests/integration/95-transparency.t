#!/bin/sh
# 95-transparency.t - the transparency check against a public-inbox v2 log of the incident's pushes: evidence, pusher, certificates, force-pushes, the index.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
plan 37
fixture_incident

. "$(dirname "$0")/../lib/tlog.sh"
T="$SCRATCH/tlog"
tlog_build "$T"
KREPO="$T/pub/scm/linux/kernel/git/kees/linux.git"
LOG="$T/tlog"

policy() { # NAME [EXTRA-YAML]: Kees's key mapped to the account kees
	cat >"$SCRATCH/$1.yaml" <<EOF
upstream: {url: '$T/pub/scm/linux/kernel/git/torvalds/linux.git', branch: master}
keyring: {file: '$KEYRING'}
signers:
  - {fingerprint: $FPR_KEES, account: kees}
transparency: {log: '$LOG'}
${2-}
EOF
	echo "$SCRATCH/$1.yaml"
}
verify() { # POLICY TAG
	run "$PULLGATE" verify --json --policy "$1" "$KREPO" "$2"
}
findings() { # SEVERITY: the transparency findings of that severity, one a line
	printf '%s' "$out" | jq -r --arg s "$1" \
		'.findings[] | select(.check == "transparency" and .severity == $s) | .message'
}
records() { # the records the findings name
	printf '%s' "$out" | jq -r '.findings[] | select(.check == "transparency") |
		.details[] | select(.field == "record") | .pull'
}
notes() {
	printf '%s' "$out" | jq -r '.notes[] | select(.check == "transparency") | .message'
}
msgid() { printf '<174877%04d.1.%d@gitolite.kernel.org>' "$1" "$1"; }
P=$(policy p)

# --- the evidence: take two was pushed by kees with a good signed certificate --------
verify "$P" hardening-v6.16-rc1-fix1-take2
is "$rc" 0 "take two, on record and pushed by its signer's account, is accepted"
is "$(findings error)" "" "no transparency error for take two"
like "$(notes)" "push record $(msgid 2) of Sun, 01 Jun 2025 10:02:00 -0000: 'kees' pushed refs/tags/hardening-v6.16-rc1-fix1-take2 as $TAG_take2 to pub/scm/linux/kernel/git/kees/linux, certified by a signed push of $FPR_KEES" \
	"a note names the record that is the evidence (Message-Id, date), its pusher and its good certificate"
is "$(printf '%s' "$out" | jq -c .transparency)" \
	"{\"message_id\":\"$(msgid 2)\",\"date\":\"Sun, 01 Jun 2025 10:02:00 -0000\",\"pushed_by\":\"kees\",\"repo\":\"pub/scm/linux/kernel/git/kees/linux\",\"certified\":true}" \
	"the report carries the evidence as data: the record, its date, its pusher, its good certificate"
like "$(notes)" "1 messages of the transparency log read this time are no push record" \
	"the message that is no push record is said once, when the index reads it"
ok "$([ "$(ls "$PULLGATE_HOME/tlog/" | grep -c '\.idx$')" = 1 ]; echo $?)" "the index is kept in PULLGATE_HOME/tlog"

# --- upstream's branch since the base: a force-push, and one that cannot be judged --------
is "$(findings warning)" "upstream 'refs/heads/master' of pub/scm/linux/kernel/git/torvalds/linux was force-pushed since the pull's base: $MASTER is not an ancestor of $BASE" \
	"the force-push of upstream's master back to the base is a warning"
is "$(records)" "$(msgid 4) of Sun, 01 Jun 2025 10:04:00 -0000" "it names the force-push's record"
like "$(notes)" "whether 'refs/heads/master' moved from 1111111111111111111111111111111111111111 to $MASTER without a force-push could not be judged: the old commit is not in the local upstream" \
	"a push from a commit the local upstream lacks is said to be unjudged, not a force-push"

# the second verify reads the index as it is: the message that is no push record is not read again
verify "$P" hardening-v6.16-rc1-fix1-take2
unlike "$(notes)" "no push record pullgate can read" "a second verify does not read the log again"

# --- a pusher other than the signer's account ---------------------------------------------
verify "$P" hardening-v6.16-rc1-fix1
is "$(findings error)" "'refs/tags/hardening-v6.16-rc1-fix1' was pushed by the account 'mallory', not by 'kees', the account the policy gives its signer $FPR_KEES" \
	"take one, pushed by mallory, is an error"
like "$(records)" "$(msgid 3) of Sun, 01 Jun 2025 10:03:00 -0000" "the finding names mallory's record"
is "$(printf '%s' "$out" | jq -r '.transparency | "\(.message_id) \(.pushed_by) \(.certified)"')" \
	"$(msgid 3) mallory false" "the report's evidence is mallory's record all the same, uncertified"

# --- the log attached as a file ---------------------------------------------------------
verify "$P" rebase-carry
lines=$(git -C "$FX/kees.git" log --format=%H "$BASE..refs/tags/rebase-carry" | wc -l)
like "$(notes)" "push record $(msgid 8) .*'kees' pushed refs/tags/rebase-carry as $TAG_rebase .*; its log attached as 'rebase-carry.log' \\($lines lines\\)" \
	"a record whose log is attached is read, the attachment too (epoch 1)"
is "$(findings error)" "" "and it is good evidence"

# --- certificates: altered after signing, signed by another key -------------------------------
verify "$P" cherry-pick-old
is "$(findings error)" "the push certificate of the record of 'refs/tags/cherry-pick-old' does not verify: bad" \
	"a certificate changed after it was signed is an error"
verify "$P" submerge-signed
is "$(findings error)" "the push certificate of the record of 'refs/tags/submerge-signed' is signed by $FPR_ALICE, not by the tag's signer $FPR_KEES" \
	"a certificate signed by another key than the tag's is an error"

# --- a record whose new is not the tag object -------------------------------------------------
verify "$P" amend-upstream
is "$(findings error)" "the log's push of 'refs/tags/amend-upstream' does not make it the tag object $TAG_amend but $AMEND_COMMIT" \
	"a record that made the tag's name point at a commit, not the tag object, is an error"

# --- no record: a warning, an error where the policy says so -------------------------------
verify "$P" committer-date
is "$(findings warning | grep -c 'no push record')" 1 "a tag with no record is a warning by default"
is "$(printf '%s' "$out" | jq 'has("transparency")')" false "and its report has no evidence"
sed 's|transparency: {log: \(.*\)}|transparency: {log: \1, missing: error}|' "$P" >"$SCRATCH/me.yaml"
verify "$SCRATCH/me.yaml" committer-date
is "$(findings error | grep -c "no push record of 'refs/tags/committer-date'")" 1 \
	"with missing: error it is an error"

# --- the index is extended with what the log gains, and made again when an epoch is rewritten ---
E1="$LOG/git/1.git"
before=$(git -C "$E1" rev-parse master)
tlog_push "$E1" '<late@gitolite.kernel.org>' kees refs/tags/committer-date \
	0000000000000000000000000000000000000000 "$TAG_committer"
# a record past the cap: not read, said, never a crash
{ printf 'Message-Id: <big@x>\n\n---\nrepo: a/b\nlog: "'; head -c 17000000 /dev/zero | tr '\0' a; printf '"\n'; } >"$SCRATCH/big.msg"
tlog_append "$E1" "$SCRATCH/big.msg"
verify "$P" committer-date
is "$(findings warning | grep -c 'no push record')" 0 "a record appended to the log is found: the index was extended"
like "$(notes)" "push record <late@gitolite.kernel.org> of Mon, 02 Jun 2025 09:00:00 -0000: 'kees' pushed refs/tags/committer-date" \
	"and it is the evidence"
like "$(notes)" "^1 messages of the transparency log read this time" \
	"only the new messages were read: the one past the record cap, not the old one again"

git -C "$E1" update-ref refs/heads/master "$before~2"
verify "$P" submerge-signed
is "$(findings warning | grep -c "no push record of 'refs/tags/submerge-signed'")" 1 \
	"an epoch rewritten without a record is indexed again: the record is gone"
verify "$P" rebase-carry
is "$(findings error)" "" "and what the rewritten epoch still holds is found"

# --- a damaged index is made again ------------------------------------------------------
# (made again, the log's message that is no push record is read, and said, again)
idx=$(ls "$PULLGATE_HOME"/tlog/*.idx)
printf 'garbage' | dd of="$idx" bs=1 seek=0 conv=notrunc 2>/dev/null
verify "$P" hardening-v6.16-rc1-fix1
like "$(findings error)" "pushed by the account 'mallory'" "an index with a damaged header is made again and the same record found"
like "$(notes)" "^1 messages of the transparency log read this time" "it was made again from the log"
# an entry a probe reads: verify cannot decide, and the next one makes the index again
at=$(grep -b -o "$TAG_take1" "$idx" | head -n1 | cut -d: -f1)
printf 'xx' | dd of="$idx" bs=1 seek=$((at - 13)) conv=notrunc 2>/dev/null
verify "$P" hardening-v6.16-rc1-fix1
is "$rc" 3 "a damaged entry that a probe reads: verify cannot decide"
like "$err" "is damaged at entry [0-9]*: it will be made again" "and says the index will be made again"
verify "$P" hardening-v6.16-rc1-fix1
like "$(findings error)" "pushed by the account 'mallory'" "the next verify makes it again"
truncate -s 150 "$idx"
verify "$P" hardening-v6.16-rc1-fix1
like "$(findings error)" "pushed by the account 'mallory'" "so is an index cut short"

# --- what the policy says ---------------------------------------------------------------------
verify "$(policy off "checks: {transparency: off}")" hardening-v6.16-rc1-fix1
is "$(printf '%s' "$out" | jq '[.findings[], .notes[] | select(.check == "transparency")] | length')" 0 \
	"with the check off nothing is read or said"
sed 's/, account: kees//' "$P" >"$SCRATCH/noacct.yaml"
run "$PULLGATE" verify --json --policy "$SCRATCH/noacct.yaml" "$KREPO" hardening-v6.16-rc1-fix1
like "$(notes)" "the policy maps no account to $FPR_KEES: the pusher 'mallory' of 'refs/tags/hardening-v6.16-rc1-fix1' was not checked" \
	"a signer with no account: the pusher is noted, not judged"
printf 'transparency: {log: %s/nowhere}\n' "$SCRATCH" >"$SCRATCH/bad.yaml"
run "$PULLGATE" policy check "$SCRATCH/bad.yaml"
like "$err$out" "'transparency.log' names '$SCRATCH/nowhere', which does not exist" "a log that is not there is the policy's problem"
mkdir -p "$SCRATCH/empty"
sed "s|$LOG|$SCRATCH/empty|" "$P" >"$SCRATCH/empty.yaml"
run "$PULLGATE" verify --policy "$SCRATCH/empty.yaml" "$KREPO" hardening-v6.16-rc1-fix1
is "$rc" 3 "a log directory without git/0.git: verify cannot decide"
like "$err" "has no git/0.git: not a public-inbox v2 archive" "and says why"
