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

# one pattern: bench NAME SGCLIENT-ARGS-with-@DEV@ (devices: sg, bsg, direct, retry).
# A device that refuses the pattern in any round (sgclient prints no rate) gets n/a.
bench() {
    local name=$1 r dev out
    shift
    declare -A res=() failed=()
    for r in $(seq "$ROUNDS"); do
        for dev in sg bsg direct retry; do
            # kernel bsg takes only v4 headers; the others get sg's v3
            if out=$(env ${V4[$dev]:-} "$SGCLIENT" "${@//@DEV@/${DEVS[$dev]}}" 2>>"$VM_OUT/sgclient.err") &&
                [ -n "$out" ]; then
                res[$dev]+="$out "
            else
                failed[$dev]=1
            fi
        done
    done
    for dev in sg bsg direct retry; do
        res[$dev]=$(tr ' ' '\n' <<<"${res[$dev]:-}" | grep . | median)
        [ -z "${failed[$dev]:-}" ] || res[$dev]=''
    done
    awk -v n="$name" -v s="${res[sg]}" -v b="${res[bsg]}" -v d="${res[direct]}" -v r="${res[retry]}" '
        function cell(v, base) {
            if (v == "") return "n/a"
            return base > 0 ? sprintf("%d (%.2f)", v, v / base) : sprintf("%d", v)
        }
        function num(v) { return v == "" ? "n/a" : sprintf("%d", v) }
        BEGIN { printf "| %-22s | %9s | %10s | %23s | %23s |\n", n, num(s), num(b), cell(d, s), cell(r, s) }'
}

vm_load_scsi_debug dev_size_mb=16 delay=0
declare -A DEVS=([sg]=$VM_SG [bsg]=$VM_BSG) V4=([bsg]=SGCLIENT_V4=1)
"$CUSE_BSG" -f --name bsg/direct-cuse --copy=direct "$VM_SG" >"$VM_OUT/direct.log" 2>&1 &
"$CUSE_BSG" -f --name bsg/retry-cuse --copy=retry "$VM_SG" >"$VM_OUT/retry.log" 2>&1 &
vm_wait 10 test -c /dev/bsg/direct-cuse -a -c /dev/bsg/retry-cuse || vm_fail "no daemons"
DEVS[direct]=/dev/bsg/direct-cuse DEVS[retry]=/dev/bsg/retry-cuse
echo "kernel $(uname -r), $(nproc) vCPU (TCG), scsi_debug delay=0; ops/s, medians of $ROUNDS"
echo
echo "| pattern                | kernel sg | kernel bsg | node, direct copy (/sg) | node, ioctl retry (/sg) |"
echo "|------------------------|----------:|-----------:|------------------------:|------------------------:|"
bench "TEST UNIT READY" tur @DEV@ "$N"
bench "READ 4 KiB" read-loop @DEV@ "$N" 4096
bench "READ 64 KiB" read-loop @DEV@ $((N / 4)) 65536
bench "READ 1 MiB" read-loop @DEV@ $((N / 20)) 1048576

# --- asynchronous: fio's sg engine, IOPS against queue depth ---
FIO_TIME=${FIO_TIME:-3}
fio_iops() {  # fio_iops DEV QD: randread 4k IOPS
    fio --name=b --filename="$1" --ioengine=sg --rw=randread --bs=4k --size=16M \
        --iodepth="$2" --runtime="$FIO_TIME" --time_based --output-format=terse 2>/dev/null |
        awk -F';' '{print $8}'
}

fio_sweep() {  # fio_sweep LABEL: rows of QD, kernel IOPS, node IOPS, ratio
    local label=$1 qd r k n ks ns
    for qd in 1 4 8 16; do
        ks='' ns=''
        for r in $(seq "$ROUNDS"); do
            ks+="$(fio_iops "$VM_SG" $qd) "
            ns+="$(fio_iops /dev/bsg/direct-cuse $qd) "
        done
        k=$(tr ' ' '\n' <<<"$ks" | grep . | median)
        n=$(tr ' ' '\n' <<<"$ns" | grep . | median)
        awk -v l="$label" -v q=$qd -v k="$k" -v n="$n" \
            'BEGIN { printf "| %-16s | %5d | %9d | %9d | %5.2f |\n", l, q, k, n, n / k }'
        echo "$label,$qd,$k,$n" >>"$VM_OUT/fio.csv"
    done
}

requests_per_command() {  # FUSE requests the node took per fio command, at QD $1
    local before after cmds
    before=$(fuse_total) cmds=2000
    fio --name=c --filename=/dev/bsg/direct-cuse --ioengine=sg --rw=randread --bs=4k \
        --size=16M --iodepth="$1" --number_ios=$cmds >/dev/null 2>&1
    after=$(fuse_total)
    awk -v q="$1" -v d=$((after - before)) -v c=$cmds \
        'BEGIN { printf "| fio randread 4k, QD %-2d | %.2f |\n", q, d / c }'
}

journal_stats() { grep 'stats:' "$VM_OUT/direct.log"; }

fuse_total() {  # every FUSE request the direct daemon has taken
    local pid
    pid=$(pgrep -f 'bsg/direct-cuse' | head -n1)
    kill -USR1 "$pid"
    sleep 0.2
    journal_stats | tail -n1 | tr ' ' '\n' |
        awk -F= '$1 ~ /^(open|release|read|write|ioctl|poll)$/ { s += $2 } END { print s }'
}

echo
echo "fio --ioengine=sg --rw=randread --bs=4k, IOPS (medians of $ROUNDS runs of ${FIO_TIME} s)"
echo
echo "| scsi_debug       | iodepth | kernel sg | node      | node/kernel |"
echo "|------------------|--------:|----------:|----------:|------:|"
: >"$VM_OUT/fio.csv"
fio_sweep "delay=0"
echo 20000000 >/sys/bus/pseudo/drivers/scsi_debug/ndelay
fio_sweep "ndelay=20ms"
sync_qd1=$(SGCLIENT_V4=1 "$SGCLIENT" read-loop "$VM_BSG" 50 4096)
echo
echo "20 ms device: synchronous READ 4 KiB on kernel bsg, one at a time: $sync_qd1 ops/s"
echo 0 >/sys/bus/pseudo/drivers/scsi_debug/ndelay
echo
echo "| pattern                 | FUSE requests per command |"
echo "|-------------------------|------:|"
requests_per_command 1
requests_per_command 16
pkill -TERM -x cuse_bsg
