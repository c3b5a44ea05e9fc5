# synthetic.sh - a long synthetic upstream history for the benches (sourced, not run).

# synthetic_upstream GIT-DIR N: a bare repository whose master has N commits,
# ten minutes apart from 2020-09-13, by 97 authors in 31 subsystems, all
# committed by "Top Maintainer <top@example.org>"
synthetic_upstream() {
	git init -q --bare "$1"
	awk -v n="$2" 'BEGIN {
		t = 1600000000
		for (i = 1; i <= n; i++) {
			t += 600
			printf "commit refs/heads/master\nmark :%d\n", i
			printf "author Dev%d <dev%d@example.org> %d +0000\n", i % 97, i % 97, t
			printf "committer Top Maintainer <top@example.org> %d +0000\n", t
			msg = sprintf("subsys%d: change %d\n\nSigned-off-by: Dev%d <dev%d@example.org>\n", i % 31, i, i % 97, i % 97)
			printf "data %d\n%s", length(msg), msg
			if (i > 1) printf "from :%d\n", i - 1
			printf "M 644 inline file%d\ndata %d\n%d\n\n", i % 50, length(i "") + 1, i
		}
	}' | git --git-dir="$1" fast-import --quiet
}
