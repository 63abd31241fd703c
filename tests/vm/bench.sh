#!/bin/bash
# make bench: synchronous SG_IO through the kernel's sg and bsg nodes, through
# cuse_bsg (both data paths) and through tests/clients/nullcuse.c, a CUSE node that
# answers at once (the floor any CUSE design pays), side by side in one boot;
# then fio's sg engine the same way.  Medians of ROUNDS interleaved runs;
# ratios against kernel sg, and the node's against the null responder's.
# Not a test: no thresholds.
set -uo pipefail
. "$(dirname "$0")/guest-lib.sh"
. "$(dirname "$0")/node-lib.sh"
. "$(dirname "$0")/iscsi-lib.sh"

# "qd16": only fio randread 4k at QD 16, delay=0 (make bench's second boot,
# with the guest's default idle, to show what idle=poll changes); "ioctl":
# only the sg v4 ioctls' rows (make bench-ioctl); "iscsi": only the
# application, tgt over iSCSI (make bench-iscsi); "cost": only the CPU time
# and context switches per command (make bench-cost); "load": fio at QD 16
# on an idle guest and on one kept busy (make bench-load); "gate": only the
# credential gate's cost to other reads (make bench-gate); "ab": this build
# against an earlier commit's (make bench-ab); "curve": the node / kernel
# sg against the device's latency, this build and an earlier commit's
# (make bench-curve); "profile": perf in the guest,
# where the time of one command goes, the node beside the null responder
# (make bench-profile).  Each boot ends
# with the command path's targets it measured, pass or miss.
MODE=${1:-all}
# the profile's daemon and null responder: the same code with frame
# pointers, which perf's call graphs follow (make bench-profile builds them)
[ "$MODE" != profile ] || CUSE_BSG=$PWD/build/profile/cuse_bsg NULLCUSE=$PWD/build/profile/nullcuse
# after the mode, PROF_TIME=SECONDS: the profile's windows (make bench-profile PROF_TIME=2);
# AB_CHECK=MODE: the ab boot's third column (make bench-ab AB_CHECK=kernel)
for a in "${@:2}"; do
    case $a in
        PROF_TIME=[1-9]*) PROF_TIME=${a#PROF_TIME=} ;;
        AB_CHECK=witness | AB_CHECK=kernel | AB_CHECK=procfs) AB_CHECK=${a#AB_CHECK=} ;;
        *) vm_fail "bench.sh: unknown setting '$a'" ;;
    esac
done
V4IO=$PWD/build/clients/sgv4io
ROUNDS=${ROUNDS:-5}
N=${N:-2000}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
med() { tr ' ' '\n' | grep . | median; }

# ratio A B: A / B to two places, or nothing if either is missing
# set_ndelay NS: scsi_debug's time per command, NS nanoseconds; 0 is delay=0,
# the answer inside the call that submits it (scsi_debug takes ndelay=0 back
# to its default delay of one jiffy, so delay is set too)
set_ndelay() {
    local d=/sys/bus/pseudo/drivers/scsi_debug
    vm_wait 10 bash -c "echo $1 >$d/ndelay" 2>/dev/null || vm_fail "cannot set scsi_debug ndelay to $1"
    [ "$1" != 0 ] || vm_wait 10 bash -c "echo 0 >$d/delay" 2>/dev/null ||
        vm_fail "cannot set scsi_debug delay to 0"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b + 0 > 0) printf "%.2f", a / b }'; }

# target WHAT VALUE GOAL [le]: one of the command path's targets (docs/BENCHMARKS.md),
# measured VALUE against GOAL (at least it; with le, at most it): a row of
# targets.txt, which targets_print shows at the end of the boot
target() {
    awk -v w="$1" -v v="$2" -v g="$3" -v op="${4:-ge}" 'BEGIN {
        if (v == "") r = "n/a"
        else if (op == "le") r = v + 0 <= g + 0 ? "pass" : "miss"
        else r = v + 0 >= g + 0 ? "pass" : "miss"
        printf "| %-62s | %8s | %2s %-5s | %-4s |\n", w, v == "" ? "n/a" : v, op == "le" ? "<=" : ">=", g, r
    }' >>"$VM_OUT/targets.txt"
}

targets_print() {
    [ -s "$VM_OUT/targets.txt" ] || return 0
    echo
    echo "Targets, $IDLE: pass or miss (n/a: not measured, e.g. EDOM)"
    echo
    echo "| target                                                         | measured | goal     |      |"
    echo "|----------------------------------------------------------------|---------:|----------|------|"
    cat "$VM_OUT/targets.txt"
}

# one pattern: bench NAME SGCLIENT-ARGS-with-@DEV@ (devices: sg, bsg, direct, retry, null).
# A device that refuses the pattern in any round (sgclient prints no rate) gets n/a.
bench() {
    local name=$1 dev out
    shift
    declare -A res=() failed=()
    for _ in $(seq "$ROUNDS"); do
        for dev in sg bsg direct retry null; do
            # kernel bsg takes only v4 headers; the others get sg's v3
            if out=$(env ${V4[$dev]:+"${V4[$dev]}"} "$SGCLIENT" "${@//@DEV@/${DEVS[$dev]}}" 2>>"$VM_OUT/sgclient.err") &&
                [ -n "$out" ]; then
                res[$dev]+="$out "
            else
                failed[$dev]=1
            fi
        done
    done
    for dev in sg bsg direct retry null; do
        res[$dev]=$(tr ' ' '\n' <<<"${res[$dev]:-}" | grep . | median)
        [ -z "${failed[$dev]:-}" ] || res[$dev]=''
    done
    awk -v n="$name" -v s="${res[sg]}" -v b="${res[bsg]}" -v d="${res[direct]}" -v r="${res[retry]}" \
        -v z="${res[null]}" '
        function cell(v, base) {
            if (v == "") return "n/a"
            return base > 0 ? sprintf("%d (%.2f)", v, v / base) : sprintf("%d", v)
        }
        function num(v) { return v == "" ? "n/a" : sprintf("%d", v) }
        function ratio(v, base) { return v == "" || !(base > 0) ? "n/a" : sprintf("%.2f", v / base) }
        BEGIN { printf "| %-22s | %9s | %10s | %23s | %23s | %14s | %9s |\n", n, num(s), num(b),
                cell(d, s), cell(r, s), num(z), ratio(d, z) }'
}

FIO_TIME=${FIO_TIME:-3}
fio_iops() {  # fio_iops DEV QD [RW BS]: randread 4k IOPS (nothing if fio failed)
    fio --name=b --filename="$1" --ioengine=sg --rw="${3:-randread}" --bs="${4:-4k}" --size=16M \
        --iodepth="$2" --runtime="$FIO_TIME" --time_based --output-format=terse 2>/dev/null |
        awk -F';' '$5 == 0 {print $8}'
}

# medians_iops "QD [RW BS]" DEV...: ROUNDS rounds of fio_iops on each DEV in
# turn; each DEV's median, in order, a line each (empty if fio failed)
medians_iops() {
    local args=$1 d i
    local -a runs=()
    shift
    for _ in $(seq "$ROUNDS"); do
        i=0
        for d in "$@"; do
            # shellcheck disable=SC2086 # QD [RW BS]: words on purpose
            runs[i]+="$(fio_iops "$d" $args) "
            i=$((i + 1))
        done
    done
    for i in "${!runs[@]}"; do
        printf '%s\n' "$(med <<<"${runs[i]}")"
    done
}

# ab_bench: this build against an earlier commit's (build/base/cuse_bsg, made
# by make bench-ab), the same options, interleaved in one boot: SG_IO and
# fio; the build also with --cred-check=AB_CHECK (after the mode: AB_CHECK=MODE;
# procfs unless told), an earlier commit's check
ab_bench() {
    local base=$PWD/build/base/cuse_bsg w b row
    declare -A R=()
    [ -x "$base" ] || vm_fail "no $base: make bench-ab builds it"
    "$base" -f --name bsg/base-cuse "$VM_SG" >"$VM_OUT/base.log" 2>&1 &
    "$CUSE_BSG" -f --name bsg/new-cuse "$VM_SG" >"$VM_OUT/new.log" 2>&1 &
    "$CUSE_BSG" -f --name bsg/newp-cuse --cred-check="${AB_CHECK:-procfs}" "$VM_SG" \
        >"$VM_OUT/newp.log" 2>&1 &
    vm_wait 60 test -c /dev/bsg/base-cuse -a -c /dev/bsg/new-cuse -a -c /dev/bsg/newp-cuse ||
        vm_fail "no daemons: $(cat "$VM_OUT"/{base,new,newp}.log)"
    for _ in $(seq "$ROUNDS"); do
        for w in base new newp; do
            R[$w,tur]+="$("$SGCLIENT" tur /dev/bsg/$w-cuse "$N") "
            R[$w,read]+="$("$SGCLIENT" read-loop /dev/bsg/$w-cuse "$N" 4096) "
            R[$w,fio1]+="$(fio_iops /dev/bsg/$w-cuse 1) "
            R[$w,fio16]+="$(fio_iops /dev/bsg/$w-cuse 16) "
        done
    done
    echo "kernel $(uname -r), $(nproc) vCPU (TCG), $IDLE, scsi_debug delay=0; medians of $ROUNDS"
    echo "base: $(cat "$PWD/build/base/commit"); this build: default (--cred-check=auto) and ${AB_CHECK:-procfs}"
    echo
    printf "| pattern                  |     base | this build | /base | %6s | /base |\n" "${AB_CHECK:-procfs}"
    echo "|--------------------------|---------:|-----------:|------:|-------:|------:|"
    for row in "tur:SG_IO TEST UNIT READY" "read:SG_IO READ 4 KiB" "fio1:fio randread 4k QD 1" \
        "fio16:fio randread 4k QD 16"; do
        w=${row%%:*} b=$(med <<<"${R[base,$w]}")
        printf "| %-24s | %8s | %10s | %5s | %6s | %5s |\n" "${row#*:}" "$b" \
            "$(med <<<"${R[new,$w]}")" "$(ratio "$(med <<<"${R[new,$w]}")" "$b")" \
            "$(med <<<"${R[newp,$w]}")" "$(ratio "$(med <<<"${R[newp,$w]}")" "$b")"
    done
}

# gate_load WHICH [N]: until gate_unload, N (1) of: a null responder with
# the LSM gate (lsm) or the witness (witness), or programs on the gate's
# hooks that decide nothing (hook)
gate_load() {
    local log i
    GATE_PIDS=()
    for i in $(seq "${2:-1}"); do
        log=$VM_OUT/gatecost-$i.log
        : >"$log"
        case $1 in
            hook) "$PWD/build/clients/lsmhook" >>"$log" 2>&1 & ;;
            lsm) "$NULLCUSE" -f --name "bsg/gatecost$i-cuse" --gate >>"$log" 2>&1 & ;;
            witness) "$NULLCUSE" -f --name "bsg/gatecost$i-cuse" --witness >>"$log" 2>&1 & ;;
        esac
        GATE_PIDS+=($!)
        vm_wait 30 grep -q 'lsmhook: attached\|credential check: ' "$log" ||
            vm_fail "$1 did not load: $(cat "$log")"
    done
}

gate_unload() {
    kill -TERM "${GATE_PIDS[@]}"
    wait "${GATE_PIDS[@]}"
}

# gate_cost: what each check costs every other read() on the machine: a
# pread() loop on a tmpfs file and on /dev/null with no program, with
# programs on the LSM gate's hooks that decide nothing (the hooks' own
# entry), with the LSM gate and with the witness, of one and of four
# daemons, interleaved; before any daemon of the benchmark starts
gate_cost() {
    local f=/tmp/gate-cost r w a h l l4 t t4
    declare -A K=()
    head -c 4096 /dev/zero >$f
    for _ in $(seq "$ROUNDS"); do
        for w in without hook lsm lsm4 witness witness4; do
            [ $w = without ] || gate_load "${w%4}" "$([ "${w%4}" = $w ] && echo 1 || echo 4)"
            for r in $f /dev/null; do
                K[$w,$r]+="$("$PREADLOOP" "$r" "${GATE_N:-400000}") "
            done
            [ $w = without ] || gate_unload
        done
    done
    echo
    echo "Each check's cost to every other read(): pread() of 1 byte, calls/s (medians of $ROUNDS"
    echo "interleaved runs of ${GATE_N:-400000}), with no program, with programs on the LSM gate's"
    echo "hooks that decide nothing (hook), with the LSM gate (--cred-check=kernel) and with the"
    echo "witness (the default), each of one daemon and of four (x4)"
    echo
    echo "| file      |  without |     hook |      lsm |   lsm x4 |  witness | witness x4 | hook/w/o | lsm/w/o | lsm x4/w/o | witness/w/o | witness x4/w/o |"
    echo "|-----------|---------:|---------:|---------:|---------:|---------:|-----------:|---------:|--------:|-----------:|------------:|---------------:|"
    for r in $f /dev/null; do
        a=$(med <<<"${K[without,$r]}") h=$(med <<<"${K[hook,$r]}") l=$(med <<<"${K[lsm,$r]}")
        l4=$(med <<<"${K[lsm4,$r]}") t=$(med <<<"${K[witness,$r]}") t4=$(med <<<"${K[witness4,$r]}")
        printf "| %-9s | %8s | %8s | %8s | %8s | %8s | %10s | %8s | %7s | %10s | %11s | %14s |\n" \
            "$([ "$r" = $f ] && echo tmpfs || echo /dev/null)" "$a" "$h" "$l" "$l4" "$t" "$t4" \
            "$(ratio "$h" "$a")" "$(ratio "$l" "$a")" "$(ratio "$l4" "$a")" "$(ratio "$t" "$a")" \
            "$(ratio "$t4" "$a")"
        target "a daemon in the default mode, pread() loop on $([ "$r" = $f ] && echo tmpfs || echo /dev/null): with / without" \
            "$(ratio "$t" "$a")" 0.99
        target "... four daemons in the default mode: with / without" "$(ratio "$t4" "$a")" 0.99
    done
}

# witness_cuse: what each check costs a call on a CUSE node, fio's sg engine
# at QD 1 and 16: the null responder plain, with the witness (nullw) and
# with the LSM gate (nullg); the node with the witness (nodew) and with the
# LSM gate (nodek); each alone, and with three idle daemons of its kind
# beside it (x4), whose programs every call runs too; interleaved rounds
witness_cuse() {
    local c n qd i
    declare -A F=() row=()
    for _ in $(seq "$ROUNDS"); do
        for n in 1 4; do
            for c in null nullw nullg nodew nodek; do
                case $c in
                    null) "$NULLCUSE" -f --name bsg/wc-cuse >"$VM_OUT/wc.log" 2>&1 & ;;
                    nullw) "$NULLCUSE" -f --name bsg/wc-cuse --witness >"$VM_OUT/wc.log" 2>&1 & ;;
                    nullg) "$NULLCUSE" -f --name bsg/wc-cuse --gate >"$VM_OUT/wc.log" 2>&1 & ;;
                    nodew) "$CUSE_BSG" -f --name bsg/wc-cuse --cred-check=witness "$VM_SG" \
                        >"$VM_OUT/wc.log" 2>&1 & ;;
                    nodek) "$CUSE_BSG" -f --name bsg/wc-cuse --cred-check=kernel "$VM_SG" \
                        >"$VM_OUT/wc.log" 2>&1 & ;;
                esac
                i=$!
                vm_wait 30 grep -q 'serving' "$VM_OUT/wc.log" || vm_fail "$c: $(cat "$VM_OUT/wc.log")"
                case $c in nullw | nodew) gate_load witness $((n - 1)) ;;
                    nullg | nodek) gate_load lsm $((n - 1)) ;; *) GATE_PIDS=() ;; esac
                for qd in 1 16; do
                    F[$c,$n,$qd]+="$(fio_iops /dev/bsg/wc-cuse $qd) "
                done
                [ ${#GATE_PIDS[@]} -eq 0 ] || gate_unload
                kill -TERM $i
                wait $i
            done
        done
    done
    echo
    echo "Each check's cost to a call on a CUSE node: fio randread 4k, IOPS (medians of $ROUNDS"
    echo "interleaved rounds of ${FIO_TIME} s); x4: three idle daemons of the same kind beside it"
    echo
    echo "| daemons | QD | null | null+witness | null+lsm | node+witness | node+lsm | null+witness/null | null+lsm/null | node+witness/node+lsm |"
    echo "|--------:|---:|-----:|-------------:|---------:|-------------:|---------:|------------------:|--------------:|----------------------:|"
    for n in 1 4; do
        for qd in 1 16; do
            for c in null nullw nullg nodew nodek; do
                row[$c]=$(med <<<"${F[$c,$n,$qd]}")
            done
            printf "| %7s | %2s | %4s | %12s | %8s | %12s | %8s | %17s | %13s | %21s |\n" \
                "$n" "$qd" "${row[null]}" "${row[nullw]}" "${row[nullg]}" "${row[nodew]}" \
                "${row[nodek]}" "$(ratio "${row[nullw]}" "${row[null]}")" \
                "$(ratio "${row[nullg]}" "${row[null]}")" "$(ratio "${row[nodew]}" "${row[nodek]}")"
            target "$n daemon(s), fio QD $qd: null with the witness / null" \
                "$(ratio "${row[nullw]}" "${row[null]}")" 0.9
            target "$n daemon(s), fio QD $qd: node with the witness / node with the LSM gate" \
                "$(ratio "${row[nodew]}" "${row[nodek]}")" 0.95
        done
    done
}

vm_load_scsi_debug dev_size_mb=16 delay=0
: >"$VM_OUT/sgclient.err"
: >"$VM_OUT/targets.txt"
PREADLOOP=$PWD/build/clients/preadloop
IDLE=$(grep -o 'idle=[a-z]*' /proc/cmdline || echo "idle=default (halt)")
if [ "$MODE" = all ] || [ "$MODE" = gate ]; then
    gate_cost
fi
if [ "$MODE" = gate ]; then
    witness_cuse
    targets_print
    exit 0
fi
if [ "$MODE" = ab ]; then
    ab_bench
    exit 0
fi

# curve_bench: the node / kernel sg at fio QD 1 and QD 16 against the
# device's latency (scsi_debug ndelay: CURVE_NS), this build and an earlier
# commit's (build/base/cuse_bsg, made by make bench-curve), each with its
# defaults, in one boot; medians of CURVE_ROUNDS.  curve.csv gets
# ns,qd,kernel,node,base; then each one's crossover (curve_crossover).
CURVE_NS=(0 50000 200000 1000000 5000000 20000000)
CURVE_ROUNDS=${CURVE_ROUNDS:-3}
curve_bench() {
    local base=$PWD/build/base/cuse_bsg ns qd k n b
    [ -x "$base" ] || vm_fail "no $base: make bench-curve builds it"
    "$base" -f --name bsg/base-cuse "$VM_SG" >"$VM_OUT/base.log" 2>&1 &
    "$CUSE_BSG" -f --name bsg/new-cuse "$VM_SG" >"$VM_OUT/new.log" 2>&1 &
    vm_wait 60 test -c /dev/bsg/base-cuse -a -c /dev/bsg/new-cuse ||
        vm_fail "no daemons: $(cat "$VM_OUT"/{base,new}.log)"
    echo "kernel $(uname -r), $(nproc) vCPU (TCG), $IDLE; fio randread 4k IOPS, medians of $CURVE_ROUNDS"
    echo "base: $(cat "$PWD/build/base/commit"); this build: its defaults"
    echo
    echo "| device latency | QD | kernel sg | this build | /sg | base | /sg |"
    echo "|---------------:|---:|----------:|-----------:|----:|-----:|----:|"
    for ns in "${CURVE_NS[@]}"; do
        set_ndelay "$ns"
        for qd in 1 16; do
            { read -r k && read -r n && read -r b; } < <(ROUNDS=$CURVE_ROUNDS medians_iops "$qd" \
                "$VM_SG" /dev/bsg/new-cuse /dev/bsg/base-cuse)
            echo "$ns,$qd,$k,$n,$b" >>"$VM_OUT/curve.csv"
            printf "| %14s | %2d | %9s | %10s | %4s | %6s | %4s |\n" "$(latency_words "$ns")" "$qd" \
                "$k" "$n" "$(ratio "$n" "$k")" "$b" "$(ratio "$b" "$k")"
        done
    done
    echo
    curve_crossover "$VM_OUT/curve.csv"
}

# latency_words NS: 0, 50 us, 1 ms ...
latency_words() {
    awk -v n="$1" 'BEGIN { if (n == 0) print "0"; else if (n < 1000000) printf "%g us\n", n / 1000
        else printf "%g ms\n", n / 1000000 }'
}

# curve_crossover CSV: for each build and QD, the device latency from which
# its node keeps 0.9 of kernel sg: between the last point below 0.9 and the
# next, on a log scale (from 0: the next point's own latency, "<=")
curve_crossover() {
    sort -t, -k2n -k1n "$1" | awk -F, '
        function words(n) { return n < 1000000 ? sprintf("%.0f us", n / 1000) : sprintf("%.1f ms", n / 1000000) }
        function cross(col, name,   q, r, i, x) {
            for (q in qds) {
                x = "not reached"
                for (i = cnt[q]; i >= 1; i--) {
                    r = v[q, i, col] / v[q, i, 3]
                    if (r < 0.9) break
                    x = i
                }
                if (x != "not reached" && x == 1) x = "at delay=0"
                else if (x != "not reached") {
                    a = ns[q, x - 1]; b = ns[q, x]
                    ra = v[q, x - 1, col] / v[q, x - 1, 3]; rb = v[q, x, col] / v[q, x, 3]
                    if (a == 0) x = "<= " words(b)
                    else x = words(exp(log(a) + (log(b) - log(a)) * (0.9 - ra) / (rb - ra)))
                }
                printf "crossover, %s, QD %d: %s\n", name, q, x
            }
        }
        { q = $2; qds[q] = 1; i = ++cnt[q]; ns[q, i] = $1; v[q, i, 3] = $3; v[q, i, 4] = $4; v[q, i, 5] = $5 }
        END { cross(4, "this build"); cross(5, "base") }'
}

if [ "$MODE" = curve ]; then
    curve_bench
    exit 0
fi
# start_pair: the node as make bench measures it (the direct copy, its other
# defaults: the witness among them) and the plain null responder, each up;
# DIRECT_PID and NULL_PID
start_pair() {
    "$CUSE_BSG" -f --name bsg/direct-cuse --copy=direct "$VM_SG" >"$VM_OUT/direct.log" 2>&1 &
    DIRECT_PID=$!
    "$NULLCUSE" -f --name bsg/null-cuse >"$VM_OUT/null.log" 2>&1 &
    NULL_PID=$!
    vm_wait 60 test -c /dev/bsg/direct-cuse -a -c /dev/bsg/null-cuse || vm_fail "no daemons"
    vm_wait 30 grep -q 'credential check: witness' "$VM_OUT/direct.log" ||
        vm_fail "the node does not use the witness: $(grep 'credential check' "$VM_OUT/direct.log")"
}

# start_more: beside them, the node on the ioctl-retry path and with
# --async=pool, and the null responder with the credentials check on read()
# and write(): from /proc, as --cred-check=procfs makes it, and in the
# kernel, with the gate
start_more() {
    "$CUSE_BSG" -f --name bsg/retry-cuse --copy=retry "$VM_SG" >"$VM_OUT/retry.log" 2>&1 &
    "$CUSE_BSG" -f --name bsg/pool-cuse --async=pool "$VM_SG" >"$VM_OUT/pool.log" 2>&1 &
    "$NULLCUSE" -f --name bsg/nullc-cuse --creds >"$VM_OUT/nullc.log" 2>&1 &
    "$NULLCUSE" -f --name bsg/nullg-cuse --gate >"$VM_OUT/nullg.log" 2>&1 &
    vm_wait 60 test -c /dev/bsg/retry-cuse -a -c /dev/bsg/pool-cuse -a -c /dev/bsg/nullc-cuse \
        -a -c /dev/bsg/nullg-cuse || vm_fail "no daemons"
    vm_wait 30 grep -q 'credential check: kernel' "$VM_OUT/nullg.log" ||
        vm_fail "the null responder's gate: $(cat "$VM_OUT/nullg.log")"
}

declare -A DEVS=([sg]=$VM_SG [bsg]=$VM_BSG) V4=([bsg]=SGCLIENT_V4=1)
start_pair
# the profile runs the node and the null responder alone: the others' gate
# would run on every read() and write() of the guest
[ "$MODE" = profile ] || start_more
DEVS[direct]=/dev/bsg/direct-cuse DEVS[retry]=/dev/bsg/retry-cuse DEVS[null]=/dev/bsg/null-cuse
[ "$MODE" = profile ] ||
    echo "kernel $(uname -r), $(nproc) vCPU (TCG), $IDLE, scsi_debug delay=0; ops/s, medians of $ROUNDS"
if [ "$MODE" = all ]; then
echo
echo "| pattern                | kernel sg | kernel bsg | node, direct copy (/sg) | node, ioctl retry (/sg) | null responder | node/null |"
echo "|------------------------|----------:|-----------:|------------------------:|------------------------:|---------------:|----------:|"
bench "TEST UNIT READY" tur @DEV@ "$N"
bench "READ 4 KiB" read-loop @DEV@ "$N" 4096
bench "READ 64 KiB" read-loop @DEV@ $((N / 4)) 65536
bench "READ 1 MiB" read-loop @DEV@ $((N / 20)) 1048576
echo
echo "null responder: tests/clients/nullcuse.c, no target; it reads the header and CDB and writes the status"
echo "back, as the direct copy must, but moves no data: in the READ rows the node copies the data"
echo "and the null does not.  node/null: direct copy against the null; n/a: refused or not run."
fi

# --- asynchronous: fio's sg engine, IOPS against queue depth ---

# cpu_ticks: the guest's busy and idle ticks so far, over all its CPUs
cpu_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8, $5 + $6}' /proc/stat; }

# sweep_iops LABEL NAME DEV QD: fio_iops, and the guest's busy share during
# the run into busy.csv (label,qd,name,busy%)
sweep_iops() {
    local b1 i1 b2 i2 iops
    read -r b1 i1 < <(cpu_ticks)
    iops=$(fio_iops "$3" "$4")
    read -r b2 i2 < <(cpu_ticks)
    echo "$1,$4,$2,$(( (b2 - b1) * 100 / (b2 - b1 + i2 - i1 + 1) ))" >>"$VM_OUT/busy.csv"
    echo "$iops"
}

# fio_sweep LABEL [null]: rows of QD, kernel, node and (with "null") null
# responder IOPS, plain and with the credentials check; fio.csv gets
# label,qd,kernel,node,null (null empty if not run)
fio_sweep() {
    local label=$1 with_null=${2:-} qd k n p z c g ks ns ps zs cs gs
    for qd in ${QDS:-1 4 8 16 32}; do
        ks='' ns='' ps='' zs='' cs='' gs=''
        for _ in $(seq "$ROUNDS"); do
            ks+="$(sweep_iops "$label" sg "$VM_SG" "$qd") "
            ns+="$(sweep_iops "$label" node /dev/bsg/direct-cuse "$qd") "
            ps+="$(sweep_iops "$label" pool /dev/bsg/pool-cuse "$qd") "
            [ -z "$with_null" ] || zs+="$(sweep_iops "$label" null /dev/bsg/null-cuse "$qd") "
            [ -z "$with_null" ] || cs+="$(sweep_iops "$label" nullc /dev/bsg/nullc-cuse "$qd") "
            [ -z "$with_null" ] || gs+="$(sweep_iops "$label" nullg /dev/bsg/nullg-cuse "$qd") "
        done
        k=$(med <<<"$ks") n=$(med <<<"$ns") p=$(med <<<"$ps") z=$(med <<<"$zs") c=$(med <<<"$cs")
        g=$(med <<<"$gs")
        awk -v l="$label" -v q="$qd" -v k="$k" -v n="$n" -v p="$p" -v z="$z" -v c="$c" -v g="$g" '
            function ratio(v, base) { return v == "" || !(base > 0) ? "n/a" : sprintf("%.2f", v / base) }
            function val(v) { return v == "" ? "EDOM" : sprintf("%d", v) }
            function opt(v) { return v == "" ? "n/a" : sprintf("%d", v) }
            BEGIN { printf "| %-11s | %7d | %9s | %11s | %5s | %10s | %5s | %9s | %9s | %9s | %5s | %9s | %5s |\n",
                    l, q, val(k), val(n), ratio(n, k), val(p), ratio(p, k),
                    opt(z), ratio(n, z), opt(g), ratio(g, z), opt(c), ratio(c, z) }'
        case $label,$qd in
        delay=0,1)
            target "delay=0, fio QD $qd: null with the gate / null" "$(ratio "$g" "$z")" 0.9 ;;
        delay=0,16)
            target "delay=0, fio QD $qd: null with the gate / null" "$(ratio "$g" "$z")" 0.9
            target "delay=0, fio QD $qd: node / kernel sg" "$(ratio "$n" "$k")" 0.4 ;;
        ndelay=20ms,1)
            target "20 ms device, fio QD $qd: node / kernel sg" "$(ratio "$n" "$k")" 0.92 ;;
        ndelay=20ms,16)
            target "20 ms device, fio QD $qd: node / kernel sg" "$(ratio "$n" "$k")" 0.95 ;;
        esac
        [ "$qd" = 32 ] || echo "$label,$qd,$k,$n,$z,$p" >>"$VM_OUT/fio.csv"
        [ "$qd" != 16 ] || QD16[$label]=$n
    done
}

# fuse_total LOG PID: every FUSE request the server logging to LOG has taken
fuse_total() {
    node_stats "$2" "$1" | tr ' ' '\n' |
        awk -F= '$1 ~ /^(open|release|read|write|ioctl|poll)$/ { s += $2 } END { print s }'
}

requests_of() {  # requests_of LOG PID DEV QD: FUSE requests per fio command
    local before after cmds=2000
    before=$(fuse_total "$1" "$2")
    fio --name=c --filename="$3" --ioengine=sg --rw=randread --bs=4k \
        --size=16M --iodepth="$4" --number_ios=$cmds >/dev/null 2>&1
    after=$(fuse_total "$1" "$2")
    awk -v d=$((after - before)) -v c=$cmds 'BEGIN { printf "%.2f", d / c }'
}

requests_per_command() {  # the node's and the null responder's, at QD $1
    printf '| fio randread 4k, QD %-2d    | %5s | %14s |\n' "$1" \
        "$(requests_of "$VM_OUT/direct.log" "$DIRECT_PID" /dev/bsg/direct-cuse "$1")" \
        "$(requests_of "$VM_OUT/null.log" "$NULL_PID" /dev/bsg/null-cuse "$1")"
}

# busy_row LABEL QD: the guest's median busy share in each column's fio runs
busy_row() {
    local name row
    row=$(printf '| %-18s ' "$1, QD $2")
    for name in sg node pool null nullg nullc; do
        row+=$(awk -F, -v l="$1" -v q="$2" -v n=$name '$1 == l && $2 == q && $3 == n {print $4}' \
            "$VM_OUT/busy.csv" | median |
            awk 'NF {printf "| %8s%% ", $1; ok = 1} END {if (!ok) printf "| %9s ", "n/a"}')
    done
    echo "$row|"
}

# busy_table QD...: busy_row for each QD at delay=0, with its heading
busy_table() {
    local qd
    echo
    echo "The guest during those fio runs (delay=0): busy share of its $(nproc) vCPUs (/proc/stat;"
    echo "idle=poll's spinning counts as idle), medians"
    echo
    echo "| fio randread 4k    | kernel sg |      node |      pool | null resp | null+gate | null+proc |"
    echo "|--------------------|----------:|----------:|----------:|----------:|----------:|----------:|"
    for qd in "$@"; do busy_row "delay=0" "$qd"; done
}

# v4_iops DEV QD BATCH: the batched sg v4 ioctls' random 4k read IOPS
v4_iops() {
    "$V4IO" load "$1" "$2" "$3" "$FIO_TIME" 2>/dev/null | sed -n 's/^iops=\([0-9]*\) .*/\1/p'
}

# ioctl_sweep LABEL [null]: kernel sg's write()/read() through fio against the
# node's (fio) and the node's batched ioctls (tests/clients/sgv4io.c load, submitting
# and reaping a quarter of the depth a call), and with "null" the null
# responder's same ioctls; ioctl.csv gets label,qd,kernel,node,ioctls,null
ioctl_sweep() {
    local label=$1 with_null=${2:-} qd b k n v z ks ns vs zs
    for qd in 1 16 64 256; do
        b=$((qd / 4 > 0 ? qd / 4 : 1))
        ks='' ns='' vs='' zs=''
        for _ in $(seq "$ROUNDS"); do
            ks+="$(fio_iops "$VM_SG" $qd) "
            ns+="$(fio_iops /dev/bsg/direct-cuse $qd) "
            vs+="$(v4_iops /dev/bsg/direct-cuse $qd $b) "
            [ -z "$with_null" ] || zs+="$(v4_iops /dev/bsg/null-cuse $qd $b) "
        done
        k=$(med <<<"$ks") n=$(med <<<"$ns") v=$(med <<<"$vs") z=$(med <<<"$zs")
        awk -v l="$label" -v q=$qd -v b=$b -v k="$k" -v n="$n" -v v="$v" -v z="$z" '
            function ratio(x, base) { return x == "" || !(base > 0) ? "n/a" : sprintf("%.2f", x / base) }
            function val(x) { return x == "" ? "EDOM" : sprintf("%d", x) }
            function opt(x) { return x == "" ? "n/a" : sprintf("%d", x) }
            BEGIN { printf "| %-11s | %7d | %5d | %9s | %9s | %5s | %11s | %5s | %10s | %12s | %9s |\n",
                    l, q, b, val(k), val(n), ratio(n, k), val(v), ratio(v, k), ratio(v, n),
                    opt(z), ratio(v, z) }'
        case $label,$qd in
        delay=0,16)
            target "delay=0, batched ioctls QD 16: node / kernel sg's fio" "$(ratio "$v" "$k")" 1.0 ;;
        ndelay=20ms,1 | ndelay=20ms,16)
            target "20 ms device, batched ioctls QD $qd: node / kernel sg's fio" "$(ratio "$v" "$k")" 0.95 ;;
        ndelay=20ms,64 | ndelay=20ms,256)
            target "20 ms device, batched ioctls QD $qd: IOPS / (QD / 20 ms)" "$(ratio "$v" $((qd * 50)))" 0.9 ;;
        esac
        echo "$label,$qd,$k,$n,$v,$z" >>"$VM_OUT/ioctl.csv"
    done
}

# ioctl_requests QD BATCH: FUSE requests per command of the batched ioctls
ioctl_requests() {
    local before after cmds
    before=$(fuse_total "$VM_OUT/direct.log" "$DIRECT_PID")
    cmds=$("$V4IO" load /dev/bsg/direct-cuse "$1" "$2" 2 | sed -n 's/.*commands=\([0-9]*\).*/\1/p')
    after=$(fuse_total "$VM_OUT/direct.log" "$DIRECT_PID")
    awk -v d=$((after - before)) -v c="$cmds" -v q="$1" -v b="$2" \
        'BEGIN { printf "| sg v4 ioctls, QD %-3d, batches of %-3d | %5.3f |\n", q, b, d / c }'
}

# proc_cost PID: the process's CPU ticks so far (user + system, its ended
# threads' included) on a line "cpu TICKS", then a line "TID SWITCHES
# INVOLUNTARY" for each thread: its context switches (voluntary + not) and
# of those the involuntary ones (preempted: by the block layer's ksoftirqd
# ending a command it issued, for one)
proc_cost() {
    local t
    echo "cpu $(awk '{print $14 + $15}' "/proc/$1/stat")"
    for t in /proc/"$1"/task/*; do
        awk -v t="${t##*/}" '/^voluntary_ctxt_switches/ {v = $2} /^nonvoluntary_ctxt_switches/ {n = $2}
            END {if (v != "") print t, v + n, n + 0}' "$t/status" 2>/dev/null || true
    done
}

# cost_delta BEFORE AFTER: of two proc_cost texts, "TICKS SWITCHES
# INVOLUNTARY ENDED": the ticks between them, the switches of each thread
# between them (all of a thread begun since), and how many threads of
# BEFORE had ended by AFTER: procfs keeps no count of an ended thread's
# switches, so with ENDED > 0 the switches are a lower bound
cost_delta() {
    awk 'FNR == NR { if ($1 == "cpu") c0 = $2; else { s0[$1] = $2; n0[$1] = $3 }; next }
        $1 == "cpu" { c1 = $2; next }
        { sw += $2 - s0[$1]; nv += $3 - n0[$1]; seen[$1] = 1 }
        END { for (t in s0) if (!(t in seen)) ended++
            print c1 - c0, sw, nv, ended + 0 }' <(echo "$1") <(echo "$2")
}

# ioctl_cost LABEL PID DEV QD BATCH: per command of the batched ioctls, the
# responder's CPU time and its threads' context switches (the kernel's sg
# runs a command with none of its own); a row of the table and of cost.csv
# (label,qd,batch,cpu,switches), and with batches of a quarter of QD one of
# cost-qd.csv (label,qd,cpu,switches)
ioctl_cost() {
    local b a cmds hz
    hz=$(getconf CLK_TCK)
    b=$(proc_cost "$2")
    cmds=$("$V4IO" load "$3" "$4" "$5" 3 | sed -n 's/.*commands=\([0-9]*\).*/\1/p')
    a=$(proc_cost "$2")
    awk -v l="$1" -v d="$(cost_delta "$b" "$a")" -v c="${cmds:-0}" -v hz="$hz" -v q="$4" -v n="$5" \
        -v cost="$VM_OUT/cost.csv" -v costqd="$VM_OUT/cost-qd.csv" 'BEGIN {
        split(d, x, " ")
        if (c == 0) { printf "| %-14s | %3d | %5d | %8s | %7s | %8s | %11s |\n", l, q, n, "n/a", "n/a", "n/a", "n/a"; exit }
        m = x[4] ? ">=" : ""
        printf "| %-14s | %3d | %5d | %8d | %7.1f | %8s | %11s |\n", l, q, n, c, x[1] * 1e6 / hz / c,
            sprintf("%s%.2f", m, x[2] / c), sprintf("%s%.2f", m, x[3] / c)
        printf "%s,%d,%d,%.1f,%.2f\n", l, q, n, x[1] * 1e6 / hz / c, x[2] / c >>cost
        if (n == int((q + 3) / 4))
            printf "%s,%d,%.1f,%.2f\n", l, q, x[1] * 1e6 / hz / c, x[2] / c >>costqd }'
}

# fio_cost LABEL DEV QD: fio randread 4k's own CPU time and context switches
# per command (on kernel sg this includes the device's work, which sg runs
# in the caller's write()); a row of the table and one of cost-qd.csv
fio_cost() {
    fio --name=c --filename="$2" --ioengine=sg --rw=randread --bs=4k --size=16M --iodepth="$3" \
        --runtime=3 --time_based --output-format=terse 2>/dev/null |
        awk -F';' -v l="$1" -v q="$3" -v cost="$VM_OUT/cost-qd.csv" '$5 == 0 && $8 > 0 {
            c = $8 * $9 / 1000
            printf "| %-14s | %3d | %5s | %8d | %7.1f | %8.2f | %11s |\n", l, q, "-", c,
                ($88 + $89) / 100 * 1e6 / $8, $90 / c, "-"
            sub(/, fio$/, " (fio)", l)
            printf "%s,%d,%.1f,%.2f\n", l, q, ($88 + $89) / 100 * 1e6 / $8, $90 / c >>cost }'
}

# the cost table alone (make bench-cost)
cost_table() {
    echo
    echo "Where the time goes, delay=0: per command of a 3 s load, the responder's CPU time"
    echo "(all its threads, user + system) and its threads' context switches; for kernel"
    echo "sg, fio's own (sg runs scsi_debug's work inside fio's write()); involuntary: of"
    echo "the switches, a thread preempted, as by ksoftirqd ending a command it issued;"
    echo ">=: a thread of the responder ended during the run, its switches not counted"
    echo
    : >"$VM_OUT/cost.csv"
    : >"$VM_OUT/cost-qd.csv"
    echo "| responder      | QD  | batch | commands | CPU us  | switches | involuntary |"
    echo "|----------------|----:|------:|---------:|--------:|---------:|------------:|"
    # QD 1 to 256 for the plot (cost-vs-qd.svg), the ioctls in batches of a
    # quarter of it, at QD 16 also of 16 (kernel sg's fio stops at sg's 16 slots)
    local q b
    for q in 1 4 16 64 256; do
        [ $q -gt 16 ] || fio_cost "kernel sg, fio" "$VM_SG" $q
        for b in $(((q + 3) / 4)) $([ $q != 16 ] || echo 16); do
            ioctl_cost "node" "$DIRECT_PID" /dev/bsg/direct-cuse $q "$b"
            ioctl_cost "null responder" "$NULL_PID" /dev/bsg/null-cuse $q "$b"
        done
    done
    # the node's CPU above the kernel's own (kernel sg's fio runs the
    # device's work in its write(), as the node's threads do), in units of
    # the null responder's whole CPU per command
    local cpu ncpu kcpu
    kcpu=$(awk -F, '$1 == "kernel sg (fio)" && $2 == 16 {print $3}' "$VM_OUT/cost-qd.csv")
    for b in 4 16; do
        cpu=$(awk -F, -v b=$b '$1 == "node" && $2 == 16 && $3 == b {print $4}' "$VM_OUT/cost.csv")
        ncpu=$(awk -F, -v b=$b '$1 == "null responder" && $2 == 16 && $3 == b {print $4}' "$VM_OUT/cost.csv")
        target "bench-cost, QD 16 in batches of $b: (node - kernel fio) / null CPU" \
            "$(awk -v a="$cpu" -v k="$kcpu" -v z="$ncpu" 'BEGIN { if (a != "" && k != "" && z > 0) printf "%.2f", (a - k) / z }')" 1.5 le
    done
}

ioctl_tables() {
    echo
    echo "Random 4k reads through the sg v4 ioctls (tests/clients/sgv4io load: QD outstanding, a quarter"
    echo "of it submitted in one SG_IOSUBMIT and reaped in one blocking SG_IORECEIVE), beside"
    echo "fio's sg engine (write()/poll()/read()) on the kernel's sg and on the node, IOPS"
    echo "(medians of $ROUNDS runs of ${FIO_TIME} s); EDOM: sg's 16 slots, kernel and node alike"
    echo
    echo "null, ioctls: the null responder's same ioctls (no target; the caller's process looked up"
    echo "as the node does); node/null: the node's ioctls against it"
    echo
    echo "| scsi_debug  | iodepth | batch | kernel sg | node, fio | /kern | node, ioctls | /kern | ioctls/fio | null, ioctls | node/null |"
    echo "|-------------|--------:|------:|----------:|----------:|------:|------------:|------:|-----------:|-------------:|----------:|"
    : >"$VM_OUT/ioctl.csv"
    ioctl_sweep "delay=0" null
    set_ndelay 20000000
    ioctl_sweep "ndelay=20ms"
    set_ndelay 0
    echo
    echo "| FUSE requests per command            | node  |"
    echo "|--------------------------------------|------:|"
    ioctl_requests 1 1
    ioctl_requests 16 4
    ioctl_requests 16 16
    ioctl_requests 64 16
    ioctl_requests 256 64
    cost_table
}

# --- a real application: tgt serving an iSCSI initiator (iscsi-perf) ---
# app_round WHO: iscsi-perf random reads against the LUN tgt exports, each
# (in flight, blocks) of APP_CASES once; APP[WHO,case] gets the IOPS of
# each run, or "EDOM" once a run failed a command (sg's 16 slots)
APP_CASES=("16 8" "64 8" "16 128")
declare -A APP=()
APP_STATS=''
app_round() {
    local who=$1 c out rc qd blocks
    for c in "${APP_CASES[@]}"; do
        read -r qd blocks <<<"$c"
        out=$VM_OUT/app-$who-$qd-$blocks.txt rc=0
        perf_one "$out" "$qd" -b "$blocks" || rc=$?
        if [ "$rc" -ne 0 ] || grep -q 'failed with' "$out"; then
            APP[$who,$c]=EDOM
        elif [ "${APP[$who,$c]:-}" != EDOM ]; then
            APP[$who,$c]+="$(iops_of "$out") "
        fi
    done
}

# Each round: the kernel's sg exported, then the sg driver unloaded (tgt
# takes only char major 21) and the node on /dev/sg0 over the device's bsg
# node, with --queue-depth 128; the sg driver loaded again for the next.
app_bench() {
    local c k n qd blocks
    vm_run ip link set lo up
    for _ in $(seq "$ROUNDS"); do
        [ -d /sys/module/sg ] || vm_run modprobe sg
        vm_wait 10 test -c "$VM_SG" || vm_fail "$VM_SG did not come back with the sg driver"
        tgt_start kernel "$VM_SG" || vm_fail "tgt refused $VM_SG"
        app_round kernel
        tgt_stop
        vm_unload_sg
        node_start sg0 "$VM_BSG" --sg-compat 0 --queue-depth 128
        tgt_start node /dev/sg0 || vm_fail "tgt refused the node"
        app_round node
        APP_STATS=$(node_stats)
        tgt_stop
        node_stop
    done
    echo
    echo "tgt (--bstype sg --device-type pt) on 127.0.0.1 exporting kernel sg ($VM_SG), then the node"
    echo "(/dev/sg0 with --sg-compat 0 --queue-depth 128, the sg driver unloaded, on $VM_BSG), in turn;"
    echo "iscsi-perf -r (random reads), medians of $ROUNDS rounds of $PERF_SECONDS s; MB/s = IOPS x blocks x 512 B;"
    echo "EDOM: tgt's write() past sg's 16 outstanding failed a command, and iscsi-perf stopped"
    echo
    echo "| iscsi-perf, in flight | request | kernel sg IOPS | MB/s | node IOPS | MB/s | node/kern |"
    echo "|----------------------:|--------:|--------------:|-----:|----------:|-----:|----------:|"
    for c in "${APP_CASES[@]}"; do
        read -r qd blocks <<<"$c"
        k=${APP[kernel,$c]:-} n=${APP[node,$c]:-}
        [ "$k" = EDOM ] || k=$(med <<<"$k")
        [ "$n" = EDOM ] || n=$(med <<<"$n")
        awk -v q="$qd" -v b="$blocks" -v k="$k" -v n="$n" '
            function iops(x) { return x == "" ? "n/a" : x }
            function mbs(x) { return num(x) ? sprintf("%.1f", x * b * 512 / 1e6) : "n/a" }
            function num(x) { return x ~ /^[0-9]+$/ }
            function ratio(x, base) { return num(x) && num(base) && base > 0 ? sprintf("%.2f", x / base) : "n/a" }
            BEGIN { printf "| %21d | %4d KiB | %13s | %4s | %9s | %4s | %9s |\n", q, b / 2,
                    iops(k), mbs(k), iops(n), mbs(n), ratio(n, k) }'
        [ "$qd" != 16 ] || target "tgt + iscsi-perf, 16 in flight, $((blocks / 2)) KiB: node / kernel sg" \
            "$(ratio "$([ "$n" = EDOM ] || echo "$n")" "$([ "$k" = EDOM ] || echo "$k")")" 0.35
        echo "$qd,$blocks,$k,$n" >>"$VM_OUT/iscsi.csv"
    done
    # tgt's one thread writes one header a write(), is woken by poll and
    # reads one completion a read(): each a round trip through CUSE
    echo
    awk -v s="$APP_STATS" 'BEGIN {
        n = split(s, f, " ")
        for (i = 1; i <= n; i++) if (split(f[i], kv, "=") == 2) v[kv[1]] = kv[2]
        c = v["sg_io"] > 0 ? v["sg_io"] : 1
        printf "through tgt, the last round: %d commands, FUSE requests per command: write %.2f, read %.2f, poll %.2f, ioctl %.2f\n",
            v["sg_io"], v["write"] / c, v["read"] / c, v["poll"] / c, v["ioctl"] / c }'
}

# stop_daemons: the side-by-side daemons, waited for (the sg node is free)
stop_daemons() {
    pkill -TERM -x nullcuse
    pkill -TERM -x cuse_bsg
    vm_wait 20 bash -c '! pgrep -x cuse_bsg >/dev/null && ! pgrep -x nullcuse >/dev/null' ||
        vm_fail "the benchmark's daemons did not stop"
}

# load_bench: fio QD 16 at delay=0 on kernel sg, the node and the null
# responder, first on an idle guest, then with one busy loop per vCPU at
# nice 0; how far each CUSE server's ratio to kernel sg falls under load
load_bench() {
    local phase pids=() ks ns zs
    declare -A K=() N=() Z=()
    echo
    echo "fio --ioengine=sg --rw=randread --bs=4k --iodepth=16, delay=0, IOPS (medians of $ROUNDS runs of"
    echo "${FIO_TIME} s); loaded: one busy loop per vCPU ($(nproc)) at nice 0 beside fio and the servers"
    echo
    echo "| guest  | kernel sg | node | /kern | null resp | /kern |"
    echo "|--------|----------:|-----:|------:|----------:|------:|"
    for phase in idle loaded; do
        if [ "$phase" = loaded ]; then
            for _ in $(seq "$(nproc)"); do
                (while :; do :; done) &
                pids+=($!)
            done
        fi
        { read -r "K[$phase]"; read -r "N[$phase]"; read -r "Z[$phase]"; } < <(medians_iops 16 \
            "$VM_SG" /dev/bsg/direct-cuse /dev/bsg/null-cuse)
        printf "| %-6s | %9s | %4s | %5s | %9s | %5s |\n" "$phase" "${K[$phase]:-n/a}" "${N[$phase]:-n/a}" \
            "$(ratio "${N[$phase]}" "${K[$phase]}")" "${Z[$phase]:-n/a}" "$(ratio "${Z[$phase]}" "${K[$phase]}")"
    done
    [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}"
    wait "${pids[@]}" 2>/dev/null
    # fall: the loaded ratio to kernel sg over the idle one; the node's may
    # be no worse than the null responder's
    target "loaded guest, fio QD 16: node's fall / null's fall" "$(awk \
        -v nl="${N[loaded]}" -v ni="${N[idle]}" -v zl="${Z[loaded]}" -v zi="${Z[idle]}" \
        -v kl="${K[loaded]}" -v ki="${K[idle]}" 'BEGIN {
            if (nl > 0 && ni > 0 && zl > 0 && zi > 0 && kl > 0 && ki > 0)
                printf "%.2f", (nl / kl) / (ni / ki) / ((zl / kl) / (zi / ki)) }')" 1.0
}

# --- where the time of one command goes: perf in the guest (make bench-profile) ---

# perf is the host's (Debian's linux-perf), on the root the guest shares.
# Each case, a load on a responder, has three windows of PROF_TIME seconds
# with the load running (prof_case): counted, traced and sampled (perf
# record -a -g: cpu-clock every PROF_PERIOD ns, with call graphs by frame
# pointer; the daemon and the null responder are built with them, the
# libraries and fio are not: their frames are the leaves only, and a stack
# through them loses its callers).  Each perf starts before the load with
# its events off, and is switched on and off through its control fifo, so
# that neither its start nor the load's falls in the window.
PROF_TIME=${PROF_TIME:-5}
PROF_PERIOD=1000000
PROF_DIR=/tmp/profile
PROF_TRACED=sched:sched_wakeup,raw_syscalls:sys_enter
PROF_PIDS=() PROF_CTL=() PROF_ACK=()
PROF_N=0 PROF_JOB='' PROF_FIO=''

# prof_setup: tracefs for perf's tracepoints, the kernel's symbols, no
# throttling of samples (TCG's slow interrupts would lower their rate);
# perf's version beside the kernel's, which should be the same release
prof_setup() {
    local pv kv
    command -v perf >/dev/null || vm_fail "no perf on the guest's root: install Debian's linux-perf (./setup)"
    mkdir -p "$PROF_DIR"
    mkfifo "$PROF_DIR/idle"
    exec {PROF_IDLE}<>"$PROF_DIR/idle"
    [ -d /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing ||
        vm_fail "cannot mount tracefs"
    echo 0 >/proc/sys/kernel/kptr_restrict
    echo -1 >/proc/sys/kernel/perf_event_paranoid
    echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
    pv=$(perf version | awk '{print $3}')
    kv=$(uname -v | sed -n 's/.* Debian \([^ ]*\) .*/\1/p')
    echo "kernel $(uname -r) (Debian $kv), perf $pv, $(nproc) vCPU (TCG), $IDLE, scsi_debug delay=0"
    [ "${kv%%-*}" = "$pv" ] || echo "NOTE: perf $pv is not the kernel's release (${kv%%-*}): install the linux-perf of the kernel vm-run boots"
}

# prof_perf NAME ARGS...: perf ARGS with its events off, switched through
# its control fifo PROF_DIR/NAME.ctl and answering in NAME.ack, both held
# open here (read and write: no open blocks, and no command is lost before
# perf has opened its end)
prof_perf() {
    local n=$PROF_DIR/$1 c a
    shift
    rm -f "$n.ctl" "$n.ack"
    mkfifo "$n.ctl" "$n.ack"
    exec {c}<>"$n.ctl" {a}<>"$n.ack"
    perf "$@" -D -1 --control "fifo:$n.ctl,$n.ack" 2>>"$VM_OUT/perf.err" &
    PROF_PIDS+=($!) PROF_CTL+=("$c") PROF_ACK+=("$a")
}

# prof_switch enable|disable|ping: every perf of prof_perf's, each
# acknowledging (ping: it is up, and nothing changes; a disable before the
# window would also stop perf record's tracking of new processes' maps);
# builtins only, as the windows' readings: no process of its own in a window
prof_switch() {
    local fd
    for fd in "${PROF_CTL[@]}"; do echo "$1" >&"$fd"; done
    for fd in "${PROF_ACK[@]}"; do
        read -r -t 60 -u "$fd" _ || vm_fail "perf did not answer '$1' within 60 s ($VM_OUT/perf.err)"
    done
}

prof_stop() {  # the perfs end, writing what they counted or sampled
    local fd
    kill -INT "${PROF_PIDS[@]}"
    wait "${PROF_PIDS[@]}"
    for fd in "${PROF_CTL[@]}" "${PROF_ACK[@]}"; do exec {fd}>&-; done
    PROF_PIDS=() PROF_CTL=() PROF_ACK=()
}

prof_fio_job() {  # PROF_JOB: fio's job process, the child of the first fio
    local main
    main=$(pgrep -o -x fio) && PROF_JOB=$(pgrep -P "$main" -x fio)
}

# prof_syscw PID: W, PID's write() calls so far (fio's sg engine writes
# one header a command)
prof_syscw() {
    local k v
    W=0
    while read -r k v; do [ "$k" != syscw: ] || W=$v; done <"/proc/$1/io"
}

# prof_run WORK DEV PID: the load WORK on DEV (tur: a TEST UNIT READY loop
# of PROF_N commands, the window's own; fio1, fio16: fio randread 4k at that
# depth, begun a second before the window, PROF_TIME s of it in the window)
# with the perfs on; prints the window's "COMMANDS SECONDS", the guest's
# ticks (/proc/stat) "USER SYSTEM IDLE" and the responder PID's "USER SYSTEM"
prof_run() {
    local work=$1 dev=$2 pid=$3 t0 t1 c0 c1 s0 s1 w0=0
    prof_switch ping
    if [ "$work" != tur ]; then
        FIO_TIME=$((PROF_TIME + 4)) fio_iops "$dev" "${work#fio}" >"$PROF_DIR/iops" &
        PROF_FIO=$!
        vm_wait 20 prof_fio_job || vm_fail "fio did not start on $dev"
        sleep 1
        prof_syscw "$PROF_JOB"
        w0=$W
    fi
    prof_switch enable
    t0=$EPOCHREALTIME
    read -r -a c0 </proc/stat
    read -r -a s0 <"/proc/$pid/stat"
    if [ "$work" = tur ]; then
        "$SGCLIENT" tur "$dev" "$PROF_N" >/dev/null || vm_fail "TEST UNIT READY loop on $dev failed"
        W=$PROF_N
    else
        read -r -t "$PROF_TIME" -u "$PROF_IDLE" _ || true
        prof_syscw "$PROF_JOB"
    fi
    read -r -a c1 </proc/stat
    read -r -a s1 <"/proc/$pid/stat"
    t1=$EPOCHREALTIME
    prof_switch disable
    [ -z "$PROF_FIO" ] || wait "$PROF_FIO"
    awk -v n=$((W - w0)) -v t0="$t0" -v t1="$t1" -v c0="${c0[*]}" -v c1="${c1[*]}" \
        -v s0="${s0[*]}" -v s1="${s1[*]}" 'BEGIN {
        split(c0, a, " "); split(c1, b, " "); split(s0, p, " "); split(s1, q, " ")
        printf "%d %.3f %d %d %d %d %d\n", n, t1 - t0, b[2] + b[3] - a[2] - a[3],
            b[4] + b[7] + b[8] - a[4] - a[7] - a[8], b[5] + b[6] - a[5] - a[6],
            q[14] - p[14], q[15] - p[15] }'
}

# prof_fold PID=NAME...: perf script's samples on stdin, folded stacks on
# stdout ("PROCESS[;THREAD];ROOT;...;LEAF SAMPLES"; a kernel frame named
# FUNCTION_[k], one without a symbol [FILE]); PID's process named NAME, its
# threads by their own names; the idle task's and perf's own samples left
# out, counted into PROF_DIR/side ("IDLE PERF")
prof_fold() {
    awk -v map="$*" -v side="$PROF_DIR/side" '
    function flush(    s, i) {
        if (!insample)
            return
        insample = 0
        if (pid == 0) { idle++; return }
        if (comm == "perf") { prof++; return }
        s = root
        for (i = nfr; i >= 1; i--)
            s = s ";" fr[i]
        folded[s]++
    }
    BEGIN {
        n = split(map, m, " ")
        for (i = 1; i <= n; i++) if (split(m[i], kv, "=") == 2) proc[kv[1]] = kv[2]
    }
    /^[^ \t]/ {
        flush()
        sub(/[ \t]+$/, "")
        split($NF, ids, "/")
        pid = ids[1] + 0
        comm = substr($0, 1, length($0) - length($NF))
        sub(/[ \t]+$/, "", comm)
        if (pid in proc)
            root = proc[pid] (comm == proc[pid] ? "" : ";" comm)
        else {
            root = comm
            sub(/\/.*$/, "", root)  # kworker/1:1H-kblockd, ksoftirqd/0: one name each
        }
        insample = 1; nfr = 0
        next
    }
    /^[ \t]+[0-9a-f]+ / {
        line = $0
        sub(/^[ \t]+/, "", line)
        addr = line; sub(/ .*$/, "", addr)
        sym = line; sub(/^[0-9a-f]+ /, "", sym); sub(/ \([^(]*\)$/, "", sym)
        if (sym == "[unknown]") {  # no symbol: its file
            dso = line; sub(/^.* \(/, "", dso); sub(/\)$/, "", dso); sub(/^.*\//, "", dso)
            sym = dso ~ /^\[/ ? dso : "[" dso "]"
        }
        sub(/@@.*$/, "", sym)  # pthread_mutex_lock@@GLIBC_2.2.5: the default version
        gsub(/;/, ":", sym)
        if (length(addr) == 16 && addr ~ /^ffff/)
            sym = sym "_[k]"
        # a run of frames without a symbol (a frame-pointer walk through
        # code built without them) says no more than one
        if (!(sym ~ /^\[/ && nfr > 0 && fr[nfr] == sym))
            fr[++nfr] = sym
        next
    }
    /^[ \t]*$/ { flush() }
    END {
        flush()
        for (s in folded) print s, folded[s]
        printf "%d %d\n", idle, prof >side
    }'
}

# perf_stat_values FILE EVENTS: the counts of perf stat -x, in FILE, in the
# order of EVENTS (comma-separated), space-separated
perf_stat_values() {
    awk -F, -v evs="$2" '/^[0-9.]/ { v[$3] = $1 }
        END { n = split(evs, e, ","); for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? " " : ""), v[e[i]] + 0; print "" }' "$1"
}

# prof_case WORK WHO PID DEV LABEL: one case, three windows: counted (perf
# stat of context switches, /proc), traced (perf stat of two tracepoints,
# wake-ups and system calls: every system call of the guest takes the slow
# path while they count) and sampled.  A row of profile.csv: WORK WHO,
# prof_run's seven of the counted window, the commands and seconds of the
# traced and of the sampled one, the samples of the idle task, of perf and
# of the rest, the guest's switches, the responder's CPU ms and switches,
# the guest's wake-ups and system calls, the responder's; the folded
# stacks of the sampled window in prof-WORK-WHO.folded, and a title and a
# note for its flame graph in prof-WORK-WHO.title
prof_case() {
    local work=$1 who=$2 pid=$3 dev=$4 count traced rec tc ts rc rs busy
    PROF_FIO=''
    [ "$work" != tur ] || PROF_N=$(($("$SGCLIENT" tur "$dev" 500) * PROF_TIME))
    prof_perf all stat -a -x, -o "$PROF_DIR/all.csv" -e context-switches
    prof_perf own stat -p "$pid" -x, -o "$PROF_DIR/own.csv" -e task-clock,context-switches
    count=$(prof_run "$work" "$dev" "$pid") || vm_fail "$work on $who, counted"
    prof_stop
    prof_perf all stat -a -x, -o "$PROF_DIR/all-tp.csv" -e "$PROF_TRACED"
    prof_perf own stat -p "$pid" -x, -o "$PROF_DIR/own-tp.csv" -e "$PROF_TRACED"
    traced=$(prof_run "$work" "$dev" "$pid") || vm_fail "$work on $who, traced"
    prof_stop
    read -r tc ts _ <<<"$traced"
    prof_perf rec record -a -e cpu-clock -c "$PROF_PERIOD" -g -B -N -q -o "$PROF_DIR/perf.data"
    rec=$(prof_run "$work" "$dev" "$pid") || vm_fail "$work on $who, sampled"
    prof_stop
    read -r rc rs _ <<<"$rec"
    perf script -i "$PROF_DIR/perf.data" -F comm,pid,tid,ip,sym,dso --no-inline 2>>"$VM_OUT/perf.err" |
        prof_fold "$pid=$(cat "/proc/$pid/comm")" >"$VM_OUT/prof-$work-$who.folded"
    rm -f "$PROF_DIR/perf.data"
    busy=$(awk '{ s += $NF } END { print s + 0 }' "$VM_OUT/prof-$work-$who.folded")
    echo "$work $who $count $tc $ts $rc $rs $(cat "$PROF_DIR/side") $busy" \
        "$(perf_stat_values "$PROF_DIR/all.csv" context-switches)" \
        "$(perf_stat_values "$PROF_DIR/own.csv" task-clock,context-switches)" \
        "$(perf_stat_values "$PROF_DIR/all-tp.csv" "$PROF_TRACED")" \
        "$(perf_stat_values "$PROF_DIR/own-tp.csv" "$PROF_TRACED")" | tr ' ' , >>"$VM_OUT/profile.csv"
    printf '%s, %s: the whole guest, %d commands in %.1f s\n' \
        "$([ "$who" = node ] && echo "the node (cuse_bsg)" || echo "the null responder")" "$5" "$rc" "$rs" \
        >"$VM_OUT/prof-$work-$who.title"
    printf 'perf record -a -g, cpu-clock every %d us (%.2f us a command); the idle task and perf left out\n' \
        $((PROF_PERIOD / 1000)) "$(awk -v p="$PROF_PERIOD" -v c="$rc" 'BEGIN { print (c > 0 ? p / 1000 / c : 0) }')" \
        >>"$VM_OUT/prof-$work-$who.title"
}

PROF_LOADS=("tur:SG_IO TEST UNIT READY loop" "fio1:fio randread 4k, QD 1" "fio16:fio randread 4k, QD 16")

# prof_counted: the counted and the traced windows, per command, the node
# beside the null responder (profile.csv's columns: prof_case)
prof_counted() {
    local l
    echo
    echo "Per command, counted in a window of $PROF_TIME s of each load: CPU, the guest's busy time"
    echo "(/proc/stat; idle=poll's spinning is idle), user and kernel, and the responder's own (its"
    echo "/proc/PID/stat, all its threads); context switches (perf stat), the guest's and the responder's"
    echo
    echo "| load | responder | commands/s | CPU us | user | kernel | resp. user | resp. kernel | switches | resp. switches |"
    echo "|------|-----------|-----------:|-------:|-----:|-------:|-----------:|-------------:|---------:|---------------:|"
    for l in "${PROF_LOADS[@]}"; do
        awk -F, -v w="${l%%:*}" -v label="${l#*:}" -v hz="$(getconf CLK_TCK)" '$1 == w && $3 > 0 {
            c = $3; t = 1e6 / hz / c
            printf "| %s | %s | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |\n",
                label, $2 == "node" ? "node" : "null responder", c / $4, ($5 + $6) * t, $5 * t, $6 * t,
                $8 * t, $9 * t, $17 / c, $19 / c }' "$VM_OUT/profile.csv"
    done
    echo
    echo "Per command, traced in another window of $PROF_TIME s: wake-ups (sched:sched_wakeup) and system"
    echo "calls (raw_syscalls:sys_enter), the guest's and the responder's (those its threads make);"
    echo "commands/s: the rate while these count (every system call then takes the kernel's slow path)"
    echo
    echo "| load | responder | commands/s | wake-ups | syscalls | resp. wake-ups | resp. syscalls |"
    echo "|------|-----------|-----------:|---------:|---------:|---------------:|---------------:|"
    for l in "${PROF_LOADS[@]}"; do
        awk -F, -v w="${l%%:*}" -v label="${l#*:}" '$1 == w && $10 > 0 {
            c = $10
            printf "| %s | %s | %.0f | %.2f | %.2f | %.2f | %.2f |\n", label,
                $2 == "node" ? "node" : "null responder", c / $11, $20 / c, $21 / c, $22 / c, $23 / c }' \
            "$VM_OUT/profile.csv"
    done
}

# prof_sampled WORK LABEL: the sampled window of a load, CPU us per command:
# in all, by process, then by function (its own time: the leaf of its
# samples), the node beside the null responder, the largest either way first
prof_sampled() {
    local f=$VM_OUT/prof-$1 cn cz
    cn=$(awk -F, -v w="$1" '$1 == w && $2 == "node" { print $12 }' "$VM_OUT/profile.csv")
    cz=$(awk -F, -v w="$1" '$1 == w && $2 == "null" { print $12 }' "$VM_OUT/profile.csv")
    echo
    echo "$2: CPU us per command, sampled (cpu-clock every $((PROF_PERIOD / 1000)) us for $PROF_TIME s, perf's own"
    echo "samples and the idle task's left out); by process (the responder: cuse_bsg or nullcuse), then by"
    echo "function, its own time (the leaf of its samples)"
    echo
    echo "| process or function | where | node | null responder | node - null |"
    echo "|---------------------|-------|-----:|---------------:|------------:|"
    awk -F, -v w="$1" '$1 == w { r[$2] = $13 > 0 ? $12 / $13 : 0 }
        END { printf "| commands/s while sampled | | %.0f | %.0f | |\n", r["node"], r["null"] }' "$VM_OUT/profile.csv"
    awk -v cn="${cn:-0}" -v cz="${cz:-0}" -v per="$PROF_PERIOD" -v node="$f-node.folded" '
        function add(sec, name, where) {
            k = sec "\t" name "\t" where
            U[k, side] += us
            K[k] = 1
        }
        {
            side = FILENAME == node ? 1 : 2
            c = side == 1 ? cn : cz
            if (!(c > 0))
                next
            us = $NF * per / 1000 / c
            n = split(substr($0, 1, length($0) - length($NF) - 1), fr, ";")
            kind = sub(/_\[k\]$/, "", fr[n]) ? "kernel" : "user"
            add(0, "all", "")
            add(0, "all", kind)
            add(1, "process " (fr[1] == "cuse_bsg" || fr[1] == "nullcuse" ? "the responder" : fr[1]), kind)
            add(2, fr[n], kind)
        }
        END {
            for (k in K) {
                split(k, a, "\t")
                printf "%s\t%.3f\t| %s | %s | %.1f | %.1f | %+.1f |\n", a[1], (U[k, 1] > U[k, 2] ? U[k, 1] : U[k, 2]),
                    a[2], a[3], U[k, 1], U[k, 2], U[k, 1] - U[k, 2]
            }
        }' "$f-node.folded" "$f-null.folded" | sort -t$'\t' -k1,1n -k2,2gr |
        awk -F'\t' -v top="${PROF_TOP:-20}" '++n[$1] <= ($1 == 2 ? top : 8) { print $3 }'
}

prof_bench() {
    local l
    prof_setup
    : >"$VM_OUT/profile.csv"
    rm -f "$VM_OUT"/prof-*.folded "$VM_OUT"/prof-*.title
    for l in "${PROF_LOADS[@]}"; do
        prof_case "${l%%:*}" node "$DIRECT_PID" /dev/bsg/direct-cuse "${l#*:}"
        prof_case "${l%%:*}" null "$NULL_PID" /dev/bsg/null-cuse "${l#*:}"
    done
    {
        prof_counted
        for l in "${PROF_LOADS[@]}"; do prof_sampled "${l%%:*}" "${l#*:}"; done
    } | tee "$VM_OUT/profile.txt"
}

declare -A QD16=()
if [ "$MODE" = load ]; then
    load_bench
    stop_daemons
    targets_print
    exit 0
fi
if [ "$MODE" = iscsi ]; then
    stop_daemons
    : >"$VM_OUT/iscsi.csv"
    app_bench
    targets_print
    exit 0
fi
if [ "$MODE" = cost ]; then
    cost_table
    stop_daemons
    targets_print
    exit 0
fi
if [ "$MODE" = profile ]; then
    prof_bench
    stop_daemons
    exit 0
fi
if [ "$MODE" = ioctl ]; then
    ioctl_tables
    stop_daemons
    targets_print
    exit 0
fi
echo
echo "fio --ioengine=sg --rw=randread --bs=4k, IOPS (medians of $ROUNDS runs of ${FIO_TIME} s);"
echo "node: the default engine on an sg target (its own queue), pool: --async=pool"
echo
echo "| scsi_debug  | iodepth | kernel sg | node, queue | /kern | node, pool | /kern | null resp | node/null | null+gate | /null | null+proc | /null |"
echo "|-------------|--------:|----------:|------------:|------:|-----------:|------:|----------:|----------:|----------:|------:|----------:|------:|"
: >"$VM_OUT/fio.csv"
: >"$VM_OUT/busy.csv"
if [ "$MODE" = qd16 ]; then
    QDS=16 fio_sweep "delay=0" null
    busy_table 16
    targets_print
    exit 0
fi
fio_sweep "delay=0" null
set_ndelay 20000000
fio_sweep "ndelay=20ms"
sync_qd1=$(SGCLIENT_V4=1 "$SGCLIENT" read-loop "$VM_BSG" 50 4096)
set_ndelay 0
echo
echo "EDOM: fio fails at iodepth 32, on the kernel's sg as on the node (sg's 16 slots)."
echo "null responder: as above, no data moved; it has no device latency, so only delay=0 has its"
echo "column (n/a elsewhere).  null+gate: the same with the credential check the security model asks"
echo "of any server of this interface at each read() and write(), made in the kernel by the daemon's"
echo "BPF LSM gate (--cred-check=kernel; the node runs the witness, the default: make bench-gate"
echo "compares the two); null+proc: the same check made from"
echo "/proc/TID instead (--cred-check=procfs); /null: each against the plain null responder."
echo
awk -v s="$sync_qd1" -v a="${QD16[ndelay=20ms]}" 'BEGIN {
    printf "20 ms device: synchronous READ 4 KiB on kernel bsg, one at a time: %d ops/s;\n", s
    printf "fio QD 16 through the node: %d IOPS, %.1fx that\n", a, (s > 0 ? a / s : 0) }'
busy_table 1 16

echo
echo "fio --ioengine=sg --rw=read (sequential), MiB/s = IOPS at bs=1M (medians of $ROUNDS)"
echo
echo "| bs, iodepth | kernel sg | node, queue | /kern | node, pool | /kern |"
echo "|-------------|----------:|------------:|------:|-----------:|------:|"
for qd in 1 4; do
    { read -r k; read -r n; read -r p; } < <(medians_iops "$qd read 1M" \
        "$VM_SG" /dev/bsg/direct-cuse /dev/bsg/pool-cuse)
    awk -v q=$qd -v k="$k" -v n="$n" -v p="$p" \
        'BEGIN { printf "| 1 MiB, %-4d | %9d | %11d | %5.2f | %10d | %5.2f |\n", q, k, n, n / k, p, p / k }'
done
ioctl_tables
echo
echo "| FUSE requests per command | node  | null responder |"
echo "|---------------------------|------:|---------------:|"
requests_per_command 1
requests_per_command 16
stop_daemons
: >"$VM_OUT/iscsi.csv"
app_bench
targets_print
