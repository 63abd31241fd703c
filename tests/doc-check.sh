#!/bin/bash
# doc-check DAEMON README MANPAGE NEWS [COMPLETION CTL CTL_COMPLETION]: the
# documents say what the daemon does.
#
# - Every option DAEMON --help lists appears in MANPAGE (as the tag of an
#   option's paragraph) and in README's usage table (a row of its own), and
#   neither documents an option --help does not know.
# - Where --help gives a default ("default: X"), the man page's paragraph of
#   that option and the last cell of its README row say X too.  X is the text
#   after "default:" up to the first ')' or ';', without a trailing range
#   ("32, 1..64" is 32); it is compared without case, markup or line breaks.
# - The version DAEMON --version prints heads NEWS; every man page's .TH
#   names it as @VERSION@, which make install fills in.
# - The daemon's bash COMPLETION offers every option of --help and no other;
#   CTL_COMPLETION every command and class of CTL --help.
set -uo pipefail

if [ $# -ne 4 ] && [ $# -ne 7 ]; then
    echo "usage: $0 DAEMON README MANPAGE NEWS [COMPLETION CTL CTL_COMPLETION]" >&2
    exit 2
fi
daemon=$1 readme=$2 manpage=$3 news=$4
PASSED=0 FAILED=0
pass() { PASSED=$((PASSED + 1)); }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }

# Lower case, no markup (roff escapes and fonts, Markdown backticks), one
# space between words.
normalize() {
    sed -e 's/\\f[BIRP]//g' -e 's/\\(bu//g' -e 's/\\-/-/g' -e 's/\\ / /g' \
        -e 's/\\&//g' -e 's/\(^\| \)\.[A-Z][A-Z]* / /g' -e 's/`//g' -e 's/\*\*//g' |
        tr '\n\t' '  ' | tr -s ' ' | tr '[:upper:]' '[:lower:]'
}

help=$("$daemon" --help) || { echo "FAIL: $daemon --help"; exit 1; }

# "NAME<TAB>DEFAULT" for each option of --help: an entry starts with a line
# "  -x, --name" or "      --name" (indented 8 at most), and runs on over the
# lines indented deeper.
options=$(awk '
    function flush() {
        if (name == "") return
        d = ""
        if (match(text, /default: [^);]*/)) {
            d = substr(text, RSTART + 9, RLENGTH - 9)
            sub(/, [0-9]+\.\.[0-9]+$/, "", d)
            sub(/ +$/, "", d)
        }
        print name "\t" d
        name = ""
    }
    /^ +(-[A-Za-z], )?--[a-z]/ && match($0, /^ +/) && RLENGTH <= 8 {
        flush()
        line = $0
        sub(/^ +(-[A-Za-z], )?--/, "", line)
        name = line
        sub(/[ =].*/, "", name)
        text = $0
        next
    }
    /^      / && name != "" { text = text " " $0; gsub(/  +/, " ", text); next }
    { flush() }
    END { flush() }
' <<<"$help")
if [ -z "$options" ]; then
    echo "FAIL: no option found in $daemon --help"
    exit 1
fi

# The man page's option paragraphs: each ".TP" tag line that names long
# options, then the body up to the next .TP, .SH or .SS, one paragraph a
# line as "OPTIONS<TAB>BODY" (OPTIONS: the tag's --names, space-separated).
man_paragraphs=$(awk '
    function flush() { if (tag != "") print tag "\t" body; tag = ""; body = "" }
    /^\.SH/ { flush(); in_opts = ($0 ~ /OPTIONS/); next }
    !in_opts { next }
    /^\.(TP|SS)/ { flush(); want_tag = 1; next }
    want_tag {
        want_tag = 0
        t = $0; gsub(/\\-/, "-", t)
        while (match(t, /--[a-z][a-z-]*/)) {
            tag = tag (tag == "" ? "" : " ") substr(t, RSTART + 2, RLENGTH - 2)
            t = substr(t, RSTART + RLENGTH)
        }
        next
    }
    tag != "" { body = body " " $0 }
    END { flush() }
' "$manpage")

# README's usage table: the rows whose first cell starts with `-x, --name`.
readme_rows=$(grep -E '^\| `(-[A-Za-z], )?--[a-z]' "$readme")

while IFS=$'\t' read -r name default; do
    want=$(printf '%s' "$default" | normalize)

    para=$(awk -F'\t' -v n="$name" '{ split($1, t, " "); for (i in t) if (t[i] == n) print $2 }' \
        <<<"$man_paragraphs")
    if [ -z "$para" ]; then
        fail "--$name is in --help but has no paragraph in $manpage's OPTIONS"
    elif [ -n "$want" ] && [[ $(printf '%s' "$para" | normalize) != *"default: $want"* ]]; then
        fail "--$name: $manpage does not say 'Default: $default'"
    else
        pass
    fi

    row=$(grep -E -- "^\| \`(-[A-Za-z], )?--${name}[ \`]|^\| \`[^|]*, --${name}[ \`]" <<<"$readme_rows")
    if [ -z "$row" ]; then
        fail "--$name is in --help but has no row in $readme's usage table"
        continue
    fi
    last=${row%|}
    last=${last##*|}
    if [ -n "$want" ] && [[ $(printf '%s' "$last" | normalize) != *"$want"* ]]; then
        fail "--$name: the default in $readme's usage table is not '$default'"
    else
        pass
    fi
done <<<"$options"

# Options documented that --help does not know (gone, or misspelt).
known=" $(cut -f1 <<<"$options" | tr '\n' ' ') "
for name in $(cut -f1 <<<"$man_paragraphs" | tr ' ' '\n' | sort -u); do
    [[ $known == *" $name "* ]] || fail "$manpage documents --$name, which --help does not list"
done
while read -r name; do
    [[ $known == *" $name "* ]] || fail "$readme's usage table has --$name, which --help does not list"
done < <(grep -oE '^\| `(-[A-Za-z], )?--[a-z][a-z-]*' <<<"$readme_rows" | sed 's/.*--//' | sort -u)

# the completion's words: in compgen -W '...' lists, which may span lines
compgen_words() {
    awk '/compgen -W \047/ { on = 1; sub(/.*compgen -W \047/, "") }
        on { line = $0; if (sub(/\047.*/, "", line)) on = 0; print line }' "$1" | tr -s ' \t' '\n'
}
# the commands of cuse-bsgctl's usage lines, and the classes of its CLASS:
# paragraph (up to "or typeN")
ctl_words() {
    sed -n 's/^ *\(usage: \)\?cuse-bsgctl \(\[--force\] \)\?\([a-z][a-z]*\).*/\3/p' <<<"$1"
    awk '/^CLASS:/ { on = 1; $1 = "" } on { for (i = 1; i <= NF; i++) { if ($i == "or") exit; print $i } }' \
        <<<"$1" | tr -d ,
}
if [ $# -eq 7 ]; then
    completion=$5 ctl=$6 ctl_completion=$7
    offered=" $(compgen_words "$completion" | tr '\n' ' ') "
    while read -r name; do
        if [[ $offered == *" --$name "* ]]; then pass; else fail "--$name is in --help but not offered by $completion"; fi
    done < <(cut -f1 <<<"$options")
    for w in $offered; do
        case $w in --json | --table | --watch | --count) continue ;; --*) ;; *) continue ;; esac # --show's own
        [[ $known == *" ${w#--} "* ]] || fail "$completion offers $w, which --help does not list"
    done
    ctl_help=$("$ctl" --help) || fail "$ctl --help"
    for w in $(ctl_words "$ctl_help"); do
        if grep -qw -- "$w" "$ctl_completion"; then pass; else fail "$ctl --help names '$w', which $ctl_completion does not offer"; fi
    done
fi

version=$("$daemon" --version | awk '{ print $NF; exit }')
if [ "$(head -n 1 "$news")" = "cuse-bsg $version" ] ||
    [[ $(head -n 1 "$news") == "cuse-bsg $version "* ]]; then
    pass
else
    fail "$news does not start with 'cuse-bsg $version'"
fi
for page in "$(dirname "$manpage")"/*.[1-8]; do
    if grep -q '^\.TH .*"cuse-bsg @VERSION@"' "$page"; then
        pass
    else
        fail "$page: .TH does not name cuse-bsg @VERSION@ (make install fills it in)"
    fi
done

echo "doc-check: $PASSED passed, $FAILED failed ($(wc -l <<<"$options") options of --help)"
[ "$FAILED" -eq 0 ]
