# fixtures.sh - build the incident fixtures once per test run (sourced after tap.sh).
#
# The fixtures are built into $PULLGATE_FIXTURES when that is set (make
# check builds them once and shares them), else into the test's scratch dir.

fixture_incident() {
	if [ -n "${PULLGATE_FIXTURES:-}" ] && [ -f "$PULLGATE_FIXTURES/incident/expect/base" ]; then
		FX="$PULLGATE_FIXTURES/incident"
	else
		FX="$SCRATCH/incident"
		"$TOP/fixtures/incident.sh" "$FX" >/dev/null
	fi
	UP="$FX/upstream.git:master"
	KEES="$FX/kees.git"
	export GNUPGHOME="$FX/gnupg"
	# FPR_KEES...; verify --keyring "$KEYRING" --trust "$FPR_KEES" checks signatures
	. "$FX/keys.env"
	KEYRING="$FX/keyring.asc"
}

# finding_pairs JSON CHECK: "commit upstream" lines for each finding of CHECK, sorted
finding_pairs() {
	printf '%s' "$1" | jq -r --arg c "$2" \
		'.findings[] | select(.check == $c) | "\(.commit) \(.upstream)"' | sort
}

# fixture_keys: tags signed well, badly and not at all (fixtures/keys.sh);
# sets SFX, SENDER, SUP and KEYRING, and the FPR_<NAME> variables.
fixture_keys() {
	if [ -n "${PULLGATE_FIXTURES:-}" ] && [ -f "$PULLGATE_FIXTURES/keys/keyring.asc" ]; then
		SFX="$PULLGATE_FIXTURES/keys"
	else
		SFX="$SCRATCH/keys"
		"$TOP/fixtures/keys.sh" "$SFX" >/dev/null
	fi
	SENDER="$SFX/sender.git"
	SUP="$SFX/upstream.git:master"
	KEYRING="$SFX/keyring.asc"
	. "$SFX/keys.env"
}
