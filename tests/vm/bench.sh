#!/bin/bash
# make bench: synchronous SG_IO through the kernel's sg and bsg nodes and
# through cuse_bsg (both data paths), side by side in one boot.  Medians of
# ROUNDS interleaved runs; ratios against kernel sg.  Not a test: no thresholds.
set -uo pipefail
. "$(dirname "$0")/guest-lib.sh"
. "$(dirname "$0")/node-lib.sh"

ROUNDS=${ROUNDS:-5}
N=${N:-2000}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# one pattern: bench NAME SGCLIENT-ARGS-with-@DEV@ (devices: sg, bsg, direct, retry)
bench() {
    local name=$1 r dev
    shift
    declare -A res=()
    for r in $(seq "$ROUNDS"); do
        for dev in sg bsg direct retry; do
            # kernel bsg takes only v4 headers; the others get sg's v3
            res[$dev]+="$(env ${V4[$dev]:-} "$SGCLIENT" "${@//@DEV@/${DEVS[$dev]}}") "
        done
    done
    for dev in sg bsg direct retry; do
        res[$dev]=$(tr ' ' '\n' <<<"${res[$dev]}" | grep . | median)
    done
    awk -v n="$name" -v s="${res[sg]}" -v b="${res[bsg]}" -v d="${res[direct]}" -v r="${res[retry]}" \
        'BEGIN { printf "| %-22s | %9d | %10d | %13d (%.2f) | %13d (%.2f) |\n", n, s, b, d, d / s, r, r / s }'
}

vm_load_scsi_debug dev_size_mb=16 delay=0
declare -A DEVS=([sg]=$VM_SG [bsg]=$VM_BSG) V4=([bsg]=SGCLIENT_V4=1)
"$CUSE_BSG" --name bsg/direct-cuse --copy=direct "$VM_SG" || vm_fail "no direct daemon"
"$CUSE_BSG" --name bsg/retry-cuse --copy=retry "$VM_SG" || vm_fail "no retry daemon"
DEVS[direct]=/dev/bsg/direct-cuse DEVS[retry]=/dev/bsg/retry-cuse
echo "kernel $(uname -r), $(nproc) vCPU (TCG), scsi_debug delay=0; ops/s, medians of $ROUNDS"
echo
echo "| pattern                | kernel sg | kernel bsg | node, direct copy (/sg) | node, ioctl retry (/sg) |"
echo "|------------------------|----------:|-----------:|------------------------:|------------------------:|"
bench "TEST UNIT READY" tur @DEV@ "$N"
bench "READ 4 KiB" read-loop @DEV@ "$N" 4096
bench "READ 64 KiB" read-loop @DEV@ $((N / 4)) 65536
pkill -TERM -x cuse_bsg
