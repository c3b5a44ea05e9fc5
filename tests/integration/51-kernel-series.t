#!/bin/sh
# 51-kernel-series.t - tree.sh and series.sh on a tiny generated "kernel" tarball and seed set.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 14

K="$TOP/scripts/kernel"
src="$SCRATCH/src/linux-source-6.12"
mkdir -p "$src"
printf 'VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 1\n' >"$src/Makefile"
printf 'int a(void)\n{\n\treturn 1;\n}\n' >"$src/a.c"
printf 'int b(void)\n{\n\treturn 20;\n}\n' >"$src/b.c"
printf 'void c(int c)\n{\n\tfor (j = 0; j < c; j++)\n\t\t;\n}\n' >"$src/c.c"
printf 'int d(void)\n{\n\treturn 4;\n}\n' >"$src/d.c"
tar -cJf "$SCRATCH/linux.tar.xz" -C "$SCRATCH/src" linux-source-6.12
export PG_TARBALL="$SCRATCH/linux.tar.xz"

P="$SCRATCH/patches"
mkdir -p "$P/upstream"
export PG_PATCHES="$P"
seed() { # sha subject file old new
	printf 'commit %s\nRepository: x\nAuthor: x\nDate: 2025-01-01\n\n%s\n\n---\n' "$1" "$2"
	printf 'diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -1,4 +1,4 @@\n' "$3" "$3" "$3" "$3"
	printf ' int %s(void)\n {\n-\t%s\n+\t%s\n }\n' "${3%.c}" "$4" "$5"
}
# already in the tarball (b.c returns 20)
seed aaaaaaaaaaaa "present one" b.c "return 10;" "return 20;" >"$P/upstream/aaaa.patch"
# applies as it is
seed bbbbbbbbbbbb "applied one" a.c "return 1;" "return 2;" >"$P/upstream/bbbb.patch"
# touches a file the tree does not have; ported to c.c
seed cccccccccccc "ported one" mld/d3.c "return 1;" "return 2;" >"$P/upstream/cccc.patch"
# context that the tree does not have
seed dddddddddddd "other one" d.c "return 40;" "return 41;" >"$P/upstream/dddd.patch"
{ echo "applied one"; echo; echo "commit bbbbbbbbbbbb upstream."; echo "---"
  sed -n '/^diff --git/,$p' "$P/upstream/bbbb.patch"; } >"$P/0001-applied.patch"
cat >"$P/0002-ported.patch" <<'EOF'
ported one

commit cccccccccccc upstream.

[ port: the loop lives in c.c here ]
---
diff --git a/c.c b/c.c
--- a/c.c
+++ b/c.c
@@ -1,5 +1,5 @@
 void c(int c)
 {
-	for (j = 0; j < c; j++)
+	for (j = 0; j < 4 && j < c; j++)
 		;
 }
EOF
printf '# series\n0001-applied.patch\n0002-ported.patch\n' >"$P/series"
printf 'aaaaaaaaaaaa\tupstream/aaaa.patch\t-\nbbbbbbbbbbbb\tupstream/bbbb.patch\t-\ncccccccccccc\tupstream/cccc.patch\t-\ndddddddddddd\tupstream/dddd.patch\tno such code in this tree\n' >"$P/seeds"

L="$PULLGATE_HOME/linux"
run "$K/tree.sh"
is "$rc" 0 "tree.sh makes the repo"
is "$(git -C "$L" log -1 --format=%s debian-6.12)" "linux-source-6.12 6.12.1 (Debian)" "the base commit names the version"

run "$K/series.sh" apply
is "$rc" 0 "series.sh apply"
is "$(git -C "$L" symbolic-ref HEAD)" refs/heads/series "series is checked out"
is "$(sed -n 3p "$L/a.c")" "	return 2;" "the applied patch is in the working tree"
is "$(git -C "$L" show pre-fixes:b.c | sed -n 3p)" "	return 10;" "pre-fixes reverts the present seed"

run "$K/series.sh" report
is "$rc" 0 "series.sh report"
is "$(printf '%s\n' "$out" | awk '/^[0-9a-f]+ / { printf "%s=%s ", substr($1, 1, 4), $2 }')" \
	"aaaa=present bbbb=applied cccc=ported dddd=not-applicable " "each seed gets its verdict"
like "$out" "no such code in this tree" "not applicable carries the reason"

ids=$(git -C "$L" rev-parse debian-6.12 pre-fixes series)
run "$K/tree.sh"
run "$K/series.sh" apply
is "$(git -C "$L" rev-parse debian-6.12 pre-fixes series)" "$ids" "a rerun gives the same commits"

printf 'local\n' >>"$L/c.c"
printf '\n' >>"$P/0002-ported.patch"
run "$K/series.sh" apply
is "$rc" 1 "apply refuses a tree with local changes"
is "$(tail -n 1 "$L/c.c")" "local" "and leaves the change alone"
git -C "$L" checkout -q -- c.c

# a seed that would apply but that no series patch carries
printf 'eeeeeeeeeeee\tupstream/eeee.patch\t-\n' >>"$P/seeds"
seed eeeeeeeeeeee "forgotten one" d.c "return 4;" "return 5;" >"$P/upstream/eeee.patch"
run "$K/series.sh" report
is "$rc" 1 "report fails on a seed that applies but is not carried"
like "$out" "^eeeeeeeeeeee  missing" "and says which"
