#!/bin/sh
# window.sh - a merge window of 12 pulls through `pullgate serve`: the queue (1 and 2 build worktrees) against each pull on the head, same run.
#
# usage: bench/window.sh -f|-r PULLGATE_BINARY
#
# Twelve pulls, delivered at once by signed push records, each a signed tag
# of one commit on a common base: eight good ones; one that breaks the
# build by itself; a pair green alone that breaks the build together (a
# renamed function and a new caller); a pair green alone that fails a KUnit
# case together (a limit changed and a test of it); a pair with a textual
# conflict.  They are all tested first (they came overnight: on the
# queue, the second of the conflicting pair is found to conflict as it
# enters, and waits behind the first without a run); then the
# maintainer approves every pull that may be approved, in queue order, as
# soon as it may (a pull refused because the branch moved is approved again
# once it was tested again).  Four sides, each a fresh
# service and branch: pipeline.queue stack with 1 and 2 build worktrees;
# each (every pull on the head: a pull is tested again when its approval
# finds the branch moved, as `pipeline.queue: each` does); and each-all,
# the issue's "today's way": every waiting pull tested again whenever the
# branch moves, so that each waits on the head it would be approved onto.
# each-all is the each service driven so: after each approval the bench
# asks to approve every other waiting pull tested on an older head, which
# the service refuses (the branch moved) and tests again on the new head
# (never approved out of order: the bench asks only for pulls whose tested
# head is not the branch's tip, and stops if one is approved).
# each-rounds (run only when WINDOW_SIDES names it) is each-all with a
# maintainer who approves the next pull only once every pull still
# waiting was tested again on the new head (one who waits for a green
# board): where the issue's 1 + 2 + ... + k comes from.
# For each side it prints: kernel runs (each merge, build and boot of a
# pull, reruns to attribute a failure included), builds and boots, wall
# seconds until every pull was tested and until the last was decided, the failures named with their
# cause against what was built into them (alone, or with which pull), and
# whether every commit the branch took was built and booted.
#
# -f: the stand-ins of tests/fakes (FAKE_BUILD=tree judges the tree's
# fake/ files, tests/lib/stack.sh; every build takes FAKE_BUILD_DELAY, 1
# s): the counts are those of the queue's scheduling, the seconds those of
# the stand-ins, not a kernel's.
#
# -r: the real tree, scripts/kernel's build and boot (arm64, QEMU, KUnit).
# It runs in a home of its own, PULLGATE_WINDOW_HOME (default
# ~/.cache/pullgate-window), and writes nothing into the shared one but its ccache
# ($PULLGATE_HOME, default ~/.cache/pullgate, which make check uses):
#   linux/    a `git clone --no-hardlinks` of the shared linux/ (a copy of
#             its objects), then scripts/kernel/tree.sh and series.sh apply
#             there (Debian's linux-source-6.12 and our patches; without a
#             shared tree, tree.sh unpacks the tarball); the bench's base
#             commit on series, branch window-base (a helper of lib/bcd.c
#             declared in <linux/bcd.h>, and a booted KUnit suite
#             pullgate_window in lib/pullgate_kunit.c); the integration
#             branch is window
#   work/build, build/arm64-gcc, slots/2/...  the two build worktrees; an
#             O= dir is first a copy of the shared build/arm64-gcc (its
#             RANDSTRUCT seed, so that the shared ccache serves it)
# The compiler cache is the shared ccache/ (CCACHE_DIR: ccache is safe for
# concurrent use), for the untimed builds only.  The pulls change files
# the gate's config compiles (lib/, fs/, drivers/; the KUnit case goes to
# the pullgate_window suite, booted): a __maybe_unused helper each for the
# good ones; a call of an undeclared function (-Werror=implicit-function-
# declaration); bcd2bin_checked() renamed, and a new caller of it; the
# fallback row size of hex_dump_to_buffer() changed, and a case expecting
# the old one; one line of lib/dump_stack.c edited twice.
# Each side starts from the same state: its branch at the base, every
# build worktree it uses checked out at the base and built there (untimed,
# with ccache), the kept base boots and warning baselines of its O= dirs
# removed, a fresh service with its own store and logs.  The sides then
# run with CCACHE_DISABLE=1, so that no side reuses another's objects of
# the same pulls (bench/throughput.sh does the same).  The policy selects
# no KUnit suites for a pull (kunit-select-max: 0: no reconfiguration).
# For the stack sides it also prints the share of their build time that
# was incremental: of the builds that completed (build.sh's "built Image
# in N s", the base's build and the merge's of every run, its build.log),
# the seconds of those that kept the configuration (no allnoconfig) and
# compiled fewer than half the objects of a full build (the O= dir's
# .pullgate-objects, the most any build there compiled), over the seconds
# of all; a build that failed prints no time and is not counted.
# On 2 cores a build worktree's first warm-up, every object compiled again
# through the shared ccache, took 5 to 7 minutes; then a side takes minutes.
#
# WINDOW_PULLS="w-a w-caller w-rename" runs only those of the twelve (in
# queue order: w-a w-broken w-b w-caller w-c w-rename w-assert w-limit
# w-edit-a w-edit-b w-d w-e), a failure counted only with its partner;
# WINDOW_SIDES="stack-1" only those sides (each each-all each-rounds stack-1 stack-2): to try
# the bench on a short path.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "usage: bench/window.sh -f|-r PULLGATE_BINARY" >&2; exit 2; }
case ${1:-} in
-f) mode=fake ;;
-r) mode=real ;;
*) usage ;;
esac
[ $# -eq 2 ] || usage
PULLGATE=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-bench-window.XXXXXX")
if [ "$mode" = fake ]; then
	export PULLGATE_HOME="$SCRATCH/home" FAKE_BUILD=tree FAKE_BUILD_DELAY="${FAKE_BUILD_DELAY:-1}"
	PATIENCE=${PATIENCE:-1800}
else
	SHARED=${PULLGATE_HOME:-$HOME/.cache/pullgate}
	WHOME=${PULLGATE_WINDOW_HOME:-$HOME/.cache/pullgate-window}
	mkdir -p "$WHOME"
	WHOME=$(cd "$WHOME" && pwd)
	[ "$WHOME" != "$(cd "$SHARED" 2>/dev/null && pwd)" ] ||
		{ echo "window: PULLGATE_WINDOW_HOME is the shared home $SHARED" >&2; exit 2; }
	export PULLGATE_HOME="$WHOME"
	# the shared compiler cache (for the untimed builds), or one of this home's own
	if [ -d "$SHARED/ccache" ]; then export CCACHE_DIR="$SHARED/ccache"; else export CCACHE_DIR="$WHOME/ccache"; fi
	SERVE_DATADIR=$TOP
	PATIENCE=${PATIENCE:-3600}
fi
. "$TOP/tests/lib/fixtures.sh"
. "$TOP/tests/lib/serve.sh"
. "$TOP/tests/lib/stack.sh"
cleanup() {
	serve_kill
	rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
die() { echo "window: $*" >&2; exit 1; }

ALL="w-a w-broken w-b w-caller w-c w-rename w-assert w-limit w-edit-a w-edit-b w-d w-e"
PULLS=""
for t in $ALL; do
	case " ${WINDOW_PULLS:-$ALL} " in *" $t "*) PULLS="$PULLS $t" ;; esac
done
for t in ${WINDOW_PULLS:-}; do
	case " $ALL " in *" $t "*) ;; *) die "WINDOW_PULLS: no pull '$t' (of: $ALL)" ;; esac
done
SIDES=${WINDOW_SIDES:-each each-all stack-1 stack-2}
for s in $SIDES; do
	case $s in each | each-all | each-rounds | stack-1 | stack-2) ;;
	*) die "WINDOW_SIDES: no side '$s' (each each-all each-rounds stack-1 stack-2)" ;;
	esac
done
in_pulls() { case " $PULLS " in *" $1 "*) return 0 ;; esac; return 1; }
# what a failure is due to: "alone", "with NAME", or "" (good; or its partner is not delivered)
cause() {
	case $1 in
	w-broken) echo alone ;;
	w-rename) ! in_pulls w-caller || echo "with w-caller" ;;
	w-limit) ! in_pulls w-assert || echo "with w-assert" ;;
	w-edit-b) ! in_pulls w-edit-a || echo "with w-edit-a" ;;
	*) echo "" ;;
	esac
}

# --- the stand-ins -----------------------------------------------------------------

fake_setup() {
	serve_setup
	stack_upstream
	sed -i "s|^  url: .*|  url: '$UPQ'|" "$SCRATCH/policy.yaml"
	# every build of a tree, the base's too, takes FAKE_BUILD_DELAY: the stand-ins build a tree
	# whose overflow.h says fix ("merged") after its delay
	W="$SCRATCH/fix"
	git clone -q "$TREE" "$W"
	(cd "$W" && mkdir -p include/linux && echo '/* overflow helpers: fix */' >include/linux/overflow.h &&
		git add include/linux/overflow.h &&
		GIT_AUTHOR_NAME="Linus Torvalds" GIT_AUTHOR_EMAIL=torvalds@linux-foundation.org \
		GIT_COMMITTER_NAME="Linus Torvalds" GIT_COMMITTER_EMAIL=torvalds@linux-foundation.org \
		git commit -q -m "overflow: fix" && git push -q "$UPQ" HEAD:master)
	BASE=$(git --git-dir="$UPQ" rev-parse master)
	git --git-dir="$TREE" fetch -q "$UPQ" "+master:refs/heads/master"
	git --git-dir="$KREPO" fetch -q "$UPQ" "+master:refs/heads/upstream-base"
	TREE_GIT=$TREE BRANCH=master

	stack_pull w-a fake/a.c='def a_fn'
	stack_pull w-broken fake/broken.c='call nowhere'
	stack_pull w-b fake/b.c='def b_fn'
	stack_pull w-caller fake/caller.c='call beta'
	stack_pull w-c fake/c.c='def c_fn'
	stack_pull w-rename fake/core.c='def beta_renamed'
	stack_pull w-assert fake/limit_test.c='assert LIMIT == 1'
	stack_pull w-limit fake/limits.c='set LIMIT = 2'
	stack_pull w-edit-a fake/shared.c='value = 2'
	stack_pull w-edit-b fake/shared.c='value = 3'
	stack_pull w-d fake/d.c='def d_fn'
	stack_pull w-e fake/e.c='def e_fn'
}

# a side's fresh start: the branch at the base, no service state, no logs
fake_reset() {
	rm -rf "$PULLGATE_HOME" "$SCRATCH/state"
}

# --- the real tree -----------------------------------------------------------------

lgit() { git -C "$LINUX" "$@"; }

# $WHOME/linux: Debian's tree and the series, as tree.sh and series.sh apply make them
real_tree() {
	LINUX="$WHOME/linux"
	# A copy of the shared tree's objects, not a --shared clone: git and libgit2
	# touch the mtime of an alternate's object they would write again (a
	# --shared clone's series.sh and merges touched thousands in the shared
	# home).  An earlier run's --shared clone gets its own copy here.
	if [ -f "$LINUX/.git/objects/info/alternates" ] &&
		grep -qx "$SHARED/linux/.git/objects" "$LINUX/.git/objects/info/alternates"; then
		for d in "$SHARED/linux/.git/objects"/*; do
			[ "${d##*/}" = info ] || cp -Rn "$d" "$LINUX/.git/objects/"
		done
		rm "$LINUX/.git/objects/info/alternates"
	fi
	if [ ! -d "$LINUX/.git" ] &&
		git -C "$SHARED/linux" rev-parse -q --verify refs/heads/debian-6.12 >/dev/null 2>&1; then
		rm -rf "$LINUX.tmp"
		git clone -q --no-hardlinks --no-checkout "$SHARED/linux" "$LINUX.tmp"
		git -C "$LINUX.tmp" config gc.auto 0
		git -C "$LINUX.tmp" update-ref refs/heads/debian-6.12 refs/remotes/origin/debian-6.12
		git -C "$LINUX.tmp" checkout -q debian-6.12
		mv "$LINUX.tmp" "$LINUX"
	fi
	if ! "$TOP/scripts/kernel/tree.sh" >"$WHOME/tree.log" 2>&1 ||
		! "$TOP/scripts/kernel/series.sh" apply >>"$WHOME/tree.log" 2>&1; then
		tail -n 20 "$WHOME/tree.log" >&2
		die "the tree could not be prepared ($WHOME/tree.log)"
	fi
}

# edit GITDIR PARENT PATH CMD...: PATH as PARENT has it, through CMD, into $GIT_INDEX_FILE
edit() {
	_d=$1 _p=$2 _f=$3
	shift 3
	_b=$(git --git-dir="$_d" cat-file blob "$_p:$_f" | "$@" | git --git-dir="$_d" hash-object -w --stdin)
	git --git-dir="$_d" update-index --cacheinfo "100644,$_b,$_f"
}
# append TEXT: the input, a blank line and TEXT
append() { cat; printf '\n%s\n' "$1"; }
# after LINE TEXT / before LINE TEXT: TEXT put after (before) the input's line LINE
after() { A_LINE=$1 A_TEXT=$2 awk '{ print } $0 == ENVIRON["A_LINE"] { print ENVIRON["A_TEXT"] }'; }
before() { A_LINE=$1 A_TEXT=$2 awk '$0 == ENVIRON["A_LINE"] { print ENVIRON["A_TEXT"] } { print }'; }
# commit GITDIR PARENT NAME EMAIL DATE MESSAGE: $GIT_INDEX_FILE's tree as a commit; prints it
commit() {
	_t=$(git --git-dir="$1" write-tree)
	[ "$_t" != "$(git --git-dir="$1" rev-parse "$2^{tree}")" ] || die "'$6' changes nothing"
	GIT_AUTHOR_NAME=$3 GIT_AUTHOR_EMAIL=$4 GIT_COMMITTER_NAME=$3 GIT_COMMITTER_EMAIL=$4 \
		GIT_AUTHOR_DATE=$5 GIT_COMMITTER_DATE=$5 git --git-dir="$1" commit-tree -p "$2" -m "$6

Signed-off-by: $3 <$4>" "$_t"
}

# --- the base commit and the pulls: their C --------------------------------------

BCD_C=$(cat <<'EOF'
int bcd2bin_checked(unsigned char val)
{
	if (!bcd_is_valid(val))
		return -EINVAL;
	return _bcd2bin(val);
}
EXPORT_SYMBOL(bcd2bin_checked);
EOF
)
WINDOW_SUITE=$(cat <<'EOF'
static void pg_window_hex_dump_row(struct kunit *test)
{
	static const u8 bytes[16] = { 0x12, 0x34 };
	char line[64];

	/* one byte a group: 16 pairs of digits and 15 spaces */
	KUNIT_EXPECT_EQ(test, hex_dump_to_buffer(bytes, sizeof(bytes), 16, 1, line,
						 sizeof(line), false), 47);
}

static struct kunit_case pg_window_cases[] = {
	KUNIT_CASE(pg_window_hex_dump_row),
	{}
};

static struct kunit_suite pg_window_suite = {
	.name = "pullgate_window",
	.test_cases = pg_window_cases,
};
EOF
)
SUITES='kunit_test_suites(&pg_flex_suite, &pg_randstruct_suite, &pg_kconfig_suite);'
FALLBACK_CASE=$(cat <<'EOF'
static void pg_window_hex_dump_fallback_row(struct kunit *test)
{
	static const u8 bytes[32] = { 0x56, 0x78 };
	char line[128];

	/* a row size other than 16 or 32 is taken as 16 */
	KUNIT_EXPECT_EQ(test, hex_dump_to_buffer(bytes, sizeof(bytes), 20, 1, line,
						 sizeof(line), false), 47);
}
EOF
)

# the base: bcd2bin_checked() in lib/bcd.c and <linux/bcd.h>, the suite pullgate_window
base_bcd_h() { after 'unsigned char _bin2bcd(unsigned val) __attribute_const__;' 'int bcd2bin_checked(unsigned char val);'; }
base_bcd_c() { after '#include <linux/bcd.h>' '#include <linux/errno.h>' | append "$BCD_C"; }
base_kunit() {
	after '#include <linux/overflow.h>' '#include <linux/printk.h>' |
		before "$SUITES" "$WINDOW_SUITE
" | after "$SUITES" '		  &pg_window_suite);' |
		sed 's/^\(kunit_test_suites(.*&pg_kconfig_suite\));$/\1,/'
}
# the pulls' edits that are more than an append
caller_kstrtox() {
	after '#include <linux/ctype.h>' '#include <linux/bcd.h>' |
		append "$(helper 'int kstrtox_bcd_byte(unsigned char v)' 'return bcd2bin_checked(v);')"
}
rename() {
	pe include/linux/bcd.h sed 's/bcd2bin_checked/bcd2bin_strict/g'
	pe lib/bcd.c sed 's/bcd2bin_checked/bcd2bin_strict/g'
}
assert_kunit() {
	before 'static struct kunit_case pg_window_cases[] = {' "$FALLBACK_CASE
" | after '	KUNIT_CASE(pg_window_hex_dump_row),' '	KUNIT_CASE(pg_window_hex_dump_fallback_row),'
}
helper() { # SIGNATURE STATEMENT: a static __maybe_unused function
	printf 'static __maybe_unused %s\n{\n\t%s\n}\n' "$1" "$2"
}

# The bench's base commit on series, branch window-base: made the same each run (same id).
real_base() {
	export GIT_INDEX_FILE="$SCRATCH/base.index"
	g="$LINUX/.git"
	lgit read-tree series
	edit "$g" series include/linux/bcd.h base_bcd_h
	edit "$g" series lib/bcd.c base_bcd_c
	edit "$g" series lib/pullgate_kunit.c base_kunit
	BASE=$(commit "$g" series "Linus Torvalds" torvalds@linux-foundation.org \
		"2025-06-02T10:00:00Z" "lib/bcd: add bcd2bin_checked(); pullgate: a suite for the window")
	unset GIT_INDEX_FILE
	lgit update-ref refs/heads/window-base "$BASE"
}

# pe PATH CMD...: a pull's edit of PATH, as the base has it, through CMD
pe() {
	_p=$1
	shift
	edit "$KREPO" "$BASE" "$_p" "$@"
}
# real_pull NAME SUBJECT CMD...: a commit of Kees's on the base, of what CMD (pe) edits,
# at refs/bench/NAME in the sender's repository (tagged by real_sign)
real_pull() {
	_n=$1 _s=$2
	shift 2
	export GIT_INDEX_FILE="$SCRATCH/pull.index"
	git --git-dir="$KREPO" read-tree "$BASE"
	"$@"
	_c=$(commit "$KREPO" "$BASE" "Kees Cook" kees@kernel.org "2025-06-03T09:00:00Z" "$_s")
	unset GIT_INDEX_FILE
	git --git-dir="$KREPO" update-ref "refs/bench/$_n" "$_c"
}

# the tags, signed by Kees (a private copy of the keys, no agent left)
real_sign() {
	g="$SCRATCH/gnupg-sign"
	stack_keys "$g"
	for t in $ALL; do
		GNUPGHOME="$g" GIT_COMMITTER_NAME="Kees Cook" GIT_COMMITTER_EMAIL=kees@kernel.org \
			git --git-dir="$KREPO" -c tag.gpgSign=true tag -s -u "$FPR_KEES" -m "Pull $t" "$t" \
			"refs/bench/$t"
	done
	GNUPGHOME="$g" gpgconf --kill gpg-agent 2>/dev/null || true
	rm -rf "$g"
}

real_pulls() {
	real_pull w-a "lib/win_minmax: a helper for the spread of the window" \
		pe lib/win_minmax.c append "$(helper 'u32 minmax_spread(const struct minmax *m)' \
		'return m->s[0].v - m->s[2].v;')"
	real_pull w-broken "lib/glob: match without case" \
		pe lib/glob.c append "$(helper 'bool glob_match_nocase(char const *pat, char const *str)' \
		'return glob_match_icase(pat, str);')"
	real_pull w-b "lib/bsearch: a helper for a search that only asks whether" \
		pe lib/bsearch.c append "$(helper 'bool bsearch_contains(const void *key, const void *base, size_t num,
					     size_t size, cmp_func_t cmp)' \
		'return bsearch(key, base, num, size, cmp) != NULL;')"
	real_pull w-caller "lib/kstrtox: a helper for BCD bytes" pe lib/kstrtox.c caller_kstrtox
	real_pull w-c "fs/stack: a helper comparing two inodes' sizes" \
		pe fs/stack.c append "$(helper 'bool fsstack_same_size(const struct inode *a, const struct inode *b)' \
		'return i_size_read(a) == i_size_read(b);')"
	real_pull w-rename "lib/bcd: rename bcd2bin_checked() to bcd2bin_strict()" rename
	real_pull w-assert "pullgate: test hex_dump_to_buffer()'s fallback row size" \
		pe lib/pullgate_kunit.c assert_kunit
	real_pull w-limit "lib/hexdump: fall back to rows of 32 bytes" \
		pe lib/hexdump.c sed 's/^\t\trowsize = 16;$/\t\trowsize = 32;/'
	real_pull w-edit-a "dump_stack: room for an arch description of 160 bytes" \
		pe lib/dump_stack.c sed 's/^\(static char dump_stack_arch_desc_str\)\[128\];$/\1[160];/'
	real_pull w-edit-b "dump_stack: room for an arch description of 192 bytes" \
		pe lib/dump_stack.c sed 's/^\(static char dump_stack_arch_desc_str\)\[128\];$/\1[192];/'
	real_pull w-d "misc: a helper telling a dynamic minor" \
		pe drivers/char/misc.c append "$(helper 'bool misc_minor_is_dynamic(int minor)' \
		'return minor == MISC_DYNAMIC_MINOR;')"
	real_pull w-e "tty: n_null: a helper recognising its line discipline" \
		pe drivers/tty/n_null.c append "$(helper 'bool n_null_is_ldisc(const struct tty_ldisc_ops *ops)' \
		'return ops == &null_ldisc;')"
	real_sign
}

slot_root() { if [ "$1" = 1 ]; then echo "$WHOME"; else echo "$WHOME/slots/$1"; fi; }

# real_worktrees N: build worktrees 1..N checked out at the base and built there
real_worktrees() {
	k=1
	while [ "$k" -le "$1" ]; do
		r=$(slot_root "$k")
		w="$r/work/build" b="$r/build/arm64-gcc" wt=build
		[ "$k" = 1 ] || wt="build-$k"
		# named as the gate names them (pipeline/slot.c), so that it takes them as they are
		if [ ! -d "$LINUX/.git/worktrees/$wt" ] || [ ! -e "$w/.git" ]; then
			lgit worktree prune
			[ ! -d "$LINUX/.git/worktrees/$wt" ] || lgit worktree remove --force "$wt" 2>/dev/null ||
				rm -rf "$LINUX/.git/worktrees/$wt"
			rm -rf "$w" "$r/work/$wt"
			mkdir -p "$r/work"
			lgit worktree add -q --detach "$r/work/$wt" "$BASE"
			[ "$wt" = build ] || lgit worktree move "$r/work/$wt" "$w"
		fi
		git -C "$w" checkout -q --detach -f "$BASE"
		if [ ! -d "$b" ]; then
			mkdir -p "$(dirname "$b")"
			rm -rf "$b.tmp"
			# the shared build's configuration and RANDSTRUCT seed, read while no
			# kernel job of the shared home runs (or after 10 minutes, as it is):
			# every object is compiled again here (its command names this tree),
			# and the shared ccache serves them
			if [ -d "$SHARED/build/arm64-gcc" ]; then
				if [ -e "$SHARED/.kernel.lock" ]; then
					( flock -s -w 600 9 || true; cp -a "$SHARED/build/arm64-gcc" "$b.tmp" 2>/dev/null || true ) \
						9<"$SHARED/.kernel.lock"
				else
					cp -a "$SHARED/build/arm64-gcc" "$b.tmp" 2>/dev/null || true
				fi
			fi
			mkdir -p "$b.tmp"
			mv "$b.tmp" "$b"
		fi
		rm -rf "$b"/warnings-* "$b"/base-boot-* "$b/.distcc" "$b/.pullgate-building"
		t0=$(date +%s)
		"$TOP/scripts/kernel/build.sh" "$w" "$b" "$WHOME/reset-$k.log" 2>"$WHOME/reset-$k.err" ||
			{ cat "$WHOME/reset-$k.err" >&2; die "the base does not build in $w"; }
		echo "window: build worktree $k at the base, built in $(($(date +%s) - t0)) s (not timed)"
		k=$((k + 1))
	done
}

real_setup() {
	# the sender's repository: the pulls' objects, the tree's read in place
	KREPO="$SCRATCH/kees.git"
	git init -q --bare "$KREPO"
	real_tree
	echo "$LINUX/.git/objects" >"$KREPO/objects/info/alternates"
	serve_setup
	real_base
	# upstream is the base branch; no KUnit selection (no reconfiguration): fixed suites
	sed -i -e "s|^  url: .*|  url: '$LINUX'|" -e "s|^  branch: master\$|  branch: window-base|" \
		"$SCRATCH/policy.yaml"
	printf '\npipeline:\n  kunit-select-max: 0\n' >>"$SCRATCH/policy.yaml"
	sed -i "s|^  tree: .*|  tree: $LINUX\n  branch: window|" "$CONFIG"
	TREE_GIT="$LINUX/.git" BRANCH=window
	real_pulls
}

# a side's fresh start: no service state, no logs, no pull's refs; its build worktrees
# at the base, built (the worktrees it uses: $1)
real_reset() {
	rm -rf "$SCRATCH/state" "$WHOME/logs" "$WHOME/identity" "$WHOME/repos" "$WHOME/tmp" \
		"$WHOME/work/pulls"
	for r in $(lgit for-each-ref --format='%(refname)' refs/heads/pullgate/ refs/pullgate/); do
		lgit update-ref -d "$r"
	done
	real_worktrees "$1"
}

# the stack sides' builds (real tree): "S N CONFIG" for each build that completed
# (seconds, objects compiled, 1 if it configured), "failed N" for each that did not
build_lines() {
	for f in "$PULLGATE_HOME"/logs/*/run-*/build.log; do
		[ -e "$f" ] || continue
		awk '/^### allnoconfig/ { cfg = 1 }
			/^  (CC|AS) / { n++ }
			/^build\.sh: built .* in [0-9]+ s / { s = $0; sub(/.* in /, "", s); sub(/ s .*/, "", s)
				print s, n + 0, cfg + 0; n = 0; cfg = 0 }
			/^build\.sh: error: / { print "failed", n + 0; n = 0; cfg = 0 }' "$f"
	done
}

# --- both --------------------------------------------------------------------------

if [ "$mode" = fake ]; then fake_setup; else real_setup; fi
base_config=$(cat "$CONFIG")

approve() {
	curl -s -o /dev/null -w '%{http_code}' -b "$SCRATCH/jar" -X POST -H "X-CSRF-Token: $CSRF" \
		-H "Origin: $URL" "$URL/api/pulls/$1/approve"
}
moved_on() { [ "$(pull_field "$1" .state)" != waiting ]; }
# send_back ID: each-all, after an approval: every other waiting pull tested on a head that is
# not the branch's tip is tested again on it (its approval refused: the branch moved)
send_back() {
	tip=$(git --git-dir="$TREE_GIT" rev-parse "refs/heads/$BRANCH")
	for u in $ids; do
		[ "$u" != "$1" ] && [ "$(pull_field "$u" .state)" = waiting ] || continue
		m=$(pull_field "$u" .merge_commit)
		[ "$(git --git-dir="$TREE_GIT" rev-parse "$m^1")" != "$tip" ] || continue
		[ "$(approve "$u")" != 200 ] || die "each-all: pull $u was approved out of order"
		wait_for moved_on "$u" || true
	done
}
# tested_or_behind ID: tested (it waits, or was decided), or it waits behind a pull it
# conflicts with (server/stack.h): nothing runs for it until that pull is decided
tested_or_behind() {
	case $(pull_field "$1" .state) in
	waiting | rejected | error | approved | cancelled) ;;
	verified) [ "$(pull_field "$1" .conflict_with)" != null ] ;;
	*) false ;;
	esac
}

# side NAME QUEUE WORKTREES [ALL]: one window through a fresh service; a line of figures
# (ALL=1: every waiting pull tested again whenever the branch moves, send_back; ALL=2:
# and the next approval only once all of them were)
side() {
	name=$1
	git --git-dir="$TREE_GIT" update-ref "refs/heads/$BRANCH" "$BASE"
	if [ "$mode" = fake ]; then fake_reset; else real_reset "$3"; fi
	printf '%s\n' "$base_config" |
		sed "s/^  verify-workers: 2$/  verify-workers: 1\n  queue: $2\n  build-worktrees: $3/" >"$CONFIG"
	# the real tree's sides compile what they compile: no side reuses another's objects
	[ "$mode" = fake ] || export CCACHE_DISABLE=1
	serve_start
	unset CCACHE_DISABLE
	maintainer_login
	t0=$(date +%s.%N)
	ids=""
	for t in $PULLS; do
		push_record "$SCRATCH/$t.json" "$t"
		hook push "$SCRATCH/$t.json" "$name-$t"
		[ "$code" = 202 ] || { echo "window: $name: $t answered $code: $out" >&2; exit 1; }
		ids="$ids $(printf '%s' "$out" | jq -r '.jobs[0]')"
	done
	# overnight: every pull is tested before the maintainer looks
	for id in $ids; do
		wait_for tested_or_behind "$id" || true
	done
	t_tested=$(date +%s.%N)
	# the morning: in queue order (one verify worker: the order they came), each as soon as it may
	for id in $ids; do
		while :; do
			s=$(wait_state "$id" waiting rejected error approved || true)
			[ "$s" = waiting ] || break
			if [ "$(approve "$id")" = 200 ]; then
				[ "${4:-0}" = 0 ] || send_back "$id"
				if [ "${4:-0}" = 2 ]; then
					for u in $ids; do
						wait_for tested_or_behind "$u" || true
					done
				fi
				break
			fi
			# refused: the branch moved since its test (each); it is tested again
			wait_for moved_on "$id" || true
		done
	done
	t1=$(date +%s.%N)
	logs="$PULLGATE_HOME/logs"
	# each kernel run: a report with a merge stage, the pull's own runs and the reruns
	runs=$(cat "$logs"/*/run-*/report.json 2>/dev/null | jq -s '[.[] | select(any(.stages[]; .name == "merge"))]')
	nruns=$(printf '%s' "$runs" | jq length)
	nbuilds=$(printf '%s' "$runs" | jq '[.[] | select(any(.stages[]; .name == "build" and .status != "skipped"))] | length')
	nboots=$(printf '%s' "$runs" | jq '[.[] | select(any(.stages[]; .name == "boot" and .status != "skipped"))] | length')
	named=0 failed=0 approved=0
	for id in $ids; do
		t=$(pull_field "$id" .tag | sed 's|refs/tags/||')
		st=$(pull_field "$id" .state)
		[ "$st" != approved ] || approved=$((approved + 1))
		want=$(cause "$t")
		[ -n "$want" ] || continue
		failed=$((failed + 1))
		got=$(pull_field "$id" .attribution)
		with=$(pull_field "$id" .with)
		case $want in
		alone) [ "$with" = null ] && case $got in *"by itself"*) true ;; *) false ;; esac && named=$((named + 1)) || true ;;
		with\ *)
			[ "$with" != null ] && [ "$(pull_field "$with" .tag)" = "refs/tags/${want#with }" ] &&
				named=$((named + 1)) || true ;;
		esac
	done
	# every commit the branch took on its first-parent line: a merge some run built and booted
	tested=$(printf '%s' "$runs" | jq -r '.[] | select(any(.stages[]; .name == "boot" and .status == "passed")) | .merge_commit')
	untested=0
	for c in $(git --git-dir="$TREE_GIT" rev-list --first-parent "$BASE..$BRANCH"); do
		printf '%s\n' "$tested" | grep -qx "$c" || untested=$((untested + 1))
	done
	serve_stop
	awk -v n="$name" -v r="$nruns" -v b="$nbuilds" -v o="$nboots" -v s="$(echo "$t1 - $t0" | bc)" \
		-v st="$(echo "$t_tested - $t0" | bc)" -v a="$approved" -v f="$failed" -v m="$named" \
		-v u="$untested" 'BEGIN {
		printf "window: %-8s kernel runs %2d (builds %2d, boots %2d), tested in %6.1f s, all decided in %6.1f s, approved %d, failures named with their cause %d of %d, untested commits on the branch %d\n",
			n, r, b, o, st, s, a, m, f, u }'
	echo "$nruns $(echo "$t1 - $t0" | bc)" >"$SCRATCH/side-$name"
	# the real tree's stack: how much of its build time was incremental (see the header)
	if [ "$mode" = real ] && [ "$2" = stack ]; then
		full=$(cat "$WHOME/build/arm64-gcc/.pullgate-objects" 2>/dev/null || echo 0)
		build_lines | awk -v n="$name" -v full="$full" '
			$1 == "failed" { failed++; next }
			{ all += $1; builds++; objs += $2
			  if (!$3 && (full == 0 || $2 < full / 2)) { inc += $1; incb++ } }
			END { printf "window: %-8s builds completed %d (%d objects), %d s; incremental (configuration kept, fewer than %d objects) %d builds, %d s: %.0f%% of the build time; failed builds %d\n",
				n, builds, objs, all, full / 2, incb, inc, all ? 100 * inc / all : 0, failed }'
	fi
}

case $mode in
fake) echo "window: $(echo "$PULLS" | wc -w) pulls; stand-ins (tests/fakes, FAKE_BUILD=tree), FAKE_BUILD_DELAY=$FAKE_BUILD_DELAY s a build" ;;
real) echo "window: $(echo "$PULLS" | wc -w) pulls; the real tree $LINUX at $(git -C "$LINUX" rev-parse --short "$BASE") (series and the bench's base), sides with ccache off" ;;
esac
for s in $SIDES; do
	case $s in
	each) side each each 1 ;;
	each-all) side each-all each 1 1 ;;
	each-rounds) side each-rounds each 1 2 ;;
	stack-1) side stack-1 stack 1 ;;
	stack-2) side stack-2 stack 2 ;;
	esac
done
for b in each each-all each-rounds; do
	[ -e "$SCRATCH/side-$b" ] || continue
	read -r er es <"$SCRATCH/side-$b"
	for s in stack-1 stack-2; do
		[ -e "$SCRATCH/side-$s" ] || continue
		read -r r t <"$SCRATCH/side-$s"
		awk -v b="$b" -v n="$s" -v er="$er" -v es="$es" -v r="$r" -v t="$t" 'BEGIN {
			printf "window: %s / %s: kernel runs %.2fx, wall time %.2fx\n", b, n, er / r, es / t }'
	done
done
