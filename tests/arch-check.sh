#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The module drawing of docs/ARCHITECTURE.md against the code: the
# ```modules block there names every module of src/ on its layer (top
# first) and, under it, the modules it includes ("-> a b c").  A module is
# NAME.c and NAME.h, with a private NAME_i.h, and a BPF program NAME.bpf.c
# with the header it shares, NAME_bpf.h.  Fails on an arrow drawn that
# the code does not have, one the code has that is not drawn, a module on
# one side only, or an arrow that does not run down to a lower layer.
# Fails too on a file of src/ over 900 lines, a function over 50 (its body,
# from its opening brace in the first column to the closing one), or more
# than 2 headers that include libfuse's, and on a hook of the LSM gate
# (src/gate.bpf.c) that make bench-gate's baseline does not have, or back.
# Fails too on a file of src/ without a row in the table under "## Layout of
# the tree", or a row naming a file that does not exist (a name ending in
# / is a directory, not checked; others are from the top of the tree).
#
# usage: tests/arch-check.sh [ARCHITECTURE.md [SRCDIR]]
set -eu

doc=${1:-docs/ARCHITECTURE.md}
src=${2:-src}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the code: "from to" for each #include "..." of a file of src/
for f in "$src"/*.c "$src"/*.h; do
	from=$(basename "$f")
	from=${from%.*}
	from=${from%.bpf}
	from=${from%_i}
	from=${from%_bpf}
	echo "module $from"
	sed -n 's/^#include "\([^"/]*\)".*/\1/p' "$f" | while read -r h; do
		[ -f "$src/$h" ] || continue
		to=${h%.h}
		to=${to%_i}
		to=${to%_bpf}
		[ "$to" = "$from" ] || echo "$from $to"
	done
done >"$tmp/code.raw"
grep '^module ' "$tmp/code.raw" | cut -d' ' -f2 | sort -u >"$tmp/code.modules"
grep -v '^module ' "$tmp/code.raw" | sort -u >"$tmp/code.edges"

# the drawing: "layer module" lines and "-> to ..." under each
awk -v layers="$tmp/doc.layers" -v edges="$tmp/doc.edges" '
	/^```modules/ { inside = 1; next }
	inside && /^```/ { inside = 0; next }
	!inside { next }
	$1 ~ /^[0-9]+$/ { mod = $2; print $1, mod >layers; next }
	$1 == "->" { for (i = 2; i <= NF; i++) print mod, $i >edges; next }
	/^[ \t]*$/ || /^[ \t]*#/ { next }
	{ print "arch-check: cannot read this line of the drawing: " $0 >"/dev/stderr"; bad = 1 }
	END { exit bad }
' "$doc"
touch "$tmp/doc.layers" "$tmp/doc.edges"
sort -u "$tmp/doc.edges" -o "$tmp/doc.edges"
cut -d' ' -f2 "$tmp/doc.layers" | sort -u >"$tmp/doc.modules"

rc=0
report() {
	# $1: what the lines of $2 are
	if [ -s "$2" ]; then
		awk -v what="$1" '{ print "arch-check: " what ": " $0 }' "$2" >&2
		rc=1
	fi
}
comm -23 "$tmp/code.modules" "$tmp/doc.modules" >"$tmp/x"
report "a module of $src/ not in the drawing" "$tmp/x"
comm -13 "$tmp/code.modules" "$tmp/doc.modules" >"$tmp/x"
report "a module drawn that $src/ does not have" "$tmp/x"
comm -23 "$tmp/code.edges" "$tmp/doc.edges" | sed 's/ / -> /' >"$tmp/x"
report "an include not drawn" "$tmp/x"
comm -13 "$tmp/code.edges" "$tmp/doc.edges" | sed 's/ / -> /' >"$tmp/x"
report "an arrow drawn that the code does not have" "$tmp/x"
awk 'NR == FNR { layer[$2] = $1; next }
	!($1 in layer) || !($2 in layer) { next }
	layer[$1] + 0 <= layer[$2] + 0 {
		print $1 " (layer " layer[$1] ") -> " $2 " (layer " layer[$2] ")"
	}' "$tmp/doc.layers" "$tmp/doc.edges" >"$tmp/x"
report "an arrow that does not run down" "$tmp/x"
awk '{ n[$2]++ } END { for (m in n) if (n[m] > 1) print m }' "$tmp/doc.layers" >"$tmp/x"
report "a module drawn twice" "$tmp/x"

wc -l "$src"/*.c "$src"/*.h | awk '$2 != "total" && $1 > 900 { print $2 ": " $1 " lines" }' >"$tmp/x"
report "a file over 900 lines" "$tmp/x"
awk 'FNR == 1 { open = 0 }
	/^[A-Za-z_].*\(/ { sig = $0 }
	/^\{$/ { open = FNR }
	/^\}/ && open {
		if (FNR - open - 1 > 50) print FILENAME ":" open ": " FNR - open - 1 " lines: " sig
		open = 0
	}' "$src"/*.c >"$tmp/x"
report "a function over 50 lines" "$tmp/x"
grep -l '^#include <[cf]use' "$src"/*.h >"$tmp/fuse.h" || true
[ "$(wc -l <"$tmp/fuse.h")" -le 2 ] || report "more than 2 headers include libfuse" "$tmp/fuse.h"

# the layout table: the names in each row's first cell, `between backquotes`
awk '/^## / { inside = $0 == "## Layout of the tree"; next }
	inside && /^\| `/ {
		split($0, cell, "|")
		n = split(cell[2], name, "`")
		for (i = 2; i <= n; i += 2) print name[i]
	}' "$doc" | sort -u >"$tmp/table"
for f in "$src"/*; do
	[ -f "$f" ] && echo "src/${f##*/}"
done | sort >"$tmp/src.files"
if [ -s "$tmp/table" ]; then
	comm -23 "$tmp/src.files" "$tmp/table" >"$tmp/x"
	report "a file of $src/ without a row in the layout table" "$tmp/x"
	top=$(dirname "$src")
	grep -v '/$' "$tmp/table" | while read -r f; do
		case $f in
		src/*) [ -e "$src/${f#src/}" ] || echo "$f" ;;
		*) [ -e "$top/$f" ] || echo "$f" ;;
		esac
	done >"$tmp/x"
	report "a row of the layout table names a file that does not exist" "$tmp/x"
else
	echo "$doc" >"$tmp/x"
	report "no table under \"## Layout of the tree\"" "$tmp/x"
fi

# make bench-gate's baseline (tests/clients/lsmhook.bpf.c) puts programs that
# decide nothing on the LSM gate's hooks: the same hooks, or it measures
# another cost than the gate's entry
hooks() { sed -n 's/^SEC("\(lsm\/[a-z_]*\)").*/\1/p' "$1" | sort -u; }
lsmhook=$(dirname "$0")/clients/lsmhook.bpf.c
if [ -f "$src/gate.bpf.c" ] && [ -f "$lsmhook" ]; then
	hooks "$src/gate.bpf.c" >"$tmp/gate.hooks"
	hooks "$lsmhook" >"$tmp/base.hooks"
	diff "$tmp/gate.hooks" "$tmp/base.hooks" | sed -n 's/^[<>] //p' >"$tmp/x"
	report "a hook of the LSM gate or of the benchmark's baseline that the other lacks" "$tmp/x"
fi

if [ "$rc" = 0 ]; then
	echo "arch-check: $(wc -l <"$tmp/doc.modules") modules, $(wc -l <"$tmp/doc.edges") arrows: the drawing is the code; no file over 900 lines, no function over 50, $(wc -l <"$tmp/fuse.h") headers with libfuse, $(wc -l <"$tmp/src.files") files of $src/ in the layout table"
fi
exit "$rc"
