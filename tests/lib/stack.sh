# stack.sh - an upstream with the stand-in sources (FAKE_BUILD=tree) and pulls on it signed by Kees, for the queue's tests (sourced after fixtures.sh).
#
# The stand-in build judges the tree's fake/ files: a "call NAME" without a
# "def NAME" breaks the build, an "assert NAME == V" against a "set NAME =
# V2" fails a KUnit case at boot.  stack_upstream makes $UPQ, the fixture's
# upstream plus one commit ($BASE) with fake/core.c ('def beta'),
# fake/limits.c ('set LIMIT = 1') and fake/shared.c ('value = 1'), puts
# $TREE's master on it, and gives $KREPO (the sender's mirror) the base as
# refs/heads/upstream-base.  stack_pull makes each pull a branch on it.

# stack_upstream: needs $SCRATCH, $FX, $TREE and $KREPO; sets $UPQ and $BASE
stack_upstream() {
	UPQ="$SCRATCH/upstream.git"
	git clone -q --bare "$FX/upstream.git" "$UPQ"
	export GIT_INDEX_FILE="$SCRATCH/base.index"
	git --git-dir="$UPQ" read-tree master
	for f in core:'def beta' limits:'set LIMIT = 1' shared:'value = 1'; do
		blob=$(printf '%s\n' "${f#*:}" | git --git-dir="$UPQ" hash-object -w --stdin)
		git --git-dir="$UPQ" update-index --add --cacheinfo "100644,$blob,fake/${f%%:*}.c"
	done
	BASE=$(GIT_AUTHOR_NAME="Linus Torvalds" GIT_AUTHOR_EMAIL=torvalds@linux-foundation.org \
		GIT_COMMITTER_NAME="Linus Torvalds" GIT_COMMITTER_EMAIL=torvalds@linux-foundation.org \
		git --git-dir="$UPQ" commit-tree -p master -m "fake: the stand-in sources" \
		"$(git --git-dir="$UPQ" write-tree)")
	unset GIT_INDEX_FILE
	git --git-dir="$UPQ" update-ref refs/heads/master "$BASE"
	git --git-dir="$TREE" fetch -q "$UPQ" "+master:refs/heads/master"
	git --git-dir="$KREPO" fetch -q "$UPQ" "master:refs/heads/upstream-base"
}

# stack_serve WORKTREES: serve_setup for the queue's tests: one verify worker (the pulls enter
# the queue in the order they came), WORKTREES build worktrees (as many kernel threads), the
# upstream of stack_upstream, and the policy's upstream url on it
stack_serve() {
	serve_setup
	sed -i "s/^  verify-workers: 2\$/  verify-workers: 1\n  build-worktrees: $1/" "$CONFIG"
	stack_upstream
	sed -i "s|^  url: .*|  url: '$UPQ'|" "$SCRATCH/policy.yaml"
}

# stack_keys DIR: a private copy of the fixture's keys in DIR, without the agent sockets
# another test may have made
stack_keys() {
	rm -rf "$1"
	mkdir -m 700 "$1"
	for f in "$FX/gnupg"/*; do
		case ${f##*/} in S.*) ;; *) cp -r "$f" "$1/" ;; esac
	done
}

# stack_other_push: another hand pushes a commit onto $TREE's master; $TIP is the new tip
stack_other_push() {
	rm -rf "$SCRATCH/other"
	git clone -q "$TREE" "$SCRATCH/other"
	(cd "$SCRATCH/other" && echo 'def other' >fake/other.c && git add fake/other.c &&
		GIT_AUTHOR_NAME="Linus Torvalds" GIT_AUTHOR_EMAIL=torvalds@linux-foundation.org \
		GIT_COMMITTER_NAME="Linus Torvalds" GIT_COMMITTER_EMAIL=torvalds@linux-foundation.org \
		git commit -q -m "fake: another push" && git push -q origin HEAD:master)
	TIP=$(git --git-dir="$TREE" rev-parse master)
}

# stack_pull NAME FILE=CONTENT...: a branch on $BASE with one commit writing each FILE,
# its tag NAME signed by Kees (a private copy of the keys, no agent left);
# with NOSOB=1 the commit has no Signed-off-by (verify rejects it)
stack_pull() {
	name=$1
	shift
	w="$SCRATCH/work-$name" g="$SCRATCH/gnupg-sign"
	rm -rf "$w"
	stack_keys "$g"
	git clone -q --no-checkout "$KREPO" "$w"
	(
		cd "$w"
		export GNUPGHOME="$g" GIT_AUTHOR_NAME="Kees Cook" GIT_AUTHOR_EMAIL=kees@kernel.org \
			GIT_COMMITTER_NAME="Kees Cook" GIT_COMMITTER_EMAIL=kees@kernel.org
		git checkout -q -b "$name" "$BASE"
		for fc in "$@"; do
			mkdir -p "$(dirname "${fc%%=*}")"
			printf '%s\n' "${fc#*=}" >"${fc%%=*}"
			git add "${fc%%=*}"
		done
		sob="Signed-off-by: Kees Cook <kees@kernel.org>"
		[ -z "${NOSOB:-}" ] || sob="(no sign-off)"
		git commit -q -m "fake: $name

$sob"
		git -c tag.gpgSign=true tag -s -u "$FPR_KEES" -m "Pull $name" "$name"
		git push -q origin "refs/tags/$name"
		gpgconf --kill gpg-agent 2>/dev/null || true
	)
	rm -rf "$w" "$g"
}

# stack_retag NAME PULL: a tag NAME signed by Kees on the commit of the pull PULL's tag
stack_retag() {
	g="$SCRATCH/gnupg-retag"
	stack_keys "$g"
	GNUPGHOME="$g" GIT_COMMITTER_NAME="Kees Cook" GIT_COMMITTER_EMAIL=kees@kernel.org \
		git --git-dir="$KREPO" -c tag.gpgSign=true tag -s -u "$FPR_KEES" -m "Pull $1" "$1" \
		"refs/tags/$2^{commit}"
	GNUPGHOME="$g" gpgconf --kill gpg-agent 2>/dev/null || true
	rm -rf "$g"
}

# stack_resolve NAME OURS THEIRS FILE=CONTENT...: a merge made by hand in $TREE, of commit THEIRS
# (a pull's) onto commit OURS, both in $TREE: OURS's tree with each FILE written, as
# refs/pullgate/resolutions/NAME; its id in $RES
stack_resolve() {
	_name=$1 _ours=$2 _theirs=$3
	shift 3
	export GIT_INDEX_FILE="$SCRATCH/resolve.index"
	git --git-dir="$TREE" read-tree "$_ours"
	for _f in "$@"; do
		_blob=$(printf '%s\n' "${_f#*=}" | git --git-dir="$TREE" hash-object -w --stdin)
		git --git-dir="$TREE" update-index --add --cacheinfo "100644,$_blob,${_f%%=*}"
	done
	RES=$(git --git-dir="$TREE" commit-tree -p "$_ours" -p "$_theirs" -m "resolved by hand" \
		"$(git --git-dir="$TREE" write-tree)")
	unset GIT_INDEX_FILE
	git --git-dir="$TREE" update-ref "refs/pullgate/resolutions/$_name" "$RES"
}

# stack_resolve_pull NAME OURS FILE=CONTENT...: stack_resolve NAME of the commit of $KREPO's tag
# NAME (a pull's, fetched into $TREE for it) onto commit OURS; its id in $RES
stack_resolve_pull() {
	_pull=$1 _on=$2
	shift 2
	git --git-dir="$TREE" fetch -q "$KREPO" "refs/tags/$_pull:refs/test/$_pull"
	stack_resolve "$_pull" "$_on" "$(git --git-dir="$KREPO" rev-parse "$_pull^{commit}")" "$@"
	git --git-dir="$TREE" update-ref -d "refs/test/$_pull"
}
