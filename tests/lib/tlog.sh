# tlog.sh - a test's transparency log: fixtures/tlog.sh's log of the incident's pushes, and records added to it (sourced after fixtures.sh).

# the log's records as fixtures/tlog.sh writes them: message_id, headers, change, body, append...
. "$TOP/fixtures/tlog-lib.sh"

# tlog_build DIR: the log in DIR/tlog (fixtures/tlog.sh, from $FX), its ids (TAG_<NAME>, BASE,
# MASTER) set from DIR/tlog.env
tlog_build() {
	"$TOP/fixtures/tlog.sh" "$FX" "$1" >/dev/null
	. "$1/tlog.env"
}

# tlog_append EPOCH FILE: the message in FILE becomes the next commit of the epoch's master,
# EPOCH a log's LOG/git/E.git (fixtures/tlog-lib.sh's append, in a subshell: what it sets and
# exports, the commit's author among them, stays there)
tlog_append() {
	(
		TLOG=${1%/git/*} EPOCH=${1##*/git/}
		EPOCH=${EPOCH%.git} TLOG_TMP="$SCRATCH/.tlog"
		N=$(git -C "$1" rev-list --count master)
		mkdir -p "$TLOG_TMP"
		cp "$2" "$TLOG_TMP/msg"
		append
	)
}

# tlog_push EPOCH MESSAGE-ID USER REF OLD NEW: a plain push record of Kees's repository appended
tlog_push() {
	{
		printf 'Message-Id: %s\nDate: Mon, 02 Jun 2025 09:00:00 -0000\n\n' "$2"
		change "$4" "$5" "$6" | body pub/scm/linux/kernel/git/kees/linux "$3"
	} >"$SCRATCH/.tlog.msg"
	tlog_append "$1" "$SCRATCH/.tlog.msg"
}
