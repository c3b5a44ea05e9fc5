#!/bin/sh
# 90-help.t - the manual pages: they render without a warning, --help prints them, and they say what the code does.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
MAN="$(dirname "$PULLGATE")/man"
PAGES="pullgate.1 pullgate-verify.1 pullgate-gate.1 pullgate-conflicts.1 pullgate-serve.1 pullgate-ktap.1
	pullgate-guard.1 pullgate-policy.5 pullgate-serve.yaml.5"
plan 33

# groff -ww and man --warnings print nothing for a clean page: prove they would speak
printf '.TH BAD 1\n.SH NAME\nbad \\- a page\n.BADMACRO\n' >"$SCRATCH/bad.1"
ok "$([ -n "$(groff -ww -z -man "$SCRATCH/bad.1" 2>&1)" ]; echo $?)" \
	"groff -ww warns about a broken page (the check below can fail)"
for p in $PAGES; do
	ok "$([ -f "$MAN/$p" ]; echo $?)" "$p is built"
	w=$( { groff -ww -z -man -t "$MAN/$p" 2>&1; MANWIDTH=80 man --warnings -E UTF-8 -l "$MAN/$p" 2>&1 >/dev/null; } )
	is "$w" "" "$p renders without a warning (groff -ww, man --warnings)"
done

for cmd in verify gate conflicts serve ktap guard policy; do
	run "$PULLGATE" "$cmd" --help
	help_out=$out help_rc=$rc
	run "$PULLGATE" help "$cmd"
	ok "$([ "$rc" = 0 ] && [ "$help_rc" = 0 ] && [ "$out" = "$help_out" ]; echo $?)" \
		"help $cmd and $cmd --help print the same page"
done
like "$help_out" "^ +pullgate-policy - what a maintainer accepts" "help policy is the policy format"
run "$PULLGATE" verify --help
ok "$([ "$(printf '%s\n' "$out" | wc -l)" -gt 40 ] && [ "$(printf '%s\n' "$out" | awk 'length > 80' | wc -l)" -le 3 ]; echo $?)" \
	"--help is a page of short lines, not one long usage line"
run "$PULLGATE" help no-such-thing
is "$rc" 2 "help on an unknown topic is a usage error"
run "$PULLGATE" help
like "$out" '^   help +show a command' "help alone lists the commands"

# --- the pages say what the code does ---------------------------------------------
# every long option of a command is in its page and in the bash completion
options() { sed -n 's/^[[:space:]]*{ "\([a-z-]*\)", [a-z_]*argument.*/\1/p' "$@" | grep -vx help; }
PULL=$(sed -n 's/.*{ "\([a-z-]*\)", [a-z_]*argument.*/\1/p' "$TOP/cli/pull_args.h")
missing=
for cmd in verify gate conflicts serve ktap guard; do
	case $cmd in
	verify) opts=$PULL ;;
	gate) opts="$PULL $(options "$TOP/cli/cmd_gate.c")" ;;
	*) opts=$(options "$TOP/cli/cmd_$cmd.c") ;;
	esac
	page=$("$PULLGATE" help "$cmd")
	for o in $opts; do
		printf '%s\n' "$page" | grep -q -- "--$o\b" || missing="$missing $cmd:--$o(page)"
		grep -q -- "--$o\b" "$TOP/packaging/pullgate.bash" || missing="$missing $cmd:--$o(completion)"
	done
done
is "$missing" "" "every option is in its command's page and in the completion"

keys() { sed -n 's/.*\.key = "\([a-z-]*\)".*/\1/p' "$1" | sort -u; }
missing=
for k in $(keys "$TOP/policies/schema.c") \
	$(sed -n 's/.*{ "\([a-z-]*\)", PG_SEV_.*/\1/p' "$TOP/common/checks.c"); do
	grep -q -- "$k" "$TOP/policies/README.md" || missing="$missing $k(README.md)"
	grep -q -- "$k" "$TOP/docs/man/pullgate-policy.5.scd" || missing="$missing $k(pullgate-policy.5)"
done
is "$missing" "" "every policy key and check is in policies/README.md and pullgate-policy(5)"
missing=
for k in $(keys "$TOP/server/config.c"); do
	grep -q -- "$k" "$TOP/docs/server.md" || missing="$missing $k(server.md)"
	grep -q -- "$k" "$TOP/docs/man/pullgate-serve.yaml.5.scd" || missing="$missing $k(serve.yaml.5)"
	grep -q -- "$k" "$TOP/packaging/serve.yaml" || missing="$missing $k(packaging/serve.yaml)"
done
is "$missing" "" "every configuration key is in docs/server.md, pullgate-serve.yaml(5) and the example"
