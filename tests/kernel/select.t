#!/bin/sh
# select.t - gate --explain-tests on the real linux-source-6.12 tree: lib, ext4 and Documentation pulls.
#
# Run by `make check-kernel` (scripts/kernel/check.sh) once the tree and its
# series branch are made, with PG_KERNEL_HOME set to that home: a missing
# tree is a failure, never a skip.  Nothing is built; the tree is only read,
# through clones sharing its objects.
set -eu
: "${PULLGATE:?set PULLGATE to the pullgate binary}"
real=${PG_KERNEL_HOME:-${PULLGATE_HOME:-$HOME/.cache/pullgate}}
. "$(dirname "$0")/../lib/tap.sh"
if ! git -C "$real/linux" rev-parse -q --verify refs/heads/series >/dev/null 2>&1; then
	echo "Bail out! no kernel tree with a series branch in $real/linux (make check-kernel makes it)"
	exit 1
fi
plan 18

FX="$SCRATCH/fx"
"$TOP/fixtures/kernel-select.sh" "$real/linux" refs/heads/series "$FX" >"$SCRATCH/fx.log" 2>&1 ||
	{ cat "$SCRATCH/fx.log" >&2; exit 1; }
export GNUPGHOME="$FX/gnupg"
TREE="$SCRATCH/tree.git"
git clone -q --bare --shared "$real/linux" "$TREE"
git --git-dir="$TREE" update-ref refs/heads/master "$(cat "$FX/base")"
master_before=$(git --git-dir="$TREE" rev-parse master)

explain() { # TAG [OPTION...]
	t=$1
	shift
	run "$PULLGATE" gate --explain-tests --tree "$TREE" --policy "$FX/policy.yaml" "$@" \
		"$FX/sender.git" "$t"
}
added() { printf '%s' "$out" | jq -r '.selection.options[] | select(.status == "added") | .option'; }

# --- lib/: the test options of lib's Kconfig files, up to the policy's cap ------------
explain select-lib --json
is "$rc" 0 "explaining the lib pull exits 0"
is "$(printf '%s' "$out" | jq -r '[.stages[] | "\(.name):\(.status)"] | join(" ")')" \
	"verify:passed merge:passed" "it verifies and merges, and builds nothing"
ok "$([ ! -e "$(printf '%s' "$out" | jq -r .run_dir)/build.log" ]; echo $?)" "no build was started"
is "$(added | head -n1)" CONFIG_STRING_KUNIT_TEST "the option named like the changed file comes first"
is "$(added | wc -l | tr -d ' ')" 8 "the policy's default cap: 8 test options added"
is "$(printf '%s' "$out" | jq -r '[.selection.options[] | select(.status == "added") |
	select(.source | startswith("lib/Kconfig")) | select(.path == "lib/string.c")] | length')" 8 \
	"each from a Kconfig file of lib/, selected by lib/string.c"
is "$(printf '%s' "$out" | jq -r '.selection.options[] | select(.option == "CONFIG_STRING_KUNIT_TEST") |
	.suites | join(" ")')" string "with the suite its source declares"
like "$(printf '%s' "$out" | jq -r '.selection.options[] | select(.status == "capped") | .reason')" \
	"kunit-select-max \(8 " "the rest are reported as capped, not dropped"
is "$(printf '%s' "$out" | jq -r '.selection.options[] | select(.option == "CONFIG_OVERFLOW_KUNIT_TEST") |
	.status')" in-base "an option of the base configuration keeps the base's value"
is "$(git --git-dir="$TREE" rev-parse master)" "$master_before" "the integration branch has not moved"
is "$(git --git-dir="$TREE" for-each-ref refs/heads/pullgate/select-lib refs/pullgate)" "" \
	"and no ref of the pull is left"

# --- fs/ext4/: its .kunitconfig ---------------------------------------------------------
explain select-ext4 --json
is "$(added | paste -sd' ' -)" "CONFIG_EXT4_FS CONFIG_EXT4_KUNIT_TESTS" \
	"the ext4 pull adds ext4's .kunitconfig"
is "$(printf '%s' "$out" | jq -r '.selection.options[] | select(.option == "CONFIG_EXT4_KUNIT_TESTS") |
	"\(.source) \(.path) \(.suites | join(","))"')" \
	"fs/ext4/.kunitconfig fs/ext4/inode.c ext4_inode_test,ext4_mballoc_test" \
	"from fs/ext4/.kunitconfig for fs/ext4/inode.c, with ext4's two suites"
is "$(printf '%s' "$out" | jq -r '.selection.options[] | select(.option == "CONFIG_KUNIT") | .status')" \
	in-base "its CONFIG_KUNIT is the base's"

# --- Documentation/ only: nothing beyond the baseline, and said so -----------------------
explain select-docs --json
is "$(printf '%s' "$out" | jq -r '.selection.options | length')" 0 "the Documentation pull selects nothing"
is "$(printf '%s' "$out" | jq -r .selection.note)" \
	"nothing added beyond the baseline: no .kunitconfig or Kconfig test option covers the 1 changed path" \
	"and the report says so"
explain select-docs
like "$out" "^kunit selection: nothing added beyond the baseline" "so does the text report"
is "$rc" 0 "which exits 0"
