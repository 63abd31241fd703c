#!/bin/bash
# Proves the VM harness: kernel modules, scsi_debug, sg/sd/bsg nodes, /dev/cuse.
set -euo pipefail
. "$(dirname "$0")/guest-lib.sh"

vm_log "kernel $(uname -r)"
[ -c /dev/cuse ] || vm_fail "/dev/cuse missing"
vm_load_scsi_debug dev_size_mb=16
vm_log "scsi_debug nodes: sg=$VM_SG sd=$VM_SD bsg=$VM_BSG"
{ [ -n "$VM_SG" ] && [ -n "$VM_SD" ]; } || vm_fail "scsi_debug has no sg or sd node"
vm_run sg_inq "$VM_SG"
vm_run sg_readcap "$VM_SD"
vm_run sg_inq "$VM_BSG"
q=/sys/block/${VM_SD#/dev/}/queue
vm_log "max_sectors_kb=$(cat "$q/max_sectors_kb") max_hw_sectors_kb=$(cat "$q/max_hw_sectors_kb")"
vm_log "smoke: OK"
