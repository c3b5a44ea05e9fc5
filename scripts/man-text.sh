#!/bin/sh
# man-text.sh - render a man page as the plain text `pullgate help` prints.
#
#   scripts/man-text.sh PAGE.N > PAGE.N.txt
#
# groff's ASCII output without bold, underline or colour (-P-cbou), one
# continuous page (-rcR=1) 78 columns wide; the header and footer lines are
# dropped (the footer carries the date) and runs of blank lines squeezed.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 PAGE" >&2; exit 2; }
groff -man -t -Tascii -P-cbou -rLL=78n -rcR=1 -rHY=0 "$1" |
	awk 'NR > 1 { line[++n] = $0 }
	END {
		while (n > 0 && line[n] ~ /^[ \t]*$/) n--
		n-- # the footer
		first = 1
		while (first <= n && line[first] ~ /^[ \t]*$/) first++
		blank = 0
		for (i = first; i <= n; i++) {
			if (line[i] ~ /^[ \t]*$/) { blank = 1; continue }
			if (blank && i > first) print ""
			blank = 0
			print line[i]
		}
	}'
