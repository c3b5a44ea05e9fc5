#!/bin/sh
# install.t - the installed tree on its own: data dir from the binary's path, verify, a gate with the stand-ins, a moved prefix.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
plan 23
: "${PULLGATE_ROOT:?}" "${PULLGATE_CHECKOUT:?}"
fixture_incident
cd "$SCRATCH"
DATA="$PULLGATE_ROOT/share/pullgate"

if [ -n "${PULLGATE_CHECKOUT_VISIBLE:-}" ]; then
	skip "the checkout could not be hidden: $PULLGATE_CHECKOUT_VISIBLE"
else
	ok "$([ ! -e "$PULLGATE_CHECKOUT/Makefile" ]; echo $?)" "the checkout is out of sight"
fi
case :$PATH: in
*"$PULLGATE_CHECKOUT"*) ok 1 "no build directory is in PATH" ;;
*) ok 0 "no build directory is in PATH" ;;
esac

run "$PULLGATE" version --verbose
is "$rc" 0 "the installed binary runs"
is "$(printf '%s\n' "$out" | sed -n 's/^data: //p')" "$(cd "$DATA" && pwd -P)" \
	"it finds its data directory beside itself: PREFIX/share/pullgate"
for f in scripts/kernel/build.sh scripts/kernel/boot.sh qemu-images/mkinitramfs.sh \
	qemu-images/init.c patches/linux-6.12/series policies/kernel-toplevel.yaml; do
	[ -e "$DATA/$f" ] || echo "missing: $f"
done >"$SCRATCH/missing"
is "$(cat "$SCRATCH/missing")" "" "scripts, QEMU image sources, the seed series and policies are installed"
ok "$([ -x "$DATA/scripts/kernel/build.sh" ] && [ -x "$DATA/qemu-images/mkinitramfs.sh" ]; echo $?)" \
	"the scripts are executable"

run "$PULLGATE" policy check "$DATA/policies/default.yaml" "$DATA/policies/kernel-toplevel.yaml"
is "$rc" 0 "the installed policies are valid"

# --- verify on the incident ------------------------------------------------------
run "$PULLGATE" verify --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" "$KEES" \
	hardening-v6.16-rc1-fix1
is "$rc" 1 "take one is rejected"
like "$out" "rewritten-upstream" "for its rewritten upstream commits"
run "$PULLGATE" verify --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" "$KEES" \
	hardening-v6.16-rc1-fix1-take2
is "$rc" 0 "take two is accepted"

# --- man pages, help, completion ---------------------------------------------------
run man -M "$PULLGATE_ROOT/share/man" -P cat pullgate-verify
like "$out" "pullgate-verify - check that a pull is what it claims to be" "man finds the installed page"
run man -M "$PULLGATE_ROOT/share/man" -P cat 5 pullgate-policy
like "$out" "protect-upstream-maintainer" "and the policy format in section 5"
is "$("$PULLGATE" help gate)" "$("$PULLGATE" gate --help)" "help gate and gate --help print the same"
if [ -r /usr/share/bash-completion/bash_completion ]; then
	words=$(bash -c '. /usr/share/bash-completion/bash_completion; . "$1"
		COMP_WORDS=(pullgate gate --no); COMP_CWORD=2; COMP_LINE="pullgate gate --no"
		COMP_POINT=${#COMP_LINE}; _pullgate; echo "${COMPREPLY[*]}"' sh \
		"$PULLGATE_ROOT/share/bash-completion/completions/pullgate")
	is "$words" "--no-approve" "bash completes gate's options"
else
	skip "bash-completion is not installed"
fi
like "$(cat "$PULLGATE_ROOT/lib/systemd/system/pullgate.service")" \
	"^ExecStart=/usr/local/bin/pullgate serve --config /usr/local/etc/pullgate/serve.yaml$" \
	"the unit runs the installed binary"

# systemd-analyze verify checks that ExecStart's binary exists and that man finds
# the Documentation= pages, so the unit is checked pointing into DESTDIR; an
# unknown key is only a warning (exit 0), so any output is a failure
sed "s|^ExecStart=/usr/local/bin/|ExecStart=$PULLGATE_ROOT/bin/|" \
	"$PULLGATE_ROOT/lib/systemd/system/pullgate.service" >"$SCRATCH/pullgate.service"
run env MANPATH="$PULLGATE_ROOT/share/man" systemd-analyze verify "$SCRATCH/pullgate.service"
is "$rc:$out$err" "0:" "systemd-analyze verify passes on the unit, without a warning"
sed 's/^ProtectSystem=/ProtectSystm=/' "$SCRATCH/pullgate.service" >"$SCRATCH/typo.service"
run env MANPATH="$PULLGATE_ROOT/share/man" systemd-analyze verify "$SCRATCH/typo.service"
like "$err" "Unknown key 'ProtectSystm'" "and would report a misspelt key"

# --- a moved prefix, with the stand-ins as its kernel scripts ------------------------
MOVED="$SCRATCH/elsewhere"
cp -a "$PULLGATE_ROOT" "$MOVED"
cp "$TOP/tests/fakes/scripts/kernel/build.sh" "$TOP/tests/fakes/scripts/kernel/boot.sh" \
	"$MOVED/share/pullgate/scripts/kernel/"
run "$MOVED/bin/pullgate" version --verbose
is "$(printf '%s\n' "$out" | sed -n 's/^data: //p')" "$(cd "$MOVED/share/pullgate" && pwd -P)" \
	"a moved prefix finds its own data directory"
TREE="$SCRATCH/tree.git"
git clone -q --bare "$FX/upstream.git" "$TREE"
BASE=$(git --git-dir="$TREE" rev-parse master)
run "$MOVED/bin/pullgate" gate --json --approve --keyring "$KEYRING" --trust "$FPR_KEES" \
	--upstream "$UP" --tree "$TREE" "$KEES" hardening-v6.16-rc1-fix1-take2
is "$rc" 0 "a gate from the moved prefix passes"
is "$(printf '%s' "$out" | jq -r '[.stages[] | "\(.name):\(.status)"] | join(" ")')" \
	"verify:passed merge:passed build:passed boot:passed approve:passed" "through every stage"
like "$(cat "$PULLGATE_HOME/build/arm64-gcc/builds" 2>/dev/null)" "^merged$" \
	"with the stand-in build of the moved data directory"
is "$(git --git-dir="$TREE" rev-list --count "$BASE..master")" 5 "approval moved the branch"
ok "$([ -s "$PULLGATE_HOME/logs/hardening-v6.16-rc1-fix1-take2/latest/notice.txt" ]; echo $?)" \
	"the CLI gate writes the notice to a file"
