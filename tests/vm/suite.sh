#!/bin/bash
# The integration suite: cuse_bsg on scsi_debug in the VM, every client's
# output through the node compared with its output against the kernel's node.
set -uo pipefail
. "$(dirname "$0")/guest-lib.sh"
. "$(dirname "$0")/node-lib.sh"

BLOCKS=32768 # dev_size_mb=16 at 512-byte sectors
T0=$SECONDS

sg3_clients() {  # compare each sg3_utils / smartmontools client against $1
    local ref=$1
    same "sg_inq" "$ref" sg_inq @DEV@
    same "sg_inq -p 0x00" "$ref" sg_inq -p 0x00 @DEV@
    same "sg_inq -p 0x80" "$ref" sg_inq -p 0x80 @DEV@
    same "sg_inq -p 0x83" "$ref" sg_inq -p 0x83 @DEV@
    same "sg_readcap" "$ref" sg_readcap @DEV@
    same "sg_readcap -l" "$ref" sg_readcap -l @DEV@
    same "sg_turs" "$ref" sg_turs -n 20 @DEV@
    same "sg_luns" "$ref" sg_luns @DEV@
    same "sg_modes" "$ref" sg_modes @DEV@
    same "sg_requests" "$ref" sg_requests @DEV@
    same "smartctl -i" "$ref" smartctl -d scsi -i @DEV@
    same "sdparm" "$ref" sdparm @DEV@
    same "sdparm --all" "$ref" sdparm --all @DEV@
    same "hdparm -I" "$ref" hdparm -I @DEV@
    same "READ beyond the last LBA" "$ref" sg_raw -r 512 @DEV@ 28 00 00 00 80 00 00 00 01 00
    # SG_SET_COMMAND_Q keeps a v4 queue depth where sg keeps a 0/1 switch
    KNOWN='s/^SG_GET_COMMAND_Q: ret=0 val=1$/SG_GET_COMMAND_Q: ret=0 val=7/' \
        same "sgclient ioctls" "$VM_SG" "$SGCLIENT" ioctls @DEV@
    KNOWN='s/^SG_GET_COMMAND_Q: ret=0 val=1$/SG_GET_COMMAND_Q: ret=0 val=7/' \
        same "sgclient ioctls, O_RDONLY" "$VM_SG" env SGCLIENT_RDONLY=1 "$SGCLIENT" ioctls @DEV@
    # FUSE turns an ioctl's ENOSYS into ENOTTY, the one errno CUSE cannot
    # pass: the node says EINVAL, as bsg and sd do
    KNOWN='s/^v3_interface_id: ENOSYS$/v3_interface_id: EINVAL/' \
        same "bad input, v3" "$VM_SG" "$SGCLIENT" errors-v3 @DEV@
    same "bad input, v4" "$VM_BSG" "$SGCLIENT" errors-v4 @DEV@
    same "v4 INQUIRY" "$VM_BSG" "$SGCLIENT" v4-inquiry @DEV@
    same "v4 INQUIRY VPD 0x83" "$VM_BSG" "$SGCLIENT" v4-inquiry @DEV@ 0x83
}

raw_rw() {  # sg_raw READ(10)/WRITE(10) through the node, read back directly
    local t=/tmp/rw
    head -c 4096 /dev/urandom >$t.in
    check "sg_raw WRITE(10) through the node" \
        sg_raw -s 4096 -i $t.in "$NODE" 2a 00 00 00 01 00 00 00 08 00
    sg_raw -o $t.direct -r 4096 "$VM_SG" 28 00 00 00 01 00 00 00 08 00 >/dev/null 2>&1
    sg_raw -o $t.node -r 4096 "$NODE" 28 00 00 00 01 00 00 00 08 00 >/dev/null 2>&1
    check "sg_raw READ(10) read-back, direct" cmp $t.in $t.direct
    check "sg_raw READ(10) read-back, node" cmp $t.in $t.node
    head -c 512 /dev/urandom >$t.v4
    "$SGCLIENT" v4-write "$NODE" 300 1 <$t.v4 2>/dev/null
    check "v4 WRITE(10), read back with v4" \
        cmp $t.v4 <("$SGCLIENT" v4-read "$VM_BSG" 300 1 2>/dev/null)
}

transfers() {  # $1: largest size that must work
    local size blocks cdb
    for size in 65536 1048576 4194304; do
        [ "$size" -le "$1" ] || continue
        blocks=$((size / 512))
        read -ra cdb <<<"28 00 00 00 00 00 00 $(printf '%02x %02x' $((blocks >> 8)) $((blocks & 255))) 00"
        sg_raw -o /tmp/x.direct -r "$size" "$VM_SG" "${cdb[@]}" >/dev/null 2>&1
        sg_raw -o /tmp/x.node -r "$size" "$NODE" "${cdb[@]}" >/dev/null 2>&1
        check "READ of $size bytes" cmp /tmp/x.direct /tmp/x.node
    done
}

whole_disk() {  # write every block through the node, compare both ways
    local i lba cdb
    head -c $((BLOCKS * 512)) /dev/urandom >/tmp/disk.in
    split -b 1048576 -d -a 2 /tmp/disk.in /tmp/disk.part.
    for i in $(seq 0 15); do
        lba=$((i * 2048))
        read -ra cdb <<<"2a 00 $(printf '%02x %02x %02x %02x' $((lba >> 24)) $((lba >> 16 & 255)) $((lba >> 8 & 255)) $((lba & 255))) 00 08 00 00"
        sg_raw -s 1048576 -i "/tmp/disk.part.$(printf %02d "$i")" "$NODE" "${cdb[@]}" >/dev/null 2>&1 ||
            { fail "whole-disk write, MiB $i"; return; }
        cdb[0]=28 # READ(10), the same blocks
        sg_raw -o "/tmp/disk.back.$(printf %02d "$i")" -r 1048576 "$NODE" "${cdb[@]}" >/dev/null 2>&1
    done
    check "whole disk written through the node = the disk" \
        cmp /tmp/disk.in <(dd if="$VM_SD" iflag=direct bs=1M status=none)
    check "whole disk read back through the node" cmp /tmp/disk.in <(cat /tmp/disk.back.*)
}

request_count() {  # $1: expected FUSE ioctl requests per SG_IO
    local i0 s0 i1 s1
    i0=$(node_stat ioctl) s0=$(node_stat sg_io)
    "$SGCLIENT" tur "$NODE" 200 >/dev/null
    i1=$(node_stat ioctl) s1=$(node_stat sg_io)
    echo "   FUSE ioctl requests: $((i1 - i0)) for $((s1 - s0)) SG_IO"
    check "$1 FUSE request(s) per SG_IO" test $((i1 - i0)) -eq $(($1 * 200)) -a $((s1 - s0)) -eq 200
}

# A blocked SG_IO client killed or interrupted: no hang anywhere, and its
# call ends before the command it was waiting for (10 s at the device), not
# with it.  The bound is that command's own end, not a speed.
signals() {
    local delay=/sys/bus/pseudo/drivers/scsi_debug/delay pid t out ms
    # 10 s a command (HZ=250); scsi_debug says EBUSY while commands are queued
    vm_wait 10 bash -c "echo 2500 >$delay" 2>/dev/null || vm_fail "cannot set scsi_debug delay"
    "$SGCLIENT" tur "$NODE" 5 >/dev/null 2>&1 &
    pid=$!
    # blocked in SG_IO: its command is at the target
    vm_wait 10 node_busy || vm_fail "the client's TEST UNIT READY did not reach the target"
    t=$SECONDS
    kill -9 $pid
    wait $pid 2>/dev/null
    check "kill -9 of a client blocked in SG_IO returns before its command ends ($((SECONDS - t)) s)" \
        test $((SECONDS - t)) -lt 10
    out=$("$SGCLIENT" tur-intr "$NODE" 300)
    echo "   $out"
    ms=$(sed -n 's/^EINTR after \([0-9]*\) ms$/\1/p' <<<"$out")
    check "a signal ends a blocked SG_IO with EINTR before its command ends" \
        test -n "$ms" -a "${ms:-0}" -lt 10000
    vm_wait 40 bash -c "echo 0 >$delay" 2>/dev/null || vm_fail "cannot reset scsi_debug delay"
    check "daemon serves after killed clients" sg_turs "$NODE"
}

compat() {  # a 32-bit caller is refused cleanly, the daemon logs why
    local out
    out=$("$PWD/build/clients/sgclient32" tur "$NODE" 1 2>&1)
    echo "   $out"
    check "32-bit caller refused with ENOTTY" grep -q 'Inappropriate ioctl' <<<"$out"
    check "32-bit caller logged" grep -q '32-bit caller refused' "$NODE_LOG"
    check "32-bit caller works on the kernel's sg" bash -c "'$PWD/build/clients/sgclient32' tur $VM_SG 1 >/dev/null"
}

suite_for() {  # suite_for TARGET [DAEMON]
    local target=$1
    CUSE_BSG=${2:-$PWD/build/cuse_bsg}
    vm_log "target $target, direct copy, $(basename "$CUSE_BSG")"
    node_start bsg/test-cuse "$target" --copy=direct
    sg3_clients "$VM_SG"
    raw_rw
    transfers 4194304
    request_count 1
    signals
    compat
    node_stop
    CUSE_BSG=$PWD/build/cuse_bsg
}

retry_path() {
    vm_log "target $VM_SG, ioctl retry path"
    node_start bsg/test-cuse "$VM_SG" --copy=retry
    same "sg_inq (retry path)" "$VM_SG" sg_inq @DEV@
    same "sg_readcap (retry path)" "$VM_SG" sg_readcap -l @DEV@
    # FUSE turns an ioctl's ENOSYS into ENOTTY, the one errno CUSE cannot
    # pass: the node says EINVAL, as bsg and sd do
    KNOWN='s/^v3_interface_id: ENOSYS$/v3_interface_id: EINVAL/' \
        same "bad input, v3 (retry path)" "$VM_SG" "$SGCLIENT" errors-v3 @DEV@
    same "bad input, v4 (retry path)" "$VM_BSG" "$SGCLIENT" errors-v4 @DEV@
    raw_rw
    transfers 65536
    check "a 1 MiB READ on the retry path is ENOMEM" \
        bash -c "sg_raw -r 1048576 $NODE 28 00 00 00 00 00 00 08 00 00 2>&1 | grep -q 'Cannot allocate memory'"
    check "BLKSECTGET reports the retry ceiling" \
        bash -c "'$SGCLIENT' ioctls $NODE | grep -q 'BLKSECTGET: ret=0 val=126976'"
    request_count 3
    node_stop
}

refused() {  # refused NAME PATTERN CMD...: CMD fails and says PATTERN
    local name=$1 pattern=$2 out rc=0
    shift 2
    out=$("$@" 2>&1) || rc=$?
    echo "   $out"
    check "$name" test "$rc" -ne 0 -a -n "$(grep -e "$pattern" <<<"$out")"
}

# exits NAME STATUS PATTERN CMD...: CMD exits with STATUS and writes one
# line on stderr, which says PATTERN
exits() {
    local name=$1 want=$2 pattern=$3 err rc=0
    shift 3
    err=$("$@" 2>&1 >/dev/null) || rc=$?
    echo "   status $rc: $err"
    check "$name" test "$rc" -eq "$want" -a "$(grep -c . <<<"$err")" -eq 1 -a \
        -n "$(grep -e "$pattern" <<<"$err")"
}

startup_failures() {
    local out rc pid
    refused "no target: refused" "/dev/nonexistent: No such file" "$CUSE_BSG" -f /dev/nonexistent
    refused "not a SCSI device: refused" "is not an sg, bsg or SCSI disk" "$CUSE_BSG" -f /dev/null
    refused "unprivileged: refused" "must run as root" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$CUSE_BSG" -f "$VM_SG"
    node_start bsg/test-cuse "$VM_SG"
    refused "node name taken: refused" "already exists" "$CUSE_BSG" -f --name bsg/test-cuse "$VM_SG"
    node_stop
    out=$("$CUSE_BSG" --name bsg/bg-cuse "$VM_SG" 2>&1); rc=$?
    check "background start returns once the node exists" test $rc -eq 0 -a -c /dev/bsg/bg-cuse
    pkill -TERM -f 'bsg/bg-cuse'
    vm_wait 5 test ! -e /dev/bsg/bg-cuse
    check "SIGTERM removes the node" test ! -e /dev/bsg/bg-cuse
    node_start bsg/twice-cuse "$VM_SG"
    rm "$NODE" # the name is still the kernel's; only the pre-check is fooled
    refused "kernel refuses the name: start-up fails" "did not appear" \
        "$CUSE_BSG" -f --name bsg/twice-cuse "$VM_SG"
    # after the fork: the parent still says why, on the terminal
    exits "in the background, the kernel refusing the name: status 1, one line" 1 \
        "did not appear" "$CUSE_BSG" --name bsg/twice-cuse "$VM_SG"
    kill -INT "$NODE_PID"
    wait "$NODE_PID"
    check "SIGINT stops the daemon with status 0" test $? -eq 0
    "$CUSE_BSG" -f --control --name ctl-twice >>"$VM_OUT/daemon-ctl-twice.log" 2>&1 &
    pid=$!
    vm_wait 30 test -c /dev/ctl-twice || vm_fail "/dev/ctl-twice did not appear"
    rm /dev/ctl-twice
    exits "--control in the background, the name refused: status 1, one line" 1 \
        "did not appear" "$CUSE_BSG" --control --name ctl-twice
    kill -TERM "$pid"
    wait "$pid"
    exits "--control as nobody: status 1, one line" 1 "must run as root" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$CUSE_BSG" --control
    exits "--control --sg-compat: a usage error, no word of unloading sg" 2 \
        "^cuse_bsg: --control takes none of" "$CUSE_BSG" --control --sg-compat 3
    exits "--sg-compat on an sg node with sg loaded: why, and what to serve instead" 1 \
        "is one of sg's nodes" "$CUSE_BSG" -f --sg-compat 3 "$VM_SG"
    exits "--sg-compat on the bsg node with sg loaded: unload sg" 1 "modprobe -r sg" \
        "$CUSE_BSG" -f --sg-compat 3 "$VM_BSG"
    exits "--sg-compat on a missing target: the target, not sg" 1 "/dev/nonexistent" \
        "$CUSE_BSG" -f --sg-compat 3 /dev/nonexistent
    exits "--mode 07777: a usage error naming the range" 2 "0..0777" \
        "$CUSE_BSG" -f --mode 07777 "$VM_SG"
    exits "--max-memory 2^64: a usage error naming the range and suffixes" 2 \
        "4K..1024G.*K, M or G" "$CUSE_BSG" -f --max-memory 18446744073709551616 "$VM_SG"
    mkfifo /tmp/policy.fifo
    exits "--policy on a FIFO: refused at once" 1 "not a regular file" \
        timeout 10 "$CUSE_BSG" -f --policy /tmp/policy.fifo "$VM_SG"
    exits "--policy on a directory: is a directory" 1 "Is a directory" \
        "$CUSE_BSG" -f --policy /tmp "$VM_SG"
    vm_run modprobe -r cuse
    refused "no /dev/cuse: says modprobe cuse" "modprobe cuse" "$CUSE_BSG" -f "$VM_SG"
    vm_run modprobe cuse
}

# --check: a start's checks, then what would be served; /dev/cuse last and
# only reported
check_option() {
    local out rc node=/dev/bsg/${VM_SG#/dev/}-cuse
    out=$("$CUSE_BSG" --check "$VM_SG" 2>/tmp/check.err) || rc=$?
    echo "   status ${rc:-0}: $out $(cat /tmp/check.err)"
    check "--check: status 0, one line naming the target, the node and the credential check" \
        test "${rc:-0}" -eq 0 -a \
        "$out" = "cuse_bsg: would serve $VM_SG as $node; access policy: the kernel's rule; credential check: witness (fentry on CUSE's entry points; the daemon refuses), loaded; proven live at start"
    out=$("$CUSE_BSG" --check --cred-check procfs "$VM_SG" 2>/dev/null)
    check "--check --cred-check procfs: says so" grep -q 'credential check: procfs (--cred-check=procfs)$' <<<"$out"
    check "--check: nothing on stderr" test ! -s /tmp/check.err
    check "--check: no node made" test ! -e "$node"
    exits "--check of a file that is no SCSI device: status 1" 1 \
        "is not an sg, bsg or SCSI disk" "$CUSE_BSG" --check /dev/null
    printf 'allow INQUIRY\nbogus line\n' >/tmp/bad.policy
    exits "--check of a bad policy: status 1, the file and the line" 1 \
        "/tmp/bad.policy: line 2" "$CUSE_BSG" --check --policy /tmp/bad.policy "$VM_SG"
    exits "--check as nobody: status 1, run as root" 1 "run as root" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$CUSE_BSG" --check "$VM_SG"
    exits "--cred-check=kernel without the privilege to load BPF: status 1, the reason" 1 \
        "cannot load the BPF LSM program" setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$CUSE_BSG" --check --cred-check kernel "$VM_SG"
    exits "--cred-check=witness without the privilege to load BPF: status 1, the reason" 1 \
        "cannot load the witness" setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$CUSE_BSG" --check --cred-check witness "$VM_SG"
    out=$("$CUSE_BSG" --check --cred-check kernel "$VM_SG" 2>/dev/null)
    check "--check --cred-check kernel: the LSM gate, loaded" \
        grep -q 'credential check: kernel (BPF LSM; the kernel refuses), loaded; proven live at start$' <<<"$out"
    exits "--check --sg-compat with sg loaded: status 1" 1 "modprobe -r sg" \
        "$CUSE_BSG" --check --sg-compat 3 "$VM_BSG"
    node_start bsg/test-cuse "$VM_SG"
    exits "--check of a name being served: status 1" 1 "already exists" \
        "$CUSE_BSG" --check --name bsg/test-cuse "$VM_SG"
    node_stop
    check "--check --control: status 0" "$CUSE_BSG" --check --control
    check "--check --all: status 0" "$CUSE_BSG" --check --all
    vm_run modprobe -r cuse
    rc=0
    out=$("$CUSE_BSG" --check "$VM_SG" 2>/tmp/check.err) || rc=$?
    echo "   status $rc: $out | $(cat /tmp/check.err)"
    check "--check without /dev/cuse: status 0, what would be served" \
        test "$rc" -eq 0 -a -n "$(grep -F "would serve $VM_SG" <<<"$out")"
    check "--check without /dev/cuse: a warning" grep -q 'warning: /dev/cuse is missing' /tmp/check.err
    vm_run modprobe cuse
}

# Eight clients that hold the node open, killed at once: each one's close
# comes with an INTERRUPT after its RELEASE's answer, which libfuse keeps
# until a next request (node_stop() then checks, under ASan, that none
# leaks)
killed_holders() {
    local pids=() n
    for n in $(seq 8); do
        # shellcheck disable=SC2016 # the inner shell's own $1
        bash -c 'exec 3<"$1"; exec sleep 60' holder "$NODE" &
        pids+=($!)
    done
    vm_wait 10 bash -c "for p in ${pids[*]}; do [ -e /proc/\$p/fd/3 ] || exit 1; done" ||
        vm_fail "the holders did not open $NODE"
    kill "${pids[@]}"
    wait "${pids[@]}" 2>/dev/null
    return 0
}

# SIGHUP: --policy read again, whole or not at all; without --policy, nothing
# changes.  Each time the daemon goes on serving.
policy_reload() {
    local p=/tmp/reload.policy n pid
    CUSE_BSG=$PWD/build/cuse_bsg.asan
    printf 'kernel bsg\n' >$p
    node_start bsg/test-cuse "$VM_SG" --policy $p
    check "reload: INQUIRY passes under the first policy" sg_inq "$NODE"
    printf 'deny INQUIRY\n' >$p
    hup_and_wait "access policy $p reloaded"
    check "reload: the new policy applies: INQUIRY refused" \
        bash -c "! sg_inq $NODE >/dev/null 2>&1"
    check "reload: TEST UNIT READY still passes" sg_turs "$NODE"
    printf 'deny INQUIRY\nallow NO_SUCH_COMMAND\n' >$p
    hup_and_wait "the policy in force is kept"
    grep 'SIGHUP' "$NODE_LOG" | tail -n 1 | sed 's/^/   /'
    check "reload of a bad file: logged with the file and the line" \
        grep -q "SIGHUP: policy $p: line 2: .*; the policy in force is kept" "$NODE_LOG"
    check "reload of a bad file: the old policy stays: INQUIRY refused" \
        bash -c "! sg_inq $NODE >/dev/null 2>&1"
    rm $p
    hup_and_wait "No such file or directory; the policy in force is kept"
    check "reload of a missing file: the daemon serves on" sg_turs "$NODE"
    # reloads while commands run: each command sees one whole policy, and
    # every policy here lets TEST UNIT READY pass
    rm -f /tmp/reload.done
    (
        f=0
        until [ -e /tmp/reload.done ]; do sg_turs -n 50 "$NODE" >/dev/null 2>&1 || f=$((f + 1)); done
        exit $f
    ) &
    pid=$!
    for n in $(seq 40); do
        if [ $((n % 2)) = 0 ]; then printf 'kernel sg\n' >$p; else printf 'deny INQUIRY\n' >$p; fi
        hup_and_wait "access policy $p reloaded"
    done
    touch /tmp/reload.done
    check "reload: TEST UNIT READY through 40 reloads, none refused or failed" wait "$pid"
    check "reload: the daemon logged each of the 40 reloads" \
        test "$(grep -c "access policy $p reloaded" "$NODE_LOG")" -ge 41
    killed_holders
    node_stop # ASan: no leak, no use after free
    node_start bsg/test-cuse "$VM_SG"
    hup_and_wait "SIGHUP: no --policy and no /etc/cuse-bsg/policy to reload; nothing changed"
    check "SIGHUP without --policy: the daemon serves on" sg_turs "$NODE"
    node_stop
    CUSE_BSG=$PWD/build/cuse_bsg
}

hup_and_wait() {  # hup_and_wait TEXT: SIGHUP to node_start's daemon, which logs TEXT
    local before
    before=$(grep -cF -- "$1" "$NODE_LOG")
    kill -HUP "$NODE_PID"
    vm_wait 5 vm_lines_over "$before" "$NODE_LOG" "$1" || { tail -n 5 "$NODE_LOG"; fail "no '$1' logged after SIGHUP"; }
}

# smartctl picks the device type by the name (smartmontools 7.3,
# autodetect_smart_device() in os_linux.cpp), after following a link
smartctl_names() {
    local out
    node_start bsg/name-cuse "$VM_SG"
    same "smartctl -i, no -d: a bsg/ name is SCSI" "$VM_SG" smartctl -i @DEV@
    ln -sf "$NODE" /tmp/disk-link
    out=$(smartctl -i /tmp/disk-link 2>&1)
    check "smartctl -i, no -d: a link to it too" grep -q 'Vendor: *Linux' <<<"$out"
    node_stop
    node_start disk0-cuse "$VM_SG"
    out=$(smartctl -i "$NODE" 2>&1)
    check "smartctl -i, no -d: another name is 'Unable to detect device type'" \
        grep -q 'Unable to detect device type' <<<"$out"
    same "smartctl -d scsi -i: the type given, any name" "$VM_SG" smartctl -d scsi -i @DEV@
    node_stop
}

vm_load_scsi_debug dev_size_mb=16
vm_log "scsi_debug: sg=$VM_SG sd=$VM_SD bsg=$VM_BSG"
smartctl_names
startup_failures
check_option
policy_reload
# with ASan and LeakSanitizer: any leak or memory error fails node_stop
suite_for "$VM_SG" "$PWD/build/cuse_bsg.asan"
node_start bsg/test-cuse "$VM_SG"
whole_disk
node_stop
suite_for "$VM_SD"
suite_for "$VM_BSG"
retry_path
echo "suite took $((SECONDS - T0)) s in the guest"
summary
