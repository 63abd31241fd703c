#!/bin/bash
# The asynchronous interface in the VM: fio's sg engine, sgp_dd and sg_dd
# (sg-compatible mode), isolation between openers, credentials, signals,
# orphans, v4 arrays.  The daemon runs with ASan and LeakSanitizer.
set -uo pipefail
. "$(dirname "$0")/guest-lib.sh"
. "$(dirname "$0")/node-lib.sh"

SGASYNC=$PWD/build/clients/sgasync
SECPROBE=$PWD/build/clients/secprobe
T0=$SECONDS

# fio_ok NAME DEV ARGS...: a verifying fio job that must end with err=0
fio_run() {
    local dev=$1
    shift
    timeout 300 fio --name=t --filename="$dev" --ioengine=sg --bs=4k --size=4M "$@" 2>&1
}

fio_jobs() {
    local rw qd out
    for rw in randwrite randread; do
        for qd in 1 16; do
            out=$(fio_run "$NODE" --rw="$rw" --iodepth="$qd" --verify=crc32c --do_verify=1 \
                --verify_state_save=0 "$(fio_verify_only "$rw")")
            check "fio $rw 4k iodepth=$qd verify=crc32c" grep -q 'err= 0' <<<"$out"
            grep -E 'IOPS' <<<"$out" | head -n1
        done
    done
    # beyond sg's 16 slots the kernel says EDOM: so must the node
    same "fio iodepth=32: the kernel's answer" "$VM_SG" \
        bash -c "fio --name=t --filename=@DEV@ --ioengine=sg --bs=4k --size=4M --rw=randread \
                 --iodepth=32 2>&1 | grep -o 'error=[A-Za-z ]*' | head -n1"
    # 128 KiB transfers take the device's bsg node (written and read back)
    for rw in randwrite randread; do
        out=$(fio_run "$NODE" --rw="$rw" --bs=128k --iodepth=8 --verify=crc32c --do_verify=1 \
            --verify_state_save=0 "$(fio_verify_only "$rw")")
        check "fio $rw 128k iodepth=8 verify=crc32c (the bsg channel)" grep -q 'err= 0' <<<"$out"
    done
    out=$(fio_run "$NODE" --rw=randwrite --iodepth=8 --numjobs=4 --offset_increment=4M \
        --verify=crc32c --do_verify=1 --verify_state_save=0 --group_reporting)
    check "fio numjobs=4 (four openers) randwrite verify" grep -q 'err= 0' <<<"$out"
}

# two_clients N [tur]: two isolate clients at once; 0 if both got only their own
# (a client that waits for replies the other took is stopped after ISO_TIMEOUT s)
two_clients() {  # both open the node, then start together
    local a b ra=0 rb=0
    rm -f /tmp/iso.go
    ISO_GO=/tmp/iso.go timeout "${ISO_TIMEOUT:-900}" "$SGASYNC" isolate "$NODE" "$@" >/tmp/iso.a 2>&1 &
    a=$!
    ISO_GO=/tmp/iso.go timeout "${ISO_TIMEOUT:-900}" "$SGASYNC" isolate "$NODE" "$@" >/tmp/iso.b 2>&1 &
    b=$!
    vm_wait 30 bash -c 'grep -q waiting /tmp/iso.a && grep -q waiting /tmp/iso.b'
    touch /tmp/iso.go
    wait $a || ra=$?
    wait $b || rb=$?
    cat /tmp/iso.a /tmp/iso.b | sed 's/^/   /'
    [ $ra -eq 0 ] && [ $rb -eq 0 ]
}

isolation() {
    check "two processes, 10,000 commands each, overlapping pack_ids: each gets its own" \
        two_clients 10000
}

# The same clients against pre-4.19 semantics (--shared-queue: one queue per
# device): replies reach the wrong process, which is why async bsg went.
shared_queue() {
    node_start bsg/own-cuse "$VM_SG"
    check "per-opener queues: two processes of TEST UNIT READYs each get their own" \
        two_clients 2000 tur
    node_stop
    CUSE_BSG_TEST_SHARED_QUEUE=1 node_start bsg/shared-cuse "$VM_SG" --shared-queue
    check "pre-4.19 semantics (--shared-queue): replies reach the other process" crossed
    node_stop
}

crossed() { ! ISO_TIMEOUT=60 two_clients 2000 tur && grep -q 'not ours: reply' /tmp/iso.a /tmp/iso.b; }

pool_engine() {  # the same clients, written commands on the worker threads
    local rw out
    for rw in randwrite randread; do
        out=$(fio_run "$NODE" --rw="$rw" --iodepth=16 --verify=crc32c --do_verify=1 \
            --verify_state_save=0 "$(fio_verify_only "$rw")")
        check "--async=pool: fio $rw 4k iodepth=16 verify=crc32c" grep -q 'err= 0' <<<"$out"
    done
    check "--async=pool: two processes, 2,000 commands each: each gets its own" \
        two_clients 2000
    check "--async=pool: v4 array of 64 headers, mixed with SG_IO" "$SGASYNC" v4-array "$NODE" 64
}

arrays() {
    local n
    for n in 1 7 64; do
        check "v4 array of $n headers, mixed with SG_IO" "$SGASYNC" v4-array "$NODE" $n
    done
}

safety() {
    local out i a b
    same "a forked child's write(): the kernel's sg's answer" "$VM_SG" "$SGASYNC" fork @DEV@
    check "a forked child's write() is EPERM" "$SGASYNC" fork "$NODE"
    same "read with nothing done, O_NONBLOCK; poll" "$VM_SG" "$SGASYNC" nonblock @DEV@
    out=$(timeout 30 "$SGASYNC" read-intr "$NODE" 300)
    echo "   $out"
    # nothing is outstanding: only the signal can end this read
    check "a signal ends a blocked read with EINTR" grep -q '^EINTR after [0-9]* ms$' <<<"$out"
    "$SGASYNC" read-block "$NODE" &
    i=$!
    vm_wait 10 vm_in_syscall "$i" 0 || vm_fail "sgasync read-block did not block in read()"
    kill -9 $i
    check "kill -9 of a blocked reader returns" timeout 5 tail --pid=$i -f /dev/null
    # an fd handed to another user: refused as by sg (sg_check_file_access)
    exec 3<>"$NODE" 4<>"$VM_SG"
    a=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$SGASYNC" write-errno fd:4)
    b=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$SGASYNC" write-errno fd:3)
    exec 3>&- 4>&-
    for i in $(seq 100); do "$SGASYNC" orphan "$NODE" 16; done # LeakSanitizer checks at exit
    echo "   kernel sg: $a, node: $b"
    check "write() with other credentials than the opener's: EPERM, as sg" \
        test "$a" = EPERM -a "$b" = EPERM
    check "the refusal is logged" grep -q "not the opener's security context" "$NODE_LOG"
}


orphans() {  # clients exiting with commands in flight: the daemon's memory stays flat
    local pid w a b i held delay=/sys/bus/pseudo/drivers/scsi_debug/delay
    vm_wait 10 bash -c "echo 1 >$delay" 2>/dev/null || vm_fail "cannot set scsi_debug delay"
    pid=$NODE_PID
    held=$(node_open_files)
    rss() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }
    # malloc's per-thread arenas grow for a while, then stop; a leak does not stop
    for i in $(seq 300); do "$SGASYNC" orphan "$NODE" 16; done
    w=$(rss)
    for i in $(seq 500); do "$SGASYNC" orphan "$NODE" 16; done
    a=$(rss)
    for i in $(seq 500); do "$SGASYNC" orphan "$NODE" 16; done
    # the last clients' commands done and their files released
    vm_wait 30 node_settled "$held" || vm_fail "the orphaned commands or files stay in the daemon"
    b=$(rss)
    echo "   daemon RSS: $w KiB after 300 clients exiting mid-command, $a after 800, $b after 1,300"
    if [ $((b - a)) -ge 512 ]; then
        # one more window: a new arena comes once (more threads at once on a
        # busy machine), a leak grows in every window
        for i in $(seq 500); do "$SGASYNC" orphan "$NODE" 16; done
        vm_wait 30 node_settled "$held" || vm_fail "the orphaned commands or files stay in the daemon"
        a=$b b=$(rss)
        echo "   daemon RSS: $b KiB after 1,800"
    fi
    check "memory flat over the last 500 orphaning clients" test $((b - a)) -lt 512
    check "daemon still serves" sg_turs "$NODE"
    # sg's SG_SET_KEEP_ORPHAN: an interrupted SG_IO is dropped, or read() later
    vm_wait 10 bash -c "echo 250 >$delay" 2>/dev/null || vm_fail "cannot set scsi_debug delay"
    same "interrupted SG_IO, keep_orphan 0: dropped" "$VM_SG" "$SGASYNC" keep-orphan @DEV@ 200 0
    same "interrupted SG_IO, SG_SET_KEEP_ORPHAN 1: read() returns it" "$VM_SG" \
        "$SGASYNC" keep-orphan @DEV@ 200 1
    "$SGASYNC" keep-orphan "$NODE" 200 1 | sed 's/^/   /'
    vm_wait 10 bash -c "echo 0 >$delay" 2>/dev/null || vm_fail "cannot reset scsi_debug delay"
}

# sg_answers DEV: what sg says of long transfers and bad buffers, and what a
# READ leaves in a 4 MiB data-in buffer (secprobe's lines)
sg_answers() {
    "$SECPROBE" parity "$1" | grep -E '^(dxfer_len|iovec-kernel|write-(hdr|dxferp|iovec)|sgio-|read-guard)'
    "$SECPROBE" keep-buf "$1"
    "$SECPROBE" keep-buf "$1" 4194304 1 1
}

sg_compat() {  # sg_dd and sgp_dd trust only major 21: the node takes sg's number
    local t k n
    node_stop
    k=$(sg_answers "$VM_SG" 2>&1)
    vm_unload_sg
    CUSE_BSG=$PWD/build/cuse_bsg
    node_start sg0 "$VM_SD" --sg-compat 0
    check "--sg-compat: /dev/sg0 is char 21:0" test "$(stat -c %t:%T /dev/sg0)" = 15:0
    n=$(sg_answers /dev/sg0 2>&1)
    if [ "$k" = "$n" ]; then
        pass "--sg-compat on a disk: sg's answers, and sg's data-in (a CHECK CONDITION's too)"
    else
        fail "--sg-compat on a disk: sg's answers, and sg's data-in (a CHECK CONDITION's too)"
        diff <(echo "$k") <(echo "$n") | head -n 40
    fi
    head -c 16777216 /dev/urandom >/tmp/rand
    for t in 4 8; do
        sgp_dd if=/tmp/rand of=/dev/sg0 bs=512 thr=$t >/dev/null 2>&1
        check "sgp_dd thr=$t write through the node = the disk" \
            cmp /tmp/rand <(dd if="$VM_SD" iflag=direct bs=1M status=none)
        sgp_dd if=/dev/sg0 of=/tmp/back bs=512 thr=$t >/dev/null 2>&1
        check "sgp_dd thr=$t read back" cmp /tmp/rand /tmp/back
    done
    sg_dd if=/dev/sg0 of=/tmp/back bs=512 >/dev/null 2>&1
    check "sg_dd read back" cmp /tmp/rand /tmp/back
    sg_dd if=/tmp/rand of=/dev/sg0 bs=512 bpt=256 seek=0 >/dev/null 2>&1
    check "sg_dd write, bpt=256" cmp /tmp/rand <(dd if="$VM_SD" iflag=direct bs=1M status=none)
    node_stop
}

target_gone() {  # the device removed under an open node: ENODEV and POLLHUP
    local out
    vm_run modprobe sg
    vm_wait 10 test -c "$VM_SG" || vm_fail "no $VM_SG after modprobe sg"
    node_start bsg/gone-cuse "$VM_SG"
    # the opener itself writes (as on sg, no other process may): sgasync gone;
    # fd 4, another open file, keeps the node for SG_IO after it
    exec 4<"$NODE"
    rm -f /tmp/gone.in /tmp/gone.out
    mkfifo /tmp/gone.in
    "$SGASYNC" gone "$NODE" </tmp/gone.in >/tmp/gone.out &
    exec 3>/tmp/gone.in
    vm_wait 10 grep -q opened /tmp/gone.out || vm_fail "sgasync gone did not open $NODE"
    echo -1 >/sys/bus/pseudo/drivers/scsi_debug/add_host
    echo go >&3
    exec 3>&-
    wait $! || vm_fail "sgasync gone failed"
    out=$(tail -n 3 /tmp/gone.out)
    echo "   $out" | tr '\n' ' '
    echo
    check "device removed: poll says POLLHUP|POLLERR" grep -q 'POLLHUP POLLERR' <<<"$out"
    out=$(tail -n 1 /tmp/gone.out)
    check "device removed: a new write() gets ENODEV ($out)" test "$out" = ENODEV
    check "device removed: SG_IO gets ENODEV" \
        bash -c "sg_turs $NODE 2>&1 | grep -q 'No such device'"
    exec 4<&-
    node_stop
}

# a device removed while fio has 16 commands in flight on its node: each
# written command gets its header (DID_NO_CONNECT if the device went under
# it), so fio sees errors and ends instead of waiting for lost completions
removed_under_load() {  # removed_under_load ENGINE
    local f rc t0 sg before
    before=$(ls /sys/class/scsi_generic/)
    echo 1 >/sys/bus/pseudo/drivers/scsi_debug/add_host
    vm_wait 10 bash -c "ls /sys/class/scsi_generic/ | grep -qvxF '${before:-none}'" ||
        vm_fail "no new sg after add_host"
    sg=/dev/$(find /sys/class/scsi_generic/ -mindepth 1 -printf '%f\n' | grep -vxF "${before:-none}" | head -n1)
    vm_wait 10 test -c "$sg" || vm_fail "no $sg"
    node_start bsg/rm-cuse "$sg" --async="$1"
    timeout 120 fio --name=t --filename="$NODE" --ioengine=sg --rw=randread --bs=4k --size=4M \
        --iodepth=16 --runtime=60 --time_based >/tmp/fio.out 2>&1 &
    f=$!
    vm_wait 60 bash -c "find /proc/$f/fd /proc/[0-9]*/fd -lname '$NODE' 2>/dev/null | grep -q ." ||
        vm_fail "fio did not open $NODE"
    # its commands flowing: four times its queue depth taken
    vm_wait 60 node_wrote 64 || vm_fail "fio's commands did not reach $NODE"
    t0=$SECONDS
    echo -1 >/sys/bus/pseudo/drivers/scsi_debug/add_host
    rc=0
    wait $f || rc=$?
    cp /tmp/fio.out "$VM_OUT/fio-removed-$1.out"
    grep -m2 -o -e 'SG Host Status: [^.]*' -e 'error=[A-Za-z ]*' /tmp/fio.out | sed 's/^/   fio: /'
    check "$1: device removed under fio QD 16: fio ends with an error in $((SECONDS - t0)) s, no hang" \
        test $rc -ne 0 -a $rc -ne 124 -a $((SECONDS - t0)) -lt 30
    check "$1: ... the commands in flight come back with a host status" \
        grep -q 'SG Host Status' /tmp/fio.out
    node_gone_with_last_opener "$1: ..."
    check "$1: ... no sanitizer report" bash -c "! grep -q Sanitizer '$NODE_LOG'"
}

vm_load_scsi_debug dev_size_mb=16
CUSE_BSG=$PWD/build/cuse_bsg.asan
# written commands on sg's own queue (the default for an sg target), then on the pool
node_start bsg/async-cuse "$VM_SG"
check "an sg target: written commands go to its own queue" grep -q "own queue" "$NODE_LOG"
check "... and transfers of 64 KiB or more to its bsg node" \
    grep -q "transfers of 64 KiB to [0-9]* KiB: /dev/bsg/" "$NODE_LOG"
fio_jobs
isolation
arrays
safety
node_stop
node_start bsg/async-cuse "$VM_SG" --async=pool
pool_engine
node_stop
CUSE_BSG=$PWD/build/cuse_bsg
shared_queue
node_start bsg/async-cuse "$VM_SG"
orphans
sg_compat
target_gone
CUSE_BSG=$PWD/build/cuse_bsg.asan
removed_under_load queue
removed_under_load pool
echo "async suite took $((SECONDS - T0)) s in the guest"
summary
