#!/bin/sh
# incident.t - the incident replayed on the real linux-source-6.12 tree: take one rejected, take two approved.
#
# Run by `make check-incident` after `make check-kernel` (which makes the
# tree, the series refs and the build worktree).  Uses the real build and
# boot scripts and $PULLGATE_HOME, like check-kernel.
set -eu
: "${PULLGATE:?set PULLGATE to the pullgate binary}"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
: "${PULLGATE_HOME:=$HOME/.cache/pullgate}"
export PULLGATE_HOME
LINUX="$PULLGATE_HOME/linux"
FX="$PULLGATE_HOME/incident-kernel"
T1=hardening-v6.16-rc1-fix1
T2=hardening-v6.16-rc1-fix1-take2

# tap.sh gives a scratch dir; keep our PULLGATE_HOME (it would point it there)
home=$PULLGATE_HOME
. "$TOP/tests/lib/tap.sh"
PULLGATE_HOME=$home
plan 30

# a master branch of the maintainer's own is never touched by the replay
master_before=$(git -C "$LINUX" rev-parse -q --verify refs/heads/master || echo none)
"$TOP/fixtures/kernel-incident.sh" "$FX" >"$SCRATCH/fixture.log" 2>&1 ||
	{ cat "$SCRATCH/fixture.log" >&2; exit 1; }
export GNUPGHOME="$FX/gnupg"
BASE=$(cat "$FX/expect/base")
is "$(git -C "$LINUX" rev-parse incident)" "$BASE" "the integration branch starts at upstream's tip"

# --- take one ---------------------------------------------------------------------
run "$PULLGATE" verify --json --policy "$FX/policy.yaml" "$FX/kees.git" "$T1"
is "$rc" 1 "take one is rejected by verify"
is "$(printf '%s' "$out" | jq -r '.findings[] | select(.check == "rewritten-upstream") |
	"\(.commit) \(.upstream)"' | sort)" "$(sort "$FX/expect/take1.pairs")" \
	"every rewritten upstream commit is named with its original"
is "$(printf '%s' "$out" | jq -r '[.findings[] | select(.check == "rewritten-upstream")
	| select(.subject | startswith("Merge tag")) | select(any(.details[]; .field == "mergetag"
	and .pull == "(none)"))] | length')" 3 "the three rewritten maintainer merges lost their mergetags"

rm -rf "$PULLGATE_HOME/logs/$T1"
run "$PULLGATE" gate --json --branch incident --policy "$FX/policy.yaml" "$FX/kees.git" "$T1"
is "$rc" 1 "the gate rejects take one"
is "$(printf '%s' "$out" | jq -r '[.stages[] | "\(.name):\(.status)"] | join(" ")')" "verify:failed" \
	"at verify: nothing is merged, built or booted"
ok "$([ ! -e "$PULLGATE_HOME/logs/$T1/latest/build.log" ]; echo $?)" "no build was started for it"
is "$(git -C "$LINUX" rev-parse incident)" "$BASE" "the integration branch has not moved"
is "$(git -C "$LINUX" for-each-ref refs/heads/pullgate/$T1 refs/pullgate/tags/$T1)" "" \
	"and no ref of take one was left in the tree"

# --- take two ---------------------------------------------------------------------
KORG_KEES=git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux
run "$PULLGATE" gate --json --branch incident --policy "$FX/policy.yaml" --url "$KORG_KEES" \
	"$FX/kees.git" "$T2"
printf '%s\n' "$err" | grep -v '^\[build\] [0-9]* objects' | sed 's/^/# /'
is "$rc" 0 "the gate approves take two"
is "$(printf '%s' "$out" | jq -r '[.stages[] | "\(.name):\(.status)"] | join(" ")')" \
	"verify:passed merge:passed build:passed boot:passed approve:passed" \
	"after merge, build and boot"
summary=$(printf '%s' "$out" | jq -r '.stages[] | select(.name == "boot") | .summary')
like "$summary" '^[0-9]+ passed, 0 failed, 0 skipped, 0 crashed, 0 splats' "KUnit is green"
is "$(printf '%s' "$out" | jq -r .simulated)" false "with the shipped scripts: not simulated"
is "$(printf '%s' "$out" | jq -r '[.findings[] | select(.check == "boot-evidence")] | length')" 0 \
	"the boot is evidence: this boot's marker, its plan complete, a power-off"
# base against merge, suite by suite
echo "# KUnit, base against merge (pass/fail/skip/crash):"
printf '%s' "$out" | jq -r '.suites[] | "#   \(.name): \(if .base then "\(.base.passed)/\(.base.failed)/\(.base.skipped)/\(.base.crashed)" else "-" end) -> \(if .merge then "\(.merge.passed)/\(.merge.failed)/\(.merge.skipped)/\(.merge.crashed)" else "-" end)  \(.verdict)"'
like "$(printf '%s' "$out" | jq -r '.suites[].name')" '^pullgate_flex$' "the report has a row for each suite"
is "$(printf '%s' "$out" | jq -r '[.suites[] | select(.base == null or .merge == null)] | length')" 0 \
	"every suite ran on both the base and the merge"
is "$(printf '%s' "$out" | jq -r '[.suites[] | select(.verdict != "ok")] | length')" 0 \
	"and none fails on the merge"
printf '%s' "$out" | jq -r '.provenance[] | "# provenance \(.stage): \(.toolchain // .qemu), Image \(.image_sha256)"'
like "$(printf '%s' "$out" | jq -r '.provenance[] | select(.stage == "boot") | .qemu')" '^QEMU emulator version' \
	"the provenance names the QEMU that booted it"
is "$(git -C "$LINUX" log -1 --format=%s incident)" "Merge tag '$T2' of $KORG_KEES" \
	"the merge names Kees's public URL"
bootlog=$(printf '%s' "$out" | jq -r '.stages[] | select(.name == "boot") | .log')
like "$("$PULLGATE" ktap "$bootlog")" '^ok +pullgate_flex\.pg_define_flex_no_initializer$' \
	"our __DEFINE_FLEX test ran and passed on the merged tree"
echo "# KTAP summary of $bootlog:"
"$PULLGATE" ktap "$bootlog" | tail -n 4 | sed 's/^/#   /'
printf '%s' "$out" | jq -r '.stages[] | "# stage \(.name): \(.seconds) s"'

MERGE=$(git -C "$LINUX" rev-parse incident)
is "$MERGE" "$(printf '%s' "$out" | jq -r .merge_commit)" "the integration branch moved to the tested merge"
is "$(git -C "$LINUX" rev-list --count --merges "$BASE..incident")" 1 "exactly one new merge commit"
is "$(git -C "$LINUX" rev-list --count --no-merges "$BASE..incident")" 4 "bringing the four commits"
is "$(git -C "$LINUX" rev-parse incident^1) $(git -C "$LINUX" rev-parse incident^2)" \
	"$BASE $(cat "$FX/expect/take2")" "its parents are the old head and take two's commit"
like "$(git -C "$LINUX" cat-file -p incident)" "^mergetag object $(cat "$FX/expect/take2")$" \
	"it carries the tag in a mergetag header"
like "$(git -C "$LINUX" log -1 --show-signature incident 2>&1)" "^merged tag '$T2'$" \
	"git log --show-signature shows the merged tag"
like "$(git -C "$LINUX" log -1 --show-signature incident 2>&1)" 'Good signature from "Kees Cook <kees@kernel.org>"' \
	"with a good signature"

# The tree must be the base plus the series, computed without git's merge:
# the seeds' patches (ported where 6.12 needs it) applied to the base.
P="$TOP/patches/linux-6.12"
export GIT_INDEX_FILE="$SCRATCH/index"
git -C "$LINUX" read-tree "$BASE"
git -C "$LINUX" apply --cached "$P/0001-wifi-iwlwifi-mvm-work-around-clang-loop-unrolling-bug.patch"
git -C "$LINUX" apply --cached -C1 "$P/upstream/5c78e793f787.patch"
git -C "$LINUX" apply --cached "$P/upstream/f39f18f3c353.patch"
want=$(git -C "$LINUX" write-tree)
unset GIT_INDEX_FILE
is "$(git -C "$LINUX" rev-parse "incident^{tree}")" "$want" "its tree is the base plus the series"
like "$(cat "$PULLGATE_HOME/logs/$T2/latest/notice.txt")" "^has been merged into $LINUX:incident:$" \
	"a pr-tracker-bot style notice is written"
is "$(git -C "$LINUX" rev-parse -q --verify refs/heads/master || echo none)" "$master_before" \
	"the replay left the tree's master branch as it was"
