#!/bin/bash
# user-check: make, make test and make deb pass for an ordinary user whose
# PATH has no sbin directory (Debian's bpftool is in /usr/sbin), in a copy
# of the tree that user owns.  Run as root from the tree: it creates the
# user (CUSE_BSG_BUILD_USER, cuse-bsg-build by default) if it is missing.
# Each make's output goes to build/user-check/NAME.log, shown if it fails.
set -uo pipefail

NAME=${CUSE_BSG_BUILD_USER:-cuse-bsg-build}
USER_PATH=/usr/local/bin:/usr/bin:/bin
LOGS=$PWD/build/user-check
. "$(dirname "$0")/check-lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "user-check: run it as root: it creates the user $NAME" >&2; exit 1; }
if ! id "$NAME" >/dev/null 2>&1; then
    useradd --system --user-group --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin "$NAME" || { echo "user-check: useradd $NAME failed" >&2; exit 1; }
fi
uid=$(id -u "$NAME") gid=$(id -g "$NAME")
mkdir -p "$LOGS"
work=$(mktemp -d /tmp/cuse-bsg-user.XXXXXX)
if ! tar -c --exclude=./build --exclude=./.git . | tar -x -C "$work" || ! chown -R "$uid:$gid" "$work"; then
    echo "user-check: cannot copy the tree to $work" >&2
    exit 1
fi
echo "user-check: as $NAME ($uid:$gid), PATH=$USER_PATH, in $work"

# as_user CMD...: CMD as the user, in the copy, with a login's bare
# environment and no capability
as_user() {
    (cd "$work" && setpriv --reuid="$uid" --regid="$gid" --init-groups --inh-caps=-all \
        env -i HOME="$work" PATH="$USER_PATH" USER="$NAME" LOGNAME="$NAME" LANG=C.UTF-8 "$@")
}

# run NAME CMD...: CMD as the user, its output in NAME.log; its status, timed
run() {
    local log=$LOGS/$1.log t=$SECONDS rc=0
    shift
    as_user "$@" >"$log" 2>&1 || rc=$?
    echo "    $* : exit $rc after $((SECONDS - t)) s"
    [ "$rc" -eq 0 ] || tail -n 40 "$log" | sed 's/^/    | /'
    return "$rc"
}

as_user sh -c 'command -v bpftool' >/dev/null &&
    fail "bpftool is in $USER_PATH: this case is not the one to test"
check_path() { ! as_user sh -c 'command -v bpftool' >/dev/null; }
check_path && pass "the user's PATH ($USER_PATH) finds no bpftool"

out=$(as_user make BPFTOOL= build/gate.skel.h 2>&1)
if grep -q 'apt-get install bpftool' <<<"$out"; then
    pass "without bpftool, make says which package provides it"
else
    fail "without bpftool, make does not name its package: ${out##*$'\n'}"
fi
as_user rm -f build/gate.bpf.o

if run make make; then pass "make"; else fail "make"; fi
# the fuzzers run in make check as root already; make deb's own run of the
# tests (dh_auto_test) repeats the make test just made: both left out here
if run test make test FUZZ_S=0; then
    pass "make test ($(grep -E '^(install-check: |doc-check: |[0-9]+ passed)' "$LOGS/test.log" | tr '\n' ' '))"
else
    fail "make test"
fi
if run deb env DEB_BUILD_OPTIONS=nocheck make deb; then
    pass "make deb: $(find "$work/build/deb" -maxdepth 1 -name '*.deb' -printf '%f ')"
else
    fail "make deb"
fi

echo "user-check: $PASSED passed, $FAILED failed"
if [ "$FAILED" -eq 0 ]; then
    rm -rf "$work"
else
    echo "user-check: the copy is left in $work"
fi
[ "$FAILED" -eq 0 ]
