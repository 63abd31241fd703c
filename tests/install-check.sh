#!/bin/bash
# install-check FILE...: 'make install' into a scratch DESTDIR must put exactly
# FILEs there (the unit passing systemd-analyze verify, the man pages groff's
# warnings), and 'make uninstall' must take every one of them away again.
set -uo pipefail

MAKE=${MAKE:-make}
. "$(dirname "$0")/check-lib.sh"

D=$(mktemp -d /tmp/cuse-bsg-install.XXXXXX)
trap 'rm -rf "$D"' EXIT
expected=$(printf "$D%s\n" "$@" | sort)

# under the strictest umask: every file and directory must still get its mode
(umask 077 && "$MAKE" --no-print-directory install DESTDIR="$D" >/dev/null) || fail "make install"
got=$(find "$D" -type f -o -type l | sort)
echo "installed:"
echo "${got//$D/  }"
check "make install puts exactly the listed files" test "$got" = "$expected"

# (the completions bear the commands' names too)
sbin=$(printf '%s\n' "$@" | grep -v /bash-completion/ | grep '/cuse_bsg$')
ctl=$(printf '%s\n' "$@" | grep -v /bash-completion/ | grep '/cuse-bsgctl$')
unit=$(printf '%s\n' "$@" | grep '/cuse-bsg@\.service$')
rules=$(printf '%s\n' "$@" | grep '/60-cuse-bsg\.rules$')
check "the daemon is executable" test -x "$D$sbin"
check "cuse-bsgctl is executable" test -x "$D$ctl"
modes=$(for f in "$@"; do
    m=$(stat -c %a "$D$f")
    case $f in "$sbin" | "$ctl") [ "$m" = 755 ] ;; *) [ "$m" = 644 ] ;; esac || echo "$f is $m"
done
find "$D" -mindepth 1 -type d ! -perm 0755 -printf '%P/ is %m\n')
[ -z "$modes" ] || echo "$modes"
check "under umask 077: files 0644 (daemon and helper 0755), directories 0755" test -z "$modes"
check "the unit starts the installed daemon" grep -qx "ExecStart=$sbin -f \$CUSE_BSG_OPTIONS /dev/%I" "$D$unit"
check "the unit is enabled per device (WantedBy=dev-%i.device)" grep -qx 'WantedBy=dev-%i.device' "$D$unit"
# opt-in: no rule wants a unit unless a choice in /etc/cuse-bsg/serve says so
wants=$(grep 'SYSTEMD_WANTS' "$D$rules")
echo "    $wants"
check "the rule wants units only where ENV{CUSE_BSG_SERVE}==\"1\"" \
    test "$(grep -c . <<<"$wants")" -eq 1 -a "$(grep -c '^ENV{CUSE_BSG_SERVE}=="1", ' <<<"$wants")" -eq 1
calls=$(grep -o '/[^ "]*/cuse-bsgctl' "$D$rules" | sort -u)
check "the udev rule runs the installed cuse-bsgctl (${calls//$'\n'/ })" test "$calls" = "$ctl"
check "no @SBINDIR@ left in the rule" bash -c "! grep -q @SBINDIR@ '$D$rules'"

# an instance of the installed unit, its daemon looked for under DESTDIR;
# verify prints a line for every unknown key or bad value
mkdir -p "$D.units"
trap 'rm -rf "$D" "$D.units"' EXIT
sed "s#^ExecStart=$sbin #ExecStart=$D$sbin #" "$D$unit" >"$D.units/cuse-bsg@sg0.service"
out=$(systemd-analyze verify --man=no "$D.units/cuse-bsg@sg0.service" 2>&1)
rc=$?
[ -z "$out" ] || echo "$out"
check "systemd-analyze verify cuse-bsg@sg0.service" test $rc -eq 0 -a -z "$out"

# section 8's man pages, then the other sections' (cuse_bsg.policy.5)
for page in $(printf '%s\n' "$@" | grep '/man8/') $(printf '%s\n' "$@" | grep '/man[1-7]/'); do
    out=$(groff -man -ww -z "$D$page" 2>&1)
    [ -z "$out" ] || echo "$out"
    check "groff -man -ww: no warnings in ${page##*/}" test -z "$out"
    out=$(MANWIDTH=80 man -l -Tutf8 "$D$page" 2>&1 >/dev/null)
    check "man -l renders ${page##*/} without a word" test -z "$out"
done

# the version and the paths of this install, filled in
prefix=${sbin%/sbin/cuse_bsg}
version=$("$D$sbin" --version | awk '{ print $NF; exit }')
check "cuse-bsgctl --version: cuse-bsgctl $version" test "$("$D$ctl" --version)" = "cuse-bsgctl $version"
for page in $(printf '%s\n' "$@" | grep '/man[1-8]/'); do
    check "${page##*/}: .TH names cuse-bsg $version" grep -q "^\.TH .*\"cuse-bsg $version\"" "$D$page"
    left=$(grep -o '@[A-Z]*@' "$D$page" | sort -u)
    check "${page##*/}: no placeholder left (${left//$'\n'/ })" test -z "$left"
    other=$(grep -o '/usr/[a-z]*' "$D$page" | grep -v "^$prefix" | sort -u)
    check "${page##*/}: no path under another prefix than $prefix (${other//$'\n'/ })" test -z "$other"
done
check "cuse_bsg.8 names the daemon where it is installed" grep -q "^\.B $sbin\$" "$D$(printf '%s\n' "$@" | grep '/cuse_bsg\.8$')"

# a usage error of cuse-bsgctl: one line naming it, then "see --help"; status 2
out=$("$D$ctl" frobnicate 2>&1)
rc=$?
check "cuse-bsgctl frobnicate: status 2 ($rc), one line: $out" \
    test "$rc" -eq 2 -a "$(grep -c . <<<"$out")" -eq 1 -a "$out" = "cuse-bsgctl: unknown command 'frobnicate' (see --help)"
news=$(printf '%s\n' "$@" | grep '/NEWS$')
check "NEWS installed, heading with cuse-bsg $version" grep -q "^cuse-bsg $version\b" "$D$news"

# the bash completions, as bash-completion loads them: COMPREPLY for a few
# command lines
BASH_COMPLETION=${BASH_COMPLETION:-/usr/share/bash-completion/bash_completion}
comp_daemon=$D$(printf '%s\n' "$@" | grep '/completions/cuse_bsg$')
comp_ctl=$D$(printf '%s\n' "$@" | grep '/completions/cuse-bsgctl$')
completes() {  # FUNCTION WORDS...: the words the completion offers, one line
    bash -c '. "$1" && . "$2" && . "$3" || exit 1
        f=$4
        shift 4
        COMP_WORDS=("$@") COMP_CWORD=$(($# - 1)) COMP_LINE="$*" COMP_POINT=${#COMP_LINE}
        "$f" && echo "${COMPREPLY[*]}"' _ "$BASH_COMPLETION" "$comp_daemon" "$comp_ctl" "$@"
}
if [ ! -r "$BASH_COMPLETION" ]; then
    fail "no $BASH_COMPLETION (Debian's bash-completion): the completions cannot be tried"
else
    # WANT|FUNCTION|COMMAND LINE, the word completed last (a line ending
    # in a space: an empty word)
    while IFS='|' read -r want f line; do
        read -ra words <<<"$line"
        [[ $line != *' ' ]] || words+=("")
        got=$(completes "$f" "${words[@]}")
        check "completion of '$line': $want ($got)" test "$got" = "$want"
    done <<'EOF'
--copy --copy-timeout|_cuse_bsg|cuse_bsg --cop
auto witness kernel procfs|_cuse_bsg|cuse_bsg --cred-check 
--json --table --watch --count --help|_cuse_bsg|cuse_bsg --show -
enable|_cuse_bsgctl|cuse-bsgctl ena
tape|_cuse_bsgctl|cuse-bsgctl --force enable tap
--json|_cuse_bsgctl|cuse-bsgctl show --j
EOF
fi

# every relative link of an installed document reaches a file installed beside it
for doc in $(printf '%s\n' "$@" | grep '\.md$'); do
    bad=$(grep -o '\]([^)#:]*[)#]' "$D$doc" | sed 's/^](//; s/[)#]$//' | sort -u |
        while read -r to; do [ -z "$to" ] || [ -e "$(dirname "$D$doc")/$to" ] || echo "$to"; done)
    check "${doc##*/}: links only to installed files (${bad//$'\n'/ })" test -z "$bad"
done

"$MAKE" --no-print-directory uninstall DESTDIR="$D" >/dev/null || fail "make uninstall"
left=$(find "$D" ! -type d)
[ -z "$left" ] || echo "$left"
check "make uninstall leaves only directories" test -z "$left"

echo "install-check: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
