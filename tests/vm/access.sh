#!/bin/bash
# Who may send what: an unprivileged user with group access to a 0660 node
# against the kernel's bsg node given the same access; the policy file; the
# daemon's own capabilities; the live view: its figures, table and watch
# mode, who may see a node and an opener (ACLs, hidepid), and its socket
# against stalling, trickling and crowding clients and a runtime directory
# that is not root's.
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
# another user in group disk
other_user() { setpriv --reuid=65533 --regid=65533 --groups="$DISK_GID" --inh-caps=-all "$@"; }
# shows_node CMD...: CMD (a show command) prints the node's block
shows_node() { "$@" show "${NODE#/dev/}" 2>/dev/null | grep -q '^Node: '; }
# opener_listed PID: nobody's view lists that opener of the node
# shellcheck disable=SC2016 # jq's own $variables
opener_listed() {
    as_user "${CTL[@]}" show --json "${NODE#/dev/}" |
        jq -e --argjson p "$1" '.[0].nodes[0].openers | any(.pid == $p)' >/dev/null
}

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
    # SG_SCSI_RESET), CAP_CHOWN (0): --group, CAP_SETGID (6) and CAP_SETUID (7): the live view
    want=00000000002a00c5
    check "the daemon keeps only CAP_CHOWN, CAP_DAC_READ_SEARCH, CAP_SETGID, CAP_SETUID, CAP_SYS_RAWIO, CAP_SYS_PTRACE, CAP_SYS_ADMIN ($eff)" \
        test "$eff" = "$want"
    check "and says so" grep -q 'capabilities kept: CAP_CHOWN CAP_DAC_READ_SEARCH CAP_SETGID CAP_SETUID CAP_SYS_RAWIO CAP_SYS_PTRACE CAP_SYS_ADMIN' \
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
    sg_turs -n 2 "$NODE" &
    tur=$!
    check "show --json: nobody's client, pid $held uid 65534, 8 commands in flight" \
        vm_wait 30 opener_is "$held" 65534 0 8
    check "... root's SG_IO (sg_turs -n 2, pid $tur): a call running, nothing written" \
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
        grep -qF "pid $held (sgasync), user nobody (65534)" <<<"$out"
    check "... its commands" grep -qF "commands 8, read 4 KiB, written 0 B, errors 0, refused 0; queued 8, in flight 0, calls 0" <<<"$out"
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

# the view's figures: the time, the device, commands, data, errors and
# latency, the node's and an opener's (as nobody asks)
# shellcheck disable=SC2016 # jq's own $variables
live_fields() {
    local json serial t0 held job
    serial=$(sg_inq -p 0x80 "$VM_SG" 2>/dev/null | sed -n 's/^ *Unit serial number: *//p')
    as_user sg_raw -R -r 512 -o /dev/null "$NODE" "${READ10[@]}" >/dev/null 2>&1
    sg_raw -s 512 -i /tmp/blk "$NODE" "${WRITE10[@]}" >/dev/null 2>&1
    sg_raw "$NODE" ff 00 00 00 00 00 >/dev/null 2>&1 # no such opcode: CHECK CONDITION
    t0=$(date +%s)
    as_user "$SGASYNC" hold "$NODE" 8 >/tmp/hold2.out 2>&1 &
    job=$!
    vm_wait 30 grep -q 'held 8, pid ' /tmp/hold2.out || vm_fail "the client did not write"
    held=$(sed -n 's/^held 8, pid //p' /tmp/hold2.out)
    vm_wait 30 opener_is "$held" 65534 8 0 0 || vm_fail "the client's commands did not end"
    json=$(as_user "${CTL[@]}" show --json "${NODE#/dev/}")
    check "show --json: the answer's time, ISO 8601 and in ns" jq -e --argjson t "$t0" \
        '.[0] | (.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")) and
         .time_ns / 1e9 >= $t and .time_ns / 1e9 < $t + 120' <<<"$json"
    check "... the device as read at start: Linux scsi_debug, serial '$serial', 16 MiB" \
        jq -e --arg s "$serial" '.[0].nodes[0].device | .vendor == "Linux" and
         .product == "scsi_debug" and (.revision | length > 0) and .size == 16777216 and
         $s != "" and .serial == $s' <<<"$json"
    check "... the node's commands, data read and written, errors and refusals" jq -e \
        '.[0].nodes[0].io | .commands >= 10 and .read_bytes >= 512 and .written_bytes >= 512 and
         .errors >= 1 and .refused >= 3' <<<"$json"
    # the node's window in ticks, as sg counts a command's time (0 for a fast one)
    check "... the latency window: p50 <= p99 <= max, the node's and the device's" jq -e \
        '.[0].nodes[0] | .latency_window_s == [10, 20] and
         (.latency_us | .commands >= 8 and .p50 <= .p99 and .p99 <= .max) and
         (.device_latency_us | .commands >= 8 and .p50 > 0 and .p50 <= .p99 and
          .p99 <= .max)' <<<"$json"
    check "... the opener: its process, user and group names, when it opened, its 8 commands" \
        jq -e --argjson p "$held" --argjson t "$t0" '.[0].nodes[0].openers[] | select(.pid == $p) |
         .comm == "sgasync" and .user == "nobody" and .uid == 65534 and .gid == 65534 and
         (.group | type == "string") and .opened_s >= $t - 1 and (.opened | endswith("Z")) and
         .io.commands == 8 and .io.errors == 0 and .io.read_bytes == 4096' <<<"$json"
    [ "$FAILED" -eq 0 ] || jq . <<<"$json"
    kill "$held"
    wait "$job"
}

# node_commands: the commands the node has sent to its device (the view, as root)
node_commands() { "${CTL[@]}" show --json "${NODE#/dev/}" | jq '.[0].nodes[0].io.commands'; }
# node_busier BEFORE N: N commands more than BEFORE since
node_busier() { [ "$(node_commands)" -ge $(($1 + $2)) ]; }

# the table, and --watch's rates: one line a node and an interval when
# stdout is no terminal, in place on one
live_watch() {
    local out tty load
    out=$(as_user "$PWD/build/cuse_bsg" --show --table)
    check "show --table: a heading, then the node's line with its device" bash -c \
        "head -1 <<<'$out' | grep -q '^NODE .* CMDS .* P99' &&
         grep -q '^bsg/acc-cuse  *Linux scsi_debug ' <<<'$out'"
    (while :; do as_user sg_turs -n 20 "$NODE" >/dev/null 2>&1; done) &
    load=$!
    vm_wait 20 node_busier "$(node_commands)" 20 || vm_fail "the TURs did not run"
    out=$(as_user "$PWD/build/cuse_bsg" --show --watch 2 --count 3 "${NODE#/dev/}")
    kill "$load"
    wait "$load" 2>/dev/null
    printf '    %s\n' "$out"
    check "--watch 2 --count 3, not a terminal: a heading, then 3 stamped lines of the node" \
        bash -c "[ \$(grep -c '^TIME .*CMD/S.*READ/S' <<<'$out') -eq 1 ] &&
         [ \$(grep -cE '^[0-9-]{10}T[0-9:]{8}Z bsg/acc-cuse  *Linux scsi_debug' <<<'$out') -eq 3 ]"
    check "... with its commands a second over the interval (TURs running: 2 of 3 at least)" \
        bash -c "grep -E '^[0-9-]{10}T[0-9:]{8}Z bsg/acc-cuse  *Linux' <<<'$out' |
         awk '{ busy += \$6 + 0 > 0 } END { exit busy < 2 }'"
    tty=$(script -qec "$PWD/build/cuse_bsg --show --watch 1 --count 2" /dev/null)
    check "... on a terminal: the screen cleared and redrawn each time, as top" bash -c \
        "[ \$(grep -c \$'\e\\[H\e\\[J' <<<'$tty') -eq 2 ] && grep -q 'every 1 s: rates over' <<<'$tty'"
    out=$("$PWD/build/cuse_bsg" --show --json --watch 1 --count 2)
    check "--json --watch: one JSON array a line, each answer with its time" bash -c \
        "[ \$(wc -l <<<'$out') -eq 3 ] && jq -se 'length == 3 and all(.[]; .[0].time_ns > 0)' <<<'$out' >/dev/null"
}

# acl_deny UID: a POSIX ACL on the node that gives user UID nothing (the
# group's rw kept), written as the kernel takes it (setfacl is not needed)
acl_deny() {
    python3 -c 'import os, struct, sys
e = [(1, 6, 0xffffffff), (2, 0, int(sys.argv[2])), (4, 6, 0xffffffff), (16, 6, 0xffffffff),
     (32, 0, 0xffffffff)]
os.setxattr(sys.argv[1], "system.posix_acl_access",
            struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *x) for x in e))' "$NODE" "$1"
}

# the view as strict as the node: an ACL that refuses nobody refuses the
# view too; an opener whose process /proc hides (hidepid=2) is not listed
live_strict() {
    local out rc sleeper
    acl_deny 65534 || vm_fail "cannot set an ACL on $NODE"
    rc=0
    as_user sg_turs "$NODE" >/dev/null 2>&1 || rc=$?
    check "an ACL refuses nobody the node (sg_turs status $rc)" test "$rc" -ne 0
    rc=0
    out=$(as_user "${CTL[@]}" show "${NODE#/dev/}" 2>&1) || rc=$?
    check "... and the view: permission denied, status $rc, nothing shown" \
        bash -c "[ $rc -eq 1 ] && grep -q 'permission denied' <<<'$out' && ! grep -q Node: <<<'$out'"
    check "... while root still sees it" shows_node "${CTL[@]}"
    python3 -c 'import os, sys; os.removexattr(sys.argv[1], "system.posix_acl_access")' "$NODE"
    check "... and nobody again once the ACL is gone" shows_node as_user "${CTL[@]}"
    # shellcheck disable=SC2016 # the inner shell's own $1
    bash -c 'exec 3<"$1"; exec sleep 60' sleeper "$NODE" &
    sleeper=$!
    check "root's opener (sleep, pid $sleeper) listed to nobody while /proc shows it" \
        vm_wait 10 opener_listed "$sleeper"
    mount -o remount,hidepid=2 /proc || vm_fail "cannot remount /proc with hidepid=2"
    out=$(as_user "${CTL[@]}" show --json "${NODE#/dev/}")
    mount -o remount,hidepid=0 /proc
    # shellcheck disable=SC2016 # jq's own $variables
    check "... not listed once /proc hides it (hidepid=2), the node still shown" \
        jq -e --argjson p "$sleeper" '.[0].nodes[0] | (.openers | any(.pid == $p) | not) and
         .openers_alive >= 1' <<<"$out"
    kill "$sleeper"
    wait "$sleeper" 2>/dev/null
}

# the socket: a request trickled in is cut at its whole deadline; one user's
# connections are bounded, and neither keeps root or another user out
live_socket() {
    local sock='/run/cuse-bsg/bsg!acc-cuse.sock' out crowd
    out=$(as_user python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
t0 = time.monotonic()
try:
    while time.monotonic() - t0 < 10:
        s.send(b"t")
        time.sleep(0.2)
        s.settimeout(0.01)
        try:
            if s.recv(1) == b"":
                break
        except socket.timeout:
            pass
except OSError:
    pass
print("%.1f" % (time.monotonic() - t0))' "$sock")
    check "a request trickled a byte every 0.2 s is cut at its deadline, 1 s (after $out s)" \
        awk -v t="$out" 'BEGIN { exit !(t >= 0.9 && t < 2.5) }'
    # nobody keeps 40 silent connections asked for: one closed (by the
    # request's deadline, or at once) is made again, for a minute
    as_user python3 -c 'import select, socket, sys, time
def conn():
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(sys.argv[1])
    except OSError:  # the daemon is gone: the test is over
        sys.exit(0)
    return s, time.monotonic()
held = [conn() + (True,) for i in range(40)]
lived = []
t0 = time.monotonic()
while time.monotonic() - t0 < 60:
    r, _, _ = select.select([h[0] for h in held], [], [], 0.2)
    for k, (s, since, first) in enumerate(held):
        if s not in r:
            continue
        try:
            d = s.recv(1)
        except OSError:
            d = b""
        if d == b"":
            if first:
                lived.append(time.monotonic() - since)
                if len(lived) == 40:
                    print("kept", sum(x >= 0.8 for x in lived), "closed at once",
                          sum(x < 0.8 for x in lived), flush=True)
            s.close()
            held[k] = conn() + (False,)
' "$sock" >/tmp/crowd.out &
    crowd=$!
    vm_wait 30 grep -q '^kept' /tmp/crowd.out || vm_fail "the crowding client did not report"
    check "nobody's 40 silent connections: 4 kept to their deadline, 36 closed at once ($(cat /tmp/crowd.out))" \
        grep -qx 'kept 4 closed at once 36' /tmp/crowd.out
    check "... root's view meanwhile, as nobody keeps trying" bounded 10 shows_node "${CTL[@]}"
    check "... another user's too" bounded 10 shows_node other_user "${CTL[@]}"
    kill "$crowd"
    wait "$crowd" 2>/dev/null
    check "the socket: root's, mode 0666, no private directory left behind" bash -c \
        "[ \"\$(stat -c %U:%a '$sock')\" = root:666 ] && ! ls -a /run/cuse-bsg | grep -q '^\.live'"
}

# a runtime directory that is not root's own, or not a directory: no live
# view (said in the log), no socket put there, and the node serves on
live_dir() {
    local case setup n0
    node_stop
    for case in symlink owner mode; do
        rm -rf /run/cuse-bsg /tmp/evil
        mkdir -m 0777 /tmp/evil
        case $case in
            symlink) setup="ln -s /tmp/evil /run/cuse-bsg" ;;
            owner) setup="mkdir -m 0755 /run/cuse-bsg && chown 65534 /run/cuse-bsg" ;;
            mode) setup="mkdir -m 0777 /run/cuse-bsg" ;;
        esac
        bash -c "$setup" || vm_fail "cannot make the $case case"
        n0=$(grep -c 'no live view' "$NODE_LOG")
        # the /proc check: a start without BPF programs to load, quicker
        node_start bsg/acc-cuse "$VM_SG" --mode 0660 --group disk --cred-check=procfs
        check "runtime directory, $case: no live view, said in the log" \
            vm_lines_over "$n0" "$NODE_LOG" "no live view (cuse_bsg --show): /run/cuse-bsg"
        check "... no socket put there" bash -c '! ls -A /tmp/evil /run/cuse-bsg/ 2>/dev/null | grep -q sock'
        check "... the node serves on" sg_turs "$NODE"
        node_stop
    done
    rm -rf /run/cuse-bsg /tmp/evil
    node_start bsg/acc-cuse "$VM_SG" --mode 0660 --group disk --cred-check=procfs
    check "runtime directory missing: made, root's, 0755, not a link" bash -c \
        "[ \"\$(stat -c %F:%U:%a /run/cuse-bsg)\" = directory:root:755 ] && [ -S '/run/cuse-bsg/bsg!acc-cuse.sock' ]"
}

vm_load_scsi_debug dev_size_mb=16
head -c 512 /dev/urandom >/tmp/blk
chmod 0644 /tmp/blk
# the kernel's bsg node, given the same access as ours
{ chgrp disk "$VM_BSG" && chmod 0660 "$VM_BSG"; } || vm_fail "cannot give $VM_BSG to group disk"
CUSE_BSG=$PWD/build/cuse_bsg.asan
node_start bsg/acc-cuse "$VM_SG" --mode 0660 --group disk
check "node is 0660 root:disk" test "$(stat -c %a:%G "$NODE")" = 660:disk
fresh() { "${CTL[@]}" show --json | jq -e '.[0].nodes[0].gate_refused == 0' >/dev/null; }
check "a fresh node: nothing refused, the gate's own proof not counted" fresh
kernel_rule
capabilities
live_view
live_fields
live_watch
live_strict
live_socket
live_dir
node_stop
check "the daemon removed its live-view socket" test ! -e '/run/cuse-bsg/bsg!acc-cuse.sock'
rc=0
out=$("$PWD/build/cuse_bsg" --show 2>&1) || rc=$?
check "no daemon: 'no daemon is running', status $rc" \
    bash -c "[ $rc -eq 1 ] && grep -qx 'cuse_bsg: no daemon is running' <<<'$out'"
CUSE_BSG=$PWD/build/cuse_bsg
policy
echo "access suite took $((SECONDS - T0)) s in the guest"
summary
