#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Dead-link check for the docs: every relative Markdown link in README.md and docs/*.md must
# point to an existing file or directory, and every #anchor to a heading of its target.
#   tests/docs/check-links.sh [-C DIR] [FILE...]
# -C DIR: the tree to check (default: this repository); FILEs are relative to it (default:
# README.md and docs/*.md). Prints each dead link as FILE:LINE: target and exits 1 when
# there is one, 2 on a usage error or a missing FILE, 0 otherwise. POSIX sh, sed, grep and
# awk; no network.
#
# Links: inline [text](target) and ![alt](target), and reference definitions
# "[label]: target", outside fenced code blocks, indented code blocks and `code spans`.
# Targets with a scheme (https:, mailto:, ...) are not checked; a target starting with '/'
# is taken from the tree's root. Anchors follow GitHub's rule for ATX headings (# ...):
# the heading's text (link targets and backticks removed), lowercased, punctuation other
# than '-' and '_' dropped, each space turned into '-'; a repeated heading gets -1, -2, ...
# Non-ASCII letters are kept as they are; the non-ASCII punctuation and symbols listed in
# PUNCT are dropped like ASCII punctuation. Setext headings (underlined) are not anchors.
set -u
LC_ALL=C
export LC_ALL

root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/docs-args.sh"

# UTF-8 punctuation and symbols GitHub drops from anchors: dashes, quotes, ellipsis, middle
# dot, arrows, comparison, multiplication and division signs, section sign, plus-minus.
PUNCT='— – ‘ ’ “ ” … · → ← ↔ ≥ ≤ ≠ × ÷ § ±'

# prose FILE CODE: "LINE<TAB>text" for each line outside fenced and indented code blocks.
# CODE=strip removes `code spans` (for links); CODE=keep removes only the backticks (for
# headings, whose anchors keep the code's text).
prose() {
	awk -v code="$2" '
	BEGIN { fence = ""; blank = 1 }
	{
		line = $0
		t = line; sub(/^ ? ? ?/, "", t)
		if (fence != "") {
			if (index(t, fence) == 1 && t ~ /^(```+|~~~+)[ \t]*$/) fence = ""
			blank = 0
			next
		}
		if (t ~ /^(```|~~~)/) {
			match(t, /^(`+|~+)/)
			fence = substr(t, 1, RLENGTH)
			next
		}
		if (blank && line ~ /^(    |\t)/) next   # an indented code block
		blank = (line ~ /^[ \t]*$/)
		if (code == "strip") {
			gsub(/``[^`]*``/, "", line)
			gsub(/`[^`]*`/, "", line)
		} else {
			gsub(/`/, "", line)
		}
		print NR "\t" line
	}' "$1"
}

# anchors FILE: the anchors of FILE's headings, one per line.
anchors() {
	prose "$1" keep | awk -v punct="$PUNCT" '
	BEGIN { np = split(punct, P, " ") }
	{
		h = $0
		sub(/^[0-9]+\t/, "", h)
		if (h !~ /^ ? ? ?#+([ \t]|$)/) next
		sub(/^ ? ? ?#+[ \t]*/, "", h)
		sub(/[ \t]+#+[ \t]*$/, "", h)          # closing hashes
		gsub(/\]\([^)]*\)/, "", h)             # [text](target) -> [text
		h = tolower(h)
		for (i = 1; i <= np; i++)
			while ((k = index(h, P[i])) > 0)
				h = substr(h, 1, k - 1) substr(h, k + length(P[i]))
		gsub(/-/, "\001", h); gsub(/_/, "\002", h)
		gsub(/[[:punct:]]/, "", h)
		gsub(/\001/, "-", h); gsub(/\002/, "_", h)
		gsub(/ /, "-", h)
		if (h in seen) print h "-" (++seen[h]); else { seen[h] = 0; print h }
	}'
}

# links FILE: "LINE<TAB>target" for each link of FILE.
links() {
	prose "$1" strip | awk '
	{
		n = $0; sub(/\t.*/, "", n)
		line = $0; sub(/^[0-9]+\t/, "", line)
		if (line ~ /^ ? ? ?\[[^]]+\]:[ \t]*[^ \t]/) {
			sub(/^ ? ? ?\[[^]]+\]:[ \t]*/, "", line)
			sub(/[ \t].*/, "", line)
			gsub(/^<|>$/, "", line)
			print n "\t" line
			next
		}
		while (match(line, /\]\([^)]*\)/)) {
			t = substr(line, RSTART + 2, RLENGTH - 3)
			line = substr(line, RSTART + RLENGTH)
			sub(/^[ \t]+/, "", t)
			sub(/[ \t]+"[^"]*"[ \t]*$/, "", t)  # a title
			sub(/[ \t]+$/, "", t)
			gsub(/^<|>$/, "", t)
			if (t != "") print n "\t" t
		}
	}'
}

tab=$(printf '\t')
dead=0
for file in "$@"; do
	if [ ! -f "$file" ]; then
		echo "check-links: $file: no such file" >&2
		exit 2
	fi
	dir=$(dirname "$file")
	list=$(links "$file")
	while IFS="$tab" read -r line target; do
		[ -n "$target" ] || continue
		case $target in
		*:*)
			scheme=${target%%:*}
			case $scheme in
			[a-zA-Z]*) case $scheme in *[!a-zA-Z0-9+.-]*) ;; *) continue ;; esac ;;
			esac
			;;
		esac
		path=${target%%#*}
		anchor=""
		case $target in *'#'*) anchor=${target#*#} ;; esac
		path=$(printf '%s' "$path" | sed 's/%20/ /g')
		case $path in
		'') to=$file ;;
		/*) to=.$path ;;
		*) to=$dir/$path ;;
		esac
		ok=1
		if [ ! -e "$to" ]; then
			ok=0
		elif [ -n "$anchor" ]; then
			case $to in
			*.md) [ -f "$to" ] && anchors "$to" | grep -qxF -e "$anchor" || ok=0 ;;
			esac
		fi
		if [ $ok = 0 ]; then
			echo "$file:$line: $target"
			dead=$((dead + 1))
		fi
	done <<EOF
$list
EOF
done
[ "$dead" -eq 0 ] || { echo "check-links: $dead dead link(s)" >&2; exit 1; }
exit 0
