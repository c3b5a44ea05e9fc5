#!/bin/sh
# 19-hostile-index.t - a damaged identity index is seen, made again and said so: the verdict and the copies stay.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
plan 29
fixture_incident

take1() { # [OPTION...]
	run "$PULLGATE" verify --json "$@" --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" \
		"$KEES" hardening-v6.16-rc1-fix1
}
summary() { printf '%s' "$out" | jq -r '.summary.text'; }
remade() { printf '%s' "$out" | jq -r '[.notes[] | select(.commit == null) | .message
	| select(test("identity index .*/identity/[0-9a-f]{16}\\.(idx|subj). was damaged and was made again"))] | length'; }

# --- a clean index: what every damaged one must give again ---------------------------
take1
is "$rc" 1 "take one is rejected with a fresh index"
clean_pairs=$(finding_pairs "$out" rewritten-upstream)
clean_summary=$(summary)
like "$clean_summary" "re-creates 35 upstream commits" "its summary names the 35 copies"
is "$(remade)" 0 "a fresh index is no damaged one"
like "$err" "^\\[index\\] identity index built \\(new\\): [0-9]+ commits, in [0-9]+\\.[0-9] s\$" \
	"its progress says the identity index was built, of how many commits, in how long"
like "$err" "^\\[index\\] subject index built \\(new\\): [0-9]+ commits" "and the subject index"
take1
is "$(printf '%s' "$out" | jq -r '.upstream_index.action')" current "the next verify finds it current"
unlike "$err" "\\[index\\]" "and builds nothing: no index progress"

IDX=$(find "$PULLGATE_HOME/identity" -name '*.idx')
SUBJ=$(find "$PULLGATE_HOME/identity" -name '*.subj')
# an original whose copy the report names: its entry is the one a probe reads
orig=$(printf '%s\n' "$clean_pairs" | head -n1 | cut -d' ' -f2)

# same FILE PERL DESCRIPTION: damage FILE with the perl program (the file's bytes in $b,
# its entries from $at for $n), verify, expect the clean outcome and a note.
same() {
	perl -e '
		open(F, "+<", $ARGV[0]) or die; binmode F; local $/; $b = <F>;
		$n = unpack("Q<", substr($b, 24, 8)); $at = 104 + unpack("V", substr($b, 52, 4));
		$orig = pack("H*", $ARGV[2]);
		eval $ARGV[1]; die $@ if $@;
		seek(F, 0, 0); print F $b; truncate(F, length $b);' "$1" "$2" "$orig"
	take1
	is "$rc" 1 "$3: still rejected"
	is "$(finding_pairs "$out" rewritten-upstream)" "$clean_pairs" "$3: the same copies named"
	is "$(summary)" "$clean_summary" "$3: the summary names the same upstream commits"
	is "$(remade)" 1 "$3: the report says the index was made again"
}

# one bit of the original's key: a probe of its segment sees it (the open does not)
same "$IDX" '$p = index($b, $orig, $at); die "no entry" if $p < 0;
	$k = $p - 16; substr($b, $k, 1) = chr(ord(substr($b, $k, 1)) ^ 1);' "a flipped key bit"
# every entry in reverse order: the sampled order check on open sees it
same "$IDX" 'substr($b, $at, 36 * $n) = join("", reverse unpack("(a36)*", substr($b, $at, 36 * $n)));' \
	"entries in reverse order"
# the header's count: its checksum no longer holds
same "$IDX" 'substr($b, 24, 1) = chr(ord(substr($b, 24, 1)) ^ 4);' "a tampered header"
# a region of entries overwritten, where the original lies
same "$IDX" '$p = index($b, $orig, $at); die "no entry" if $p < 0;
	substr($b, $p - 400, 800) = "\0" x 800;' "a zeroed region"
# the date fallback's index too
same "$SUBJ" 'substr($b, $at, 36 * $n) = join("", reverse unpack("(a36)*", substr($b, $at, 36 * $n)));' \
	"the subject index in reverse order"

# --- --verify-index checks every entry before any is used ------------------------------
perl -e 'open(F, "+<", $ARGV[0]) or die; binmode F; local $/; $b = <F>;
	$at = 104 + unpack("V", substr($b, 52, 4)) + 36 * 7;
	substr($b, $at + 20, 1) = chr(ord(substr($b, $at + 20, 1)) ^ 1);
	seek(F, 0, 0); print F $b;' "$IDX"
take1 --verify-index
is "$(printf '%s' "$out" | jq -r '.upstream_index.action')" "built (damaged)" \
	"--verify-index: an author date changed in an entry no probe reads is seen when opened"
is "$(remade)" 1 "and the report says the index was made again"
