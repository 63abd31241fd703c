#!/bin/bash
# Deployment under a real systemd as PID 1 (run with `vm-run --systemd`):
# `make install` into the guest's writable overlay, then with systemd-udevd
# and systemd themselves:
#   a. after a reboot's udevadm trigger --action=add nothing is served;
#      cuse-bsgctl enable ID (the device's stable id) serves it;
#   b. a hot-added scsi_debug host is not served (not chosen);
#   c. the probe order changes: the enabled device deleted (its unit stops,
#      its node goes), a new host takes its sg number, the device rescanned
#      under another: its unit starts again and serves that device only;
#   d. systemctl stop / start of an instance;
#   e. kill -9 of the daemon: restarted (new MainPID), node serves;
#   f. with a slow udev rule for the node, the node has the rules' mode,
#      group and link when `systemctl start` returns, and a unit ordered
#      After= the daemon, as a user of group disk, opens it;
#   g. clients through the confined daemon: root (v3, v4, 1 MiB read) and
#      nobody in group disk; the direct data path under the sandbox;
#   h. a start-up error (a bad option in a drop-in): the unit fails, is not
#      restarted, and `journalctl -p err` shows the daemon's line;
#   i. every documented instance name: sgN, sdX, bsg-H:C:T:L;
#   j. the daemon's "serving" line in `journalctl -u`, naming the kernel's
#      credential check (the unit lets the daemon load its BPF programs);
#   r. systemctl reload (ExecReload=, SIGHUP): the same process serves on
#      (run after j, while the unit of j serves);
#   s. cuse-bsgctl show: the unit's daemon answers on live.sock in its
#      RuntimeDirectory, text and JSON, naming an opener of the node; a
#      member of disk sees it, another user is refused; stopped, the
#      directory is gone;
#   k. cuse-bsgctl disable ID: the unit stops, and no trigger starts it;
#   l. a class: enable disk serves every disk, present or hot-added, not
#      enable tape; a device disabled in it is masked; disable disk stops
#      all but a device enabled on its own;
#   m. enable all, then disable all: nothing served, no choice left;
#   n. cuse_bsg on a link: the link moved to another device, a new open of
#      the node gets ENODEV, not that device;
#   o. cuse-bsgctl refuses what would choose the wrong devices: a kernel
#      name not present (it is no stable id), an id of no device present
#      (but with --force, for a device that will come), a typeN that has a
#      class name, a type past 31, a misspelled class (disks); nothing is
#      enabled for them; a usage error is one line; its --help goes to
#      standard output, its --version is the daemon's;
#   p. the .deb of make deb (build/deb), in place of make install's files:
#      dpkg -i serves nothing, even after a boot's trigger, until
#      cuse-bsgctl enable; dpkg --purge stops the node, reloads systemd and
#      leaves no file, no choice and no empty .wants directory; dpkg -i
#      again serves nothing;
#   u. the upgrade: the package of an earlier version (make deb-prev,
#      build/deb-prev) serves the device, a client holds the node open, and
#      dpkg -i of make deb's restarts the unit on the new daemon; the
#      client's next command on its old file gets ENOTCONN at once (printed),
#      and a new open serves; dpkg -r stops the unit and reloads systemd.
# Every wait is bounded (WAIT seconds unless said); each check prints PASS:
# or FAIL:, each step its duration.
#
# Run (as root, with build/cuse_bsg and build/clients/sgclient built: make test-progs):
#   tests/vm/vm-run --systemd tests/vm/systemd.sh
# The binary and the test client come from the host's tree ($PWD); make
# install rebuilds the daemon in the guest's overlay only if it is stale.
# shellcheck disable=SC2317  # helpers run through vm_wait
set -uo pipefail
. "$(dirname "$0")/guest-lib.sh"
. "$(dirname "$0")/node-lib.sh"

WAIT=60          # the longest wait for a unit's state or a node (a start loads BPF programs: seconds on a busy emulator)
START_LIMIT=60   # the longest a `systemctl start` may block
T0=$EPOCHREALTIME
TIMES=()
SLOW_RULE=/etc/udev/rules.d/99-vm-slow-cuse.rules
CONSUMER=vm-cuse-consumer.service

elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# step ID TITLE FUNCTION: run one check group, timed
step() {
    local t=$EPOCHREALTIME f0=$FAILED
    echo
    vm_log "$1: $2"
    "$3"
    TIMES+=("$(printf '%-3s %6ss  %s%s' "$1" "$(elapsed "$t")" "$2" \
        "$([ "$FAILED" -eq "$f0" ] || echo "  ($((FAILED - f0)) failed)")")")
    echo "-- $1 took $(elapsed "$t") s"
}

prop() { systemctl show -P "$2" "$1" 2>/dev/null; }
state_is() { [ "$(prop "$1" ActiveState)" = "$2" ]; }
diag() {  # a unit's status and its last journal lines, indented
    systemctl status --no-pager -n 15 "$1" 2>&1 | sed 's/^/    | /'
}

# expect_state NAME UNIT STATE [SECONDS]: the unit reaches STATE within the bound
expect_state() {
    local name=$1 unit=$2 want=$3 secs=${4:-$WAIT}
    if vm_wait "$secs" state_is "$unit" "$want"; then
        pass "$name"
    else
        fail "$name: timeout after ${secs}s, ActiveState=$(prop "$unit" ActiveState)" \
            "SubState=$(prop "$unit" SubState) Result=$(prop "$unit" Result)"
        diag "$unit"
    fi
}

# start UNIT: systemctl start, bounded; its status
start() {
    local rc=0
    timeout "$START_LIMIT" systemctl start "$1" || rc=$?
    [ "$rc" -ne 124 ] || echo "systemctl start $1 still blocked after ${START_LIMIT}s; killed" >&2
    return "$rc"
}

stop() {
    timeout "$START_LIMIT" systemctl stop "$1" ||
        echo "systemctl stop $1 failed or blocked past ${START_LIMIT}s" >&2
}

# serves ID NODE DIRECT: sg_inq through NODE equals sg_inq on DIRECT
serves() {
    NODE=$2
    same "$1: sg_inq through $2 equals $3's" "$3" sg_inq @DEV@
}

node_gone() {  # NAME NODE
    if vm_wait "$WAIT" test ! -e "$2"; then pass "$1"; else fail "$1: $2 still there after ${WAIT}s"; fi
}

node_there() {  # NAME NODE
    if vm_wait "$WAIT" test -c "$2"; then pass "$1"; else fail "$1: no $2 after ${WAIT}s"; fi
}

# daemon_lines: "<PRIORITY> MESSAGE" for the daemon's own entries in
# journalctl -o json (not systemd's lines about the unit)
daemon_lines() {
    python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("SYSLOG_IDENTIFIER") == "cuse_bsg":
        print("<%s> %s" % (e.get("PRIORITY"), e.get("MESSAGE")))'
}

# journal_since CURSOR JOURNALCTL-ARGS...: the journal's lines after CURSOR
cursor() { journalctl -n 0 --show-cursor -q | sed -n 's/^-- cursor: //p'; }
journal_since() {
    local c=$1
    shift
    journalctl --no-pager -q --after-cursor="$c" "$@"
}

# the cuse-bsg units active or on their way, one a line
served_units() {
    systemctl list-units --no-legend --plain --state=active,activating,reloading 'cuse-bsg@*' |
        awk '{ print $1 }'
}
cuse_nodes() {
    local n
    for n in /dev/bsg/*-cuse; do [ ! -e "$n" ] || echo "$n"; done
}
no_jobs() { [ -z "$(systemctl list-jobs --no-legend 2>/dev/null)" ]; }

# settled: udev's queue empty and systemd's jobs done, so that whatever
# the events start has started (an event, not a time)
settled() {
    udevadm settle --timeout=30
    vm_wait "$WAIT" no_jobs || echo "   jobs still queued: $(systemctl list-jobs --no-legend | tr '\n' ';')"
}

# nothing_served NAME: once settled, no cuse-bsg unit runs and no CUSE node exists
nothing_served() {
    local u n
    settled
    u=$(served_units) n=$(cuse_nodes)
    [ -z "$u$n" ] || echo "   served: ${u//$'\n'/ } ${n//$'\n'/ }"
    check "$1" test -z "$u$n"
}

# only_served NAME UNIT...: once settled, exactly these cuse-bsg units run
only_served() {
    local name=$1 got want
    shift
    settled
    got=$(served_units | sort) want=$(printf '%s\n' "$@" | sort)
    [ "$got" = "$want" ] || echo "   running: ${got//$'\n'/ }; wanted: ${want//$'\n'/ }"
    check "$name" test "$got" = "$want"
}

unit_of() { echo "cuse-bsg@scsi_generic-$1.service"; }

# boot_trigger: what a boot does with the devices present
boot_trigger() {
    vm_run udevadm trigger --action=add --subsystem-match=scsi --subsystem-match=scsi_generic \
        --subsystem-match=bsg --subsystem-match=block
}

# add_host NAME: a new scsi_debug host; NEW_DEV (its device's sysfs
# directory), NEW_SGN (its sg node's name) and NEW_ID (its stable id)
add_host() {
    local before d
    before=$(vm_sdebug_devs)
    NEW_DEV='' NEW_SGN='' NEW_ID=''
    echo 1 >/sys/bus/pseudo/drivers/scsi_debug/add_host || { fail "$1: add_host refused"; return 1; }
    _new_sg() {
        for d in $(vm_sdebug_devs); do
            grep -qxF "$d" <<<"$before" && continue
            [ -d "$d/scsi_generic" ] || return 1
            NEW_SGN=$(ls "$d/scsi_generic") NEW_DEV=$d
            [ -c "/dev/$NEW_SGN" ]
            return
        done
        return 1
    }
    if ! vm_wait "$WAIT" _new_sg; then
        fail "$1: no new scsi_debug device with an sg node ${WAIT}s after add_host"
        return 1
    fi
    NEW_ID=$(cuse-bsgctl id "/dev/$NEW_SGN")
    vm_log "added: ${NEW_DEV##*/}, /dev/$NEW_SGN, id $NEW_ID"
}

setup() {
    local st
    [ "$(cat /proc/1/comm)" = systemd ] ||
        vm_fail "PID 1 is $(cat /proc/1/comm), not systemd: run this with vm-run --systemd"
    [ -x "$SGCLIENT" ] || vm_fail "no $SGCLIENT: build the test programs first (make test-progs)"
    st=$(timeout 120 systemctl is-system-running --wait 2>&1)
    vm_log "system state: $st; boot:"
    systemd-analyze time 2>&1 | sed 's/^/    /'
    # (not systemd-analyze blame: 40 to 150 s here, longer than the boot)
    systemctl --failed --no-legend --no-pager 2>&1 | sed 's/^/    failed unit: /'
    # a unit of the host's own that fails in the VM is the test bed's
    # business (systemd-init masks those known), not the project's: noted only
    check "setup: the boot finished (state: $st)" test "$st" = running -o "$st" = degraded
    check "setup: systemd-udevd runs" state_is systemd-udevd.service active
    check "setup: systemd-journald runs" state_is systemd-journald.service active
    local t=$EPOCHREALTIME
    vm_run modprobe sg
    vm_run modprobe sd_mod
    vm_load_scsi_debug dev_size_mb=16
    vm_log "sg, sd_mod and scsi_debug loaded in $(elapsed "$t") s"
    SG=${VM_SG#/dev/} SD=${VM_SD#/dev/} HCTL=${VM_BSG#/dev/bsg/}
    vm_log "scsi_debug: sg=$VM_SG sd=$VM_SD bsg=$VM_BSG, before the project is installed"
    # random data at the start of the disk, for the reads of g
    vm_run dd if=/dev/urandom of="$VM_SD" bs=64k count=16 oflag=direct status=none
}

install_project() {
    local f unitdir rulesdir t=$EPOCHREALTIME
    make -s -q -C "$PWD" build/cuse_bsg ||
        vm_log "note: $PWD/build/cuse_bsg is older than its sources; make builds it in the guest's overlay"
    make -s -C "$PWD" install PREFIX=/usr/local ||
        vm_fail "make install PREFIX=/usr/local failed: nothing to test"
    pass "make install PREFIX=/usr/local ($(elapsed "$t") s)"
    unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
    rulesdir=$(pkg-config --variable=udevdir udev 2>/dev/null || echo /lib/udev)/rules.d
    for f in /usr/local/sbin/cuse_bsg /usr/local/sbin/cuse-bsgctl "$unitdir/cuse-bsg@.service" \
        "$rulesdir/60-cuse-bsg.rules"; do
        check "installed: $f" test -s "$f"
    done
    check "the unit runs the installed daemon" \
        grep -q '^ExecStart=/usr/local/sbin/cuse_bsg ' "$unitdir/cuse-bsg@.service"
    vm_run systemctl daemon-reload
    vm_run udevadm control --reload
    ID0=$(cuse-bsgctl id "$VM_SG") U=$(unit_of "$ID0") NODE0=/dev/bsg/$ID0-cuse
    vm_log "$VM_SG ($HCTL): stable id $ID0, unit $U, node $NODE0"
    check "the stable id of $VM_SG is its WWID's ($ID0), not its H:C:T:L" test "$ID0" != "$HCTL"
    check "systemctl knows $U" systemctl cat "$U" >/dev/null
    check "nothing runs before the trigger: $U inactive" state_is "$U" inactive
    vm_log "cuse loaded before any unit: $([ -d /sys/module/cuse ] && echo yes || echo no)"
}

check_a() {
    local t rc=0
    # what a boot does after make install
    boot_trigger
    nothing_served "a: after make install and a boot's trigger, nothing is served"
    udevadm info "$VM_SG" | grep -e TAGS -e SYSTEMD_WANTS -e CUSE_BSG -e DEVLINKS | sed 's/^/    /'
    check "a: no SYSTEMD_WANTS on $VM_SG" bash -c "! udevadm info $VM_SG | grep -q SYSTEMD_WANTS"
    check "a: the stable link /dev/scsi_generic/$ID0 -> $VM_SG" \
        test "$(readlink -f "/dev/scsi_generic/$ID0")" = "$VM_SG"
    cuse-bsgctl status | sed 's/^/    | /'
    t=$EPOCHREALTIME
    cuse-bsgctl enable "$ID0" 2>&1 | sed 's/^/    | /'
    rc=${PIPESTATUS[0]}
    check "a: cuse-bsgctl enable $ID0 returns 0 ($rc, $(elapsed "$t") s)" test "$rc" -eq 0
    check "a: $U active when it returns" state_is "$U" active
    check "a: systemctl is-enabled $U: enabled" test "$(systemctl is-enabled "$U")" = enabled
    check "a: cuse loaded through modprobe@cuse.service" test -d /sys/module/cuse
    node_there "a: $NODE0 exists" "$NODE0"
    serves a "$NODE0" "$VM_SG"
    check "a: link /dev/bsg-cuse/by-id/$ID0" test -L "/dev/bsg-cuse/by-id/$ID0"
    only_served "a: only $U runs" "$U"
}

check_b() {
    add_host b || return
    NEW_ID1=$NEW_ID
    check "b: its link /dev/scsi_generic/$NEW_ID" vm_wait "$WAIT" test -L "/dev/scsi_generic/$NEW_ID"
    only_served "b: hot-added, not chosen: not served (only $U runs)" "$U"
    check "b: no /dev/bsg/$NEW_ID-cuse" test ! -e "/dev/bsg/$NEW_ID-cuse"
}

check_c() {
    local t old_sg=$SG h=${HCTL%%:*} dev sdev
    t=$EPOCHREALTIME
    echo 1 >"/sys/class/scsi_generic/$SG/device/delete" || fail "c: delete refused"
    expect_state "c: $U stops (inactive, not failed) once its device is deleted" "$U" inactive
    echo "   $(prop "$U" ActiveState) $(elapsed "$t") s after the delete;" \
        "Result=$(prop "$U" Result) NRestarts=$(prop "$U" NRestarts)"
    node_gone "c: $NODE0 goes" "$NODE0"
    dev=$(systemd-escape --path --suffix=device "/dev/scsi_generic/$ID0")
    check "c: $dev goes" vm_wait "$WAIT" state_is "$dev" inactive
    # another host first: it takes the lowest free sg number, the deleted device's
    add_host c || return
    OTHER_ID=$NEW_ID OTHER_SG=$NEW_SGN
    check "c: the new host's device took /dev/$old_sg" test "$NEW_SGN" = "$old_sg"
    # the enabled device back on its own host, under another sg number
    t=$EPOCHREALTIME
    echo '- - -' >"/sys/class/scsi_host/host$h/scan" || fail "c: rescan of host$h refused"
    sdev=/sys/bus/scsi/devices/$HCTL
    _back() { [ -d "$sdev/scsi_generic" ] && [ -c "/dev/$(ls "$sdev/scsi_generic")" ]; }
    vm_wait "$WAIT" _back || { fail "c: $HCTL not back ${WAIT}s after the rescan"; return; }
    SG=$(ls "$sdev/scsi_generic") SD=$(ls "$sdev/block" 2>/dev/null)
    VM_SG=/dev/$SG VM_SD=/dev/$SD
    vm_log "rescanned: $HCTL is $VM_SG (was /dev/$old_sg) and $VM_SD"
    check "c: its sg number changed ($old_sg -> $SG)" test "$SG" != "$old_sg"
    check "c: its id is still $ID0" test "$(cuse-bsgctl id "$VM_SG")" = "$ID0"
    expect_state "c: $U active again, started by its device's return" "$U" active
    echo "   active $(elapsed "$t") s after the rescan"
    check "c: /dev/scsi_generic/$ID0 -> $VM_SG" test "$(readlink -f "/dev/scsi_generic/$ID0")" = "$VM_SG"
    node_there "c: $NODE0 exists" "$NODE0"
    NODE=$NODE0
    same "c: $NODE0 answers VPD page 0x83 as $VM_SG does" "$VM_SG" sg_inq -p 0x83 @DEV@
    check "c: not as /dev/$old_sg (now another device) does" bash -c \
        "! cmp -s <(sg_inq -p 0x83 $NODE0 2>&1) <(sg_inq -p 0x83 /dev/$old_sg 2>&1)"
    serves c "$NODE0" "$VM_SG"
    only_served "c: /dev/$old_sg's device ($OTHER_ID) is not served: only $U runs" "$U"
}

check_d() {
    local rc=0 t=$EPOCHREALTIME
    stop "$U"
    check "d: systemctl stop: $U inactive" state_is "$U" inactive
    node_gone "d: systemctl stop: $NODE0 goes" "$NODE0"
    echo "   stopped in $(elapsed "$t") s"
    t=$EPOCHREALTIME
    start "$U" || rc=$?
    check "d: systemctl start $U returns 0 ($rc, $(elapsed "$t") s)" test "$rc" -eq 0
    check "d: $U active when start returns" state_is "$U" active
    check "d: $NODE0 exists when start returns" test -c "$NODE0"
    serves d "$NODE0" "$VM_SG"
}

check_e() {
    local pid n0 t
    pid=$(prop "$U" MainPID) n0=$(prop "$U" NRestarts)
    [ "${pid:-0}" -gt 0 ] || { fail "e: $U has no MainPID"; diag "$U"; return; }
    t=$EPOCHREALTIME
    kill -9 "$pid"
    _restarted() {
        local p
        p=$(prop "$U" MainPID)
        [ "${p:-0}" -gt 0 ] && [ "$p" != "$pid" ] && state_is "$U" active
    }
    if vm_wait 30 _restarted; then
        pass "e: after kill -9 of $pid, $U active again with MainPID $(prop "$U" MainPID) ($(elapsed "$t") s)"
    else
        fail "e: after kill -9 of $pid, $U not active with a new MainPID within 30s" \
            "(ActiveState=$(prop "$U" ActiveState) MainPID=$(prop "$U" MainPID))"
        diag "$U"
    fi
    check "e: NRestarts counts it ($n0 -> $(prop "$U" NRestarts))" \
        test "$(prop "$U" NRestarts)" -eq $((n0 + 1))
    node_there "e: $NODE0 exists" "$NODE0"
    serves e "$NODE0" "$VM_SG"
}

check_f() {
    local rc=0 st t node=$NODE0
    # udev applies MODE/GROUP once every rule ran: this delays them 3 s
    printf '%s\n' '# tests/vm/systemd.sh: a slow rule for the CUSE nodes' \
        'ACTION=="add", SUBSYSTEM=="cuse", KERNEL=="bsg/*-cuse", PROGRAM="/bin/sleep 3"' >"$SLOW_RULE"
    vm_run udevadm control --reload
    stop "$U"
    vm_wait "$WAIT" test ! -e "$node" || fail "f: $node still there after stop"
    udevadm settle --timeout=30
    t=$EPOCHREALTIME
    start "$U" || rc=$?
    st=$(stat -c '%a %U:%G' "$node" 2>&1)
    echo "   systemctl start returned $rc after $(elapsed "$t") s; node: $st;" \
        "link: $(readlink "/dev/bsg-cuse/$ID0" || echo none)"
    check "f: systemctl start $U returns 0 ($rc)" test "$rc" -eq 0
    check "f: node 660 root:disk when start returns (got '$st')" test "$st" = "660 root:disk"
    check "f: link /dev/bsg-cuse/$ID0 when start returns" test -L "/dev/bsg-cuse/$ID0"
    vm_run udevadm settle --timeout=30
    vm_log "now $(stat -c '%a %U:%G' "$node" 2>&1) after udevadm settle"

    # a unit after the daemon, as a user of group disk, opening the node
    cat >"/etc/systemd/system/$CONSUMER" <<EOF
[Unit]
Description=a client of $node, ordered after its daemon
Requires=$U
After=$U

[Service]
Type=oneshot
User=nobody
Group=nogroup
SupplementaryGroups=disk
ExecStart=/usr/bin/sg_inq $node
EOF
    vm_run systemctl daemon-reload
    stop "$U"
    vm_wait "$WAIT" test ! -e "$node" || fail "f: $node still there after stop"
    udevadm settle --timeout=30
    local c
    c=$(cursor)
    t=$EPOCHREALTIME
    rc=0
    start "$CONSUMER" || rc=$?
    journal_since "$c" -u "$CONSUMER" -o cat | grep -v '^  ' | sed 's/^/    | /'
    check "f: $CONSUMER (User=nobody, SupplementaryGroups=disk, After=$U) opens the node ($rc, $(elapsed "$t") s)" \
        test "$rc" -eq 0
    rm -f "$SLOW_RULE" "/etc/systemd/system/$CONSUMER"
    vm_run udevadm control --reload
    vm_run systemctl daemon-reload
    state_is "$U" active || { systemctl reset-failed "$U" 2>/dev/null; start "$U"; }
    vm_run udevadm settle --timeout=30
}

check_g() {
    local pid c n line retries sgio nobody
    NODE=$NODE0
    [ -c "$NODE" ] || { fail "g: no $NODE"; diag "$U"; return; }
    pid=$(prop "$U" MainPID)
    grep -e '^NoNewPrivs' -e '^Seccomp:' -e '^CapEff' -e '^CapBnd' "/proc/$pid/status" | sed 's/^/    /'
    check "g: the daemon runs confined (NoNewPrivs, seccomp filter)" bash -c \
        "grep -q '^NoNewPrivs:.1' /proc/$pid/status && grep -q '^Seccomp:.2' /proc/$pid/status"
    # the unit gives CAP_SETPCAP so that the daemon can empty its bounding set
    # of what it does not use (CAP_CHOWN without --owner/--group, CAP_SETPCAP)
    check "g: bounding set = effective set = CAP_DAC_READ_SEARCH CAP_SETGID CAP_SETUID CAP_SYS_RAWIO CAP_SYS_PTRACE CAP_SYS_ADMIN" bash -c \
        "grep -qx 'CapEff:.00000000002a00c4' /proc/$pid/status && grep -qx 'CapBnd:.00000000002a00c4' /proc/$pid/status"
    check "g: the daemon's root is read-only (ProtectSystem=strict)" bash -c \
        "grep -q ' / / ro,' /proc/$pid/mountinfo"
    same "g: root: sg_inq" "$VM_SG" sg_inq @DEV@
    same "g: root: sg_inq -p 0x83" "$VM_SG" sg_inq -p 0x83 @DEV@
    same "g: root: v4 INQUIRY (sgclient)" "$VM_BSG" "$SGCLIENT" v4-inquiry @DEV@
    same "g: root: v4 READ(10) 1 MiB (sgclient), sha1" "$VM_BSG" \
        sh -c "'$SGCLIENT' v4-read @DEV@ 0 2048 | sha1sum"
    nobody=(setpriv --reuid=65534 --regid=65534 --groups="$(getent group disk | cut -d: -f3)" --inh-caps=-all)
    # a reset needs CAP_SYS_ADMIN, kept in the unit's bounding set for it
    same "g: root: sg_reset -d" "$VM_SG" sg_reset -d @DEV@
    sg_turs "$VM_SG" >/dev/null 2>&1
    sg_turs "$VM_SG" >/dev/null 2>&1
    same "g: nobody in group disk: sg_reset -d (EACCES)" "$VM_SG" "${nobody[@]}" sg_reset -d @DEV@
    same "g: nobody in group disk: sg_inq" "$VM_SG" "${nobody[@]}" sg_inq @DEV@
    same "g: nobody in group disk: READ(10) 64 KiB (sg_raw), sha1" "$VM_SG" "${nobody[@]}" \
        sh -c "sg_raw -R -o /dev/stdout -r 65536 @DEV@ 28 00 00 00 00 00 00 00 80 00 2>/dev/null | sha1sum"
    check "g: others may not open the node" bash -c \
        "! setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all sg_inq '$NODE' >/dev/null 2>&1"
    # the counters: every SG_IO above took the direct copy path
    # counted, not after a cursor: a line read from the daemon's stream may
    # be stored with a time before the cursor's entry
    n=$(journalctl --no-pager -q -b -u "$U" -o cat | grep -c 'stats:')
    systemctl kill -s USR1 --kill-whom=main "$U"
    _stats() { [ "$(journalctl --no-pager -q -b -u "$U" -o cat | grep -c 'stats:')" -gt "$n" ]; }
    if vm_wait 10 _stats; then
        line=$(journalctl --no-pager -q -b -u "$U" -o cat | grep 'stats:' | tail -n1)
        echo "    $line"
        retries=$(tr ' ' '\n' <<<"$line" | sed -n 's/^ioctl_retries=//p')
        sgio=$(tr ' ' '\n' <<<"$line" | sed -n 's/^sg_io=//p')
        check "g: direct copy path in the unit's sandbox (sg_io=$sgio, ioctl_retries=$retries)" \
            test "${sgio:-0}" -gt 0 -a "${retries:-x}" = 0
    else
        fail "g: no stats line in the journal 10s after SIGUSR1"
    fi
}

check_h() {
    local drop=/etc/systemd/system/$U.d rc=0 c n1 n2 res
    stop "$U"
    mkdir -p "$drop"
    printf '[Service]\nEnvironment=CUSE_BSG_OPTIONS=--bogus-option\n' >"$drop/vm-bogus.conf"
    vm_run systemctl daemon-reload
    systemctl reset-failed "$U" 2>/dev/null
    c=$(cursor)
    start "$U" || rc=$?
    check "h: systemctl start with --bogus-option fails ($rc)" test "$rc" -ne 0 -a "$rc" -ne 124
    expect_state "h: $U ends failed" "$U" failed
    n1=$(prop "$U" NRestarts)
    sleep 5  # an observation window: a restarting unit would count on
    n2=$(prop "$U" NRestarts)
    res="Result=$(prop "$U" Result) ExecMainStatus=$(prop "$U" ExecMainStatus) NRestarts $n1 -> $n2"
    echo "   $res"
    check "h: still failed 5 s later, NRestarts unchanged ($res)" \
        bash -c "[ \"\$(systemctl show -P ActiveState $U)\" = failed ] && [ '$n1' = '$n2' ]"
    check "h: a start-up error is not restarted (NRestarts=$n2)" test "$n2" -eq 0
    echo "   journalctl -p err -u $U:"
    journal_since "$c" -p err -u "$U" -o short-monotonic | sed 's/^/    | /'
    # journald may store the daemon's last lines a moment after the unit failed
    _errs() { journalctl --no-pager -q -b -p err -u "$U" -o json | daemon_lines | grep -q -- bogus; }
    check "h: journalctl -p err -u $U shows the daemon's error line (about --bogus-option)" \
        vm_wait 10 _errs
    journal_since "$c" -u "$U" -o json >"$VM_OUT/h-journal.json"
    echo "   the daemon's lines, with their priority (3 err, 6 info; all in $VM_OUT/h-journal.json):"
    daemon_lines <"$VM_OUT/h-journal.json" | sed -n "1,3s/^/    | /p"
    rm -rf "$drop"
    vm_run systemctl daemon-reload
    systemctl reset-failed "$U" 2>/dev/null
    start "$U" || fail "h: $U does not start again without the drop-in"
}

check_i() {
    local inst u dev rc=0 t
    expect_state "i: $U (scsi_generic-ID) active" "$U" active
    serves "i: $U" "$NODE0" "$VM_SG"

    u=cuse-bsg@$SG.service
    t=$EPOCHREALTIME
    start "$u" || rc=$?
    check "i: systemctl start $u returns 0 ($rc, $(elapsed "$t") s)" test "$rc" -eq 0
    expect_state "i: $u active" "$u" active
    serves "i: $u" "/dev/bsg/$SG-cuse" "$VM_SG"

    u=cuse-bsg@$SD.service
    rc=0
    t=$EPOCHREALTIME
    start "$u" || rc=$?
    check "i: systemctl start $u returns 0 ($rc, $(elapsed "$t") s)" test "$rc" -eq 0
    expect_state "i: $u active" "$u" active
    serves "i: $u" "/dev/bsg/$SD-cuse" "$VM_SD"

    inst=$(systemd-escape "bsg/$HCTL")
    u=cuse-bsg@$inst.service
    dev=$(systemd-escape --path --suffix=device "$VM_BSG")
    vm_log "the bsg node's instance: $u (systemd-escape bsg/$HCTL), bound to $dev"
    check "i: $dev exists for $VM_BSG ($(prop "$dev" ActiveState))" state_is "$dev" active
    if state_is "$dev" active; then
        t=$EPOCHREALTIME rc=0
        start "$u" || rc=$?
        check "i: systemctl start $u returns 0 ($rc, $(elapsed "$t") s)" test "$rc" -eq 0
        expect_state "i: $u active" "$u" active
        serves "i: $u" "/dev/bsg/$HCTL-cuse" "$VM_BSG"
    else
        fail "i: $u not started: systemd has no $dev to bind it to (a start would wait for it)"
    fi
    stop "cuse-bsg@$SG.service"
    stop "cuse-bsg@$SD.service"
    stop "$u"
    node_gone "i: the sg, sd and bsg instances' nodes go when stopped" "/dev/bsg/$SD-cuse"
}

check_j() {
    local lines
    lines=$(journalctl --no-pager -q -b -u "$U" -o cat | grep -i 'serving')
    echo "   $(grep -c . <<<"$lines") such lines (one per start of $U)${lines:+, the last:}"
    [ -z "$lines" ] || echo "    | ${lines##*$'\n'}"
    check "j: journalctl -u $U has a 'serving' line" test -n "$lines"
    # the unit's sandbox lets the daemon load its credential check's
    # programs (bpf(), CAP_SYS_ADMIN): the kernel makes sg's test, not /proc
    check "j: ... and its credential check is the witness's, under the unit's sandbox" \
        grep -q "credential check: witness (fentry on CUSE's entry points; the daemon refuses)$" <<<"${lines##*$'\n'}"
}

check_r() {
    local pid rc=0 c
    expect_state "r: $U active" "$U" active
    pid=$(prop "$U" MainPID)
    c=$(cursor)
    timeout "$START_LIMIT" systemctl reload "$U" || rc=$?
    check "r: systemctl reload $U returns 0 ($rc)" test "$rc" -eq 0
    _reloaded() { journal_since "$c" -u "$U" -o cat | grep -q 'SIGHUP: no --policy and no /etc/cuse-bsg/policy to reload'; }
    check "r: the daemon logged the reload" vm_wait "$WAIT" _reloaded
    check "r: the same process, still active (MainPID $pid)" \
        test "$(prop "$U" MainPID)" = "$pid" -a "$(prop "$U" ActiveState)" = active
    serves "r: after the reload" "$NODE0" "$VM_SG"
}

# shellcheck disable=SC2016 # jq's own $variables
check_s() {
    # not "name": check()'s own local, which its commands would see
    local rd=/run/cuse-bsg/scsi_generic-$ID0 pid out json rc=0 node=${NODE0#/dev/}
    local nobody=(setpriv --reuid=65534 --regid=65534 --groups="$(getent group disk | cut -d: -f3)" --inh-caps=-all)
    command -v jq >/dev/null || { fail "s: no jq in the guest: the JSON cannot be checked"; return; }
    expect_state "s: $U active" "$U" active
    pid=$(prop "$U" MainPID)
    check "s: the daemon's socket is $rd/live.sock, in the unit's RuntimeDirectory" test -S "$rd/live.sock"
    exec 3<"$NODE0" # an opener: this shell
    out=$(cuse-bsgctl show "$node" 2>&1)
    sed -n '1,12s/^/    | /p' <<<"$out"
    _both() { grep -q "^Daemon: pid $pid," <<<"$out" && grep -q "^Node: $node " <<<"$out"; }
    check "s: cuse-bsgctl show $node: the daemon (pid $pid) and its node" _both
    check "s: ... this shell among its openers (pid $$, user root)" grep -q "pid $$ ([^)]*), user root (0)" <<<"$out"
    json=$(cuse-bsgctl show --json)
    check "s: cuse-bsgctl show --json: valid JSON, the node and its target, this shell an opener" \
        jq -e --argjson p "$pid" --argjson me "$$" --arg n "$node" --arg t "/dev/scsi_generic/$ID0" \
        'any(.[]; .pid == $p and any(.nodes[]; .name == $n and .target == $t and
             any(.openers[]; .pid == $me and .uid == 0)))' <<<"$json"
    exec 3<&-
    _sees() { grep -q "^Node: $node " <<<"$("${nobody[@]}" cuse-bsgctl show "$node")"; }
    check "s: nobody in group disk sees the node" _sees
    out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all cuse-bsgctl show "$node" 2>&1) || rc=$?
    _refused() { [ "$rc" -eq 1 ] && grep -q 'permission denied' <<<"$out"; }
    check "s: nobody in no group is refused ($rc: $out)" _refused
    stop "$U"
    check "s: stopped, its runtime directory and socket are gone" test ! -e "$rd"
    start "$U" || fail "s: $U does not start again"
    expect_state "s: $U active again" "$U" active
}

# ctl ID ARGS...: cuse-bsgctl ARGS, its output indented; its status a check
ctl() {
    local id=$1 rc t=$EPOCHREALTIME
    shift
    cuse-bsgctl "$@" 2>&1 | sed 's/^/    | /'
    rc=${PIPESTATUS[0]}
    check "$id: cuse-bsgctl $* returns 0 ($rc, $(elapsed "$t") s)" test "$rc" -eq 0
}

check_k() {
    ctl k disable "$ID0"
    check "k: $U inactive when it returns" state_is "$U" inactive
    node_gone "k: $NODE0 goes" "$NODE0"
    check "k: systemctl is-enabled $U: disabled" test "$(systemctl is-enabled "$U")" = disabled
    boot_trigger
    nothing_served "k: a boot's trigger serves nothing"
}

# the units of every scsi_debug device present, one a line
all_units() {
    local d
    for d in $(vm_sdebug_devs); do
        [ -d "$d/scsi_generic" ] && unit_of "$(cuse-bsgctl id "/dev/$(ls "$d/scsi_generic")")"
    done
}

check_l() {
    local u1 all rest u
    u1=$(unit_of "$NEW_ID1")
    ctl l enable tape
    nothing_served "l: enable tape serves none of the disks"
    ctl l disable tape
    ctl l enable disk
    mapfile -t all < <(all_units)
    vm_log "disks: ${all[*]}"
    check "l: three disks or more" test "${#all[@]}" -ge 3
    only_served "l: enable disk serves every disk present" "${all[@]}"
    add_host l || return
    only_served "l: and a disk hot-added later ($NEW_ID)" "${all[@]}" "$(unit_of "$NEW_ID")"
    node_there "l: /dev/bsg/$NEW_ID-cuse exists" "/dev/bsg/$NEW_ID-cuse"
    mapfile -t all < <(all_units)
    # one device out of its class
    ctl l disable "$NEW_ID1"
    check "l: $u1 masked" test "$(systemctl is-enabled "$u1")" = masked
    rest=()
    for u in "${all[@]}"; do [ "$u" = "$u1" ] || rest+=("$u"); done
    boot_trigger
    only_served "l: after a boot's trigger, every disk but $NEW_ID1" "${rest[@]}"
    ctl l status
    ctl l enable "$NEW_ID1"
    check "l: $u1 enabled" test "$(systemctl is-enabled "$u1")" = enabled
    only_served "l: $NEW_ID1 served again" "${all[@]}"
    ctl l disable disk
    only_served "l: disable disk: only the device enabled on its own ($NEW_ID1) runs" "$u1"
    boot_trigger
    only_served "l: after a boot's trigger too" "$u1"
}

check_m() {
    local all
    ctl m enable all
    mapfile -t all < <(all_units)
    only_served "m: enable all serves every device (${#all[@]})" "${all[@]}"
    ctl m status
    ctl m disable all
    nothing_served "m: disable all: nothing served"
    check "m: no choice left in /etc/systemd/system or /etc/cuse-bsg/serve" bash -c \
        "! ls /etc/systemd/system/*.wants/cuse-bsg@* /etc/systemd/system/cuse-bsg@* /etc/cuse-bsg/serve/* 2>/dev/null | grep -q ."
    boot_trigger
    nothing_served "m: a boot's trigger serves nothing"
}

# the daemon itself on a link: it serves the node it found there, and
# reopens (for each new opener) by path only while the path leads to it
check_n() {
    local link=/run/vm-target-link other=/dev/$OTHER_SG out rc=0
    ln -sfn "$VM_SG" "$link"
    node_start bsg/vm-link-cuse "$link"
    echo "    | $(grep -m1 serving "$NODE_LOG")"
    same "n: a node on $link -> $VM_SG answers VPD page 0x83 as $VM_SG" "$VM_SG" sg_inq -p 0x83 @DEV@
    ln -sfn "$other" "$link"
    out=$(sg_inq -p 0x83 "$NODE" 2>&1) || rc=$?
    echo "   $link -> $other: sg_inq through $NODE: exit $rc, ${out%%$'\n'*}"
    _enodev() { [ "$rc" -ne 0 ] && grep -q "No such device" <<<"$out"; }
    check "n: the link moved to another device ($other): a new open gets ENODEV" _enodev
    ln -sfn "$VM_SG" "$link"
    same "n: the link back: the node answers again" "$VM_SG" sg_inq -p 0x83 @DEV@
    node_stop
    rm -f "$link"
}

# refused WHAT PATTERN ARGS...: cuse-bsgctl ARGS fails, saying PATTERN; it enabled nothing
refused() {
    local what=$1 pattern=$2 out rc=0
    shift 2
    out=$(cuse-bsgctl "$@" 2>&1) || rc=$?
    echo "    | cuse-bsgctl $*: exit $rc: $out"
    _said() { [ "$rc" -eq 1 ] && grep -q "$pattern" <<<"$out"; }
    check "o: $what: refused, saying why" _said
}

check_o() {
    local fake=naa.50000000000fa4e0 out rc=0
    refused "enable sdzz (no such disk)" "not a stable id" enable sdzz
    check "o: ... no unit enabled for it" \
        bash -c "! ls /etc/systemd/system/*.wants/cuse-bsg@scsi_generic-sdzz.service 2>/dev/null | grep -q ."
    refused "enable $fake (an id of no device present)" "no such device present.*--force" enable "$fake"
    check "o: ... no unit enabled for it" \
        bash -c "! ls /etc/systemd/system/*.wants/cuse-bsg@scsi_generic-$fake.service 2>/dev/null | grep -q ."
    ctl o --force enable "$fake"
    check "o: --force enable $fake: its unit enabled for when the device comes" \
        test "$(systemctl is-enabled "$(unit_of "$fake")")" = enabled
    check "o: ... and not started" bash -c "! systemctl is-active -q '$(unit_of "$fake")'"
    ctl o disable "$fake"
    out=$(cuse-bsgctl enabel "$ID0" 2>&1) || rc=$?
    echo "    | cuse-bsgctl enabel $ID0: exit $rc: $out"
    _usage() { [ "$rc" -eq 2 ] && [ "$(grep -c . <<<"$out")" -eq 1 ] && grep -q "unknown command 'enabel' (see --help)" <<<"$out"; }
    check "o: a usage error: status 2, one line naming the problem, then (see --help)" _usage
    refused "enable type0 (a disk's type)" "is 'disk'" enable type0
    refused "enable type99" "from 0 to 31" enable type99
    refused "enable disks (a misspelled class)" "not shaped like a stable id" enable disks
    check "o: ... no unit or class file for it" bash -c \
        "! ls /etc/systemd/system/*.wants/cuse-bsg@scsi_generic-disks.service /etc/cuse-bsg/serve/disks 2>/dev/null | grep -q ."
    check "o: --help: on standard output, status 0" \
        bash -c 'cuse-bsgctl --help 2>/dev/null | grep -q "^usage: cuse-bsgctl"'
    check "o: --version: the daemon's version" \
        test "$(cuse-bsgctl --version)" = "cuse-bsgctl $(cuse_bsg --version | cut -d' ' -f2)"
    check "o: ... no class file for either" \
        test ! -e /etc/cuse-bsg/serve/type0 -a ! -e /etc/cuse-bsg/serve/type99
}

# The Debian package of make deb, in place of make install's files: it
# serves nothing until a device is enabled, and purge takes it and the
# choices away; installed again, it serves nothing still.
DEB_CTL=/usr/sbin/cuse-bsgctl
deb_installed() {  # NAME: dpkg -i of the package, its status 0
    local rc
    dpkg -i "$DEB" 2>&1 | sed 's/^/    | /'
    rc=${PIPESTATUS[0]}
    check "$1: dpkg -i returns 0 ($rc)" test "$rc" -eq 0
    check "$1: dpkg says installed" bash -c "dpkg-query -W -f='\${Status}' cuse-bsg | grep -qx 'install ok installed'"
    check "$1: the unit runs /usr/sbin/cuse_bsg" grep -q '^ExecStart=/usr/sbin/cuse_bsg ' \
        "$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)/cuse-bsg@.service"
    check "$1: its man page is 0.1.0's and names /usr/sbin" \
        bash -c "zcat /usr/share/man/man8/cuse_bsg.8.gz | grep -q '^\.B /usr/sbin/cuse_bsg\$'"
    check "$1: /etc/cuse-bsg/policy is a conffile" \
        bash -c "dpkg-query -W -f='\${Conffiles}' cuse-bsg | grep -q '^ /etc/cuse-bsg/policy '"
    check "$1: a daemon without --policy reads it" \
        bash -c "/usr/sbin/cuse_bsg --check '$VM_SG' 2>/dev/null | grep -q 'access policy: /etc/cuse-bsg/policy'"
    boot_trigger
    nothing_served "$1: after dpkg -i and a boot's trigger, nothing is served"
    check "$1: no cuse node under /sys/class/cuse" bash -c "! ls /sys/class/cuse 2>/dev/null | grep -q ."
}

check_p() {
    local rc debs=("$PWD"/build/deb/cuse-bsg_*.deb)
    DEB=${debs[0]}
    [ -f "$DEB" ] || { fail "p: no build/deb/cuse-bsg_*.deb: run make deb first"; return; }
    vm_log "package: $DEB"
    # man-db's trigger rebuilds the whole man index at each dpkg run, minutes
    # under TCG, in the guest's overlay; the man page is checked in its file
    rm -f /var/lib/man-db/auto-update
    ctl p disable all
    make -s -C "$PWD" uninstall PREFIX=/usr/local || fail "p: make uninstall PREFIX=/usr/local"
    vm_run systemctl daemon-reload
    deb_installed "p"
    "$DEB_CTL" enable "$ID0" 2>&1 | sed 's/^/    | /'
    rc=${PIPESTATUS[0]}
    check "p: the package's cuse-bsgctl enable $ID0 returns 0 ($rc)" test "$rc" -eq 0
    node_there "p: an administrator's choice serves it: $NODE0" "$NODE0"
    serves p "$NODE0" "$VM_SG"
    dpkg --purge cuse-bsg 2>&1 | sed 's/^/    | /'
    rc=${PIPESTATUS[0]}
    check "p: dpkg --purge returns 0 ($rc)" test "$rc" -eq 0
    node_gone "p: purged: $NODE0 goes" "$NODE0"
    check "p: purged: $U not running" bash -c "! systemctl is-active -q '$U'"
    check "p: purged: no daemon, no unit, no rule" test ! -e /usr/sbin/cuse_bsg -a ! -e /usr/sbin/cuse-bsgctl \
        -a ! -e /lib/systemd/system/cuse-bsg@.service -a ! -e /lib/udev/rules.d/60-cuse-bsg.rules
    check "p: purged: no choice left in /etc" bash -c \
        "! ls -d /etc/cuse-bsg /etc/systemd/system/*.wants/cuse-bsg@* /etc/systemd/system/cuse-bsg@* 2>/dev/null | grep -q ."
    check "p: dpkg knows it no more" bash -c "! dpkg-query -W -f='\${Status}' cuse-bsg 2>/dev/null | grep -q installed"
    check "p: purged: no .wants directory of a stable link left" \
        bash -c "! ls -d /etc/systemd/system/dev-scsi_generic-*.wants 2>/dev/null | grep -q ."
    check "p: purged: systemd reloaded (NeedDaemonReload of $U: $(prop "$U" NeedDaemonReload))" \
        test "$(prop "$U" NeedDaemonReload)" = no
    deb_installed "p: again"
    check "p: the package's bash completion and NEWS" test -f /usr/share/bash-completion/completions/cuse-bsgctl \
        -a -f /usr/share/bash-completion/completions/cuse_bsg -a -f /usr/share/doc/cuse-bsg/NEWS.gz
}

# dpkg_i NAME DEB: dpkg -i, its output indented and in $DPKG_OUT; its status a check
dpkg_i() {
    local rc
    DPKG_OUT=$(dpkg -i "$2" 2>&1)
    rc=$?
    printf '%s\n' "$DPKG_OUT" | sed 's/^/    | /'
    check "$1: dpkg -i ${2##*/} returns 0 ($rc)" test "$rc" -eq 0
}

# the client's answer to one more command on its open file, or "no answer"
client_cmd() {
    local out=
    echo >&"${CLIENT[1]}"
    read -r -t "$WAIT" out <&"${CLIENT[0]}" || out="no answer in ${WAIT}s"
    echo "$out"
}

check_u() {
    local prevs=("$PWD"/build/deb-prev/cuse-bsg_*~prev_*.deb) prev pid0 pid1 out exe
    prev=${prevs[0]}
    [ -f "$prev" ] || { fail "u: no build/deb-prev/cuse-bsg_*~prev_*.deb: run make deb-prev first"; return; }
    dpkg --purge cuse-bsg >/dev/null 2>&1 || fail "u: dpkg --purge of p's package"
    dpkg_i u "$prev"
    check "u: the earlier daemon says so ($(/usr/sbin/cuse_bsg --version))" \
        bash -c "/usr/sbin/cuse_bsg --version | grep -q '~prev\$'"
    ctl u enable "$ID0"
    expect_state "u: $U active on the earlier version" "$U" active
    pid0=$(prop "$U" MainPID)
    coproc CLIENT { exec "$PWD/build/clients/sgclient" tur-lines "$NODE0" 2>&1; }
    out=$(client_cmd)
    check "u: a client that holds $NODE0 open: TEST UNIT READY: $out" test "$out" = ok
    dpkg_i u "$DEB"
    check "u: the package said it restarts $U" grep -q "restarting $U" <<<"$DPKG_OUT"
    expect_state "u: $U active after the upgrade" "$U" active
    pid1=$(prop "$U" MainPID)
    exe=$(readlink "/proc/$pid1/exe")
    check "u: a new daemon (MainPID $pid0, then $pid1)" test "$pid1" != "$pid0" -a "$pid1" != 0
    check "u: it runs the new /usr/sbin/cuse_bsg ($exe)" test "$exe" = /usr/sbin/cuse_bsg
    check "u: ... of this version ($(/usr/sbin/cuse_bsg --version))" \
        bash -c "! /usr/sbin/cuse_bsg --version | grep -q '~prev'"
    _stale() {
        local e
        for e in /proc/[0-9]*/exe; do
            [ "$(readlink "$e" 2>/dev/null)" != "/usr/sbin/cuse_bsg (deleted)" ] || return 1
        done
    }
    check "u: no process runs a deleted cuse_bsg" _stale
    out=$(client_cmd)
    vm_log "u: the client's next command on the file it opened before the upgrade: $out"
    check "u: ... ENOTCONN at once, not a hang and not an answer from a daemon gone ($out)" \
        test "$out" = ENOTCONN
    kill "$CLIENT_PID" 2>/dev/null
    wait "$CLIENT_PID" 2>/dev/null
    serves "u: a new open after the upgrade" "$NODE0" "$VM_SG"
    out=$(dpkg -r cuse-bsg 2>&1) || fail "u: dpkg -r: $out"
    node_gone "u: removed: $NODE0 goes" "$NODE0"
    check "u: removed: $U inactive" bash -c "! systemctl is-active -q '$U'"
    check "u: removed: systemd reloaded (NeedDaemonReload of $U: $(prop "$U" NeedDaemonReload))" \
        test "$(prop "$U" NeedDaemonReload)" = no
    check "u: removed, not purged: the choice is kept" \
        bash -c "ls /etc/systemd/system/*.wants/$U >/dev/null 2>&1"
    out=$(dpkg --purge cuse-bsg 2>&1) || fail "u: dpkg --purge: $out"
    check "u: purged: no choice and no .wants directory of a stable link left" bash -c \
        "! ls -d /etc/cuse-bsg /etc/systemd/system/dev-scsi_generic-*.wants /etc/systemd/system/cuse-bsg@* 2>/dev/null | grep -q ."
}

T_SETUP=$EPOCHREALTIME
setup
install_project
D_SETUP=$(elapsed "$T_SETUP")
vm_log "setup and install took $D_SETUP s"
step a "opt-in: nothing served after install; enable one device by its stable id" check_a
step b "hot-add: a device not chosen is not served" check_b
step c "probe order changes: the unit stays with its device" check_c
step d "systemctl stop / start" check_d
step e "restart after kill -9 (Restart=on-failure)" check_e
step f "the node's mode when the unit is active; a unit After= it" check_f
step g "clients through the confined daemon, root and group disk" check_g
step h "a start-up error: failed, not restarted, journalctl -p err" check_h
step i "every instance name: sgN, sdX, bsg-H:C:T:L" check_i
step j "the 'serving' line in the journal" check_j
step r "systemctl reload: SIGHUP, the same process serves on" check_r
step s "the live view: cuse-bsgctl show" check_s
step k "disable one device" check_k
step l "a class: enable disk, a device out of it, disable disk" check_l
step m "enable all, disable all" check_m
step n "the daemon on a link keeps to the device it found" check_n
step o "cuse-bsgctl refuses names that choose no device for good" check_o
step p "the Debian package: installed, purged, installed again" check_p
step u "the Debian package: an upgrade restarts the units, remove and purge" check_u

journalctl --no-pager -b -u 'cuse-bsg@*' -o short-monotonic >"$VM_OUT/cuse-bsg-units.log" 2>&1
echo
vm_log "durations"
printf '    %s\n' "${TIMES[@]}"
echo "systemd.sh took $(elapsed "$T0") s in the guest (setup and install $D_SETUP s)"
summary
