#!/bin/bash
# --all in the VM: a node per SCSI device under udevd, scsi_debug hosts added
# and removed at run time, one of them under a running fio; the one-target
# mode on a removed device.  The daemon runs with ASan and LeakSanitizer.
set -uo pipefail
. "$(dirname "$0")/guest-lib.sh"
. "$(dirname "$0")/node-lib.sh"

ADD_HOST=/sys/bus/pseudo/drivers/scsi_debug/add_host
ALL_LOG=$VM_OUT/daemon-all.log
ALL_PID=''
T0=$SECONDS

# udevd from the host's tree: its rules are read-only here, its state goes to /run
start_udevd() {
    [ -x /lib/systemd/systemd-udevd ] || vm_fail "no /lib/systemd/systemd-udevd (install udev)"
    vm_run /lib/systemd/systemd-udevd --daemon
    vm_run udevadm trigger --action=add
    vm_run udevadm settle --timeout=60
}

hctls() { vm_sdebug_devs | sed 's#.*/##' | sort -V; }
cuse_node() { echo "/dev/bsg/$1-cuse"; }
sg_of() { echo "/dev/$(ls "$(vm_sdebug_devs | grep "/$1\$")/scsi_generic")"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
daemon_up() { kill -0 "$ALL_PID" 2>/dev/null; }
held() { find /proc/[0-9]*/fd -lname "$1" 2>/dev/null | grep -q .; }

_n_ready() {  # exactly N scsi_debug devices, each with its sg node (bsg without sg)
    local d
    [ "$(vm_sdebug_devs | wc -l)" -eq "$1" ] || return 1
    for d in $(vm_sdebug_devs); do
        if [ -d /sys/module/sg ]; then
            [ -c "/dev/$(ls "$d/scsi_generic" 2>/dev/null)" ] || return 1
        else
            [ -c "/dev/bsg/${d##*/}" ] || return 1
        fi
    done
}
add_host() {  # add_host 1|-1: wait for the devices to follow
    local n
    n=$(($(vm_sdebug_devs | wc -l) + $1))
    echo "$1" >"$ADD_HOST"
    vm_wait 10 _n_ready "$n" || vm_fail "scsi_debug did not get to $n devices"
}

all_start() {
    : >"$ALL_LOG"
    "$CUSE_BSG" --all -f -v >>"$ALL_LOG" 2>&1 &
    ALL_PID=$!
}

each_device_has_a_node() {
    local h
    for h in $(hctls); do
        vm_wait 10 test -c "$(cuse_node "$h")" || { echo "   no $(cuse_node "$h")"; return 1; }
    done
}

present() {
    local h
    all_start
    check "--all: a node per SCSI device, named /dev/bsg/H:C:T:L-cuse" each_device_has_a_node
    for h in $(hctls); do
        NODE=$(cuse_node "$h")
        same "--all: sg_inq through $NODE" "$(sg_of "$h")" sg_inq @DEV@
    done
    check "--all: the default owner and mode" \
        test "$(stat -c %a:%U "$(cuse_node "$(hctls | head -n1)")")" = 600:root
}

# add a host: its node comes from the udev event, and it serves (the
# latency is printed, not judged: the machine may be busy)
# (scsi_debug's scan of the new host, synchronous here, comes first)
hot_add() {
    local before t0 t1 t2 h rc=0
    before=$(hctls)
    t0=$(now_ms)
    add_host 1
    t1=$(now_ms)
    h=$(comm -13 <(echo "$before") <(hctls) | head -n1)
    vm_wait 10 test -c "$(cuse_node "$h")" || rc=$?
    t2=$(now_ms)
    echo "   add_host: $h and its sg node after $((t1 - t0)) ms, /dev/bsg/$h-cuse $((t2 - t1)) ms later"
    check "hot-add: the new device gets its node, no rescan, no restart" test "$rc" -eq 0
    NODE=$(cuse_node "$h")
    same "hot-add: sg_inq through the new node" "$(sg_of "$h")" sg_inq @DEV@
    same "hot-add: sg_readcap through the new node" "$(sg_of "$h")" sg_readcap @DEV@
    NEW=$h
}

# remove the last host (the one just added) while fio reads from its node
hot_remove() {
    local out rc=0 t0 t1 node other
    node=$(cuse_node "$NEW")
    other=$(cuse_node "$(hctls | head -n1)")
    # fio splits file names at ':' unless escaped
    timeout 120 fio --name=t --filename="${node//:/\\:}" --ioengine=sg --rw=randread --bs=4k \
        --iodepth=16 --size=16M --time_based --runtime=60 >/tmp/fio.out 2>&1 &
    local fio=$!
    # fio starts slowly under TCG: remove only once its job holds the node
    vm_wait 60 held "$node" || vm_fail "fio did not open $node"
    # ... and its commands flow: four times its queue depth taken
    vm_wait 60 node_wrote 64 "$ALL_PID" "$ALL_LOG" "${node#/dev/}" ||
        vm_fail "fio's commands did not reach $node"
    t0=$(now_ms)
    echo -1 >"$ADD_HOST"
    wait $fio || rc=$?
    t1=$(now_ms)
    out=$(grep -m1 -o -e 'err=[ 0-9]*' -e 'error=[A-Za-z ]*' /tmp/fio.out)
    echo "   fio ended $((t1 - t0)) ms after the removal, status $rc: $out"
    grep -i -m4 -e 'io_u error' -e 'error=' /tmp/fio.out | sed 's/^/   fio: /'
    cp /tmp/fio.out "$VM_OUT/fio-hot-remove.out"
    check "hot-remove: fio sees errors, and no hang (status $rc)" \
        test "$rc" -ne 0 -a "$rc" -ne 124 -a $((t1 - t0)) -lt 30000
    check "hot-remove: the node goes once fio closed it" vm_wait 5 test ! -e "$node"
    check "hot-remove: the daemon stays up" daemon_up
    check "hot-remove: the other node still serves" sg_turs "$other"
    # by udev's event, or first by a command that found the device gone
    check "hot-remove: logged" grep -q -e "was removed" -e "is gone" "$ALL_LOG"
    grep -E "removed|gone" "$ALL_LOG" | sed 's/^/   /'
}

# a device whose node cannot be made is skipped, and the daemon goes on
skipped() {
    local host h taken=()
    # the new host's number is the lowest free one: take every free name
    for host in $(seq 0 31); do
        [ -e "$(cuse_node "$host:0:0:0")" ] && continue
        : >"$(cuse_node "$host:0:0:0")"
        taken+=("$(cuse_node "$host:0:0:0")")
    done
    add_host 1
    h=$(hctls | tail -n1)
    vm_wait 10 grep -q "skipping .*($h)" "$ALL_LOG"
    check "a device whose node cannot be made: logged, naming it and why, and skipped" \
        grep -q "skipping /dev/sg[0-9]* ($h): /dev/bsg/$h-cuse already exists" "$ALL_LOG"
    grep "skipping" "$ALL_LOG" | sed 's/^/   /'
    check "... and the daemon goes on" daemon_up
    add_host -1
    rm -f "${taken[@]}"
    h=$(hctls | head -n1)
    check "... serving the others" sg_turs "$(cuse_node "$h")"
}

idle_remove() {  # a node nobody holds goes at once
    local h
    add_host 1
    h=$(hctls | tail -n1)
    vm_wait 5 test -c "$(cuse_node "$h")" || vm_fail "no node for $h"
    echo -1 >"$ADD_HOST"
    check "a removed device's idle node goes at once" vm_wait 2 test ! -e "$(cuse_node "$h")"
}

# a device back at the same H:C:T:L while its old node is held: it waits for the name
readd_held() {
    local h node n
    h=$(hctls | head -n1)
    node=$(cuse_node "$h")
    n=$(hctls | wc -l)
    exec 3<>"$node"
    echo 1 >"/sys/class/scsi_device/$h/device/delete"
    vm_wait 10 _n_ready $((n - 1)) || vm_fail "$h was not deleted"
    echo "- - -" >"/sys/class/scsi_host/host${h%%:*}/scan"
    vm_wait 10 _n_ready "$n" || vm_fail "$h did not come back"
    check "a device back at a held node's address: deferred, logged" \
        vm_wait 5 grep -q "($h): /dev/bsg/$h-cuse follows" "$ALL_LOG"
    check "... the held node still fails" bash -c "sg_turs $node 2>&1 | grep -q 'No such device'"
    exec 3>&-
    check "... and the new device gets the name once it is closed" \
        vm_wait 5 bash -c "sg_turs $node 2>/dev/null"
    NODE=$node
    same "... sg_inq through it" "$(sg_of "$h")" sg_inq @DEV@
}

stats() {
    local n before
    before=$(grep -c 'stats:' "$ALL_LOG")
    kill -USR1 "$ALL_PID"
    n=$(hctls | wc -l)
    vm_wait 5 vm_lines_over $((before + n - 1)) "$ALL_LOG" 'stats:'
    check "SIGUSR1: a stats line per node, naming it" \
        test "$(grep 'stats:' "$ALL_LOG" | tail -n "$n" | grep -c '^cuse_bsg\[bsg/.*-cuse\]: stats: open=')" -eq "$n"
}

all_stop() {
    local rc=0
    kill -TERM "$ALL_PID"
    wait "$ALL_PID" || rc=$?
    check "SIGTERM: exit 0 ($rc)" test "$rc" -eq 0
    check "SIGTERM: every node removed" vm_wait 5 bash -c "! ls /dev/bsg | grep -q -- -cuse"
    check "no LeakSanitizer or ASan report" bash -c "! grep -q -e LeakSanitizer -e AddressSanitizer '$ALL_LOG'"
}

# the one-target mode, unchanged: the node stays, failing, until SIGTERM
# under a service manager: READY=1 once the first enumeration is served
# (every device's node there), STOPPING=1 on SIGTERM
all_notify() {
    local sock=/run/cuse-all.notify out=$VM_OUT/notify-all.out first
    first=$(cuse_node "$(hctls | head -n1)")
    "$PWD/build/clients/notifywait" "$sock" "$first" 60 >"$out" 2>&1 &
    local wpid=$!
    vm_wait 10 grep -q listening "$out" || vm_fail "notifywait did not listen on $sock"
    NOTIFY_SOCKET=$sock all_start
    vm_wait 30 grep -q 'READY=1' "$out" || { cat "$out" "$ALL_LOG"; vm_fail "--all: no READY=1"; }
    check "--all: READY=1 from the daemon's pid, its first node already there" \
        grep -qE "^pid=$ALL_PID node=[0-7]+:0:0 READY=1\$" "$out"
    check "--all: ... and every other node" each_device_has_a_node
    kill -TERM "$ALL_PID"
    wait "$ALL_PID"
    wait "$wpid"
    check "--all: STOPPING=1 on SIGTERM" grep -q "^pid=$ALL_PID .*STOPPING=1" "$out"
}

one_target_removed() {
    local h sg out
    add_host 1
    h=$(hctls | tail -n1)
    sg=$(sg_of "$h")
    node_start bsg/one-cuse "$sg"
    # the node's opener writes itself (no other process may, as on sg)
    rm -f /tmp/one.in /tmp/one.out
    mkfifo /tmp/one.in
    build/clients/sgasync gone "$NODE" </tmp/one.in >/tmp/one.out &
    exec 3>/tmp/one.in
    vm_wait 10 grep -q opened /tmp/one.out || vm_fail "sgasync gone did not open $NODE"
    echo -1 >"$ADD_HOST"
    out=$(sg_turs "$NODE" 2>&1)
    check "one target, device removed: SG_IO gets ENODEV" grep -q 'No such device' <<<"$out"
    check "one target, device removed: the node stays while it is open" test -c "$NODE"
    echo go >&3
    exec 3>&-
    wait $! || vm_fail "sgasync gone failed"
    out=$(sed -n 2p /tmp/one.out)
    check "one target, device removed: write() gets ENODEV ($out)" test "$out" = ENODEV
    node_gone_with_last_opener "one target, device removed"
    check "one target: no LeakSanitizer report" bash -c "! grep -q LeakSanitizer '$NODE_LOG'"
}

# without sg, --all serves the bsg nodes
bsg_fallback() {
    local h rc=0
    vm_unload_sg
    all_start
    check "without sg: --all serves the bsg nodes" each_device_has_a_node
    check "without sg: logged" grep -q "every SCSI device's bsg node" "$ALL_LOG"
    h=$(hctls | head -n1)
    NODE=$(cuse_node "$h")
    same "without sg: sg_inq through $NODE" "/dev/bsg/$h" sg_inq @DEV@
    add_host 1
    h=$(hctls | tail -n1)
    check "without sg: a hot-added device's node" vm_wait 2 test -c "$(cuse_node "$h")"
    same "without sg: sg_readcap through the new node" "/dev/bsg/$h" sg_readcap @DEV@
    add_host -1
    check "without sg: a removed device's node goes" vm_wait 2 test ! -e "$(cuse_node "$h")"
    kill -TERM "$ALL_PID"
    wait "$ALL_PID" || rc=$?
    check "without sg: SIGTERM, exit 0 ($rc), no sanitizer report" \
        bash -c "[ $rc -eq 0 ] && ! grep -q -e LeakSanitizer -e AddressSanitizer '$ALL_LOG'"
}

vm_load_scsi_debug dev_size_mb=16 add_host=2
start_udevd
CUSE_BSG=$PWD/build/cuse_bsg.asan
present
hot_add
hot_remove
skipped
idle_remove
readd_held
stats
all_stop
all_notify
one_target_removed
bsg_fallback
echo "hotplug suite took $((SECONDS - T0)) s in the guest"
summary
