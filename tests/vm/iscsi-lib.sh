#!/bin/bash
# tgt + iSCSI on 127.0.0.1 for the VM scripts (iscsi.sh, bench.sh): tgtd
# exporting an sg node as a passthrough LUN, and libiscsi's iscsi-perf
# driving it.  Sourced after guest-lib.sh.

IQN=iqn.2025-01.org.cuse-bsg:pt
URL=iscsi://127.0.0.1/$IQN/1
PERF_SECONDS=${PERF_SECONDS:-6}
TGTD_PID=''
TGTD_LOG=''

# tgt_start LABEL DEV: tgtd on 127.0.0.1:3260, DEV as LUN 1 (passthrough)
tgt_start() {
    TGTD_LOG=$VM_OUT/tgtd-$1.log
    tgtd -f --iscsi portal=127.0.0.1:3260 >"$TGTD_LOG" 2>&1 &
    TGTD_PID=$!
    vm_wait 10 tgtadm --lld iscsi --op show --mode target >/dev/null 2>&1 ||
        { cat "$TGTD_LOG" >&2; vm_fail "tgtd did not answer tgtadm"; }
    vm_run tgtadm --lld iscsi --op new --mode target --tid 1 -T "$IQN"
    if ! tgtadm --lld iscsi --op new --mode logicalunit --tid 1 --lun 1 \
        --bstype sg --device-type pt -b "$2"; then
        cat "$TGTD_LOG" >&2
        return 1
    fi
    vm_run tgtadm --lld iscsi --op bind --mode target --tid 1 -I ALL
}

# tgt_stop: the LUN, the target, then tgtd itself; killed if it lingers
tgt_stop() {
    tgtadm --lld iscsi --op delete --mode logicalunit --tid 1 --lun 1 >/dev/null 2>&1
    tgtadm --lld iscsi --op delete --mode target --tid 1 >/dev/null 2>&1
    tgtadm --op delete --mode system >/dev/null 2>&1
    vm_wait 10 bash -c "! kill -0 $TGTD_PID 2>/dev/null" || kill -KILL "$TGTD_PID"
    wait "$TGTD_PID" 2>/dev/null
    TGTD_PID=''
}

# tgtd's failed write()s of a v3 header with EDOM (33) so far
tgt_edom() { grep -c 'write failed, errno: 33' "$TGTD_LOG"; }

# perf_one OUT DEPTH [ARGS]: iscsi-perf, random 4 KiB reads, DEPTH in flight,
# for PERF_SECONDS; its output in OUT; its exit status (1: a command failed
# and it stopped; with -n it goes on, a line per failure).  Not its own -t:
# it ends only if a completion comes during its last second, and its NOP
# alarm undoes the end when none is in flight; SIGTERM ends it (drained, exit
# 0), a second one if the alarm undid the first (exit 0, "ABORTED!").
perf_one() {
    local out=$1 depth=$2 pid rc=0 sig
    shift 2
    iscsi-perf -r -m "$depth" "$@" "$URL" >"$out.raw" 2>&1 &
    pid=$!
    vm_wait "$PERF_SECONDS" bash -c "! kill -0 $pid 2>/dev/null" # ends early on a failure
    for sig in TERM TERM KILL; do
        kill -0 "$pid" 2>/dev/null || break
        kill -"$sig" "$pid"
        vm_wait 10 bash -c "! kill -0 $pid 2>/dev/null" && break
    done
    wait "$pid" || rc=$?
    tr '\r' '\n' <"$out.raw" >"$out"
    rm -f "$out.raw"
    return $rc
}

iops_of() { grep -o 'iops average [0-9]*' "$1" | tail -n1 | awk '{print $3}'; }
