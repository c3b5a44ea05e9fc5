#!/bin/sh
# 66-demo-simulated.t - the demo on the stand-in scripts says so: in its verdict lines and in its last line; take two's push record and its notice in the SMTP sink's mailbox.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 16

# the fallback make demo takes when the kernel tree cannot be prepared, forced;
# an ephemeral port, and the server stopped after the verdicts (stdin is no terminal)
run env PULLGATE_DEMO_KERNEL=fake PULLGATE_DEMO_PORT=0 PULLGATE_DEMO_STAY=no \
	"$TOP/scripts/demo.sh" "$PULLGATE" </dev/null
is "$rc" 0 "the demo on the fixture trees runs to its end"
like "$out" "^== NOTE: the kernel tree is not ready" "it says at the start that it will not use the kernel tree"
like "$out" '^take two \(pull [0-9]+\): (approved|waiting) \(SIMULATED: stand-in build and boot scripts\): ' \
	"take two's verdict line says it was simulated"
like "$out" '^take one \(pull [0-9]+\): rejected: ' "take one's, rejected at verify before any script ran, does not"
is "$(printf '%s\n' "$out" | tail -n 1 | cut -c1-16)" "demo: SIMULATED:" \
	"the demo's last line says the build and boot were simulated"
unlike "$(printf '%s\n' "$out" | tail -n 1)" '^demo: real' "and does not claim a real run"

# the transparency log of the demo's own pushes: take two's page shows its record
# (pushed a minute after Kees tagged it, on 1 June at 09:00 -0700; so says its certificate)
like "$out" "^take two's push record \\(on its page\\): <[0-9]+\\.1\\.1@gitolite\\.kernel\\.org> of Sun, 01 Jun 2025 16:01:00 -0000, pushed by kees, certified by a signed push\$" \
	"take two's push record is shown: Kees's signed push, from the log the demo wrote, after the tag"
like "$(git --git-dir="$PULLGATE_HOME/demo-run/tlog/git/0.git" show master:m)" \
	'^pusher Kees Cook <kees@kernel\.org> 1748793660 -0700$' "its certificate's time is the push's"
# the approval notice, mailed to the demo's SMTP sink, printed from its mailbox
like "$out" '^   pullgate: notice mailed to kees@kernel\.org via 127\.0\.0\.1 \(1 attempt\)' \
	"the service records the notice as mailed to the sink"
like "$out" '^-- msg1\.eml: from torvalds@linux-foundation\.org, to kees@kernel\.org linux-kernel@vger\.kernel\.org linux-hardening@vger\.kernel\.org$' \
	"the demo prints the mailbox: one message, its envelope from the maintainer to Kees and the lists"
mail=$(printf '%s\n' "$out" | sed -n '/^-- msg1\.eml: /,/^demo: /p')
like "$mail" '^Subject: Re: \[SIMULATED\] \[GIT PULL\] hardening fixes for v6\.16-rc1$' \
	"its headers: a reply to Kees's pull mail, marked SIMULATED"
like "$mail" '^In-Reply-To: <202506010930\.fix1@keescook>$' "in the pull mail's thread"
like "$mail" '^X-PR-Merge-Commit-Id: [0-9a-f]{40}$' "with pr-tracker-bot's headers"
like "$mail" '^The pull request you sent on Sun, 1 Jun 2025 09:30:00 -0700:$' \
	"and pr-tracker-bot's body, dated by Kees's mail"
like "$mail" '^has been merged into torvalds/linux\.git:$' "naming the tree by notice.tree-name"
is "$(ps -eo args= | grep -F "smtp_relay.py accept $PULLGATE_HOME/demo-run/mailbox" | grep -vc grep)" 0 \
	"the sink is stopped with the demo"
