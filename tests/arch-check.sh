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
#
# A folder of src/ is a wing: one box of the drawing (its name, as a
# module's), whose arrows are those of all its files, and a drawing of its
# own, a block ```modules NAME, checked the same way: the modules inside,
# their layers, their arrows to each other and to modules outside.  Its line
# "faces: a b" names the modules that the rest of src/ may use; fails on a
# file of src/ outside the wing that includes the wing's private header
# (NAME_i.h) or any header of a module not a face.  A file outside names a
# face by its path ("queue/cmdq.h"); a file inside names its neighbours and
# the headers of src/ by name.
#
# Fails too on a file of src/ over 900 lines, a function over 50 (its body,
# from its opening brace in the first column to the closing one), or more
# than 2 headers that include libfuse's, and on a hook of the LSM gate
# (src/gate.bpf.c) that make bench-gate's baseline does not have, or back.
# Fails too on a file of src/ without a row in the table under "## Layout of
# the tree", or a row naming a file that does not exist (a name ending in
# / is a directory, not checked; others are from the top of the tree).
#
# OBJDIR holds the objects built from src/ (OBJDIR/NAME.o for src/NAME.c,
# OBJDIR/queue/cmdq.o for src/queue/cmdq.c): every use of one module by
# another, a call or a datum (a symbol one object leaves undefined and
# another defines, read with nm), is an arrow too, so that no use hides
# behind a header that includes another; and a use of a wing from outside
# is of a face.  A header alone (bsgdev.h) has no object: its includes
# stand for it.
#
# usage: tests/arch-check.sh [ARCHITECTURE.md [SRCDIR [OBJDIR]]] (OBJDIR: build/obj)
set -eu

doc=${1:-docs/ARCHITECTURE.md}
src=${2:-src}
obj=${3:-build/obj}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a file's module, by its path under src/: queue/cmdq_i.h is queue/cmdq
module() {
	m=${1%.*}
	m=${m%.bpf}
	m=${m%_i}
	m=${m%_bpf}
	echo "$m"
}

# the files of src/ and of its wings, by their path under src/
for f in "$src"/*.[ch] "$src"/*/*.[ch]; do
	[ -f "$f" ] && echo "${f#"$src"/}"
done >"$tmp/files"

# the code: "mod MODULE" for each file, "inc FROM TO HEADER" for each
# #include "HEADER" of a file of src/ (MODULE, FROM and TO: queue/cmdq or log)
while read -r f; do
	from=$(module "$f")
	echo "mod $from"
	case $f in */*) wing=${f%%/*} ;; *) wing= ;; esac
	sed -n 's/^#include "\([^"]*\)".*/\1/p' "$src/$f" | while read -r h; do
		if [ -n "$wing" ] && [ -f "$src/$wing/$h" ]; then
			h=$wing/$h
		elif [ ! -f "$src/$h" ]; then
			continue
		fi
		to=$(module "$h")
		[ "$to" = "$from" ] || echo "inc $from $to $h"
	done
done <"$tmp/files" >"$tmp/code.raw"

# the uses: "call FROM TO SYMBOL" (or "data ...") for each symbol that FROM's
# object leaves undefined and TO's defines
: >"$tmp/objs.missing"
grep '\.c$' "$tmp/files" | grep -v '\.bpf\.c$' | while read -r f; do
	o=$obj/${f%.c}.o
	if [ ! -f "$o" ]; then
		echo "$o" >>"$tmp/objs.missing"
		continue
	fi
	${NM:-nm} -P -g "$o" | awk -v m="$(module "$f")" '
		$2 ~ /^[Uwv]$/ { print $1, "und", m; next }
		{ print $1, ($2 ~ /^[Tt]$/ ? "call" : "data"), m }'
done >"$tmp/syms"
awk '$2 != "und" { def[$1] = $3; kind[$1] = $2; next }
	{ und[++n] = $1 " " $3 }
	END {
		for (i = 1; i <= n; i++) {
			split(und[i], u, " ")
			if ((u[1] in def) && def[u[1]] != u[2])
				print kind[u[1]], u[2], def[u[1]], u[1]
		}
	}' "$tmp/syms" >>"$tmp/code.raw"

# the drawing: "MODULE LAYER" for each module, "FROM TO" for each arrow and
# "face MODULE" for each face, a wing's modules named queue/cmdq; a wing's
# arrow to a module outside it names that module alone (queue/cmdq log)
awk -v layers="$tmp/doc.layers" -v edges="$tmp/doc.edges" -v faces="$tmp/doc.faces" '
	function flush(   i, j, n, to, t) {
		for (i = 1; i <= nl; i++) print name[i], layer[i] >layers
		for (i = 1; i <= ne; i++) {
			n = split(edge[i], t, " ")
			for (j = 2; j <= n; j++) {
				to = (wing != "" && (wing "/" t[j]) in mine) ? wing "/" t[j] : t[j]
				print t[1], to >edges
			}
		}
		for (i = 1; i <= nf; i++) {
			to = wing "/" face[i]
			if (!(to in mine)) {
				print "arch-check: a face not drawn in " wing "/: " face[i] >"/dev/stderr"
				bad = 1
			}
			print "face", to >faces
		}
		nl = ne = nf = 0
		delete mine
	}
	/^```modules/ { inside = 1; wing = $2; next }
	inside && /^```/ { flush(); inside = 0; next }
	!inside { next }
	$1 ~ /^[0-9]+$/ {
		mod = wing == "" ? $2 : wing "/" $2
		mine[mod] = 1
		name[++nl] = mod
		layer[nl] = $1
		next
	}
	$1 == "->" { $1 = mod; edge[++ne] = $0; next }
	$1 == "faces:" && wing != "" { for (i = 2; i <= NF; i++) face[++nf] = $i; next }
	/^[ \t]*$/ || /^[ \t]*#/ { next }
	{ print "arch-check: cannot read this line of the drawing: " $0 >"/dev/stderr"; bad = 1 }
	END { exit bad }
' "$doc"
touch "$tmp/doc.layers" "$tmp/doc.edges" "$tmp/doc.faces"
sort -u "$tmp/doc.edges" -o "$tmp/doc.edges"
cut -d' ' -f1 "$tmp/doc.layers" | sort -u >"$tmp/doc.modules"
find "$src" -mindepth 1 -maxdepth 1 -type d | sed 's|.*/||' | sort >"$tmp/wings"

# The code's modules and arrows as the drawing has them: a wing's files are
# one module outside it (queue), and each its own inside (queue/cmdq).  Each
# arrow once in code.edges, and in code.why with each include or call that
# makes it.  Checked here too: who uses a wing's insides from outside.
awk -v modules="$tmp/code.modules" -v inside="$tmp/inside" '
	FILENAME == ARGV[1] { if ($1 == "face") face[$2] = 1; next }
	function wing(m) { return m ~ /\// ? substr(m, 1, index(m, "/") - 1) : "" }
	function top(m) { return m ~ /\// ? wing(m) : m }
	$1 == "mod" { print top($2) >modules; if (wing($2) != "") print $2 >modules; next }
	{
		from = $2; to = $3
		why = $1 == "inc" ? "#include \"" $4 "\"" : $1 == "call" ? "calls " $4 "()" : "uses " $4
		if (top(from) != top(to)) print top(from), top(to), why
		if (wing(from) != "" && from != to)
			print from, (wing(to) == wing(from) ? to : top(to)), why
		if (wing(to) == "" || wing(to) == wing(from)) next
		if ($1 == "inc" && $4 ~ /_i\.h$/)
			print "a wing'\''s private header included from outside: " from ": " why >inside
		else if (!(to in face))
			print "a wing'\''s inside used from outside: " from " -> " to ": " why >inside
	}
' "$tmp/doc.faces" "$tmp/code.raw" | sort -u >"$tmp/code.why"
cut -d' ' -f1,2 "$tmp/code.why" | sort -u >"$tmp/code.edges"
sort -u "$tmp/code.modules" -o "$tmp/code.modules"
touch "$tmp/inside"

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
grep / "$tmp/doc.modules" | cut -d/ -f1 | sort -u | comm -13 "$tmp/wings" - >"$tmp/x" || true
report "a wing drawn that is not a folder of $src/" "$tmp/x"
# the arrows the code has that are not drawn, each with its first include
# or call
comm -23 "$tmp/code.edges" "$tmp/doc.edges" | awk 'NR == FNR { want[$1 " " $2] = 1; next }
	($1 " " $2) in want && !seen[$1 " " $2]++ { w = $3; for (i = 4; i <= NF; i++) w = w " " $i
		print $1 " -> " $2 " (" w ")" }' - "$tmp/code.why" >"$tmp/x"
report "a use not drawn" "$tmp/x"
comm -13 "$tmp/code.edges" "$tmp/doc.edges" | sed 's/ / -> /' >"$tmp/x"
report "an arrow drawn that the code does not have" "$tmp/x"
report "an object missing (make arch-check builds them)" "$tmp/objs.missing"
sort -u "$tmp/inside" | sed 's/^/arch-check: /' >"$tmp/x"
[ ! -s "$tmp/x" ] || { cat "$tmp/x" >&2; rc=1; }
# down: an arrow between two modules of one drawing (a wing's arrows out
# run down as its box's do)
awk 'NR == FNR { layer[$1] = $2; next }
	function wing(m) { return m ~ /\// ? substr(m, 1, index(m, "/") - 1) : "" }
	!($1 in layer) || !($2 in layer) || wing($1) != wing($2) { next }
	layer[$1] + 0 <= layer[$2] + 0 {
		print $1 " (layer " layer[$1] ") -> " $2 " (layer " layer[$2] ")"
	}' "$tmp/doc.layers" "$tmp/doc.edges" >"$tmp/x"
report "an arrow that does not run down" "$tmp/x"
awk '{ n[$1]++ } END { for (m in n) if (n[m] > 1) print m }' "$tmp/doc.layers" >"$tmp/x"
report "a module drawn twice" "$tmp/x"

set --
while read -r f; do
	set -- "$@" "$src/$f"
done <"$tmp/files"
wc -l "$@" | awk '$2 != "total" && $1 > 900 { print $2 ": " $1 " lines" }' >"$tmp/x"
report "a file over 900 lines" "$tmp/x"
for f; do
	shift
	case $f in *.c) set -- "$@" "$f" ;; esac
done
awk 'FNR == 1 { open = 0 }
	/^[A-Za-z_].*\(/ { sig = $0 }
	/^\{$/ { open = FNR }
	/^\}/ && open {
		if (FNR - open - 1 > 50) print FILENAME ":" open ": " FNR - open - 1 " lines: " sig
		open = 0
	}' "$@" >"$tmp/x"
report "a function over 50 lines" "$tmp/x"
grep -l '^#include <[cf]use' "$src"/*.h "$src"/*/*.h 2>/dev/null >"$tmp/fuse.h" || true
[ "$(wc -l <"$tmp/fuse.h")" -le 2 ] || report "more than 2 headers include libfuse" "$tmp/fuse.h"

# the layout table: the names in each row's first cell, `between backquotes`
awk '/^## / { inside = $0 == "## Layout of the tree"; next }
	inside && /^\| `/ {
		split($0, cell, "|")
		n = split(cell[2], name, "`")
		for (i = 2; i <= n; i += 2) print name[i]
	}' "$doc" | sort -u >"$tmp/table"
find "$src" -type f | sed "s|^$src/|src/|" | sort >"$tmp/src.files"
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
	mods=$(($(grep -vc / "$tmp/doc.modules") - $(wc -l <"$tmp/wings")))
	wings=$(while read -r w; do
		echo "$w/ of $(grep -c "^$w/" "$tmp/doc.modules")"
	done <"$tmp/wings" | paste -sd, - | sed 's/,/, /g')
	uses=$(awk '$1 != "mod" && $1 != "inc" { print $2, $3 }' "$tmp/code.raw" | sort -u | wc -l)
	echo "arch-check: $mods modules${wings:+ and the wing(s) $wings}," \
		"$(wc -l <"$tmp/doc.edges") arrows: the drawing is the code" \
		"(its includes, and the symbols of $obj: $uses uses of a module by another);" \
		"no file over 900 lines, no function over 50, $(wc -l <"$tmp/fuse.h") headers with libfuse," \
		"$(wc -l <"$tmp/src.files") files of $src/ in the layout table"
fi
exit "$rc"
