#!/bin/bash
# The sg v4 driver's asynchronous ioctls in the VM (SG_IOSUBMIT, SG_IORECEIVE,
# SG_IOABORT): batches, blocking and not, by pack_id, mixed with write()/read(),
# a forked child, an interrupted and a killed caller, the load generator.  The
# kernel's own sg (v3, Debian's 6.1) has none of them: where it answers, its
# answer is printed beside the node's.  The daemon runs with ASan and LeakSanitizer.
set -uo pipefail
. "$(dirname "$0")/guest-lib.sh"
. "$(dirname "$0")/node-lib.sh"

V4IO=$PWD/build/clients/sgv4io
T0=$SECONDS
DELAY=/sys/bus/pseudo/drivers/scsi_debug/delay
NDELAY=/sys/bus/pseudo/drivers/scsi_debug/ndelay

probe() {
    local a b
    a=$("$V4IO" probe "$VM_SG")
    b=$("$V4IO" probe "$NODE")
    echo "   kernel sg: $a; node: $b"
    check "SG_IORECEIVE with SGV4_FLAG_IMMED tells the node (EAGAIN) from kernel sg" \
        test "$b" = "sg v4 ioctls" -a "$a" != "sg v4 ioctls"
    check "SG_GET_VERSION_NUM still says 30536" test "$(version_num "$NODE")" = 30536
}

version_num() {
    python3 -c 'import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
print(struct.unpack("i", fcntl.ioctl(fd, 0x2282, bytes(4)))[0])' "$1"
}

batches() {
    local n room out
    for n in "1 1" "7 3" "64 16" "200 64"; do
        read -r n room <<<"$n"
        out=$("$V4IO" batch "$NODE" "$n" "$room" 2>&1)
        echo "   $out"
        check "$n READs in one SG_IOSUBMIT, received $room at a time, data as SG_IO's" \
            grep -q '^ok' <<<"$out"
    done
    out=$("$V4IO" barray "$NODE" 32 2>&1)
    check "32 READs in one blocking SG_IOSUBMIT, each completion at its place ($out)" \
        grep -q '^ok' <<<"$out"
    out=$("$V4IO" nonblock "$NODE")
    echo "   $out"
    check "nothing outstanding: a single receive EAGAIN, an array ENODATA" \
        test "$out" = "single: Resource temporarily unavailable; array: No data available"
    out=$("$V4IO" bypack "$NODE" 2>&1)
    check "SG_SET_FORCE_PACK_ID: completions by pack_id ($out)" grep -q '^ok' <<<"$out"
    out=$("$V4IO" mix "$NODE" 2>&1)
    check "write()/read() and the ioctls on one descriptor ($out)" grep -q '^ok' <<<"$out"
    out=$("$V4IO" fork "$NODE" 2>&1)
    check "a forked child's SG_IORECEIVE is EPERM, as its read(), and takes none of its parent's completions ($out)" \
        grep -q 'child: Operation not permitted; parent: pack_id 7' <<<"$out"
}

interrupted() {
    local out rc=0 pid before after line
    out=$("$V4IO" intr "$NODE" 300 2>&1) || rc=$?
    check "SIGALRM during a blocking SG_IORECEIVE: EINTR ($out)" test "$rc" -eq 0
    # a 20 ms device: commands are in flight when the client dies
    echo 20000000 >"$NDELAY" || vm_fail "cannot set scsi_debug ndelay"
    before=$(node_stat interrupt)
    "$V4IO" block "$NODE" 32 >/tmp/block.out 2>&1 &
    pid=$!
    vm_wait 10 grep -q submitted /tmp/block.out || vm_fail "the blocked client did not submit"
    vm_wait 10 vm_in_syscall "$pid" 16 || vm_fail "the client did not block in SG_IORECEIVE"
    kill -9 $pid
    wait $pid 2>/dev/null
    after=$(node_stat interrupt)
    check "kill -9 of a client blocked in SG_IORECEIVE, 32 submitted: its call ends ($before -> $after interrupts)" \
        test "$after" -gt "$before"
    out=$("$V4IO" abort "$NODE" 2>&1)
    while IFS= read -r line; do echo "   $line"; done <<<"$out"
    check "SG_IOABORT of a command at the device: 0, and it comes back marked aborted" \
        grep -q 'pack_id 2: info 0x1[0-9a-f] aborted 1' <<<"$out"
    check "SG_IOABORT of no such command: ENODATA" grep -q 'abort of none: No data available' <<<"$out"
    echo 0 >"$NDELAY"
    echo 0 >"$DELAY"
}

# 300 clients killed at any point of their calls, 16 commands in flight each:
# no opener is left behind.  Each opener keeps its own descriptors of the
# target until it is freed, and every command holds its opener, so the
# daemon's descriptor count says whether any opener or command was left.
# RSS is printed for reference (thread stacks and malloc arenas still grow
# over the first few hundred clients, as in the async suite).
killed_clients() {
    local pid=$NODE_PID c a b fa fb ea
    rss() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }
    # every libfuse worker has an epoll set of its own, and idle workers
    # come and go (robust.sh's churn checks that they do not pile up):
    # those are printed, the rest must not change
    fdlist() { find "/proc/$pid/fd/" -mindepth 1 -printf '%f -> %l\n' | sort -n; }
    fds() { fdlist | grep -vc 'anon_inode:\[eventpoll\]'; }
    epolls() { fdlist | grep -c 'anon_inode:\[eventpoll\]'; }
    echo 1 >"$DELAY"
    kill_one() {
        "$V4IO" busy "$NODE" 16 >/tmp/k.out 2>&1 &
        c=$!
        vm_wait 10 grep -q submitted /tmp/k.out
        kill -9 $c
        wait $c 2>/dev/null
    }
    for _ in $(seq 100); do kill_one; done
    vm_wait 20 node_settled 0 || vm_fail "the killed clients' files were not all released"
    a=$(rss) fa=$(fds) ea=$(epolls)
    fdlist >/tmp/fd.a
    for _ in $(seq 200); do kill_one; done
    vm_wait 20 node_settled 0 || vm_fail "the killed clients' files were not all released"
    b=$(rss) fb=$(fds)
    fdlist >/tmp/fd.b
    echo "   daemon RSS: $a KiB after 100 killed clients, $b after 300; descriptors $fa, $fb" \
        "(besides the workers' epoll sets: $ea, $(epolls))"
    diff <(grep -v eventpoll /tmp/fd.a) <(grep -v eventpoll /tmp/fd.b) | sed 's/^/   descriptors: /'
    check "no descriptor left by the last 200 killed clients ($fa, $fb)" test "$fa" -eq "$fb"
    echo 0 >"$DELAY"
    check "the daemon still serves" bash -c "'$V4IO' batch '$NODE' 16 16 | grep -q ^ok"
}

load() {
    local out
    for qd in "1 1" "16 4" "64 16"; do
        read -r qd b <<<"$qd"
        out=$("$V4IO" load "$NODE" "$qd" "$b" 3 2>&1)
        echo "   $out"
        check "load generator: random 4k reads, QD $qd, batches of $b" grep -q '^iops=' <<<"$out"
    done
}

# the daemon's descriptors but libfuse workers' epoll sets (they come and go)
node_fds() { find /proc/"$NODE_PID"/fd -mindepth 1 -printf '%l\n' | grep -vc eventpoll; }
node_fds_at_most() { [ "$(node_fds)" -le "$1" ]; }

# QD 64 at a 20 ms device: the device gets more than one sg descriptor's 16
# slots (the node opens more channels for a deeper queue), and the extra
# channels close once the load ends
deep() {
    local busy=/sys/class/scsi_generic/${VM_SG#/dev/}/device/device_busy pid max=0 n fa fb out
    fa=$(node_fds)
    echo 20000000 >"$NDELAY" || vm_fail "cannot set scsi_debug ndelay"
    "$V4IO" load "$NODE" 64 16 3 >/tmp/deep.out 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        n=$(cat "$busy")
        [ "$n" -le "$max" ] || max=$n
        sleep 0.05
    done
    wait "$pid"
    out=$(cat /tmp/deep.out)
    vm_wait 10 bash -c "echo 0 >$NDELAY" 2>/dev/null || vm_fail "cannot reset scsi_debug ndelay"
    echo "   QD 64, batches of 16, 20 ms device: $out; at most $max commands at the device at once"
    check "QD 64 at a 20 ms device: more than sg's 16 slots reach the device ($max)" \
        test "$max" -gt 16 -a "$max" -le 64
    fb=$(node_fds)
    check "the extra channels close once the load ends (descriptors $fa before, $fb after)" \
        vm_wait 10 node_fds_at_most "$fa"
}

vm_load_scsi_debug dev_size_mb=16
if [ "${1:-}" = killed ]; then
    node_start bsg/v4-cuse "$VM_SG"
    killed_clients
    node_stop
    summary
    exit
fi
CUSE_BSG=$PWD/build/cuse_bsg.asan
node_start bsg/v4-cuse "$VM_SG"
probe
batches
interrupted
load
deep
node_stop
check "no sanitizer report (queue engine)" bash -c "! grep -q Sanitizer '$NODE_LOG'"
CUSE_BSG=$PWD/build/cuse_bsg
node_start bsg/v4-cuse "$VM_SG"
killed_clients
node_stop
CUSE_BSG=$PWD/build/cuse_bsg.asan
node_start bsg/v4-cuse "$VM_SG" --async=pool
batches
node_stop
check "no sanitizer report (pool engine)" bash -c "! grep -q Sanitizer '$NODE_LOG'"
# without ptrace rights the daemon cannot reach the caller's arrays
node_start bsg/v4-cuse "$VM_SG" --copy=retry
out=$("$V4IO" probe "$NODE")
check "the ioctl retry path refuses them: EINVAL ($out)" test "$out" = "no sg v4 ioctls: Invalid argument"
node_stop
echo "ioctl suite took $((SECONDS - T0)) s in the guest"
summary
