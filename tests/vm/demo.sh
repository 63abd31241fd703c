#!/bin/bash
# make demo: cuse_bsg serving scsi_debug's /dev/sg0 as /dev/bsg/sg0-cuse, and
# unmodified sg3_utils and smartmontools using it, next to the kernel's node.
set -uo pipefail
. "$(dirname "$0")/guest-lib.sh"

vm_log "kernel $(uname -r), scsi_debug as the SCSI target"
vm_load_scsi_debug dev_size_mb=16
vm_log "starting: cuse_bsg --name bsg/sg0-cuse $VM_SG"
build/cuse_bsg -v --name bsg/sg0-cuse "$VM_SG" || vm_fail "cuse_bsg did not start"
ls -l /dev/bsg/sg0-cuse
for cmd in "sg_inq" "sg_readcap -l" "sg_vpd -p di" "smartctl -d scsi -i" "sdparm"; do
    vm_log "$cmd /dev/bsg/sg0-cuse"
    $cmd /dev/bsg/sg0-cuse
    # the same tool against the kernel's own node, names and clocks aside
    if diff <($cmd "$VM_SG" 2>&1 | sed "s#$VM_SG#DEV#g;/Local Time/d") \
            <($cmd /dev/bsg/sg0-cuse 2>&1 | sed "s#/dev/bsg/sg0-cuse#DEV#g;/Local Time/d") >/dev/null; then
        echo "   -> identical to '$cmd $VM_SG'"
    else
        vm_fail "'$cmd' differs between $VM_SG and the node"
    fi
done
vm_log "sg_raw WRITE(10) then READ(10) of LBA 8 through the node"
yes 'hello from cuse_bsg ' | head -c 512 >/tmp/block
sg_raw -s 512 -i /tmp/block /dev/bsg/sg0-cuse 2a 00 00 00 00 08 00 00 01 00 ||
    vm_fail "WRITE(10) through the node failed"
sg_raw -r 512 /dev/bsg/sg0-cuse 28 00 00 00 00 08 00 00 01 00 2>&1 | head -n 6
pkill -TERM -x cuse_bsg
vm_wait 5 test ! -e /dev/bsg/sg0-cuse || vm_fail "node still there after SIGTERM"
vm_log "demo: OK"
