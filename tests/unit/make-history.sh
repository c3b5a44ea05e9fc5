#!/bin/sh
# make-history.sh - a small merge-heavy history with clock skew, for the walk and graph tests.
#
#   tests/unit/make-history.sh DIR COMMITS SEED SKEW
#
# Makes the bare repository DIR with COMMITS commits: a main line, topic
# branches forked from it and merged back (now and then two at once, an
# octopus), a second root merged in, and committer dates 600 s apart of
# which one in five goes back by up to SKEW seconds.  Branches main and
# t0..t5 are left as they are.  Deterministic for a given SEED, whichever
# awk runs it: the random numbers are our own (Park and Miller's minimal
# generator, exact in a double), since mawk's rand() and gawk's differ.
set -eu
[ $# -eq 4 ] || { echo "usage: $0 DIR COMMITS SEED SKEW" >&2; exit 2; }
dir=$1 n=$2 seed=$3 skew=$4
rm -rf "$dir"
git init -q --bare "$dir"
awk -v n="$n" -v seed="$seed" -v skew="$skew" '
function rnd() {
	state = (state * 16807) % 2147483647
	return state / 2147483647
}
function commit(ref, from, nmerge, m1, m2,    msg, t) {
	mark++
	t = 1700000000 + 600 * mark
	if (rnd() < 0.2)
		t -= int(rnd() * skew)
	printf "commit %s\nmark :%d\n", ref, mark
	printf "author A%d <a%d@example.org> %d +0000\n", mark % 7, mark % 7, t
	printf "committer C%d <c%d@example.org> %d +0000\n", mark % 3, mark % 3, t
	msg = "change " mark "\n"
	printf "data %d\n%s", length(msg), msg
	if (from)
		printf "from :%d\n", from
	if (nmerge >= 1)
		printf "merge :%d\n", m1
	if (nmerge >= 2)
		printf "merge :%d\n", m2
	printf "M 644 inline f%d\ndata %d\n%d\n\n", mark % 13, length(mark "") + 1, mark
	return mark
}
BEGIN {
	state = seed % 2147483646 + 1
	main = commit("refs/heads/main", 0, 0)
	other = commit("refs/heads/other", 0, 0)  # a second root
	for (k = 0; k < 6; k++)
		topic[k] = 0
	while (mark < n) {
		r = rnd()
		k = int(rnd() * 6)
		if (mark == int(n / 2)) {
			main = commit("refs/heads/main", main, 1, other)
		} else if (r < 0.12 && topic[k]) {
			k2 = (k + 1) % 6
			if (rnd() < 0.2 && topic[k2] && topic[k2] != topic[k]) {
				main = commit("refs/heads/main", main, 2, topic[k], topic[k2])
				printf "reset refs/heads/t%d\nfrom :%d\n\n", k2, topic[k2]
			} else {
				main = commit("refs/heads/main", main, 1, topic[k])
			}
			printf "reset refs/heads/t%d\nfrom :%d\n\n", k, topic[k]
			if (rnd() < 0.5)
				topic[k] = 0
		} else if (r < 0.55) {
			ref = "refs/heads/t" k
			topic[k] = commit(ref, topic[k] ? topic[k] : main, 0)
		} else {
			main = commit("refs/heads/main", main, 0)
		}
	}
	for (k = 0; k < 6; k++)
		if (topic[k])
			printf "reset refs/heads/t%d\nfrom :%d\n\n", k, topic[k]
}' | git --git-dir="$dir" fast-import --quiet
