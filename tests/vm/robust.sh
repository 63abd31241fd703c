#!/bin/bash
# Robustness of the node under signals, memory pressure and churn:
#  - a call waiting in the node (read(), SG_IO, a blocking write(), an SG_IO
#    parked past its user's share of threads) gets a signal: a stop and a
#    continue, a caught one (with and without SA_RESTART), an ignored one,
#    SIGKILL.  Each runs on the kernel's sg
#    node and on the node, and both answers are printed:
#        read/stop          kernel sg: 8/8 read (...) | node: 8/8 read (...)
#  - write()s parked on a full queue: their copies stay within --max-memory;
#  - 64 clients opening, killed and started again, twice: the daemon's
#    descriptors, threads and memory come back, and the second round adds
#    nothing to the first;
#  - SIGTERM while fio keeps 16 commands at the device: a clean exit.
#
#    tests/vm/vm-run tests/vm/robust.sh [/path/to/cuse_bsg]
set -uo pipefail
. "$(dirname "$0")/guest-lib.sh"
. "$(dirname "$0")/node-lib.sh"

T0=$SECONDS
CUSE_BSG=${1:-$PWD/build/cuse_bsg}
ROBUST=$PWD/build/clients/robust
DELAY=/sys/bus/pseudo/drivers/scsi_debug/delay
CHURN_SECS=${CHURN_SECS:-30}
FLOOD_THREADS=${FLOOD_THREADS:-600}

set_delay() {  # set_delay JIFFIES: scsi_debug's delay for each command
    vm_wait 10 bash -c "echo $1 >$DELAY" 2>/dev/null || vm_fail "cannot set scsi_debug delay to $1"
}

# ---- signals to a waiting call ----

# signal_case CALL ACTION WANT [KERNEL-WANT]: robust's CALL gets ACTION on
# both nodes; the node must answer WANT (the start of its line), and the
# kernel KERNEL-WANT (WANT unless given), which shows the probe is sound
signal_case() {
    local call=$1 action=$2 want=$3 kwant=${4:-$3} k n
    if [ "$call" = write ]; then
        k="n/a (sg's write() never waits: a full queue is EDOM)"
        kwant=n/a
    else
        k=$("$ROBUST" signal "$VM_SG" "$call" "$action" 2>&1)
    fi
    n=$("$ROBUST" signal "$NODE" "$call" "$action" 2>&1)
    printf '   %-18s kernel sg: %s | node: %s\n' "$call/$action" "$k" "$n"
    check "$call/$action: the kernel's answer is $kwant" grep -q -- "^$kwant" <<<"$k"
    check "$call/$action: the node's answer is $want" grep -q -- "^$want" <<<"$n"
}

signals() {
    # 1000 jiffies (4 s at the kernel's 250 Hz): the commands are still at the
    # device all through a 2 s stop
    set_delay 1000
    signal_case read stop "8/8 read"
    signal_case read term-ignored "8/8 read"
    signal_case read usr1 "0/8 read, EINTR"
    # sg restarts its read() after a SA_RESTART handler; a FUSE daemon cannot
    # say ERESTARTSYS, so the node's read() says EINTR (README)
    signal_case read usr1-restart "0/8 read, EINTR" "8/8 read"
    signal_case read stop-usr1 "0/8 read, EINTR"
    signal_case read kill "killed by KILL"
    signal_case read stop-kill "killed by KILL"
    signal_case sgio stop "SG_IO ok, status 0"
    signal_case sgio usr1 "SG_IO EINTR"
    signal_case sgio stop-kill "killed by KILL"
    # one SG_IO past its user's share of threads (32 calls holding one) waits
    # parked, with no thread: the same signals end it as end a waiting call
    signal_case share stop "SG_IO ok, status 0"
    signal_case share usr1 "SG_IO EINTR"
    signal_case share stop-kill "killed by KILL"
    signal_case write stop "write ok"
    signal_case write usr1 "write EINTR"
    signal_case write stop-kill "killed by KILL"
    set_delay 0
    check "signals: the daemon still serves" sg_turs "$NODE"
}

# ---- write()s parked on a full queue ----

daemon_rss() { awk '/VmRSS/ {print $2}' "/proc/$NODE_PID/status"; }
rss_below() { [ "$(daemon_rss)" -lt "$1" ]; } # rss_below KIB: vm_wait's condition

flood() {
    local base held after out pid waiting enomem threads
    node_start bsg/robust-cuse "$VM_SG" --max-memory 40M
    base=$(daemon_rss)
    threads=$(find "/proc/$NODE_PID/task" -mindepth 1 -maxdepth 1 | wc -l)
    out=$(mktemp /tmp/flood.XXXXXX)
    "$ROBUST" flood "$NODE" "$FLOOD_THREADS" >"$out" 2>&1 &
    pid=$!
    # every write() reached the daemon: parked, or answered
    vm_wait 300 node_wrote $((FLOOD_THREADS + 1)) || { cat "$out"; vm_fail "the writes never came"; }
    held=$(daemon_rss)
    kill -USR1 "$pid"
    vm_wait 30 grep -q 'writers=' "$out" || { cat "$out"; vm_fail "no counts from the writers"; }
    echo "   kernel sg: a full queue's write() is EDOM at once, nothing is copied or waits"
    echo "   node: $(grep 'writers=' "$out")"
    echo "   daemon RSS: $base KiB idle, $held KiB with the writers parked (--max-memory 40M;" \
        "each write() is 32 pages)"
    waiting=$(sed -n 's/.*waiting=\([0-9]*\).*/\1/p' "$out")
    enomem=$(sed -n 's/.*ENOMEM=\([0-9]*\).*/\1/p' "$out")
    # --max-memory bounds the copies; besides them the daemon may hold its
    # libfuse workers' request buffers (at most 128 workers, 132 KiB each)
    # and 8 MiB of stacks and heap
    check "parked writes: the daemon's memory stays within --max-memory and its workers' buffers ($((held - base)) KiB more)" \
        test $((held - base)) -lt $((40 * 1024 + 128 * 132 + 8 * 1024))
    check "parked writes: those past the bound get ENOMEM ($enomem)" test "${enomem:-0}" -gt 0
    check "parked writes: the others wait for room ($waiting)" test "${waiting:-0}" -gt 0
    # a writer past its share of threads is parked by the node before its
    # write() reaches the queue: either copy can be the one refused, and the
    # open file warns once, for whichever of its charges (headers parked, or
    # a command's data buffer) met a bound first
    check "parked writes: the bound is logged" grep -qE \
        "bytes of (a blocked write\\(\\)'s headers|a command's data buffer) are past (the open file's|its user's|the daemon's) memory bound: ENOMEM|share of threads is past (its user's|the daemon's) memory bound" \
        "$NODE_LOG"
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null
    vm_wait 60 node_settled 0 || vm_fail "the killed writers' files stay in the daemon"
    # the workers that took the writes, and their buffers, go once idle
    vm_wait 30 threads_at_most $((threads + IDLE_KEPT)) ||
        echo "   threads did not come down to $((threads + IDLE_KEPT))"
    # what stays: the 16 idle libfuse workers' request buffers (132 KiB
    # each) and 8 MiB of stacks and heap.  The heap the burst freed goes
    # back once a worker has waited FUSE_IDLE_MS (2 s) with the extra ones
    # gone and no request read by any (node.c's malloc_trim()): up to 10 s
    vm_wait 10 rss_below $((base + 8192 + 16 * 132)) || true
    after=$(daemon_rss)
    echo "   daemon RSS: $after KiB once the writers were killed"
    check "parked writes: their memory is given back ($after KiB)" \
        test $((after - base)) -lt $((8192 + 16 * 132))
    check "parked writes: the daemon still serves" sg_turs "$NODE"
    node_stop
    rm -f "$out"
}

# ---- churn ----

# sample: the daemon's descriptors (of which epoll sets), threads, RSS (KiB)
sample() {
    local fds ep
    fds=$(find "/proc/$NODE_PID/fd" -mindepth 1 | wc -l)
    ep=$(find "/proc/$NODE_PID/fd" -mindepth 1 -lname 'anon_inode:\[eventpoll\]' | wc -l)
    echo "$fds $ep $(find "/proc/$NODE_PID/task" -mindepth 1 -maxdepth 1 | wc -l) $(daemon_rss)"
}

show() {  # show WHEN FDS EPOLL THREADS RSS
    printf '   %-14s descriptors %4s (epoll sets %3s), threads %4s, RSS %6s KiB\n' "$@"
}

threads_at_most() {  # threads_at_most N: the daemon has N threads or fewer
    [ "$(find "/proc/$NODE_PID/task" -mindepth 1 -maxdepth 1 | wc -l)" -le "$1" ]
}

# idle ceiling: libfuse workers kept waiting (node.c FUSE_IDLE_THREADS), the
# elastic pool's (pool.h POOL_KEEP_IDLE)
IDLE_KEPT=$((16 + 2))

churn_round() {  # churn_round N BASE-THREADS: one round, then idle again
    "$ROBUST" churn "$NODE" 64 "$CHURN_SECS" | sed 's/^/   /'
    vm_wait 60 node_settled 0 || vm_fail "round $1: files or commands stay in the daemon"
    vm_wait 30 threads_at_most $(($2 + IDLE_KEPT)) ||
        echo "   round $1: threads did not come down to $(($2 + IDLE_KEPT))"
    # a worker idle for FUSE_IDLE_MS (2 s) gives the burst's memory back
    # (fuseio.c, malloc_trim); the RSS is sampled once that time has passed
    # twice over, not while the trim may be still to come
    sleep 5
}

churn() {
    local base r1 r2 r3 b f1 f2 e1 e2 t1 t2 m1 m2 m3
    node_start bsg/robust-cuse "$VM_SG"
    vm_wait 30 node_settled 0
    base=$(sample)
    read -r _ _ b _ <<<"$base"
    churn_round 1 "$b"
    r1=$(sample)
    churn_round 2 "$b"
    r2=$(sample)
    local -a v
    read -ra v <<<"$base" && show "idle" "${v[@]}"
    read -ra v <<<"$r1" && show "after round 1" "${v[@]}"
    read -ra v <<<"$r2" && show "after round 2" "${v[@]}"
    read -r f1 e1 t1 m1 <<<"$r1"
    read -r f2 e2 t2 m2 <<<"$r2"
    check "churn: round 2 adds no descriptor ($f1 -> $f2)" test "$f2" -le "$f1"
    check "churn: round 2 adds no epoll set ($e1 -> $e2)" test "$e2" -le "$e1"
    check "churn: idle threads within the ceiling ($t2 <= $b + $IDLE_KEPT)" \
        test "$t2" -le $((b + IDLE_KEPT))
    check "churn: round 2 adds no thread ($t1 -> $t2)" test "$t2" -le "$t1"
    if [ "$m2" -ge $((m1 + 2048)) ]; then
        # RSS that steps once (another malloc arena taken into use) is given
        # one more round, as in the async suite; a leak grows in each round
        churn_round 3 "$b"
        r3=$(sample)
        read -ra v <<<"$r3" && show "after round 3" "${v[@]}"
        read -r _ _ _ m3 <<<"$r3"
        check "churn: RSS that stepped in round 2 adds under 2 MiB in round 3 ($m2 -> $m3 KiB)" \
            test "$m3" -lt $((m2 + 2048))
    else
        check "churn: round 2 adds under 2 MiB of RSS ($m1 -> $m2 KiB)" test "$m2" -lt $((m1 + 2048))
    fi
    check "churn: the daemon still serves" sg_turs "$NODE"
    node_stop
}

# ---- the daemon stopped under load ----

# fio keeps 16 READs at the device (4 ms each) while the daemon gets
# SIGTERM: completions keep coming as the node ends, and none may reach the
# pools it frees (the ASan build); it exits 0 and takes its node away.
# fio's file is never released (the session ends first), so what it holds
# is still allocated at exit: leaks are not looked for here.
stop_under_load() {
    local fio_pid
    set_delay 1
    CUSE_BSG=$PWD/build/cuse_bsg.asan ASAN_OPTIONS=detect_leaks=0 node_start bsg/robust-cuse "$VM_SG"
    fio --name=t --filename="$NODE" --ioengine=sg --bs=4k --size=4M --rw=randread \
        --iodepth=16 --time_based --runtime=60 >/tmp/fio-stop.out 2>&1 &
    fio_pid=$!
    vm_wait 30 node_busy || vm_fail "fio's commands never reached the device"
    sleep 2
    node_stop
    check "stopped under load: no memory error in the daemon (ASan)" \
        bash -c "! grep -q AddressSanitizer '$NODE_LOG'"
    # the session gone, fio's calls fail and its poll() says POLLERR, which
    # fio's sg engine, waiting for POLLIN, loops on: it is ended here
    kill -KILL "$fio_pid"
    check "stopped under load: fio, its node gone, is not held in the kernel (SIGKILL ends it)" \
        timeout 10 tail -s 0.1 --pid="$fio_pid" -f /dev/null
    wait "$fio_pid" 2>/dev/null
    set_delay 0
}

vm_load_scsi_debug dev_size_mb=16
vm_log "signals to calls waiting in the node, beside the kernel's sg"
node_start bsg/robust-cuse "$VM_SG"
signals
node_stop
vm_log "write()s parked on a full queue, $FLOOD_THREADS writers"
flood
vm_log "churn: 64 clients killed and started again, 2 x $CHURN_SECS s"
churn
vm_log "the daemon stopped under load: SIGTERM with 16 READs at the device"
stop_under_load
echo "robust suite took $((SECONDS - T0)) s in the guest"
summary
