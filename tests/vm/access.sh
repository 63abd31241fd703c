#!/bin/bash
# Who may send what: an unprivileged user with group access to a 0660 node
# against the kernel's bsg node given the same access; the policy file; the
# daemon's own capabilities; who may see the node in the live view.
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

SGASYNC=$PWD/build/clients/sgasync
# cuse-bsgctl from the tree, with the daemon built here
CTL=(env CUSE_BSG="$PWD/build/cuse_bsg" "$PWD/dist/cuse-bsgctl")
# a user in no group that may open the node
outsider() { setpriv --reuid=65533 --regid=65533 --clear-groups --inh-caps=-all "$@"; }

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

# opener_is PID UID QUEUED IN_FLIGHT [CALLS]: the live view, as nobody asks
# it, lists that opener of the node with those counts (CALLS: any if not
# given; a written command the worker that took it runs itself is a call)
# shellcheck disable=SC2016 # jq's own $variables
opener_is() {
    as_user "${CTL[@]}" show --json "${NODE#/dev/}" | jq -e --argjson p "$1" --argjson u "$2" \
        --argjson q "$3" --argjson f "$4" --argjson c "${5:-null}" \
        '.[0].nodes[0].openers | any(.pid == $p and .uid == $u and .queued == $q and
            .in_flight == $f and ($c == null or .calls == $c))' >/dev/null
}

# the live view (cuse-bsgctl show): a client's written commands in flight at
# a slow device, then done and unread; an SG_IO waiting; who may see it
# shellcheck disable=SC2016 # jq's own $variables
live_view() {
    local delay=/sys/bus/pseudo/drivers/scsi_debug/delay held job tur out rc json stall
    command -v jq >/dev/null || vm_fail "no jq in the guest: the live view's JSON cannot be checked"
    vm_wait 10 bash -c "echo 2000 >$delay" 2>/dev/null || vm_fail "cannot set scsi_debug delay"
    as_user "$SGASYNC" hold "$NODE" 8 >/tmp/hold.out 2>&1 &
    job=$!
    vm_wait 30 grep -q 'held 8, pid ' /tmp/hold.out || vm_fail "the client did not write: $(cat /tmp/hold.out)"
    held=$(sed -n 's/^held 8, pid //p' /tmp/hold.out)
    sg_turs "$NODE" &
    tur=$!
    check "show --json: nobody's client, pid $held uid 65534, 8 commands in flight" \
        vm_wait 30 opener_is "$held" 65534 0 8
    check "... root's SG_IO (sg_turs, pid $tur): a call running, nothing written" \
        vm_wait 30 opener_is "$tur" 0 0 0 1
    check "... then 8 queued, none in flight, once the device answered" \
        vm_wait 60 opener_is "$held" 65534 8 0 0
    [ "$FAILED" -eq 0 ] || as_user "${CTL[@]}" show --json | jq .
    wait "$tur"
    vm_wait 10 bash -c "echo 0 >$delay" 2>/dev/null || vm_fail "cannot reset scsi_debug delay"
    json=$(as_user "${CTL[@]}" show --json)
    check "show --json with no name: valid JSON, this node, its target, mode, group and check" \
        jq -e --arg n "${NODE#/dev/}" --arg t "$VM_SG" --argjson g "$DISK_GID" \
        'length == 1 and .[0].nodes[0].name == $n and .[0].nodes[0].target == $t and
         .[0].nodes[0].mode == "0660" and .[0].nodes[0].gid == $g and
         (.[0].nodes[0].cred_check | test("^(witness|kernel|procfs)$")) and
         .[0].memory.max > 0 and .[0].memory.used >= 0 and .[0].threads.process > 0' <<<"$json"
    out=$(as_user "${CTL[@]}" show)
    check "show (text): the node, the client's line" \
        grep -qF "pid $held, uid 65534: queued 8, in flight 0, calls 0" <<<"$out"
    check "... and the daemon's bounds" grep -q '^    Memory: .* used of .* (--max-memory)' <<<"$out"
    [ "$FAILED" -eq 0 ] || echo "$out"
    kill "$held"
    wait "$job"
    rc=0
    out=$(outsider "${CTL[@]}" show "${NODE#/dev/}" 2>&1) || rc=$?
    check "a user who may not open the node: refused (status $rc), nothing shown" \
        bash -c "[ $rc -eq 1 ] && grep -q 'permission denied' <<<'$out' && ! grep -q Node: <<<'$out'"
    rc=0
    out=$(outsider "$PWD/build/cuse_bsg" --show --json 2>/dev/null) || rc=$?
    check "... listing every daemon: this one left out, an empty JSON array (status $rc)" \
        bash -c "[ $rc -eq 0 ] && jq -e 'length == 0' <<<'$out' >/dev/null"
    # a client that connects and then neither writes nor reads
    python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print("connected", flush=True)
time.sleep(60)' '/run/cuse-bsg/bsg!acc-cuse.sock' >/tmp/stall.out &
    stall=$!
    vm_wait 10 grep -q connected /tmp/stall.out || vm_fail "the stalling client did not connect"
    out=$(as_user "${CTL[@]}" show "${NODE#/dev/}")
    check "... a client that connects and never writes holds the view up for no one" \
        grep -q '^Node: bsg/acc-cuse' <<<"$out"
    check "... nor the node" sg_turs "$NODE"
    kill "$stall"
    wait "$stall" 2>/dev/null
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
live_view
node_stop
check "the daemon removed its live-view socket" test ! -e '/run/cuse-bsg/bsg!acc-cuse.sock'
CUSE_BSG=$PWD/build/cuse_bsg
policy
echo "access suite took $((SECONDS - T0)) s in the guest"
summary
