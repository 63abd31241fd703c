#!/bin/bash
# The node reached from the network: tgtd (package tgt) exports it as an
# iSCSI passthrough LUN (--bstype sg --device-type pt) on 127.0.0.1, and
# libiscsi's initiator tools use it, side by side with the kernel's sg
# exported the same way.  tgt's sg backing store write()s one v3 header per
# command and read()s the completions, as many at once as its initiators
# send (tgt's MaxQueueCmd bounds commands not yet received, not those
# running); sg refuses the 17th outstanding with EDOM, which tgt logs and
# turns into a failed command (HARDWARE ERROR).  The node does the same at
# its default depth and takes them all with --queue-depth.
#
# tgt takes only sg's char major (21) for --bstype sg (bs_sg.c's
# chk_sg_device(); a /dev/bsg path must match /sys/class/bsg's major), so the
# node is registered as /dev/sg0 with --sg-compat 0, the sg driver unloaded,
# on the device's bsg node: its written commands run on the pool.  A deeper
# queue on an sg target, where the daemon holds back all but sg's 16 slots,
# is checked with fio's sg engine before sg is unloaded.
#
# Each target is measured with scsi_debug as it comes (fast: IOPS), then
# with every command taking SLOW_NS (a slow device, and under TCG the one
# way a node, which costs tgt's single thread far more per command than
# sg, gets more than 16 commands outstanding at once).
set -uo pipefail
. "$(dirname "$0")/guest-lib.sh"
. "$(dirname "$0")/node-lib.sh"
. "$(dirname "$0")/iscsi-lib.sh"

SLOW_NS=300000000
RAISED=128
NDELAY=/sys/bus/pseudo/drivers/scsi_debug/ndelay
KERNEL_VIEW=''

# slow NS: every scsi_debug command takes NS nanoseconds (0: as it comes);
# refused while commands are queued
slow() { vm_wait 10 bash -c "echo $1 >$NDELAY" 2>/dev/null || vm_fail "cannot set $NDELAY"; }

# perf LABEL DEPTH [ARGS]: perf_one, then PERF_RC, PERF_IOPS (with -n failed
# commands count too), PERF_FAILED, PERF_EDOM (tgtd's EDOMs during the run),
# printed on one line
perf() {
    local label=$1 depth=$2 out before
    shift 2
    out=$VM_OUT/perf-$(tr -c 'a-z0-9\n' '-' <<<"${label,,}")-$depth${1:+$1}.txt
    before=$(tgt_edom)
    PERF_RC=0
    perf_one "$out" "$depth" "$@" || PERF_RC=$?
    PERF_IOPS=$(iops_of "$out")
    PERF_FAILED=$(grep -c 'failed with' "$out")
    PERF_EDOM=$(($(tgt_edom) - before))
    printf '   %-36s in flight %3d: exit %d, %5s IOPS, %4d failed, %4d EDOM in tgtd\n' \
        "$label" "$depth" "$PERF_RC" "${PERF_IOPS:-none}" "$PERF_FAILED" "$PERF_EDOM"
}

# none_failed LABEL: the last perf ran to its end, every command good
none_failed() {
    check "$1" test "$PERF_RC" -eq 0 -a "$PERF_FAILED" -eq 0 -a "$PERF_EDOM" -eq 0 -a -n "$PERF_IOPS"
}

# the initiator's view of the LUN: INQUIRY and READ CAPACITY(16)
lun_view() {
    timeout 30 iscsi-inq "$URL" 2>&1 | grep -E '^(Peripheral Device Type|Vendor|Product):'
    timeout 30 iscsi-readcapacity16 "$URL" 2>&1 | grep -E '^(LOGICAL BLOCK LENGTH|Total size)'
}

kernel_sg() {
    vm_log "kernel sg ($VM_SG) exported by tgt"
    tgt_start kernel "$VM_SG" || vm_fail "tgt refused $VM_SG"
    KERNEL_VIEW=$(lun_view)
    echo "   ${KERNEL_VIEW//$'\n'/$'\n'   }"
    check "kernel sg: iscsi-inq sees scsi_debug through tgt" grep -q 'Product:scsi_debug' <<<"$KERNEL_VIEW"
    perf "kernel sg" 16
    none_failed "kernel sg: 16 in flight, all good"
    perf "kernel sg" 64 -n
    slow $SLOW_NS
    perf "kernel sg, slow device" 16
    none_failed "kernel sg, slow device: 16 in flight, all good"
    perf "kernel sg, slow device" 64 -n
    check "kernel sg, slow device: 64 in flight, tgt's write()s past sg's 16 get EDOM, commands fail" \
        test "$PERF_EDOM" -gt 0 -a "$PERF_FAILED" -gt 0
    perf "kernel sg, slow device" 64
    check "kernel sg, slow device: 64 in flight, iscsi-perf stops at the first failed command" \
        test "$PERF_RC" -ne 0 -a "$PERF_EDOM" -gt 0
    slow 0
    tgt_stop
}

# fio's sg engine past 16 on the node over an sg target: held back, in order
sg_target_deep() {
    local rw out
    vm_log "node over $VM_SG with --queue-depth 64: deeper than sg's slots"
    node_start bsg/deep-cuse "$VM_SG" --queue-depth 64
    check "an sg target: written commands go to its own queue" grep -q "own queue" "$NODE_LOG"
    for rw in randwrite randread; do
        out=$(timeout 300 fio --name=t --filename="$NODE" --ioengine=sg --bs=4k --size=4M \
            --rw="$rw" --iodepth=64 --verify=crc32c --do_verify=1 --verify_state_save=0 \
            "$(fio_verify_only "$rw")" 2>&1)
        check "--queue-depth 64 on sg: fio $rw iodepth=64 verify=crc32c" grep -q 'err= 0' <<<"$out"
        grep -E 'IOPS' <<<"$out" | head -n1
    done
    node_stop
}

# node_tgt_start LABEL [OPTIONS]: the node as /dev/sg0 (char 21:0) through tgt
node_tgt_start() {
    local label=$1
    shift
    node_start sg0 "$VM_BSG" --sg-compat 0 "$@"
    check "$label: /dev/sg0 is the node, char 21:0" test "$(stat -c '%t:%T' /dev/sg0)" = "15:0"
    tgt_start "$(tr -c 'a-z0-9\n' '-' <<<"$label")" /dev/sg0 ||
        { fail "$label: tgt takes the node as a passthrough LUN"; return 1; }
    pass "$label: tgt takes the node as a passthrough LUN (--bstype sg --device-type pt)"
    check "$label: iscsi-inq and iscsi-readcapacity16 as for the kernel's sg" \
        test "$(lun_view)" = "$KERNEL_VIEW"
}

node_default() {
    vm_log "node at its default queue depth (16, as sg)"
    node_tgt_start "node" || { node_stop; return; }
    perf "node" 16
    none_failed "node: 16 in flight, all good"
    perf "node" 64 -n
    slow $SLOW_NS
    perf "node, slow device" 16
    none_failed "node, slow device: 16 in flight, all good"
    perf "node, slow device" 64 -n
    check "node, slow device: 64 in flight, write()s past 16 get EDOM as from sg, commands fail" \
        test "$PERF_EDOM" -gt 0 -a "$PERF_FAILED" -gt 0
    slow 0
    tgt_stop
    node_stop
}

# tgt runs every session of a LUN on its one descriptor: two of 64 each
two_sessions() {
    local a=$VM_OUT/perf-two-a.txt b=$VM_OUT/perf-two-b.txt ra=0 rb=0 before pa pb edom
    before=$(tgt_edom)
    perf_one "$a" 64 -i iqn.2025-01.org.cuse-bsg:a &
    pa=$!
    perf_one "$b" 64 -i iqn.2025-01.org.cuse-bsg:b &
    pb=$!
    wait $pa || ra=$?
    wait $pb || rb=$?
    edom=$(($(tgt_edom) - before))
    echo "   two sessions of 64 each: exit $ra and $rb, $(iops_of "$a") + $(iops_of "$b") IOPS," \
        "$edom EDOM in tgtd"
    check "$1: two sessions of 64 at once on tgt's one descriptor, all good" \
        test "$ra" -eq 0 -a "$rb" -eq 0 -a "$edom" -eq 0
}

node_raised() {
    local label="node --queue-depth $RAISED"
    vm_log "node with --queue-depth $RAISED"
    node_tgt_start "$label" --queue-depth "$RAISED" || { node_stop; return; }
    perf "$label" 16
    perf "$label" 64
    none_failed "$label: 64 in flight, all good"
    slow $SLOW_NS
    perf "$label, slow device" 16
    perf "$label, slow device" 64 -n
    none_failed "$label, slow device: 64 in flight, no EDOM, no failed command"
    # without -n, iscsi-perf stops at the first failed command
    perf "$label, slow device" "$RAISED"
    none_failed "$label, slow device: $RAISED in flight, iscsi-perf completes"
    two_sessions "$label, slow device"
    slow 0
    tgt_stop
    node_stop
}

T0=$SECONDS
{ command -v tgtd >/dev/null && command -v iscsi-perf >/dev/null; } ||
    vm_fail "tgtd or iscsi-perf missing: ./setup installs tgt and libiscsi-bin"
vm_run ip link set lo up
# shellcheck disable=SC2119  # scsi_debug's default parameters
vm_load_scsi_debug
[ -n "$VM_SG" ] || vm_fail "no sg node for scsi_debug"
kernel_sg
sg_target_deep
vm_unload_sg
node_default
node_raised
echo "iscsi suite: $((SECONDS - T0)) s"
summary
