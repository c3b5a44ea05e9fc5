#!/bin/sh
# 62-gate-rules.t - the gate's own rules: a trusted signature, the tag it verified, nothing left after a SIGKILL, runs marked simulated, the maintainer's identity.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/gate.sh"
plan 75
gate_setup
KREPO="$SCRATCH/kees.git"
git clone -q --mirror "$FX/kees.git" "$KREPO"
JOURNAL="$PULLGATE_HOME/work/run.journal"

gate() {
	run "$PULLGATE" gate --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" \
		--tree "$TREE" "$@"
}
stages() { printf '%s' "$out" | jq -r '[.stages[] | "\(.name):\(.status)"] | join(" ")'; }
# sign_tag NAME TARGET: Kees signs a tag in KREPO (a private copy of the keys, no agent left)
sign_tag() {
	g="$SCRATCH/gnupg-sign"
	rm -rf "$g"
	mkdir -m 700 "$g"
	for f in "$FX/gnupg"/*; do
		case ${f##*/} in S.*) ;; *) cp -r "$f" "$g/" ;; esac
	done
	GNUPGHOME="$g" GIT_COMMITTER_NAME="Kees Cook" GIT_COMMITTER_EMAIL=kees@kernel.org \
		git --git-dir="$KREPO" -c tag.gpgSign=true tag -s -u "$FPR_KEES" \
		-m "Pull hardening fixes, take three" "$1" "$2"
	GNUPGHOME="$g" gpgconf --kill gpg-agent 2>/dev/null || true
	rm -rf "$g"
}
sign_tag take3 "$T2^{commit}"

# --- the gate merges only a tag verified good by a signer the policy trusts -------------------
cat >"$SCRATCH/nosig.yaml" <<EOF
upstream:
  url: $FX/upstream.git
  branch: master
checks:
  tag-signature: off
approval: auto
EOF
run "$PULLGATE" verify --json --policy "$SCRATCH/nosig.yaml" "$KREPO" "$T2"
is "$rc" 0 "a policy with tag-signature off lets verify accept an unverified tag"
is "$(printf '%s' "$out" | jq -r .tag_signer)" null "with no trusted signer"
run "$PULLGATE" gate --json --policy "$SCRATCH/nosig.yaml" --tree "$TREE" --approve "$KREPO" "$T2"
is "$rc" 1 "the gate refuses it whatever the policy says"
is "$(stages)" "verify:failed" "before anything is merged"
like "$(printf '%s' "$out" | jq -r '.findings[] | select(.check == "tag-signature") | "\(.severity): \(.message)"')" \
	"^error: the gate merges only a tag whose signature verified good, by a signer the policy trusts" \
	"saying why"
is "$(master) $(pull_refs)" "$BASE " "nothing moved, no ref was made"
# a keyring but no trusted signer, with the check lowered to a warning
sed 's/tag-signature: off/tag-signature: warning/' "$SCRATCH/nosig.yaml" >"$SCRATCH/warnsig.yaml"
run "$PULLGATE" gate --json --policy "$SCRATCH/warnsig.yaml" --keyring "$KEYRING" --tree "$TREE" \
	--approve "$KREPO" "$T2"
is "$rc" 1 "a good signature by a key the policy does not trust is refused too"
is "$(printf '%s' "$out" | jq -r '[.findings[] | select(.check == "tag-signature") | .severity] | sort | join(" ")')" \
	"error warning" "the policy's warning, and the gate's error"
gate --json --approve "$KREPO" "$T2"
is "$(printf '%s' "$out" | jq -r .tag_signer)" "$FPR_KEES" "a trusted signer's tag names its signer"
is "$rc" 0 "and is approved"
reset_tree

# --- approval only against the tag object that was verified -----------------------------------
T1_OBJ=$(git --git-dir="$KREPO" rev-parse "refs/tags/$T1")
T2_OBJ=$(git --git-dir="$KREPO" rev-parse "refs/tags/$T2")
FAKE_BUILD=retag FAKE_SENDER="$KREPO" FAKE_RETAG="$T2" FAKE_RETAG_TO="$T1_OBJ" \
	gate --approve "$KREPO" "$T2"
is "$rc" 3 "a tag pushed again while the pull is tested: pullgate cannot approve"
like "$err" "tag '$T2' moved since it was verified: ${T2_OBJ}, now ${T1_OBJ}" "and says so"
is "$(master) $(pull_refs)" "$BASE " "the branch does not move; no ref is left"
git --git-dir="$KREPO" update-ref "refs/tags/$T2" "$T2_OBJ"

# --- nothing left behind after a SIGKILL, in any stage ----------------------------------------
# start_gate ARGS: a gate in the background (pid $GATE); PULLGATE_TEST_STOP in the
# environment stops it at that point of its run (a build for tests)
start_gate() {
	"$PULLGATE" gate --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" \
		--tree "$TREE" "$@" "$KREPO" "$T2" >"$SCRATCH/bg.out" 2>"$SCRATCH/bg.err" &
	GATE=$!
}
killed() {
	kill -KILL "$GATE" 2>/dev/null || true
	wait "$GATE" 2>/dev/null || true
}
# the next gate run, of another pull, cleans up after the dead one
recover() {
	gate --stages merge "$KREPO" take3
	is "$rc" 0 "$1: the next gate run (another pull) goes through"
	like "$err" "^\[merge\] a run of 'refs/tags/$T2' died: removed refs/heads/pullgate/$KEY" \
		"$1: it says it cleaned up after the dead run"
	is "$(pull_refs)" "" "$1: no ref of the dead run is left"
	ok "$([ ! -e "$JOURNAL" ]; echo $?)" "$1: nor its journal"
}
has_ref() { git --git-dir="$TREE" rev-parse -q --verify "$1" >/dev/null; }
# alive PIDFILE: the process PIDFILE names runs (a missing or empty file is no process)
alive() { p=$(cat "$1" 2>/dev/null) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
# stop_at POINT ARGS: a gate stopped at POINT of its run; says whether it got there
stop_at() {
	point=$1
	shift
	PULLGATE_TEST_STOP=$point start_gate "$@"
	ok "$(wait_stopped "$GATE"; echo $?)" "the gate stops itself at $point"
}

# in verify: nothing was made, so there is nothing to clean
reset_tree
stop_at verify --approve
killed
is "$(pull_refs)" "" "killed in verify: no ref was made"
# in the merge, as soon as it is made (before the build starts)
reset_tree
stop_at merge:passed --approve
killed
like "$(pull_refs)" "refs/pullgate/tags/$T2" "killed in the merge: the fetched tag's ref is left"
recover "killed in the merge"
# in the build: the build it left running is stopped too
reset_tree
rm -f "$BUILD/merged-built-once" "$BUILD/build.pid"
FAKE_BUILD=sleep start_gate --approve
wait_for test -e "$BUILD/merged-built-once"
killed
is "$(pull_refs)" "refs/heads/pullgate/$KEY refs/pullgate/tags/$T2" "killed in the build: both refs are left"
ok "$(alive "$BUILD/build.pid"; echo $?)" "and the build runs on, orphaned"
BPID=$(cat "$BUILD/build.pid" 2>/dev/null || true)
recover "killed in the build"
ok "$(wait_gone "$BPID"; echo $?)" "killed in the build: the orphaned build was stopped"
# in the boot
reset_tree
rm -f "$BUILD/boot.pid"
FAKE_BOOT=sleep start_gate --approve
wait_for test -s "$BUILD/boot.pid"
killed
is "$(pull_refs)" "refs/heads/pullgate/$KEY refs/pullgate/tags/$T2" "killed in the boot: both refs are left"
ok "$(alive "$BUILD/boot.pid"; echo $?)" "and the boot runs on, orphaned"
QPID=$(cat "$BUILD/boot.pid" 2>/dev/null || true)
recover "killed in the boot"
ok "$(wait_gone "$QPID"; echo $?)" "killed in the boot: the orphaned boot was stopped"
# in the approval, just after the branch moved (before the notice and the report are written)
reset_tree
stop_at approve:after-cas --approve
is "$(git --git-dir="$TREE" rev-parse master^2)" "$(git --git-dir="$KREPO" rev-parse "$T2^{commit}")" \
	"stopped in the approval: the branch has moved"
killed
is "$(pull_refs)" "refs/heads/pullgate/$KEY refs/pullgate/tags/$T2" "killed in the approval: both refs are left"
recover "killed in the approval"
is "$(git --git-dir="$TREE" rev-parse master^2)" "$(git --git-dir="$KREPO" rev-parse "$T2^{commit}")" \
	"killed in the approval: the approval it made stands"
# in the approval, just before the branch moves: it has not moved, and stays
reset_tree
stop_at approve:before-cas --approve
killed
is "$(master) $(pull_refs)" "$BASE refs/heads/pullgate/$KEY refs/pullgate/tags/$T2" \
	"killed before the approval's compare-and-swap: the branch has not moved"
recover "killed before the approval"
is "$(master)" "$BASE" "and the next run does not move it either"
reset_tree

# --- killed while it copies the tag's objects into a tree: what it left is whole ---------------
# (an object is copied after everything it names: a commit left without its tree would never
# be copied again, by this pull or any other that reaches it)
FRESH="$SCRATCH/fresh.git"
git clone -q --bare "$FX/upstream.git" "$FRESH"
PULLGATE_TEST_STOP="fetch:object written: commit" "$PULLGATE" gate --keyring "$KEYRING" --trust "$FPR_KEES" \
	--upstream "$UP" --tree "$FRESH" --stages merge "$KREPO" "$T2" >/dev/null 2>&1 &
GATE=$!
ok "$(wait_stopped "$GATE"; echo $?)" "the gate stops after the first commit it copied"
killed
# broken GIT-DIR: what is missing from what each commit there reaches (a parent, a tree, a blob)
broken() {
	git --git-dir="$1" cat-file --batch-all-objects --batch-check='%(objecttype) %(objectname)' |
		sed -n 's/^commit //p' >"$SCRATCH/commits"
	git --git-dir="$1" rev-list --objects --missing=print --stdin <"$SCRATCH/commits" \
		>"$SCRATCH/closure" 2>&1 || echo "rev-list: $(grep -E '^(error|fatal)' "$SCRATCH/closure" | head -n1)"
	grep '^?' "$SCRATCH/closure" | head -n3
}
is "$(broken "$FRESH")" "" "killed there, the tree has no commit whose parent, tree or blob is missing"
run "$PULLGATE" gate --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" --tree "$FRESH" \
	--stages merge "$KREPO" take3
is "$rc" 0 "and another pull of the same commits merges there"

# --- a run with stand-in scripts says so --------------------------------------------------------
gate --json --no-approve "$KREPO" "$T2"
is "$rc" 0 "a run with the stand-in scripts of tests/fakes"
is "$(printf '%s' "$out" | jq -r .simulated)" true "is marked simulated in its JSON"
is "$(printf '%s' "$out" | jq -r '[.provenance[] | "\(.stage):\(.simulated)"] | join(" ")')" \
	"build:true boot:true base-boot:true" "stage by stage"
is "$(printf '%s' "$out" | jq -r '.provenance[] | select(.stage == "build") | .files[0] | "\(.path) \(.sha256) \(.shipped)"')" \
	"$TOP/tests/fakes/scripts/kernel/build.sh $(sha256sum <"$TOP/tests/fakes/scripts/kernel/build.sh" | cut -d' ' -f1) false" \
	"naming the script that ran, its SHA-256, and that it is not the shipped one"
is "$(printf '%s' "$out" | jq -r '.provenance[] | select(.stage == "boot") | .files[0] | "\(.path) \(.sha256)"')" \
	"$TOP/tests/fakes/scripts/kernel/boot.sh $(sha256sum <"$TOP/tests/fakes/scripts/kernel/boot.sh" | cut -d' ' -f1)" \
	"and the boot script's"
is "$(printf '%s' "$out" | jq -r '.provenance[] | select(.stage == "build") | "\(.config_sha256) \(.image_sha256)"')" \
	"$(sha256sum <"$BUILD/.config" | cut -d' ' -f1) $(sha256sum <"$BUILD/arch/arm64/boot/Image" | cut -d' ' -f1)" \
	"the config's hash and the Image's"
is "$(printf '%s' "$out" | jq -r '.provenance[] | select(.stage == "boot") | .image_sha256')" \
	"$(sha256sum <"$BUILD/arch/arm64/boot/Image" | cut -d' ' -f1)" "the Image booted is the one built"
is "$(printf '%s' "$out" | jq -r '.provenance[] | select(.stage == "build") | .tree')" \
	"$(git --git-dir="$TREE" rev-parse "$(printf '%s' "$out" | jq -r .merge_commit)^{tree}")" "the tree built"
is "$(printf '%s' "$out" | jq -r '.provenance[] | select(.stage == "build") | .toolchain')" \
	"$(aarch64-linux-gnu-gcc --version | head -n1)" "the toolchain's version is recorded"
is "$(printf '%s' "$out" | jq -r '.provenance[] | select(.stage == "boot") | .qemu')" \
	"$(qemu-system-aarch64 --version | head -n1)" "and QEMU's"
reset_tree
gate --no-approve "$KREPO" "$T2"
like "$out" '^SIMULATED: stand-in scripts ran in place of pullgate' "the text report says it before the verdict"
like "$out" "^  build    SIMULATED, exit status 0$" "and per stage"
reset_tree
# the shipped boot.sh with one line added is a stand-in too (it then fails: no initramfs here)
mkdir -p "$SCRATCH/data/scripts/kernel"
cp "$TOP/tests/fakes/scripts/kernel/build.sh" "$TOP/scripts/kernel/lib.sh" "$SCRATCH/data/scripts/kernel/"
{ cat "$TOP/scripts/kernel/boot.sh"; echo "# changed"; } >"$SCRATCH/data/scripts/kernel/boot.sh"
chmod +x "$SCRATCH/data/scripts/kernel/boot.sh"
PULLGATE_DATADIR="$SCRATCH/data" gate --json --no-approve "$KREPO" "$T2"
is "$(printf '%s' "$out" | jq -r '.provenance[] | select(.stage == "boot") | [.simulated, (.files[] | "\(.path | sub(".*/"; "")):\(.shipped)")] | join(" ")')" \
	"true boot.sh:false lib.sh:true" "a changed shipped script is not the shipped one; its lib.sh is"
is "$(printf '%s' "$out" | jq -r .simulated)" true "and the run is simulated"
reset_tree

# --- the maintainer's identity and the public URL on the merge ---------------------------------
"$TOP/fixtures/policy.sh" "$FX"
sed -e "s|$FX/kees.git|$KREPO|g" -e "s|file: keyring.asc|file: $FX/keyring.asc|" \
	"$FX/policy.yaml" >"$SCRATCH/policy.yaml"
printf 'merge-identity:\n  name: Linus Torvalds\n  email: torvalds@linux-foundation.org\n' \
	>>"$SCRATCH/policy.yaml"
run "$PULLGATE" gate --json --policy "$SCRATCH/policy.yaml" --tree "$TREE" --no-approve \
	--url git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux "$KREPO" "$T2"
is "$rc" 0 "a policy names the maintainer who merges"
M=$(printf '%s' "$out" | jq -r .merge_commit)
is "$(git --git-dir="$TREE" log -1 --format='%an <%ae>|%cn <%ce>' "$M")" \
	"Linus Torvalds <torvalds@linux-foundation.org>|Linus Torvalds <torvalds@linux-foundation.org>" \
	"the merge is authored and committed as the maintainer"
is "$(git --git-dir="$TREE" log -1 --format=%s "$M")" \
	"Merge tag '$T2' of git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux" \
	"the merge names the public URL, not the local mirror"
like "$(git --git-dir="$TREE" log -1 --format=%B "$M")" \
	"^\* tag '$T2' of git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux:$" "in the shortlog too"
reset_tree
printf 'merge-identity:\n  name: A <b>\n  email: a@b.example\n' >"$SCRATCH/badid.yaml"
run "$PULLGATE" policy check "$SCRATCH/badid.yaml"
is "$rc" 3 "a merge identity with brackets in the name is refused"
like "$err" "badid.yaml:2:9: .*no '<' or '>'" "saying where"
printf 'checks:\n  boot-evidence: warning\n' >"$SCRATCH/lower.yaml"
run "$PULLGATE" policy check "$SCRATCH/lower.yaml"
is "$rc" 3 "a policy cannot lower boot-evidence"
like "$err" "lower.yaml:2:18: .*a boot passes only on evidence" "saying why"
