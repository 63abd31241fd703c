#!/bin/bash
# Who may send what: an unprivileged user with group access to a 0660 node
# against the kernel's bsg node given the same access; the policy file; the
# daemon's own capabilities.
set -uo pipefail
. "$(dirname "$0")/guest-lib.sh"
. "$(dirname "$0")/node-lib.sh"

T0=$SECONDS
DISK_GID=$(getent group disk | cut -d: -f3)
DISK_GID=${DISK_GID:-6}
# nobody, in group disk only: no capabilities
as_user() { setpriv --reuid=65534 --regid=65534 --groups="$DISK_GID" --inh-caps=-all "$@"; }

READ10=(28 00 00 00 00 08 00 00 01 00)
WRITE10=(2a 00 00 00 00 08 00 00 01 00)
SENDDIAG=(1d 04 00 00 00 00) # default self-test: in neither of the kernel's lists
FORMAT=(04 00 00 00 00 00)

# each case: NAME, then sg_raw arguments (-R: open read-only)
kernel_rule() {
    local out
    same "nobody: READ CAPACITY on a read-only file" "$VM_BSG" as_user sg_readcap @DEV@
    same "nobody: READ(10), read-only file" "$VM_BSG" as_user sg_raw -R -r 512 @DEV@ "${READ10[@]}"
    same "nobody: WRITE(10), read-only file: EPERM" "$VM_BSG" \
        as_user sg_raw -R -s 512 -i /tmp/blk @DEV@ "${WRITE10[@]}"
    same "nobody: FORMAT UNIT, read-only file: EPERM" "$VM_BSG" \
        as_user sg_raw -R @DEV@ "${FORMAT[@]}"
    same "nobody: WRITE(10), file open for writing" "$VM_BSG" \
        as_user sg_raw -s 512 -i /tmp/blk @DEV@ "${WRITE10[@]}"
    same "nobody: SEND DIAGNOSTIC, open for writing: EPERM" "$VM_BSG" \
        as_user sg_raw @DEV@ "${SENDDIAG[@]}"
    same "root: SEND DIAGNOSTIC" "$VM_BSG" sg_raw @DEV@ "${SENDDIAG[@]}"
    out=$(as_user sg_raw -R -s 512 -i /tmp/blk "$NODE" "${WRITE10[@]}" 2>&1)
    check "nobody: WRITE(10) on a read-only file is EPERM (not just the kernel's answer)" \
        grep -q 'not permitted' <<<"$out"
    out=$(as_user sg_raw "$NODE" "${SENDDIAG[@]}" 2>&1)
    check "nobody: SEND DIAGNOSTIC is EPERM" grep -q 'not permitted' <<<"$out"
    check "SIGUSR1: refused commands counted ($(node_stat refused))" test "$(node_stat refused)" -ge 3
    check "SIGUSR1: average latency, commands at the target" \
        bash -c "[ $(node_stat avg_latency_us) -gt 0 ] && [ $(node_stat at_target) -eq 0 ]"
    check "the refusal is logged, naming the command" \
        grep -q 'refused by the access policy' "$NODE_LOG"
}

policy() {
    local out
    cat >/tmp/policy <<'POL'
# only CAP_SYS_RAWIO may write or format; anyone may run a self-test
rawio WRITE_10 FORMAT_UNIT
allow SEND_DIAGNOSTIC
deny REPORT_LUNS
POL
    node_start bsg/pol-cuse "$VM_SG" --mode 0660 --group disk --policy /tmp/policy
    out=$(as_user sg_raw -s 512 -i /tmp/blk "$NODE" "${WRITE10[@]}" 2>&1)
    check "policy: nobody's WRITE(10), even open for writing, gets EPERM" \
        grep -q 'not permitted' <<<"$out"
    out=$(sg_raw -s 512 -i /tmp/blk "$NODE" "${WRITE10[@]}" 2>&1)
    check "policy: root may WRITE(10)" bash -c "! grep -q 'not permitted' <<<'$out'"
    out=$(as_user sg_raw -R "$NODE" "${SENDDIAG[@]}" 2>&1)
    check "policy: nobody may run SEND DIAGNOSTIC on a read-only file" \
        bash -c "! grep -q 'not permitted' <<<'$out'"
    out=$(sg_luns "$NODE" 2>&1)
    check "policy: REPORT LUNS is denied to root too" grep -q 'not permitted' <<<"$out"
    check "policy: READ still allowed" as_user sg_raw -R -r 512 -o /dev/null "$NODE" "${READ10[@]}"
    node_stop
    printf 'allow 0x1d\nbogus WRITE_10\n' >/tmp/bad
    out=$("$CUSE_BSG" --policy /tmp/bad "$VM_SG" 2>&1)
    check "a bad policy stops start-up, naming file and line ($out)" \
        grep -q 'policy /tmp/bad: line 2' <<<"$out"
}

capabilities() {
    local eff want
    eff=$(awk '/^CapEff/ {print $2}' /proc/"$NODE_PID"/status)
    # CAP_DAC_READ_SEARCH (2), CAP_SYS_RAWIO (17), CAP_SYS_PTRACE (19), CAP_SYS_ADMIN (21,
    # SG_SCSI_RESET), CAP_CHOWN (0): --group
    want=00000000002a0005
    check "the daemon keeps only CAP_CHOWN, CAP_DAC_READ_SEARCH, CAP_SYS_RAWIO, CAP_SYS_PTRACE, CAP_SYS_ADMIN ($eff)" \
        test "$eff" = "$want"
    check "and says so" grep -q 'capabilities kept: CAP_CHOWN CAP_DAC_READ_SEARCH CAP_SYS_RAWIO CAP_SYS_PTRACE CAP_SYS_ADMIN' \
        "$NODE_LOG"
}

vm_load_scsi_debug dev_size_mb=16
head -c 512 /dev/urandom >/tmp/blk
chmod 0644 /tmp/blk
# the kernel's bsg node, given the same access as ours
{ chgrp disk "$VM_BSG" && chmod 0660 "$VM_BSG"; } || vm_fail "cannot give $VM_BSG to group disk"
CUSE_BSG=$PWD/build/cuse_bsg.asan
node_start bsg/acc-cuse "$VM_SG" --mode 0660 --group disk
check "node is 0660 root:disk" test "$(stat -c %a:%G "$NODE")" = 660:disk
kernel_rule
capabilities
node_stop
CUSE_BSG=$PWD/build/cuse_bsg
policy
echo "access suite took $((SECONDS - T0)) s in the guest"
summary
