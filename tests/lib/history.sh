# history.sh - small real histories for the copy and guard tests: who commits, a commit, the guard as git runs it.
#
# Sourced after tap.sh.  Each commit's message is SUBJECT, then $COMMIT_BODY
# when it is set, then the author's sign-off.

export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1

as() { # NAME EMAIL DATE: author and committer for the next commits
	export GIT_AUTHOR_NAME="$1" GIT_AUTHOR_EMAIL="$2" GIT_COMMITTER_NAME="$1" \
		GIT_COMMITTER_EMAIL="$2" GIT_AUTHOR_DATE="$3" GIT_COMMITTER_DATE="$3"
}

commit() { # REPO FILE SUBJECT
	echo "$3" >>"$1/$2"
	git -C "$1" add "$2"
	if [ -n "${COMMIT_BODY:-}" ]; then
		git -C "$1" commit -q -m "$3" -m "$COMMIT_BODY" \
			-m "Signed-off-by: $GIT_AUTHOR_NAME <$GIT_AUTHOR_EMAIL>"
	else
		git -C "$1" commit -q -m "$3" -m "Signed-off-by: $GIT_AUTHOR_NAME <$GIT_AUTHOR_EMAIL>"
	fi
}

# guard_push WORK REMOTE URL REF: pullgate guard run in WORK as git runs the
# pre-push hook for pushing REF as a new ref; sets rc, guard_out and err.
guard_push() {
	set +e
	printf '%s %s %s %s\n' "$4" "$(git -C "$1" rev-parse "$4")" "$4" \
		0000000000000000000000000000000000000000 |
		(cd "$1" && "$PULLGATE" guard "$2" "$3") >"$SCRATCH/.guard-out" 2>"$SCRATCH/.err"
	rc=$?
	set -e
	guard_out=$(cat "$SCRATCH/.guard-out")
	err=$(cat "$SCRATCH/.err")
}
