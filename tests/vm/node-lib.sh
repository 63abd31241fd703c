# shellcheck shell=bash
# Helpers for guest scripts that run cuse_bsg: start, stop, counters, compare.
# Source after guest-lib.sh.  CUSE_BSG is the daemon binary to run.

CUSE_BSG=${CUSE_BSG:-$PWD/build/cuse_bsg}
SGCLIENT=${SGCLIENT:-$PWD/build/clients/sgclient}
NULLCUSE=${NULLCUSE:-$PWD/build/clients/nullcuse}
NODE_PID=''
NODE=''
NODE_LOG=''
NODE_OPTS=() # options every node_start adds (the security suite's --cred-check)
# pass, fail and check
. "${BASH_SOURCE[0]%/*}/../check-lib.sh"

# node_start NAME TARGET [OPTIONS...]: run cuse_bsg in the foreground, wait for /dev/NAME
# (ready: its own "serving" line, not an earlier daemon's in the same log)
node_start() {
    local name=$1 target=$2 n0
    shift 2
    NODE=/dev/$name
    NODE_LOG=$VM_OUT/daemon-${name//\//_}.log
    n0=$(grep -c 'serving' "$NODE_LOG" 2>/dev/null) || n0=0
    "$CUSE_BSG" -f -v --name "$name" "${NODE_OPTS[@]}" "$@" "$target" >>"$NODE_LOG" 2>&1 &
    NODE_PID=$!
    # the credential check's programs load first: seconds on a busy emulator
    vm_wait 30 test -c "$NODE" || { cat "$NODE_LOG" >&2; vm_fail "$NODE did not appear"; }
    vm_wait 20 vm_lines_over "$n0" "$NODE_LOG" serving || vm_fail "cuse_bsg did not report readiness"
}

# node_stop: SIGTERM, the daemon must exit 0 and take its node away
node_stop() {
    local rc=0
    kill -TERM "$NODE_PID"
    wait "$NODE_PID" || rc=$?
    [ "$rc" -eq 0 ] || { cat "$NODE_LOG" >&2; vm_fail "cuse_bsg exited $rc on SIGTERM"; }
    vm_wait 5 test ! -e "$NODE" || vm_fail "$NODE still exists after the daemon stopped"
    NODE_PID=''
}

# node_gone_with_last_opener WHAT: the device is gone and the node was
# closed: the node goes, and the daemon exits 0 by itself
node_gone_with_last_opener() {
    local rc=0 by=itself
    check "$1 the node goes once its last opener closed it" vm_wait 10 test ! -e "$NODE"
    # a child that has exited stays a zombie until waited for: kill -0 still finds it
    vm_wait 10 exited "$NODE_PID" || { by="SIGTERM, 10 s later"; kill -TERM "$NODE_PID"; }
    wait "$NODE_PID" || rc=$?
    check "$1 and the daemon exits 0 by itself (status $rc, by $by)" \
        test "$rc" -eq 0 -a "$by" = itself
    NODE_PID=''
}

exited() {  # exited PID: PID is gone, or a zombie
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 0
    [ -z "$state" ] || [ "$state" = Z ]
}

# node_stats [PID LOG [NAME]]: have the daemon log its counters (SIGUSR1) and
# print that line; NAME picks one node's line of --all's line per node.
# Without arguments: the daemon node_start started.
node_stats() {
    local pid=${1:-$NODE_PID} log=${2:-$NODE_LOG} text="${3:+[$3]: }stats:" before
    before=$(grep -cF -- "$text" "$log")
    kill -USR1 "$pid"
    vm_wait 5 vm_lines_over "$before" "$log" "$text" || vm_fail "no stats line in $log"
    grep -F -- "$text" "$log" | tail -n1
}

stats_field() {  # stats_field FIELD LINE: one counter of a stats line
    tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"
}

# node_stat FIELD: a counter from the daemon's SIGUSR1 report
node_stat() {
    stats_field "$1" "$(node_stats)"
}

# Conditions for vm_wait, on node_start's daemon unless said.
node_busy() {  # a command is at the target
    [ "$(node_stat at_target)" -gt 0 ]
}

node_wrote() {  # node_wrote N [PID LOG NAME]: the node has taken N write()s or more
    local n=$1
    shift
    [ "$(stats_field write "$(node_stats "$@")")" -ge "$n" ]
}

node_open_files() {  # opens (refused ones too) less releases
    local s
    s=$(node_stats)
    echo $(($(stats_field open "$s") - $(stats_field release "$s")))
}

# node_settled N: no command at the target or queued, N node_open_files, and
# N openers alive (an opener outlives its file while a command of it runs,
# and is freed, descriptors and all, by whichever thread drops it last)
node_settled() {
    local s
    s=$(node_stats)
    [ "$(stats_field at_target "$s")" = 0 ] && [ "$(stats_field queued "$s")" = 0 ] &&
        [ $(($(stats_field open "$s") - $(stats_field release "$s"))) = "$1" ] &&
        [ "$(stats_field openers "$s")" = "$1" ]
}

# fio_verify_only RW: fio's --verify_only for a pass of a verifying job: the
# read pass checks, header by header, what the write pass left
fio_verify_only() {
    if [ "$1" = randread ]; then echo --verify_only=1; else echo --verify_only=0; fi
}

# normalise: device names and times out of a tool's output
normalise() {
    sed -e "s#$1#DEV#g" -e "s#${1#/dev/}#DEV#g" -e 's/^Local Time is:.*//' \
        -e 's/[0-9]\+ *ms//g'
}

# same NAME DIRECT CMD-with-@DEV@...: the output through the node equals the
# output against DIRECT, exit status included.  KNOWN, if set, is a sed
# script for the direct side's output: a documented, deliberate difference.
same() {
    local name=$1 direct=$2 a b ra=0 rb=0
    shift 2
    a=$("${@//@DEV@/$direct}" 2>&1) || ra=$?
    b=$("${@//@DEV@/$NODE}" 2>&1) || rb=$?
    a="$(printf '%s\nexit %s\n' "$a" "$ra" | normalise "$direct" | sed -e "${KNOWN:-}")"
    b="$(printf '%s\nexit %s\n' "$b" "$rb" | normalise "$NODE")"
    if [ "$a" = "$b" ]; then
        pass "$name"
    else
        fail "$name"
        diff <(echo "$a") <(echo "$b") | head -n 40
    fi
}

summary() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}
