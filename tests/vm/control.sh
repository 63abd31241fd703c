#!/bin/bash
# The control node (cuse_bsg --control): a file opened on it is bound with
# BSG_IOC_ADD to the device a descriptor of the caller is open on, then used
# as any node.  Checked against the kernel's own answers on that descriptor.
set -u
. "$(dirname "$0")/guest-lib.sh"
. "$(dirname "$0")/node-lib.sh"
T0=$SECONDS
BIND=$PWD/build/clients/bsgbind
V4IO=$PWD/build/clients/sgv4io
CTL=/dev/bsg-control

as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }

# has NAME OUTPUT WANT...: each WANT is a line of OUTPUT
has() {
    local name=$1 out=$2 w
    shift 2
    for w in "$@"; do
        if ! grep -qxF -- "$w" <<<"$out"; then
            fail "$name: no '$w' in:"
            echo "$out"
            return
        fi
    done
    pass "$name"
}

unbound() {
    local out
    out=$("$BIND" "$CTL" unbound)
    has "unbound: read, write, SG_IO, any ioctl get ENXIO; poll POLLERR" "$out" \
        read=ENXIO write=ENXIO sg_io=ENXIO version=ENXIO 'poll=1 POLLERR'
}

bad_descriptors() {
    local loop
    has "a descriptor number the caller does not have: ENODEV" "$("$BIND" "$CTL" badfd 99)" bind=ENODEV
    has "a negative descriptor number: ENODEV" "$("$BIND" "$CTL" badfd -1)" bind=ENODEV
    has "/dev/null, a character device of another driver: EINVAL" \
        "$("$BIND" "$CTL" bind /dev/null ro)" bind=EINVAL
    : >/tmp/plain
    has "a regular file: EINVAL" "$("$BIND" "$CTL" bind /tmp/plain ro)" bind=EINVAL
    has "a partition (SG_IO on it would reach the whole disk): EINVAL" \
        "$("$BIND" "$CTL" bind "${VM_SD}1" ro)" bind=EINVAL
    vm_run modprobe loop
    head -c 1048576 /dev/zero >/tmp/loopfile
    loop=$(losetup -f --show /tmp/loopfile) || vm_fail "no loop device"
    has "a block device no SCSI command reaches ($loop): ENOTBLK" \
        "$("$BIND" "$CTL" bind "$loop" ro)" bind=ENOTBLK
    losetup -d "$loop"
    check "each refusal logged, naming the reason" \
        grep -q 'BSG_IOC_ADD refused: /tmp/plain is not an sg, bsg or SCSI disk node' "$NODE_LOG"
}

bind_each() {
    local dev mode
    for dev in "$VM_SD" "$VM_SG" "$VM_BSG"; do
        for mode in ro rw; do
            has "bind $dev ($mode): bound, a second bind EBUSY, INQUIRY after the client closed it" \
                "$("$BIND" "$CTL" bind "$dev" "$mode")" bind=OK again=EBUSY 'inquiry=OK vendor=Linux'
        done
    done
}

# the kernel's rule on the caller's own descriptor, command by command
rights() {
    local dev mode out rc
    chmod 0666 "$VM_SD" "$VM_SG" "$VM_BSG"
    for dev in "$VM_SD" "$VM_SG" "$VM_BSG"; do
        for mode in ro wo rw; do
            rc=0
            out=$(as_user "$BIND" "$CTL" cmds "$dev" "$mode") || rc=$?
            check "nobody, $dev open $mode: every command as the kernel answers it on that descriptor" \
                test "$rc" -eq 0
            [ "$rc" -eq 0 ] || echo "$out"
        done
        rc=0
        out=$("$BIND" "$CTL" cmds "$dev" rw) || rc=$?
        check "root, $dev open rw: as the kernel (CAP_SYS_RAWIO)" test "$rc" -eq 0
        [ "$rc" -eq 0 ] || echo "$out"
    done
    out=$(as_user "$BIND" "$CTL" cmds "$VM_SD" ro)
    has "and on a read-only disk descriptor nobody gets WRITE(10) refused" "$out" \
        'write10 kernel=EPERM node=EPERM' 'read10 kernel=OK node=OK'
    chmod 0660 "$VM_SD" "$VM_SG" "$VM_BSG"
}

blk_ioctls() {
    local out rc=0
    out=$("$BIND" "$CTL" blk "$VM_SD") || rc=$?
    echo "$out"
    check "a bound disk's block-device ioctls answer as the disk does (BLKGETSIZE64, BLKSSZGET, ...)" \
        test "$rc" -eq 0
}

# SG_EMULATED_HOST through a binding: the bound descriptor's own driver
# answers (sg the host's flag, sd and bsg 1), nothing opened by name
emulated() {
    local dev out rc
    for dev in "$VM_SG" "$VM_SD" "$VM_BSG"; do
        rc=0
        out=$("$BIND" "$CTL" emulated "$dev") || rc=$?
        echo "   $dev: $out"
        check "SG_EMULATED_HOST through a binding to $dev answers as $dev does" test "$rc" -eq 0
    done
}

# the sg v4 driver's ioctls through a binding, as on a per-device node
v4_ioctls() {
    local dev out
    for dev in "$VM_SG" "$VM_SD"; do
        out=$("$V4IO" batch "$CTL=$dev" 64 16 2>&1)
        check "SG_IOSUBMIT of 64 READs through a binding to $dev, SG_IORECEIVE 16 at a time ($out)" \
            grep -q '^ok' <<<"$out"
    done
    # the written ones still at the device while SG_IO checks each received
    # one: on sg's one open file they share its 16 slots, and SG_IO waits for one
    echo 5000000 >/sys/bus/pseudo/drivers/scsi_debug/ndelay
    out=$("$V4IO" batch "$CTL=$VM_SG" 64 16 2>&1)
    echo 0 >/sys/bus/pseudo/drivers/scsi_debug/ndelay
    check "the same, the device at 5 ms a command: SG_IO between the receives is not refused ($out)" \
        grep -q '^ok' <<<"$out"
    out=$("$V4IO" mix "$CTL=$VM_BSG" 2>&1)
    check "write()/read() and the v4 ioctls mixed on a binding to $VM_BSG ($out)" grep -q '^ok' <<<"$out"
}

randread() {
    local dev
    for dev in "$VM_SD" "$VM_SG" "$VM_BSG"; do
        has "random 4k reads through a binding to $dev, 32 deep, as the kernel reads them" \
            "$("$BIND" "$CTL" randread "$dev" 400 32)" 'randread=OK n=400 qd=32 mismatched=0'
    done
}

two_devices() {
    local out second
    second=$(vm_sdebug_devs | sort -V | sed -n 2p)
    second=/dev/$(ls "$second/block")
    out=$("$BIND" "$CTL" two "$VM_SD" "$second")
    echo "$out"
    # shellcheck disable=SC2016 # an awk program: its $1 is awk's
    check "two files bound to two devices: each reports its own (SCSI_IOCTL_GET_IDLUN)" \
        awk '/^(first|second)=/ { split($1, a, "="); split($2, b, "="); if (a[2] != b[2]) exit 1 }
             END { exit NR < 2 }' <<<"$out"
    check "and they are different devices" \
        test "$(sed -n 's/^first=\([^ ]*\).*/\1/p' <<<"$out")" != "$(sed -n 's/^second=\([^ ]*\).*/\1/p' <<<"$out")"
    has "neither sees the other's completions" "$out" other-read=EAGAIN 'own-read=OK pack_id=7'
}

killed_client() {
    local pid
    "$BIND" "$CTL" randread "$VM_SG" 100000 32 >/dev/null 2>&1 &
    pid=$!
    vm_wait 10 grep -q 'a file bound to' "$NODE_LOG" || vm_fail "no binding"
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null
    has "after a client killed mid-load, a new binding works" \
        "$("$BIND" "$CTL" bind "$VM_SG" ro)" bind=OK again=EBUSY 'inquiry=OK vendor=Linux'
}

removed_device() {
    local second dir out pid
    dir=$(vm_sdebug_devs | sort -V | sed -n 2p)
    second=/dev/$(ls "$dir/block")
    rm -f /tmp/hold.in
    mkfifo /tmp/hold.in
    "$BIND" "$CTL" hold "$second" </tmp/hold.in >/tmp/hold.out 2>&1 &
    pid=$!
    exec 7>/tmp/hold.in
    vm_wait 10 grep -qx bound /tmp/hold.out || vm_fail "hold did not bind: $(cat /tmp/hold.out)"
    echo 1 >"$dir/delete"
    vm_wait 10 test ! -e "$second" || vm_fail "$second was not removed"
    echo go >&7
    exec 7>&-
    wait "$pid"
    out=$(cat /tmp/hold.out)
    echo "$out"
    check "the bound device removed: its commands fail" \
        bash -c "sed -n 2p <<<'$out' | grep -qv 'inquiry=OK'"
    has "then ENODEV, and poll says POLLHUP" "$out" inquiry=ENODEV 'poll=1 POLLHUP POLLERR'
}

vm_load_scsi_debug dev_size_mb=16 num_tgts=2 num_parts=1
CUSE_BSG=$PWD/build/cuse_bsg.asan
node_start bsg-control --control --queue-depth 64 --mode 0666
check "the control node is /dev/bsg-control, 0666" test "$(stat -c %a "$CTL")" = 666
unbound
bad_descriptors
bind_each
rights
blk_ioctls
emulated
v4_ioctls
randread
two_devices
killed_client
removed_device
check "the daemon logged no sanitizer report" bash -c "! grep -q 'Sanitizer' '$NODE_LOG'"
node_stop
check "and none at exit" bash -c "! grep -q 'Sanitizer' '$NODE_LOG'"
echo "control suite took $((SECONDS - T0)) s in the guest"
summary
