# gate.sh - what the gate's tests share: the setup and the questions they ask of a run (sourced after fixtures.sh).
#
# gate_setup: the incident fixtures, the stand-in build and boot scripts of
# tests/fakes, a bare clone of upstream as the maintainer's tree ($TREE, its
# master at $BASE), take one and two ($T1, $T2), take two's key ($KEY) and
# the build dir ($BUILD).  The helpers below need only $TREE and $BASE (the
# serve tests set those themselves).
gate_setup() {
	fixture_incident
	export PULLGATE_DATADIR="$TOP/tests/fakes"
	TREE="$SCRATCH/tree.git"
	git clone -q --bare "$FX/upstream.git" "$TREE"
	BASE=$(git --git-dir="$TREE" rev-parse master)
	T1=hardening-v6.16-rc1-fix1
	T2=hardening-v6.16-rc1-fix1-take2
	KEY=$T2
	BUILD="$PULLGATE_HOME/build/arm64-gcc"
}

# stage NAME: the status of stage NAME in the JSON report in $out
stage() { printf '%s' "$out" | jq -r --arg s "$1" '.stages[] | select(.name == $s) | .status'; }
# messages CHECK: the messages of CHECK's findings in $out; findings CHECK: "severity: message"
messages() { printf '%s' "$out" | jq -r --arg c "$1" '.findings[] | select(.check == $c) | .message'; }
findings() {
	printf '%s' "$out" | jq -r --arg c "$1" '.findings[] | select(.check == $c) | "\(.severity): \(.message)"'
}
master() { git --git-dir="$TREE" rev-parse master; }
# pull_refs: the refs the gate makes for pulls, on one line
pull_refs() {
	git --git-dir="$TREE" for-each-ref --format='%(refname)' refs/heads/pullgate refs/pullgate |
		paste -sd' ' -
}
# reset_tree: master back at $BASE, no pull's ref left
reset_tree() {
	git --git-dir="$TREE" update-ref refs/heads/master "$BASE"
	for r in $(pull_refs); do git --git-dir="$TREE" update-ref -d "$r"; done
}
