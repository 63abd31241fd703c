#!/bin/bash
# install-check FILE...: 'make install' into a scratch DESTDIR must put exactly
# FILEs there (the unit passing systemd-analyze verify, the man pages groff's
# warnings), and 'make uninstall' must take every one of them away again.
set -uo pipefail

MAKE=${MAKE:-make}
PASSED=0 FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }
check() {
    local name=$1
    shift
    if "$@"; then pass "$name"; else fail "$name"; fi
}

D=$(mktemp -d /tmp/cuse-bsg-install.XXXXXX)
trap 'rm -rf "$D"' EXIT
expected=$(printf "$D%s\n" "$@" | sort)

# under the strictest umask: every file and directory must still get its mode
(umask 077 && "$MAKE" --no-print-directory install DESTDIR="$D" >/dev/null) || fail "make install"
got=$(find "$D" -type f -o -type l | sort)
echo "installed:"
echo "${got//$D/  }"
check "make install puts exactly the listed files" test "$got" = "$expected"

sbin=$(printf '%s\n' "$@" | grep '/cuse_bsg$')
unit=$(printf '%s\n' "$@" | grep '/cuse-bsg@\.service$')
man=$(printf '%s\n' "$@" | grep '/man8/cuse_bsg\.8$')
check "the daemon is executable" test -x "$D$sbin"
modes=$(for f in "$@"; do
    m=$(stat -c %a "$D$f")
    case $f in "$sbin") [ "$m" = 755 ] ;; *) [ "$m" = 644 ] ;; esac || echo "$f is $m"
done
find "$D" -mindepth 1 -type d ! -perm 0755 -printf '%P/ is %m\n')
[ -z "$modes" ] || echo "$modes"
check "under umask 077: files 0644 (the daemon 0755), directories 0755" test -z "$modes"
check "the unit starts the installed daemon" grep -qx "ExecStart=$sbin -f \$CUSE_BSG_OPTIONS /dev/%I" "$D$unit"

# an instance of the installed unit, its daemon looked for under DESTDIR;
# verify prints a line for every unknown key or bad value
mkdir -p "$D.units"
trap 'rm -rf "$D" "$D.units"' EXIT
sed "s#^ExecStart=$sbin #ExecStart=$D$sbin #" "$D$unit" >"$D.units/cuse-bsg@sg0.service"
out=$(systemd-analyze verify --man=no "$D.units/cuse-bsg@sg0.service" 2>&1)
rc=$?
[ -z "$out" ] || echo "$out"
check "systemd-analyze verify cuse-bsg@sg0.service" test $rc -eq 0 -a -z "$out"

out=$(groff -man -ww -z "$D$man" 2>&1)
[ -z "$out" ] || echo "$out"
check "groff -man -ww: no warnings in cuse_bsg.8" test -z "$out"
out=$(MANWIDTH=80 man -l -Tutf8 "$D$man" 2>&1 >/dev/null)
check "man -l renders cuse_bsg.8 without a word" test -z "$out"

# the man pages of the other sections (cuse_bsg.policy.5), the same way
for page in $(printf '%s\n' "$@" | grep '/man[1-7]/'); do
    out=$(groff -man -ww -z "$D$page" 2>&1)
    [ -z "$out" ] || echo "$out"
    check "groff -man -ww: no warnings in ${page##*/}" test -z "$out"
    out=$(MANWIDTH=80 man -l -Tutf8 "$D$page" 2>&1 >/dev/null)
    check "man -l renders ${page##*/} without a word" test -z "$out"
done

"$MAKE" --no-print-directory uninstall DESTDIR="$D" >/dev/null || fail "make uninstall"
left=$(find "$D" ! -type d)
[ -z "$left" ] || echo "$left"
check "make uninstall leaves only directories" test -z "$left"

echo "install-check: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
