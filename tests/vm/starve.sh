#!/bin/bash
# Starvation: no client may take what other clients need.  nobody's calls
# whose arguments lie in a FUSE file that stalls (stallfs: its reads wait
# 24 s) hold every thread that copies them; another user's TEST UNIT READY
# must still be answered while that stall is in progress, on the kernel's
# own node as on the node.  Then one user opening the node until it fails
# must meet its bound (ENOMEM, sg's answer when it cannot allocate a file)
# while others still open and are served.  Each attack is run on the kernel's
# node and on the node, both answers printed,
#
#    kernel sg: probe=OK open_ms=0.3 tur_ms=0.2 | node: probe=OK ...
#
# judged by events (the probe answered while no stalled call has returned
# yet), never by time; latencies are printed only.  Then nobody's 180 files
# each with a read() whose completion's copy stalls must leave another user's
# write() + read() answered.  Last, calls the watchdog answered while their
# copies stall, their file closed meanwhile: when the copies end, the daemon
# touches nothing of that file's.  And one user's data buffers stop at its
# quarter of --max-memory, where root's go on.  Sections (cost, stall,
# limits, copies, answered, memory) after the daemon run only those:
#
#    tests/vm/vm-run tests/vm/starve.sh [/path/to/cuse_bsg [cost ...]]
set -uo pipefail
. "$(dirname "$0")/guest-lib.sh"
. "$(dirname "$0")/node-lib.sh"

T0=$SECONDS
CUSE_BSG=${1:-$PWD/build/cuse_bsg}
ONLY=("${@:2}")
STARVE=$PWD/build/clients/starve
SECPROBE=$PWD/build/clients/secprobe
STALLFS=$PWD/build/clients/stallfs
BIND=$PWD/build/clients/bsgbind
STATE=/tmp/stallfs
MNT=/tmp/stall
CTL=/dev/bsg-control
STALL_S=24
THREADS=160 # more than a node's 128 libfuse workers
# more than a user's share of 32 copy threads, fewer than scsi_debug's 192
# tags, so that every READ is written before the first completes
READERS=180
FILES=0
AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
AS_OTHER=(setpriv --reuid=65533 --regid=65533 --clear-groups --inh-caps=-all)

section() {
    local id=$1 title=$2
    shift 2
    [ ${#ONLY[@]} -eq 0 ] || [[ " ${ONLY[*]} " == *" $id "* ]] || return 0
    vm_log "$title"
    "$@"
}

# ---- the stalling file system ----

stall_events() { # stall_events begin|end: stalled calls of stallfs begun, or ended
    if [ -e "$STATE/events" ]; then grep -c "^$1\$" "$STATE/events"; else echo 0; fi
}
stalling() { [ "$(stall_events begin)" -gt 0 ]; }

mount_stallfs() {
    mkdir -p "$STATE" "$MNT"
    "$STALLFS" "$STATE" "$STALL_S" "$MNT" -o allow_other,attr_timeout=0,entry_timeout=0 \
        >"$VM_OUT/stallfs.log" 2>&1 &
    vm_wait 10 mountpoint -q "$MNT" || vm_fail "stallfs did not mount: $(cat "$VM_OUT/stallfs.log")"
}

# in_calls PID NR N: N threads of PID or more sleep in system call NR
in_calls() {
    local n
    n=$(grep -l "^$2 " /proc/"$1"/task/*/syscall 2>/dev/null | wc -l)
    [ "$n" -ge "$3" ]
}

# attack MODE NODE NEED PROBE...: nobody's THREADS calls of MODE on one open
# file of NODE, their arguments in a file of stallfs no one has read yet;
# once NEED of them are in their calls and the stall has begun, PROBE runs
# as another user.  Sets RESULT to "PROBE's answer, stall still in progress: yes|no",
# AFTER to a probe made once the stall was released and every call of the
# attacker answered, and TALLY to the attacker's answers.
attack() {
    local mode=$1 node=$2 need=$3 pid nr=16 probe ended
    shift 3
    [ "$mode" != write ] || nr=1
    FILES=$((FILES + 1))
    rm -f "$STATE/release" "$STATE/events"
    "${AS_NOBODY[@]}" "$STARVE" attack "$mode" "$node" "$MNT/f$FILES" "$THREADS" \
        >/tmp/attack.out 2>&1 &
    pid=$!
    vm_wait 30 grep -q started= /tmp/attack.out || vm_fail "attacker: $(cat /tmp/attack.out)"
    vm_wait 30 stalling || vm_fail "no stall began ($mode on $node)"
    vm_wait 30 in_calls "$pid" "$nr" "$need" ||
        vm_fail "not $need calls in progress ($mode on $node): $(wchans "$pid")"
    probe=$(bounded 30 "${AS_OTHER[@]}" "$@" | tr '\n' ' ')
    ended=$(stall_events end)
    RESULT="${probe% }, stall in progress: $([ "$ended" -eq 0 ] && echo yes || echo "no ($ended ended)")"
    touch "$STATE/release"
    timeout 120 tail -s 0.1 --pid="$pid" -f /dev/null || vm_fail "attacker did not end: $(wchans "$pid")"
    TALLY=$(tail -n1 /tmp/attack.out)
    AFTER=$(bounded 30 "${AS_OTHER[@]}" "$@" | tr '\n' ' ')
    AFTER=${AFTER% }
}

wchans() { cat /proc/"$1"/task/*/wchan 2>/dev/null | sort | uniq -c | tr '\n' ' '; }

# stall_mode MODE: the attack on the kernel's node, then on the node.  sg
# takes 16 commands a file (SG_MAX_QUEUE) and answers EDOM past them before
# it reads the header or CDB: on it only 16 SG_IO or write() calls stall.
stall_mode() {
    local mode=$1 k ka kt n na nt need=$THREADS
    [ "$mode" = timeout ] || need=16
    attack "$mode" "$VM_SG" "$need" "$STARVE" probe "$VM_SG"
    k=$RESULT ka=$AFTER kt=$TALLY
    attack "$mode" "$NODE" "$THREADS" "$STARVE" probe "$NODE"
    n=$RESULT na=$AFTER nt=$TALLY
    echo "   kernel sg: $k | node: $n"
    echo "   attacker:  kernel sg: $kt | node: $nt"
    echo "   after the stall, a new open + TUR: kernel sg: $ka | node: $na"
    check "$mode: another user's TUR is answered while nobody's $THREADS calls stall (kernel sg too)" \
        bash -c "[[ '$n' == 'probe=OK '*'in progress: yes' && '$k' == 'probe=OK '*'in progress: yes' ]]"
    check "$mode: after the stall, a new open + TUR is answered" \
        bash -c "[[ '$na' == probe=OK* && '$ka' == probe=OK* ]]"
}

# BSG_IOC_ADD of a descriptor of a stalling file: the kernel has no control node
stall_add() {
    local pid
    "$CUSE_BSG" -f -v --control --mode 0666 >>"$VM_OUT/daemon-control.log" 2>&1 &
    pid=$!
    vm_wait 30 test -c "$CTL" || vm_fail "$CTL did not appear"
    # one BSG_IOC_ADD binds at a time; the others get EBUSY at once
    attack add "$CTL" 1 "$BIND" "$CTL" bind "$VM_SG" ro
    echo "   kernel: (no control node) | node: $RESULT"
    echo "   attacker: $TALLY"
    echo "   after the stall, a new bind + INQUIRY: $AFTER"
    check "add: another user's BSG_IOC_ADD + INQUIRY is answered while nobody's $THREADS calls stall" \
        bash -c "[[ '$RESULT' == 'bind=OK '*'inquiry=OK '*'in progress: yes' ]]"
    check "add: after the stall, a new bind is answered" \
        bash -c "[[ '$AFTER' == 'bind=OK '*'inquiry=OK'* ]]"
    check "add: the daemon logged one refusal per descriptor, naming it" \
        grep -q "BSG_IOC_ADD refused: $MNT/f$FILES" "$VM_OUT/daemon-control.log"
    kill -TERM "$pid"
    wait "$pid" || vm_fail "the control daemon exited $? on SIGTERM"
}

stall() {
    mount_stallfs
    node_start bsg/starve "$VM_SG" --mode 0666
    for mode in sgio timeout write; do
        stall_mode "$mode"
    done
    check "the daemon's threads came back: no call of nobody's left running" \
        vm_wait 30 node_settled 0
    echo "   daemon threads now: $(grep Threads /proc/"$NODE_PID"/status | cut -f2)"
    node_stop
    stall_add
    fusermount3 -u "$MNT" 2>/dev/null || umount "$MNT"
}

# ---- copies into parked readers ----

# copies_on NODE PID [packid]: nobody's $READERS files of NODE (or CTL=DEV)
# each have a read() waiting, whose completion's copy stalls in stallfs
# memory; once the stall has begun, another user's write() + read()
# completes.  PID: the daemon's, whose threads stalled are counted, or ''.
# packid: the READs complete first, then each read() asks for its pack_id.
# Sets RESULT, TALLY, THREADS_AT
copies_on() {
    local node=$1 daemon=$2 how=${3:-} pid probe ended delay=/sys/bus/pseudo/drivers/scsi_debug/delay
    FILES=$((FILES + 1))
    rm -f "$STATE/release" "$STATE/events"
    # every READ written before the first completes (10 s in jiffies, the
    # Debian kernel's HZ=250): once nobody's copies stall, its further calls,
    # these writes too, wait for its share of threads (share.h)
    [ -n "$how" ] || echo 2500 >"$delay" || vm_fail "cannot set scsi_debug delay"
    "${AS_NOBODY[@]}" "$STARVE" readers "$node" "$MNT/f$FILES" "$READERS" ${how:+"$how"} >/tmp/readers.out 2>&1 &
    pid=$!
    vm_wait 60 grep -q started= /tmp/readers.out || vm_fail "readers: $(cat /tmp/readers.out)"
    vm_wait 30 stalling || vm_fail "no stall began (readers on $node)"
    vm_wait 30 bash -c "echo 0 >$delay" 2>/dev/null || vm_fail "cannot reset scsi_debug delay"
    # the daemon's threads waiting for a page of the stalled file
    sleep 1
    THREADS_AT=$([ -z "$daemon" ] || grep -l folio_wait /proc/"$daemon"/task/*/wchan | wc -l)
    probe=$(bounded 30 "${AS_OTHER[@]}" "$STARVE" probe-rw "$node" | tr '\n' ' ')
    ended=$(stall_events end)
    RESULT="${probe% }, stall in progress: $([ "$ended" -eq 0 ] && echo yes || echo "no ($ended ended)")"
    touch "$STATE/release"
    timeout 120 tail -s 0.1 --pid="$pid" -f /dev/null || vm_fail "readers did not end: $(wchans "$pid")"
    TALLY=$(tail -n1 /tmp/readers.out)
}

# copies_case NAME KERNEL-NODE NODE PID [packid]: the checks of one case
copies_case() {
    local name=$1 knode=$2 node=$3 daemon=$4 how=${5:-} k kt n nt
    copies_on "$knode" '' "$how"
    k=$RESULT kt=$TALLY
    copies_on "$node" "$daemon" "$how"
    n=$RESULT nt=$TALLY
    echo "   $name: another user's write() + read(): kernel sg: $k | node: $n"
    echo "   $name: nobody's readers: kernel sg: $kt | node: $nt"
    echo "   $name: daemon threads stalled in nobody's memory: $THREADS_AT (its share: 32)"
    check "copies, $name: another user's completion is delivered to its read() while nobody's $READERS copies stall (kernel sg too)" \
        bash -c "[[ '$n' == 'probe=OK '*'in progress: yes' && '$k' == 'probe=OK '*'in progress: yes' ]]"
    # a copy stalled past the guard's bound (10 s) is answered EFAULT
    check "copies, $name: every reader of nobody's is answered once the stall ends (EFAULT past the copies' bound)" \
        bash -c "[[ '$kt' == 'readers: OK=$READERS' ]] && [ \$((\$(sed -E 's/^readers://; s/ (OK|EFAULT)=/+/g' <<<'$nt'))) -eq $READERS ]"
    check "copies, $name: nobody's stalled copies hold at most its share of threads (32)" \
        test "$THREADS_AT" -ge 1 -a "$THREADS_AT" -le 32
}

copies() {
    local pid
    mount_stallfs
    node_start bsg/starve "$VM_SG" --mode 0666
    copies_case "a node" "$VM_SG" "$NODE" "$NODE_PID"
    copies_case "SG_SET_FORCE_PACK_ID" "$VM_SG" "$NODE" "$NODE_PID" packid
    check "copies: the daemon's threads came back" vm_wait 30 node_settled 0
    node_stop
    "$CUSE_BSG" -f -v --control --mode 0666 >>"$VM_OUT/daemon-control.log" 2>&1 &
    pid=$!
    vm_wait 30 test -c "$CTL" || vm_fail "$CTL did not appear"
    # a binding's written commands run on the shared pool, which a slowed
    # device would hold: its READs complete first, then each is read by pack_id
    copies_case "control bindings" "$VM_SG" "$CTL=$VM_SG" "$pid" packid
    kill -TERM "$pid"
    wait "$pid" || vm_fail "the control daemon exited $? on SIGTERM"
    fusermount3 -u "$MNT" 2>/dev/null || umount "$MNT"
}

# ---- a call the watchdog answered, its file closed, its copy still stalled ----

stalls_ended() { [ "$(stall_events end)" -ge "$(stall_events begin)" ]; }

released_while_stalled() {
    local s
    s=$(node_stats)
    [ "$(stall_events end)" -eq 0 ] && [ "$(stats_field open "$s")" -eq "$(stats_field release "$s")" ]
}

# answered: nobody's SG_IO calls, their headers in stallfs, are answered
# EFAULT by the watchdog (--copy-timeout 1) while their copies stall; the
# attacker then exits and its file is released, the copies still stalled.
# When they end, the daemon (the ASan build) must touch nothing of the
# released file's, and serve on.
answered() {
    local pid tally
    mount_stallfs
    CUSE_BSG=$PWD/build/cuse_bsg.asan node_start bsg/answered "$VM_SG" --mode 0666 --copy-timeout 1
    FILES=$((FILES + 1))
    rm -f "$STATE/release" "$STATE/events"
    "${AS_NOBODY[@]}" "$STARVE" attack sgio "$NODE" "$MNT/f$FILES" 4 >/tmp/attack.out 2>&1 &
    pid=$!
    vm_wait 30 stalling || vm_fail "no stall began: $(cat /tmp/attack.out)"
    timeout 60 tail -s 0.1 --pid="$pid" -f /dev/null || vm_fail "attacker did not end: $(wchans "$pid")"
    tally=$(tail -n1 /tmp/attack.out)
    check "answered: each stalled SG_IO got EFAULT from the watchdog ($tally)" \
        test "$tally" = "sgio: EFAULT=4"
    check "answered: the attacker's file was released while its copies still stall" \
        vm_wait 10 released_while_stalled
    echo "   daemon, the copies still stalled: $(node_stats)"
    touch "$STATE/release"
    check "answered: the stalled copies end" vm_wait 30 stalls_ended
    check "answered: then the daemon settles, the opener gone with its calls" \
        vm_wait 30 node_settled 0
    check "answered: and serves" bash -c "$STARVE probe $NODE | grep -q probe=OK"
    check "answered: no memory error in the daemon (ASan)" bash -c "! grep -q AddressSanitizer '$NODE_LOG'"
    node_stop
    fusermount3 -u "$MNT" 2>/dev/null || umount "$MNT"
}

# ---- what an open file costs, and the bounds on them ----

no_openers() { [ "$(node_stat openers)" = 0 ] && [ "$(node_stat at_target)" = 0 ]; }

fds_of() { find /proc/"$1"/fd -mindepth 1 | wc -l; }
slab_kb() { sed -n 's/^Slab: *\([0-9]*\) kB/\1/p' /proc/meminfo; }
rss_kb() { sed -n 's/^VmRSS:\s*\([0-9]*\) kB/\1/p' /proc/"$1"/status; }

# cost_of NODE N [PID]: nobody holds N files of NODE open; sets COST to what
# they cost the kernel (slab) and, given the daemon's PID, the daemon
cost_of() {
    local node=$1 n=$2 pid=${3:-} f0=0 s0 r0=0 f1=0 s1 r1=0 holder
    sync
    echo 3 >/proc/sys/vm/drop_caches
    [ -z "$pid" ] || { f0=$(fds_of "$pid"); r0=$(rss_kb "$pid"); }
    s0=$(slab_kb)
    "${AS_NOBODY[@]}" bash -c "ulimit -n $((n + 3)) && exec $STARVE flood $node hold" \
        >/tmp/flood.out 2>&1 &
    holder=$!
    vm_wait 60 grep -q opened= /tmp/flood.out || vm_fail "flood: $(cat /tmp/flood.out)"
    s1=$(slab_kb)
    [ -z "$pid" ] || { f1=$(fds_of "$pid"); r1=$(rss_kb "$pid"); }
    COST_FDS=$((f1 - f0))
    COST="$(cat /tmp/flood.out): kernel slab +$(((s1 - s0) * 1024 / n)) bytes a file"
    [ -z "$pid" ] || COST="$COST, daemon +$(awk -v a=$((f1 - f0)) -v n="$n" 'BEGIN { printf "%.2f", a / n }') descriptors and +$(((r1 - r0) * 1024 / n)) bytes RSS a file"
    kill -TERM "$holder"
    wait "$holder"
}

cost() {
    node_start bsg/starve "$VM_SG" --mode 0666
    cost_of "$VM_SG" 500
    echo "   kernel sg, 500 opens: $COST"
    cost_of "$NODE" 500 "$NODE_PID"
    echo "   node, 500 opens: $COST"
    # the opener's pidfd; a few more are the epoll sets of libfuse workers started meanwhile
    check "nobody's 500 files of the node open: the daemon holds one descriptor a file ($COST_FDS)" \
        test "$COST_FDS" -le $((500 + 16))
    node_stop
}

# flood_hold OUT AS...: open the node as AS until it fails, and hold the files
flood_hold() {
    local out=$1
    shift
    "$@" bash -c "ulimit -n 4096 && exec $STARVE flood $NODE hold" >"$out" 2>&1 &
    HOLDERS+=("$!")
    vm_wait 60 grep -q opened= "$out" || vm_fail "flood: $(cat "$out")"
}

limits() {
    local n=0 f other kernel
    HOLDERS=()
    node_start bsg/starve "$VM_SG" --mode 0666 --max-files 1500 --max-files-per-user 1024
    for f in 1 2 3 4; do
        flood_hold "/tmp/flood$f" "${AS_NOBODY[@]}"
        n=$((n + $(sed -n 's/^opened=\([0-9]*\).*/\1/p' "/tmp/flood$f")))
    done
    kernel=$(bounded 60 "${AS_NOBODY[@]}" bash -c "ulimit -n 4096 && exec $STARVE flood $VM_SG")
    echo "   nobody, 4 processes opening until it fails: kernel sg (one process):" \
        "$kernel | node: $n files, then $(sed -n 's/.*errno=//p' /tmp/flood4)"
    check "nobody holds --max-files-per-user (1024) files of the node, then ENOMEM (sg's answer when it cannot allocate)" \
        bash -c "[ $n -eq 1024 ] && grep -q errno=ENOMEM /tmp/flood4"
    check "one log line for it, naming the option" \
        grep -q "open refused: its files open are at --max-files-per-user: ENOMEM" "$NODE_LOG"
    check "while nobody holds them, another user opens and is served" \
        bash -c "$(printf '%q ' "${AS_OTHER[@]}") $STARVE probe $NODE | grep -q probe=OK"
    flood_hold /tmp/flood-other "${AS_OTHER[@]}"
    other=$(cat /tmp/flood-other)
    echo "   another user then: $other"
    check "another user gets the rest of --max-files (1500 - 1024 = 476), then ENOMEM" \
        test "$other" = "opened=476 errno=ENOMEM"
    check "root still opens past --max-files and is served, as root passes the kernel's file-max" \
        bash -c "$STARVE probe $NODE | grep -q probe=OK"
    echo "   daemon with 1500 files open: $(fds_of "$NODE_PID") descriptors, RSS $(rss_kb "$NODE_PID") kB"
    kill -TERM "${HOLDERS[@]}"
    wait "${HOLDERS[@]}"
    # node_settled counts the refused opens as open: no opener left is the test here
    check "all closed: the daemon settles with no open file left" vm_wait 30 no_openers
    check "and a new open is served" bash -c "$STARVE probe $NODE | grep -q probe=OK"
    node_stop
}

# ---- memory per user ----

# headers_taken OUT: how many headers secprobe v4-flood's write() took
headers_taken() { sed -n 's/.*(\([0-9]*\) headers).*/\1/p' <<<"$1"; }

memory() {
    local mib=$((1 << 20)) nobody root
    node_start bsg/starve "$VM_SG" --mode 0666 --max-memory 16M
    # one write() of 16 READs of 1 MiB: its data buffers are charged as it takes them
    nobody=$(bounded 30 "${AS_NOBODY[@]}" "$SECPROBE" v4-flood "$NODE" 16 $mib)
    root=$(bounded 30 "$SECPROBE" v4-flood "$NODE" 16 $mib)
    echo "   --max-memory 16M: nobody: $nobody | root: $root"
    check "nobody's write() takes its user's quarter of --max-memory (4 MiB: 4 headers), a short count" \
        test "$(headers_taken "$nobody")" = 4
    check "one log line says whose bound" grep -q "are past its user's memory bound: ENOMEM" "$NODE_LOG"
    check "root passes the user's bound, as it passes --max-files: more than 4 headers" \
        test "$(headers_taken "$root")" -gt 4
    node_stop
}

vm_load_scsi_debug dev_size_mb=16
chmod 0666 "$VM_SG"
section cost "what one open file costs: descriptors and kernel memory" cost
section stall "calls stalled in a client's memory take only their own share of threads" stall
section limits "open files per user and in all (--max-files-per-user, --max-files)" limits
section copies "copies into parked readers take only their user's share of threads" copies
section answered "a call the watchdog answered: its file released while its copy stalls" answered
section memory "data buffers per user: a quarter of --max-memory" memory
echo "starve suite took $((SECONDS - T0)) s in the guest"
summary
