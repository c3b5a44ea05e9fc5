# pullgate(1) completion for bash: commands, each command's options, files where they take one.
# Installed as $(PREFIX)/share/bash-completion/completions/pullgate.
_pullgate()
{
	local cur prev words cword opts
	_init_completion || return

	if [[ $cword -eq 1 ]]; then
		COMPREPLY=($(compgen -W 'verify gate conflicts serve ktap policy guard version help' -- "$cur"))
		return
	fi
	local pull='--policy --upstream --protect --allow-committer --max-commits --keyring
		--trust --allow-repository --pull-request --json --report-file --policy-sha256
		--index-cache-size --index-memory --progress-json --color --help'
	case ${words[1]} in
	verify) opts="$pull --verify-index" ;;
	gate) opts="$pull --tree --branch --stages --approve --no-approve --boot-timeout --boot-on --url --explain-tests
		--build-worktrees --queue --run-name --merge-name --merge-email --expect-tag --onto
		--kcidb --kcidb-origin --icecc" ;;
	conflicts) opts='--tree --branch --onto --policy --policy-sha256 --ahead --expect-tag --json --help' ;;
	serve) opts='--config --port --hash-password --help' ;;
	ktap) opts='--json --nonce --lava --help' ;;
	policy) opts='--help' ;;
	guard) opts='--install --force --upstream --policy --help' ;;
	version) opts='--verbose' ;;
	help)
		[[ $cword -eq 2 ]] &&
			COMPREPLY=($(compgen -W 'verify gate conflicts serve ktap policy guard version serve.yaml' -- "$cur"))
		return
		;;
	esac
	case $prev in
	--policy | --keyring | --pull-request | --config | --queue | --report-file | --ahead | --kcidb)
		_filedir
		return
		;;
	--tree)
		_filedir -d
		return
		;;
	--color)
		COMPREPLY=($(compgen -W 'auto always never' -- "$cur"))
		return
		;;
	--boot-on)
		COMPREPLY=($(compgen -W 'qemu lava' -- "$cur"))
		return
		;;
	--icecc)
		COMPREPLY=($(compgen -W 'local' -- "$cur"))
		_filedir # an iceccd's socket
		return
		;;
	--build-worktrees)
		COMPREPLY=($(compgen -W '1 2 3 4' -- "$cur"))
		return
		;;
	--stages)
		COMPREPLY=($(compgen -W 'verify merge merge,build merge,build,boot merge,build,boot,approve' -- "$cur"))
		return
		;;
	--upstream)
		[[ ${words[1]} == guard ]] &&
			COMPREPLY=($(compgen -W "$(git for-each-ref --format='%(refname:short)' refs/remotes 2>/dev/null)" -- "$cur"))
		return
		;;
	--protect | --allow-committer | --max-commits | --trust | \
		--allow-repository | --branch | --boot-timeout | --port | --url | --nonce | \
		--policy-sha256 | --index-cache-size | --index-memory | --run-name | --merge-name | --merge-email | \
		--expect-tag | --onto | --kcidb-origin)
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	elif [[ ${words[1]} == policy && $cword -eq 2 ]]; then
		COMPREPLY=($(compgen -W 'check' -- "$cur"))
	elif [[ ${words[1]} == guard ]]; then
		COMPREPLY=($(compgen -W "$(git remote 2>/dev/null)" -- "$cur"))
	elif [[ ${words[1]} != version && ${words[1]} != serve ]]; then
		_filedir # a repository, a policy, a log
	fi
} &&
	complete -F _pullgate pullgate
