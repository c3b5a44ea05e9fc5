#!/bin/sh
# 31-mail-b4.t - verify --pull-request takes what Debian's real b4 writes: b4 mbox's thread, b4 am's cover letter.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
plan 14
fixture_incident
M="$SCRATCH/mail"
"$TOP/fixtures/mail.sh" "$FX" "$M" >/dev/null
T1=hardening-v6.16-rc1-fix1
T2=hardening-v6.16-rc1-fix1-take2
export XDG_CACHE_HOME="$SCRATCH/cache" XDG_CONFIG_HOME="$SCRATCH/config" XDG_DATA_HOME="$SCRATCH/data"
b4() { command b4 --offline-mode "$@" 2>"$SCRATCH/b4.err"; }

verify() { # MAIL TAG
	run "$PULLGATE" verify --keyring "$KEYRING" --trust "$FPR_KEES" --pull-request "$1" \
		--upstream "$UP" "$KEES" "$2"
}
body() { sed '1,/^$/d' "$1"; }
# msg FROM DATE SUBJECT ID [IN-REPLY-TO]: an mbox message's "From " line and headers
msg() {
	printf 'From %s %s\nFrom: %s\nTo: Linus Torvalds <torvalds@linux-foundation.org>\n' "$1" \
		"Mon Jun  2 10:00:00 2025" "$1"
	printf 'Subject: %s\nDate: %s\nMessage-ID: <%s>\n' "$3" "$2" "$4"
	[ -z "${5:-}" ] || printf 'In-Reply-To: <%s>\nReferences: <%s>\n' "$5" "$5"
	printf '\n'
}
V1=v1.hardening@keescook V2=v2.hardening@keescook

# --- a thread as lore serves it: v1, replies quoting it, a forward, then v2 ----------
# v1 announces take one; v2, sent in reply to it, take two.  The replies and the
# forward carry the request's text (quoted, or inline) under a Re:/Fwd: subject.
{
	msg "Kees Cook <kees@kernel.org>" "Sat, 31 May 2025 10:30:00 -0700" \
		"[GIT PULL] hardening fixes for v6.16-rc1" "$V1"
	body "$M/take1-real.mail"
	echo
	msg "Linus Torvalds <torvalds@linux-foundation.org>" "Sat, 31 May 2025 12:00:00 -0700" \
		"Re: [GIT PULL] hardening fixes for v6.16-rc1" "reply1.$V1" "$V1"
	echo "On Sat, 31 May 2025 at 10:30, Kees Cook <kees@kernel.org> wrote:"
	body "$M/take1-real.mail" | sed 's/^/> /'
	printf '\nThis re-creates my merges. No.\n\n'
	msg "Kees Cook <kees@kernel.org>" "Sun, 1 Jun 2025 09:00:00 -0700" \
		"Fwd: [GIT PULL] hardening fixes for v6.16-rc1" "fwd.$V1" "$V1"
	printf -- '---------- Forwarded message ---------\n\n'
	body "$M/take1-real.mail"
	echo
	msg "Kees Cook <kees@kernel.org>" "Sun, 1 Jun 2025 09:30:00 -0700" \
		"[GIT PULL v2] hardening fixes for v6.16-rc1" "$V2" "$V1"
	body "$M/take2.mail"
	echo
	msg "pr-tracker-bot@kernel.org" "Mon, 2 Jun 2025 10:05:00 -0700" \
		"Re: [GIT PULL v2] hardening fixes for v6.16-rc1" "bot.$V2" "$V2"
	printf 'The pull request you sent on Sun, 1 Jun 2025:\n\n> %s tags/%s\n\n' "$KEES" "$T2"
	printf 'has been merged into torvalds/linux.git\n\n'
} >"$SCRATCH/lore.mbox"

mkdir -p "$SCRATCH/b4mbox"
b4 mbox -m "$SCRATCH/lore.mbox" -o "$SCRATCH/b4mbox" "$V2" >/dev/null
mbx="$SCRATCH/b4mbox/$V2.mbx"
ok "$([ -s "$mbx" ]; echo $?)" "b4 mbox -m writes the thread's mbox"
is "$(grep -c '^From ' "$mbx")" 5 "with every message of the thread"
verify "$mbx" "$T2"
is "$rc" 0 "verify --pull-request on b4 mbox's output accepts take two"
unlike "$out" 'pull-request-' "the v2 request is the one compared, not v1, a reply or the forward"

# the same thread without v2: v1 is picked over the reply quoting it and the forward
head -n "$(grep -n "^From .*" "$SCRATCH/lore.mbox" | sed -n 4p | cut -d: -f1)" "$SCRATCH/lore.mbox" |
	sed '$d' >"$SCRATCH/v1.mbox"
mkdir -p "$SCRATCH/b4v1"
b4 mbox -m "$SCRATCH/v1.mbox" -o "$SCRATCH/b4v1" "$V1" >/dev/null
verify "$SCRATCH/b4v1/$V1.mbx" "$T1"
is "$rc" 1 "take one's thread: the pull is rejected for its rewrites"
unlike "$out" 'pull-request-' "but its request, not the reply quoting it, is the mail compared"
verify "$SCRATCH/b4v1/$V1.mbx" "$T2"
like "$out" '^error +pull-request-head' "v1's request names take one's head: verifying take two against it says so"

# b4 mbox -o - writes the thread to standard output
b4 mbox -m "$SCRATCH/lore.mbox" -o - "$V2" >"$SCRATCH/stdout.mbox"
verify "$SCRATCH/stdout.mbox" "$T2"
ok "$([ "$rc" = 0 ] && ! printf '%s' "$out" | grep -q 'pull-request-'; echo $?)" \
	"b4 mbox -o - output is taken too"

# --- a pull request sent as a series: b4 am splits the cover letter out ------------
C=cover.hardening@keescook
{
	msg "Kees Cook <kees@kernel.org>" "Sun, 1 Jun 2025 09:30:00 -0700" \
		"[GIT PULL 0/2] hardening fixes for v6.16-rc1" "$C"
	body "$M/take2.mail"
	echo
	i=0
	for c in $(git --git-dir="$KEES" rev-list --reverse -2 "$T2"); do
		i=$((i + 1))
		msg "Kees Cook <kees@kernel.org>" "Sun, 1 Jun 2025 09:3$i:00 -0700" \
			"[GIT PULL $i/2] $(git --git-dir="$KEES" log -1 --format=%s "$c")" "p$i.$C" "$C"
		git --git-dir="$KEES" format-patch --stdout -1 "$c" | sed '1,/^$/d'
		echo
	done
} >"$SCRATCH/series.mbox"
mkdir -p "$SCRATCH/am"
b4 am -m "$SCRATCH/series.mbox" -o "$SCRATCH/am" "$C" >/dev/null
cover=$(ls "$SCRATCH"/am/*.cover 2>/dev/null | head -n1)
ok "$([ -n "$cover" ] && [ -s "$cover" ]; echo $?)" "b4 am -o writes the cover letter to a .cover file"
verify "$cover" "$T2"
ok "$([ "$rc" = 0 ] && ! printf '%s' "$out" | grep -q 'pull-request-'; echo $?)" \
	"verify --pull-request on b4 am's .cover accepts take two, the mail agreeing"
verify "$(ls "$SCRATCH"/am/*.mbx | head -n1)" "$T2"
is "$rc" 3 "b4 am's .mbx (the patches) holds no request: exit 3"
like "$err" "no message of the mbox is a git request-pull mail \(b4 am writes a pull request's cover letter to the .cover file" \
	"in one line that says where the request is"
is "$(printf '%s\n' "$err" | wc -l)" 1 "one line"
# the raw series itself: its cover letter is the request
verify "$SCRATCH/series.mbox" "$T2"
ok "$([ "$rc" = 0 ] && ! printf '%s' "$out" | grep -q 'pull-request-'; echo $?)" \
	"the raw series mbox: its cover letter is the request, not a patch"
