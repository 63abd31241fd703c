#!/bin/bash
# Deployment in the VM: bsg.rules under a real systemd-udevd (the keys it
# matches, as udevadm shows them; the mode, group and links it gives a node;
# --mode/--group winning over it), Type=notify readiness through a stand-in
# for the service manager's socket, and the daemon confined to the unit's
# CapabilityBoundingSet.  There is no systemd as PID 1 here: the unit itself
# is checked by 'make install-check' (systemd-analyze verify).
set -uo pipefail
. "$(dirname "$0")/guest-lib.sh"
. "$(dirname "$0")/node-lib.sh"

NOTIFYWAIT=$PWD/build/clients/notifywait
UNIT=$PWD/dist/cuse-bsg@.service.in
T0=$SECONDS

udev_start() {
    mkdir -p /run/udev/rules.d
    # as make install writes it, with the tree's cuse-bsgctl
    sed "s|@SBINDIR@|$PWD/dist|g" dist/bsg.rules >/run/udev/rules.d/60-cuse-bsg.rules ||
        vm_fail "cannot write /run/udev/rules.d/60-cuse-bsg.rules"
    vm_run /lib/systemd/systemd-udevd --daemon
    vm_wait 10 test -S /run/udev/control || vm_fail "systemd-udevd did not start"
    vm_run udevadm control --reload
    vm_run udevadm trigger --action=add --subsystem-match=scsi_generic --subsystem-match=cuse
    vm_run udevadm settle --timeout=60
}

# has NAME TEXT LINE: TEXT has the line LINE
has() {
    check "$1" grep -qxF -- "$3" <<<"$2"
}

sg_rule() {
    local info id
    info=$(udevadm info "$VM_SG")
    echo "$info"
    id=$(tr -s ' ' _ <"/sys/class/scsi_generic/${VM_SG#/dev/}/device/wwid")
    has "udevadm info $VM_SG: SUBSYSTEM=scsi_generic" "$info" "E: SUBSYSTEM=scsi_generic"
    has "udevadm info $VM_SG: its stable id CUSE_BSG_ID=$id (cuse-bsgctl)" "$info" "E: CUSE_BSG_ID=$id"
    has "udevadm info $VM_SG: CUSE_BSG_CLASS=disk" "$info" "E: CUSE_BSG_CLASS=disk"
    check "link /dev/scsi_generic/$id -> $VM_SG" test "$(readlink -f "/dev/scsi_generic/$id")" = "$VM_SG"
    check "opt-in: the rule wants no unit for $VM_SG (no /etc/cuse-bsg/serve/ file)" \
        test -z "$(grep 'SYSTEMD_WANTS' <<<"$info")"
    check "rule tags $VM_SG for systemd" grep -q '^E: TAGS=.*:systemd:' <<<"$info"
    info=$(udevadm info --query=property "$VM_SD")
    check "no cuse-bsg unit wanted for the disk $VM_SD" \
        test -z "$(grep 'SYSTEMD_WANTS=.*cuse-bsg' <<<"$info")"
}

# udev_saw: udev has processed NODE's uevent (its database entry exists; the
# node may show in /dev before the kernel sends the uevent, so settle alone
# could return before udev heard of it)
udev_saw() {
    local db
    db=/run/udev/data/c$(printf '%d:%d' "0x$(stat -c %t "$NODE")" "0x$(stat -c %T "$NODE")")
    vm_wait 10 test -e "$db" || fail "udev did not record $NODE ($db)"
    vm_run udevadm settle --timeout=30
}

# mode_is NAME NODE OCTAL:GROUP
mode_is() {
    check "$1 ($(stat -c %a:%G "$2"))" test "$(stat -c %a:%G "$2")" = "$3"
}

node_rule() {
    local sg=${VM_SG#/dev/} kname info wwid link old
    kname="bsg!$sg-cuse"
    node_start "bsg/$sg-cuse" "$VM_SG"
    udev_saw
    info=$(udevadm info "$NODE")
    echo "$info"
    has "udevadm info $NODE: SUBSYSTEM=cuse" "$info" "E: SUBSYSTEM=cuse"
    has "udevadm info $NODE: kernel name $kname" "$info" "P: /devices/virtual/cuse/$kname"
    has "udevadm info $NODE: DEVNAME" "$info" "E: DEVNAME=$NODE"
    has "udevadm info $NODE: kernel name as KERNEL matches it" "$info" "M: bsg/$sg-cuse"
    udevadm test "/sys/class/cuse/$kname" 2>&1 | grep -e '60-cuse-bsg' -e 'PROGRAM' | head -n 20
    mode_is "without --mode the rule's 0660, the group of $VM_SG: root:disk" "$NODE" 660:disk
    check "link /dev/bsg-cuse/$sg" test "$(readlink -f "/dev/bsg-cuse/$sg")" = "$NODE"
    wwid=$(tr -s ' ' _ <"/sys/class/scsi_generic/$sg/device/wwid")
    if [ -n "$wwid" ]; then
        link=/dev/bsg-cuse/by-id/$wwid
        check "link $link" test "$(readlink -f "$link")" = "$NODE"
    else
        fail "scsi_debug's $sg has no wwid to link by"
    fi
    same "group disk may use the node: sg_inq" "$VM_SG" \
        setpriv --reuid=65534 --regid=65534 --groups=disk sg_inq @DEV@
    check "others may not open it" bash -c \
        "! setpriv --reuid=65534 --regid=65534 --clear-groups sg_inq '$NODE' 2>/dev/null"
    node_stop
    vm_wait 10 test ! -e "/dev/bsg-cuse/$sg"
    check "the links go with the node" test ! -e "/dev/bsg-cuse/$sg"

    # the group follows the target's own node, as udev gives a tape's
    old=$(stat -c %G "$VM_SG")
    chgrp tape "$VM_SG" || fail "chgrp tape $VM_SG"
    node_start "bsg/$sg-cuse" "$VM_SG"
    udev_saw
    mode_is "the group of the node served ($VM_SG's tape): 0660 root:tape" "$NODE" 660:tape
    same "group tape may use the node: sg_inq" "$VM_SG" \
        setpriv --reuid=65534 --regid=65534 --groups=tape sg_inq @DEV@
    node_stop
    chgrp "$old" "$VM_SG" || fail "chgrp $old $VM_SG"

    node_start "bsg/$sg-cuse" "$VM_SG" --mode 0640 --group root
    mode_is "--mode 0640 --group root win over the rule" "$NODE" 640:root
    udev_saw
    mode_is "and still hold once udev has settled" "$NODE" 640:root
    node_stop
    vm_run udevadm settle --timeout=30
}

# notified SOCKET OPTIONS...: the daemon under NOTIFY_SOCKET=SOCKET
notified() {
    local sock=$1 out=$VM_OUT/notify.out node=/dev/bsg/notify-cuse wpid dpid rc=0
    shift
    : >"$out"
    "$NOTIFYWAIT" "$sock" "$node" 60 >"$out" 2>&1 &
    wpid=$!
    vm_wait 10 grep -q listening "$out" || vm_fail "notifywait did not listen on $sock"
    NOTIFY_SOCKET=$sock "$CUSE_BSG" -f --name bsg/notify-cuse "$@" "$VM_SG" \
        >"$VM_OUT/daemon-notify.log" 2>&1 &
    dpid=$!
    vm_wait 20 grep -q 'READY=1' "$out" || { cat "$out" "$VM_OUT/daemon-notify.log"; vm_fail "no READY=1 on $sock"; }
    cat "$out"
    check "$sock: READY=1 from the daemon's pid, node already $* " \
        grep -qxF "pid=$dpid node=0640:0:0 READY=1" "$out"
    check "$sock: STATUS names the node" \
        grep -qxF "pid=$dpid node=0640:0:0 STATUS=serving $node" "$out"
    check "$sock: nothing before READY=1" test "$(head -n2 "$out" | tail -n1 | cut -d' ' -f3)" = READY=1
    sg_turs "$node" >/dev/null || fail "$sock: the node does not answer once READY"
    kill -TERM "$dpid"
    wait "$dpid" || rc=$?
    check "$sock: daemon exits 0 on SIGTERM" test "$rc" -eq 0
    wait "$wpid"
    check "$sock: STOPPING=1 on SIGTERM" test $? -eq 0
    check "$sock: STOPPING=1 from the daemon's pid" grep -q "^pid=$dpid .* STOPPING=1$" "$out"
    vm_wait 5 test ! -e "$node"
}

# The unit's CapabilityBoundingSet, in setpriv's words: -all,+sys_rawio,...
unit_caps() {
    sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr ' ' '\n' | tr '[:upper:]' '[:lower:]' |
        sed 's/^cap_/+/' | paste -sd, | sed 's/^/-all,/'
}

confined() {  # as systemd starts a root service: its bounding set, nothing inherited
    setpriv --no-new-privs --inh-caps=-all --bounding-set="$CAPS" "$@"
}

unit_capabilities() {
    local sg=${VM_SG#/dev/} pid mask
    CAPS=$(unit_caps)
    vm_log "the unit's capabilities: $CAPS"
    [ "$CAPS" != "-all," ] || vm_fail "no CapabilityBoundingSet in $UNIT"
    CUSE_BSG_REAL=$CUSE_BSG
    CUSE_BSG=/run/confined-cuse_bsg
    printf '#!/bin/sh\nexec setpriv --no-new-privs --inh-caps=-all --bounding-set=%s %s "$@"\n' \
        "$CAPS" "$CUSE_BSG_REAL" >"$CUSE_BSG"
    chmod +x "$CUSE_BSG"
    node_start "bsg/$sg-cuse" "$VM_SG" --mode 0666 --owner nobody --group disk
    mask=$(sed -n 's/^CapEff:\t//p' "/proc/$NODE_PID/status")
    vm_log "daemon's CapEff: $mask"
    check "confined: direct copy path (CAP_SYS_PTRACE)" grep -q 'data path: direct copy' "$NODE_LOG"
    mode_is "confined: --owner and --mode applied (CAP_CHOWN)" "$NODE" 666:disk
    # another uid: process_vm_readv/writev into it need CAP_SYS_PTRACE
    same "confined: sg_inq by another user" "$VM_SG" \
        setpriv --reuid=65534 --regid=65534 --groups=disk sg_inq @DEV@
    same "confined: sg_inq -p 0x83 by another user" "$VM_SG" \
        setpriv --reuid=65534 --regid=65534 --groups=disk sg_inq -p 0x83 @DEV@
    # an opcode outside the kernel's lists needs CAP_SYS_RAWIO at the target
    check "confined: a vendor opcode reaches the device (CAP_SYS_RAWIO)" bash -c \
        "sg_raw '$NODE' c0 00 00 00 00 00 2>&1 | grep -q 'SCSI Status: Check Condition'"
    # the kernel asks CAP_SYS_ADMIN and CAP_SYS_RAWIO of a reset's caller: the daemon's
    check "confined: sg_reset -d through the node (CAP_SYS_ADMIN)" sg_reset -d "$NODE"
    sg_turs "$VM_SG" >/dev/null 2>&1
    sg_turs "$VM_SG" >/dev/null 2>&1
    node_stop
    CUSE_BSG=$CUSE_BSG_REAL
    # reading another user's /proc/TID/syscall (forced pack_id reads) needs
    # CAP_DAC_READ_SEARCH as well as CAP_SYS_PTRACE
    setpriv --reuid=65534 --regid=65534 --clear-groups sleep 30 & # any process of that user; killed below
    pid=$!
    vm_wait 5 grep -q '^Uid:.65534' "/proc/$pid/status" || vm_fail "no process of uid 65534"
    check "confined: another user's /proc/PID/syscall is readable" \
        confined cat "/proc/$pid/syscall"
    CAPS=${CAPS/,+dac_read_search/}
    check "without CAP_DAC_READ_SEARCH it is not" bash -c \
        "! setpriv --no-new-privs --inh-caps=-all --bounding-set='$CAPS' cat /proc/$pid/syscall 2>/dev/null"
    kill "$pid"
    wait "$pid" 2>/dev/null
}

vm_load_scsi_debug dev_size_mb=16
vm_log "scsi_debug: sg=$VM_SG sd=$VM_SD bsg=$VM_BSG"
udev_start
sg_rule
node_rule
vm_log "Type=notify, abstract and path sockets"
notified "@cuse-bsg-test/notify" --mode 0640 --group root
notified /run/cuse-bsg-test.sock --mode 0640 --group root
unit_capabilities
echo "udev.sh took $((SECONDS - T0)) s in the guest"
summary
