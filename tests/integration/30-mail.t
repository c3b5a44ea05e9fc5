#!/bin/sh
# 30-mail.t - verify --pull-request: real git request-pull mails agree, tampered ones are caught.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
plan 45
fixture_incident
M="$SCRATCH/mail"
"$TOP/fixtures/mail.sh" "$FX" "$M" >/dev/null
. "$M/ids.env"
T1=hardening-v6.16-rc1-fix1
T2=hardening-v6.16-rc1-fix1-take2

# verify MAIL TAG [--json]: run verify with the mail
verify() {
	run "$PULLGATE" verify ${3:+"$3"} --keyring "$KEYRING" --trust "$FPR_KEES" \
		--pull-request "$M/$1" --upstream "$UP" "$KEES" "$2"
}
# mail_findings: the pull-request-* findings of the text report, details included
mail_findings() {
	printf '%s\n' "$out" | awk '/^(error|warning) +pull-request-/ { on = 1; print; next }
		/^    / { if (on) print; next } { on = 0 }'
}
# line SEVERITY CHECK TEXT: a finding line as the text report prints it
line() { printf '%-7s  %-22s  %-12s  %s' "$1" "$2" - "$3"; }
short() { printf '%s' "$1" | cut -c1-12; }

# --- the real git request-pull output agrees with the pull -------------------
verify take2.mail "$T2"
is "$rc" 0 "take two's request-pull mail is accepted"
is "$(mail_findings)" "" "with no pull-request findings"
like "$out" '^verdict: accept \(0 errors, 0 warnings\)$' "and a clean verdict"

verify take1-real.mail "$T1"
is "$(mail_findings)" "" "git request-pull for take one honestly lists all 39 commits"
is "$rc" 1 "the pull itself is still rejected (rewritten upstream commits)"

run "$PULLGATE" verify --upstream "$UP" "$KEES" "$T1"
is "$rc" 1 "without a mail take one is rejected as before"
like "$out" '^verdict: reject \(36 errors, ' "with its full report"
unlike "$out" 'pull-request-' "without --pull-request no mail check runs"

# --- the take-one case: the mail describes 4 commits, the pull has 39 --------
verify take1.mail "$T1"
is "$rc" 1 "the take-one mail is rejected"
is "$(mail_findings | grep -v '^    missing-from-mail:')" "$(line error pull-request-shortlog \
"shortlog lists 4 commits, the pull has 39: 35 missing from the mail, 0 not in the pull")
    commits: pull 39; mail 4
$(line error pull-request-diffstat \
"diffstat: 9 changed files missing from the mail, 0 listed files not in the pull")" \
	"only shortlog and diffstat disagree; base, head, URL and ref are right"
verify take1.mail "$T1" --json
is "$rc" 1 "--json keeps the exit status"
json=$out
missing=$(printf '%s' "$json" | jq -r '.findings[] | select(.check == "pull-request-shortlog")
	| .details[] | select(.field == "missing-from-mail") | .pull | .[0:12]' | sort)
undeclared=$(git -C "$FX/work" log --no-walk --format='%H %ae' $(cat "$FX/expect/take1.pull") |
	awk '$2 != "kees@kernel.org" { print substr($1, 1, 12) }' | sort)
is "$(printf '%s\n' "$missing" | wc -l | tr -d ' ')" 35 "the shortlog check names 35 commits"
is "$missing" "$undeclared" "exactly the 35 commits that are not Kees's own"
first=$(printf '%s' "$json" | jq -r '[.findings[] | select(.check == "pull-request-shortlog")
	| .details[] | select(.field == "missing-from-mail") | .pull][0]')
like "$first" "^[0-9a-f]{12} Merge tag 'hardening-v6.16-rc1' of " "each with its id and subject"
files=$(printf '%s' "$json" | jq -r '.findings[] | select(.check == "pull-request-diffstat")
	| [.details[] | select(.field == "missing-from-mail") | .pull] | join(" ")')
is "$files" "Makefile drm/drm.c fs/vfs.c mm/mm.c net/legacy1.c net/legacy2.c net/net-next.c \
net/net.c sound/sound.c" "the diffstat check names the 9 files the mail hides"

# --- one tampered field at a time -------------------------------------------
verify wrong-base.mail "$T2"
is "$rc" 1 "a base that upstream lacks is rejected"
is "$(mail_findings)" "$(line error pull-request-base "the mail's base $(short "$PREB4") is not an upstream commit")
    base: pull $BASE; mail $PREB4" "the base finding names both bases"

verify unknown-base.mail "$T2"
is "$rc" 1 "a base no repository has is rejected"
is "$(mail_findings)" "$(line error pull-request-base "the mail's base 0123456789ab is not a known commit")
    base: pull $BASE; mail 0123456789abcdef0123456789abcdef01234567" \
	"a base no repository has"

verify tag-base.mail "$T2"
is "$rc" 1 "a base that is a tag is rejected"
is "$(mail_findings)" "$(line error pull-request-base "the mail's base $(short "$TAGOBJ") is a tag, not a commit")
    base: pull $BASE; mail $TAGOBJ" "a base that is a tag object, not a commit"

verify take2.mail "$T1"
is "$rc" 1 "take two's mail for take one is rejected"
like "$(mail_findings)" "^$(line error pull-request-base \
	"the mail's base $(short "$BASE") is not an ancestor of the tag's commit")\$" \
	"a base that is upstream but not below the head"

verify wrong-head.mail "$T2"
is "$rc" 1 "a head that is not the tag's commit is rejected"
is "$(mail_findings)" "$(line error pull-request-head \
	"the mail's head $(short "$PREB4") is not the tag's commit $(short "$TAKE2")")
    head: pull $TAKE2; mail $PREB4" "the head finding names both commits"

verify wrong-url.mail "$T2"
is "$rc" 1 "another repository is rejected"
is "$(mail_findings)" "$(line error pull-request-url "the mail's repository is not the one verified")
    url: pull $KEES; mail git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux.git" \
	"the URL finding names both repositories"

verify wrong-ref.mail "$T2"
is "$rc" 1 "take two's mail naming the take-one tag is rejected"
is "$(mail_findings)" "$(line error pull-request-url "the mail's ref is not the verified tag")
    ref: pull refs/tags/$T2; mail tags/$T1" "the ref finding names both refs"

verify branch.mail "$T2"
is "$rc" 1 "a mail naming a branch for a tag is rejected"
is "$(mail_findings)" "$(line error pull-request-url "the mail's ref is not the verified tag")
    ref: pull refs/tags/$T2; mail take2" \
	"a real request-pull for a branch parses (no tag message) and names the branch"

verify shortlog-extra.mail "$T2"
is "$rc" 1 "a shortlog with a commit the pull lacks is rejected"
is "$(mail_findings)" "$(line error pull-request-shortlog \
"shortlog lists 5 commits, the pull has 4: 0 missing from the mail, 1 not in the pull")
    commits: pull 4; mail 5
    not-in-pull: mail lkdtm: Add a test for the randstruct fix" "and names it"

verify diffstat-lie.mail "$T2"
is "$rc" 1 "a diffstat that lies is rejected"
is "$(mail_findings)" "$(line error pull-request-diffstat \
"diffstat: 1 changed file missing from the mail, 1 listed file not in the pull")
    missing-from-mail: lib/Kconfig.ubsan
    not-in-pull: mail lib/Kconfig.kasan" "and names the hidden and the invented file"

verify wrong-head.mail "$T2" --json
is "$rc" 1 "the JSON report keeps the exit status"
is "$(printf '%s' "$out" | jq -c '[.findings[] | {check, commit, details}]')" \
	"[{\"check\":\"pull-request-head\",\"commit\":null,\"details\":[{\"field\":\"head\",\"pull\":\"$TAKE2\",\"upstream\":\"$PREB4\"}]}]" \
	"the JSON report carries the same finding"

# --- encodings and containers ------------------------------------------------
verify variants.mail "$T2"
is "$rc" 0 "file:// URL, trailing slash, plain ref name, no tag message: accepted"
is "$(mail_findings)" "" "with no findings"

verify qp.mail "$T2"
is "$rc" 0 "a quoted-printable CRLF mail with an encoded [GIT PULL] subject is accepted"
is "$(mail_findings)" "" "with no findings"

verify multipart.mail "$T2"
is "$rc" 0 "base64 text/plain first in multipart/mixed is accepted"
is "$(mail_findings)" "" "the attachment is ignored"

verify two.mbox "$T2"
is "$rc" 0 "in an mbox the [GIT PULL] message is picked, not the first"
is "$(mail_findings)" "" "with no findings"
