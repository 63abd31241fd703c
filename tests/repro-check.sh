#!/bin/bash
# repro-check DIR_A DIR_B: the .debs that two builds of the package left in
# DIR_A and DIR_B (make repro-check builds them in directories of other
# names and depths) are the same to the byte; where one differs, the files
# inside that differ, and for those the first differing strings.
set -uo pipefail

a=$1 b=$2
. "$(dirname "$0")/check-lib.sh"

# what differs between two .debs: their members, then the files they hold
explain() {
    local t
    t=$(mktemp -d /tmp/cuse-bsg-repro.XXXXXX)
    if ! dpkg-deb -R "$1" "$t/a" || ! dpkg-deb -R "$2" "$t/b"; then
        rm -rf "$t"
        return
    fi
    diff -rq "$t/a" "$t/b" | sed 's/^/    /'
    diff -rq "$t/a" "$t/b" | awk '/^Files / { print $2 " " $4 }' | while read -r x y; do
        echo "    ${x#"$t"/a/}:"
        diff <(strings -n 8 "$x") <(strings -n 8 "$y") | head -n 6 | sed 's/^/      /'
    done
    rm -rf "$t"
}

shopt -s nullglob
debs=("$a"/*.deb)
[ ${#debs[@]} -gt 0 ] || fail "no .deb in $a"
for deb in "${debs[@]}"; do
    other=$b/${deb##*/}
    if [ ! -f "$other" ]; then
        fail "${deb##*/}: built in $a, not in $b"
    elif cmp -s "$deb" "$other"; then
        pass "${deb##*/}: the same in $a and $b ($(sha256sum <"$deb" | cut -c1-16))"
    else
        fail "${deb##*/}: differs between $a and $b"
        explain "$deb" "$other"
    fi
done
for deb in "$b"/*.deb; do
    [ -f "$a/${deb##*/}" ] || fail "${deb##*/}: built in $b, not in $a"
done
echo "repro-check: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
