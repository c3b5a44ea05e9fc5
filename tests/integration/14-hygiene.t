#!/bin/sh
# 14-hygiene.t - signoff, fixes-tag, back-merge, recent-rebase and date-anomaly.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 25
"$TOP/fixtures/hygiene.sh" "$SCRATCH/hy" >/dev/null
HY="$SCRATCH/hy"
export GNUPGHOME="$HY/gnupg"
. "$HY/keys.env"

verify() {
	run "$PULLGATE" verify --keyring "$HY/keyring.asc" --trust "$FPR_SAM" \
		--upstream "$HY/upstream.git:master" "$HY/sub.git" "$1"
}
# findings TEXT CHECK: the lines of one check's findings, with their details
findings() { printf '%s\n' "$1" | awk -v c="$2" '
	/^(error|warning) / { show = ($2 == c) }
	/^verdict/ { show = 0 }
	show'; }
short() { cut -c1-12 "$HY/expect/$1"; }

verify clean
for c in signoff fixes-tag back-merge recent-rebase date-anomaly; do
	is "$(findings "$out" "$c")" "" "clean: no $c finding"
done

verify no-signoff
is "$(findings "$out" signoff)" "error    signoff                 $(short no-signoff.author)  lib: a change without its author's sign-off
    no Signed-off-by from its author
    author: Frank Contributor <frank@example.org>
    signed-off-by: Sam Sub <sam@example.org>
error    signoff                 $(short no-signoff.none)  lib: a change with no sign-off at all
    no Signed-off-by from its author and committer
    author: Sam Sub <sam@example.org>
    committer: Sam Sub <sam@example.org>
    signed-off-by: (none)
error    signoff                 $(short no-signoff.committer)  lib: a change its committer did not sign off
    no Signed-off-by from its committer
    committer: Sam Sub <sam@example.org>
    signed-off-by: Frank Contributor <frank@example.org>" \
	"missing author, both and committer sign-offs are reported exactly"
is "$rc" 1 "a missing sign-off rejects the pull"

verify bad-fixes
f=$(findings "$out" fixes-tag)
like "$f" "^warning  fixes-tag               $(short bad-fixes.unknown)  lib: fixes nothing that exists$" \
	"a Fixes: to an unknown commit is reported on its commit"
like "$f" "^    Fixes: names deadbeefdead, which is neither an upstream nor a pull commit$" \
	"and names the id"
like "$f" "^    subject: pull lib: add the helper; upstream lib: add helper$" \
	"a wrong subject is shown beside the real one"
like "$f" "^warning  fixes-tag               $(short bad-fixes.malformed)  lib: a malformed fixes tag$" \
	"a Fixes: naming no commit is reported"
like "$f" '^    Fixes: names no commit \(expected: Fixes: <sha> \("subject"\)\)$' "with the expected form"
is "$(printf '%s\n' "$f" | grep -c '^warning')" 3 "three bad Fixes: tags, three findings"
is "$rc" 0 "fixes-tag is a warning by default"

verify back-merge
f=$(findings "$out" back-merge)
like "$f" "^warning  back-merge              $(short back-merge.merge)  Merge branch 'master' into back-merge$" \
	"the back-merge is reported on the merge"
like "$f" "^    merged: upstream $(cut -c1-12 "$HY/expect/back-merge.upstream") lib: tidy helper$" \
	"naming the upstream commit merged"
like "$f" "^    see: Documentation/maintainer/rebasing-and-merging.rst$" "and the document to read"

# a topic branch upstream merged too is no back-merge; upstream's own line is
verify shared-topic
is "$(findings "$out" back-merge)" "" "merging a topic branch that upstream also merged is no back-merge"
like "$out" "^verdict: accept \(0 errors, 0 warnings\)$" "and the pull is accepted clean"
unlike "$(git --git-dir="$HY/upstream.git" rev-list --first-parent master)" "$(cat "$HY/expect/shared-topic.topic")" \
	"(the topic is upstream's, off its first-parent line)"

verify recent-rebase
is "$(findings "$out" recent-rebase)" "warning  recent-rebase           -             3 commits written 28+ days earlier were all committed in the 24 hours before the tag
    first committed: 2025-05-19 10:01:00 +0000
    last committed: 2025-05-19 10:03:00 +0000
    newest authored: 2025-04-03 10:00:00 +0000
    tagged: 2025-05-19 11:00:00 +0000
    see: Documentation/maintainer/rebasing-and-merging.rst" \
	"history written in April and re-stamped an hour before the tag is reported with its dates"

verify date-anomaly
f=$(findings "$out" date-anomaly)
like "$f" "^warning  date-anomaly            $(short date-anomaly.before)  lib: committed before it was written$" \
	"a commit dated before its authorship is reported"
like "$f" "^    committer-date: 2025-05-01 10:00:00 \+0000$" "with its dates"
like "$f" "^warning  date-anomaly            $(short date-anomaly.future)  lib: from the future$" \
	"a commit from the future is reported"
like "$f" "^    dated in the future$" "as such"
