#!/bin/bash
# Attacks on the node, each next to the same attack on the kernel's own node
# (/dev/sg0 or its bsg node, given the node's mode and group): the node must
# be at least as strict as the kernel.  Every check prints both answers,
#
#    kernel sg: EPERM | node: EPERM
#
# The daemon is cuse_bsg from this tree, or the one named as the first
# argument; sections (1a ... 13) after it run only those.  CRED_CHECK=MODE
# first (witness, kernel, procfs or auto) starts every daemon with --cred-check MODE:
#
#    tests/vm/vm-run tests/vm/security.sh [CRED_CHECK=MODE] [/path/to/cuse_bsg [4 6 ...]]
#
# The check a node runs (its stats' cred_check=; procfs for a daemon that
# has no other) picks the answers section 4 and 12 expect of it.
set -uo pipefail
. "$(dirname "$0")/guest-lib.sh"
. "$(dirname "$0")/node-lib.sh"

T0=$SECONDS
CRED_CHECK=${CRED_CHECK:-}
case ${1:-} in CRED_CHECK=*) CRED_CHECK=${1#CRED_CHECK=} && shift ;; esac
CUSE_BSG=${1:-$PWD/build/cuse_bsg}
ONLY=("${@:2}") # sections to run (1a 1b ... 12); all without
SECPROBE=$PWD/build/clients/secprobe
CTXPROBE=$PWD/build/clients/ctxprobe
DISK_GID=$(getent group disk | cut -d: -f3)
DISK_GID=${DISK_GID:-6}
# nobody, in group disk only, no capabilities (an array: bounded runs it)
AS_USER=(setpriv --reuid=65534 --regid=65534 --groups="$DISK_GID" --inh-caps=-all)

WRITE10=(2a 00 00 00 00 08 00 00 01 00)
FORMAT=(04 00 00 00 00 00)
COPY_OPTS=() # the bound on a client copy, when the daemon has one
# Section 9's differences from the kernel that are documented (README) and
# cannot be helped, as "what=the node's answer" (secprobe parity's words):
# such a line passes, marked KNOWN.  Every other difference fails.
PARITY_KNOWN=(
    "write-0=ok"                           # FUSE answers a 0-byte write itself
    "read-0=ok then waiting=1"             # ... and a 0-byte read: nothing lost
    "writev-20+68=ret=88"                  # FUSE gathers the iovecs into one write
    "bad-read-buf=errno=EFAULT then read=ok pack_id=5" # refused before the daemon: kept
    "read-ro-buf=errno=EFAULT then waiting=1" # ... a read-only buffer too
    "pread=errno=EAGAIN"                   # CUSE opens no file non-seekable: a read()
    "pwrite=errno=EMSGSIZE"                # ... and a write()
    # section 10 (secprobe ioctls):
    "sgio-guard-Z=errno=EINVAL"            # sg's ENOSYS cannot cross FUSE: bsg's EINVAL
    "sgio-v4-protocol-1=errno=EINVAL"      # sg: ENOSYS; the node takes v4 as bsg does
    "sgio-v4-subprotocol-1=errno=EINVAL"   # ... and refuses its bad protocol as bsg
    "blktrace-start=errno=ENOTTY"          # the node has no request queue to trace
    "blktrace-teardown=errno=ENOTTY"
)

# ---- running and comparing ----

# section ID TITLE FUNCTION [ARGS...]: run it, unless other sections were asked for
section() {
    local id=$1 title=$2
    shift 2
    local t=$SECONDS
    [ ${#ONLY[@]} -eq 0 ] || [[ " ${ONLY[*]} " == *" $id "* ]] || return 0
    vm_log "$title"
    "$@"
    echo "   ($((SECONDS - t)) s)"
}


# raw CMD...: sg_raw's outcome in one word (EPERM, ok, open-failed:ERRNO,
# sent: what the device said, HUNG)
raw() {
    local out rc=0
    out=$(bounded 20 "$@") || rc=$?
    case $out in
        *HUNG*) grep HUNG <<<"$out" ;;
        *"not permitted"*) echo EPERM ;;
        *"Too many open files"*) echo "open-failed:EMFILE" ;;
        *": No such"* | *"Failed to open"* | *"open error"*) echo "open-failed:$(tail -n1 <<<"$out")" ;;
        *) if [ $rc -eq 0 ]; then echo ok; else echo "sent, rc=$rc: $(tail -n1 <<<"$out")"; fi ;;
    esac
}

# verdict NAME EXPECT NODE_ANSWER KERNEL_LABEL KERNEL_ANSWER...: both
# answers side by side; PASS when the node's matches EXPECT (an ERE).  Each
# kernel answer must match it too, or the probe itself is wrong.
verdict() {
    local name=$1 expect=$2 node=$3 line="" bad=""
    shift 3
    while [ $# -ge 2 ]; do
        line+="$1: $2 | "
        [[ $2 =~ $expect ]] || bad+=" $1"
        shift 2
    done
    echo "   ${line}node: $node"
    [ -z "$bad" ] || fail "$name: the kernel's own answer ($bad) is not /$expect/: the probe is wrong"
    if [[ $node =~ $expect ]]; then pass "$name"; else fail "$name"; fi
}

# stricter NAME KERNEL_LABEL KERNEL NODE: at least as strict, line by line
# (lines "what ok" or "what errno=E"): where the kernel refuses with EPERM,
# the node must too.
stricter() {
    local name=$1 label=$2 k=$3 n=$4 what ka na bad=""
    while read -r what ka; do
        na=$(awk -v w="$what" '$1 == w { $1 = ""; sub(/^ /, ""); print }' <<<"$n")
        echo "   $what: $label: $ka | node: ${na:-(none)}"
        if [ "$ka" = "errno=EPERM" ] && [ "$na" != "errno=EPERM" ]; then bad+=" $what"; fi
    done <<<"$k"
    if [ -z "$bad" ]; then pass "$name"; else fail "$name (not refused:$bad)"; fi
}

# parity NAME LABEL KERNEL NODE: line by line, the same answer
parity() {
    local name=$1 label=$2 k=$3 n=$4 what ka na
    while read -r what ka; do
        na=$(awk -v w="$what" '$1 == w { $1 = ""; sub(/^ /, ""); print }' <<<"$n")
        echo "   $label: $what $ka | node: $what ${na:-(none)}"
        if [ "$ka" = "$na" ]; then
            pass "$name: $what"
        elif [[ " ${PARITY_KNOWN[*]} " == *" $what=$na "* ]]; then
            pass "$name: $what differs, as documented (KNOWN)"
        else
            fail "$name: $what differs"
        fi
    done <<<"$k"
}

# wait_blocked PID SYSCALL_NR: PID sleeps in that system call
wait_blocked() {
    vm_wait 10 vm_in_syscall "$1" "$2"
}

# probe_pid FILE: the pid a probe printed with "go", once it has
probe_pid() {
    vm_wait 10 grep -q ' go$' "$1" || return 1
    sed -n 's/^pid=\([0-9]*\) .*go$/\1/p' "$1"
}

# await PID SECONDS: PID has ended (bash reaps its children as they end)
await() {
    timeout "$2" tail -s 0.05 --pid="$1" -f /dev/null
}

# node_end: node_stop, or reap a daemon that died under a probe
node_end() {
    local rc=0
    if kill -0 "$NODE_PID" 2>/dev/null; then
        node_stop
        return
    fi
    wait "$NODE_PID" || rc=$?
    echo "   (the daemon had died, status $rc)"
    NODE_PID=''
}

# ---- 1. fail-open at open ----

# wrapper FILE CMD...: a script that runs the daemon under CMD (node_start
# runs $CUSE_BSG), for a daemon started with limits or namespaces
wrapper() {
    local f=$1
    shift
    printf '#!/bin/sh\nexec %s %s "$@"\n' "$*" "$CUSE_BSG" >"$f"
    chmod 0755 "$f"
}

# A daemon held to 1024 descriptors (fs.nr_open 1024 while it starts, so
# that it cannot raise its own limit) runs out of them after some thousand
# openers: the last open that works is the one made at the limit.
fail_open_fds() {
    local k n nr_open
    summ() { # one line from an exhaust run and its sg_raw
        local s cmd
        s=$(sed -n 's/^exhaust //p' <<<"$1")
        cmd=$(sed '/^exhaust /d; /^cmd exit/d' <<<"$1")
        case $cmd in
            *"not permitted"*) cmd=EPERM ;;
            *"Too many open files"*) cmd=open-failed:EMFILE ;;
            *) cmd="[$(tr '\n' ' ' <<<"$cmd")]" ;;
        esac
        echo "$s sg_raw=$cmd"
    }
    nr_open=$(cat /proc/sys/fs/nr_open)
    wrapper /tmp/fd-daemon prlimit --nofile=1024:1024
    echo 1024 >/proc/sys/fs/nr_open
    CUSE_BSG=/tmp/fd-daemon node_start bsg/fd-cuse "$VM_SG" --mode 0660 --group disk
    echo "$nr_open" >/proc/sys/fs/nr_open
    echo "   the daemon's descriptors: $(awk '/^Max open files/ {print $4 " (soft), " $5 " (hard)"}' \
        /proc/"$NODE_PID"/limits)"
    k=$(bounded 300 "${AS_USER[@]}" "$SECPROBE" exhaust "$VM_SG" 6 1000 \
        sg_raw -R -s 512 -i /tmp/blk "$VM_SG" "${WRITE10[@]}")
    n=$(bounded 300 "${AS_USER[@]}" "$SECPROBE" exhaust "$NODE" 6 1000 \
        sg_raw -R -s 512 -i /tmp/blk "$NODE" "${WRITE10[@]}")
    verdict "1a: the daemon out of descriptors: WRITE(10) on a read-only file never succeeds" \
        'writes_ok=0 sg_raw=(EPERM|open-failed)' "$(summ "$n")" "kernel sg" "$(summ "$k")"
    check "1a: ... (the probe did reach the daemon's limit)" grep -q 'open_errno=E' <<<"$n"
    check "1a: ... and the node serves again once they are closed" vm_wait 60 sg_turs "$NODE"
    node_end
}

fail_open_pidns() {
    local k n
    k=$(raw unshare --pid --fork "${AS_USER[@]}" --bounding-set=-all \
        sg_raw -R -s 512 -i /tmp/blk "$VM_SG" "${WRITE10[@]}")
    n=$(raw unshare --pid --fork "${AS_USER[@]}" --bounding-set=-all \
        sg_raw -R -s 512 -i /tmp/blk "$NODE" "${WRITE10[@]}")
    verdict "1b: an opener in a child pid namespace: WRITE(10), read-only file" EPERM "$n" \
        "kernel sg" "$k"
}

# The same seen from the daemon: started in a pid namespace of its own, it
# sees every client as pid 0, whose credentials it cannot read.
fail_open_daemon_pidns() {
    local k n inner
    wrapper /tmp/pidns-daemon unshare --pid --fork --mount-proc --kill-child=SIGTERM
    CUSE_BSG=/tmp/pidns-daemon node_start bsg/pidns-cuse "$VM_SG" --mode 0660 --group disk
    k=$(raw "${AS_USER[@]}" sg_raw -R -s 512 -i /tmp/blk "$VM_SG" "${WRITE10[@]}")
    n=$(raw "${AS_USER[@]}" sg_raw -R -s 512 -i /tmp/blk "$NODE" "${WRITE10[@]}")
    verdict "1b: the daemon in a pid namespace of its own (clients are pid 0 to it): WRITE(10), read-only file" \
        EPERM "$n" "kernel sg" "$k"
    inner=$(pgrep -P "$NODE_PID" | head -n1)
    [ -z "$inner" ] || kill -TERM "$inner"
    await "$NODE_PID" 20 || kill -KILL "$NODE_PID"
    wait "$NODE_PID" 2>/dev/null
    vm_wait 10 test ! -e "$NODE" || vm_fail "$NODE still there after its daemon stopped"
    NODE_PID=''
}

fail_open_groups() {
    local k n g=$DISK_GID i
    for i in $(seq 0 798); do g+=",$((1000000000 + i))"; done
    as_800() {
        setpriv --reuid=65534 --regid=65534 --groups="$g" --inh-caps=-all --bounding-set=-all "$@"
    }
    echo "   /proc/PID/status with 800 groups: $(as_800 cat /proc/self/status | wc -c) bytes"
    k=$(raw as_800 sg_raw -R -s 512 -i /tmp/blk "$VM_SG" "${WRITE10[@]}")
    n=$(raw as_800 sg_raw -R -s 512 -i /tmp/blk "$NODE" "${WRITE10[@]}")
    verdict "1c: 800 supplementary groups: WRITE(10), read-only file" EPERM "$n" "kernel sg" "$k"
}

# ---- 2. a user namespace's capabilities are not the kernel's ----

# userns_case NAME SG_RAW-ARGS-with-@DEV@...
userns_case() {
    local name=$1 k b n
    shift
    k=$(raw "${AS_USER[@]}" unshare -U -r sg_raw -R "${@//@DEV@/$VM_SG}")
    b=$(raw "${AS_USER[@]}" unshare -U -r sg_raw -R "${@//@DEV@/$VM_BSG}")
    n=$(raw "${AS_USER[@]}" unshare -U -r sg_raw -R "${@//@DEV@/$NODE}")
    verdict "2: nobody as root of a user namespace: $name, read-only file" EPERM "$n" \
        "kernel sg" "$k" "bsg" "$b"
}

user_namespace() {
    local f=/proc/sys/kernel/unprivileged_userns_clone
    if [ -e $f ] && [ "$(cat $f)" = 0 ]; then echo 1 >$f; fi
    userns_case "WRITE(10)" -s 512 -i /tmp/blk @DEV@ "${WRITE10[@]}"
    userns_case "FORMAT UNIT" @DEV@ "${FORMAT[@]}"
}

# ---- 3. rights travel with the descriptor? ----

pass_fd() {
    local k n
    # the node's default rule is bsg's (README, docs/POLICY.md): as bsg, the
    # rights of whoever calls, CAP_SYS_RAWIO asked at each command
    k=$(bounded 20 "$SECPROBE" -4 passfd "$VM_BSG")
    n=$(bounded 20 "$SECPROBE" -4 passfd "$NODE")
    stricter "3: root's descriptors passed to nobody (bsg's rule, the default)" "kernel bsg" \
        "$k" "$n"
    check "3: ... bsg refuses all but the write-safe command on the writable file" \
        test "$(grep -c 'errno=EPERM' <<<"$k")" -eq 3
}

pass_fd_sg_rule() {
    local k n
    printf 'kernel sg\n' >/tmp/policy-sg
    node_start bsg/sgrule-cuse "$VM_SG" --mode 0660 --group disk --policy /tmp/policy-sg
    # sg checks only SG_IO on a file not opened O_RDWR, for whoever calls
    k=$(bounded 20 "$SECPROBE" passfd "$VM_SG")
    n=$(bounded 20 "$SECPROBE" passfd "$NODE")
    stricter "3: root's descriptors passed to nobody ('kernel sg' policy: sg's rule)" \
        "kernel sg" "$k" "$n"
    check "3: ... sg refuses the WRITE(10) on the read-only file only" \
        test "$(grep -c 'errno=EPERM' <<<"$k")" -eq 1
    node_stop
}

# ---- 4. read() and write() from another security context ----

contexts() {
    local m k n cap=/tmp/secprobe-cap expect
    cp "$SECPROBE" $cap && chmod 0755 $cap
    setcap cap_net_bind_service+ep $cap || vm_fail "setcap on $cap failed"
    k=$(bounded 20 "${AS_USER[@]}" "$SECPROBE" ctx exec "$VM_SG" $cap)
    n=$(bounded 20 "${AS_USER[@]}" "$SECPROBE" ctx exec "$NODE" $cap)
    verdict "4a: read() after execve() of a program with file capabilities (same uid)" \
        'errno=EPERM buf=intact' "$n" "kernel sg" "$k"
    for m in fork bset capperm capinh groups setuid fork-write; do
        expect='errno=EPERM buf=intact'
        [ $m != fork-write ] || expect='^write errno=EPERM$'
        k=$(bounded 20 "$SECPROBE" ctx $m "$VM_SG")
        n=$(bounded 20 "$SECPROBE" ctx $m "$NODE")
        case $m in
            fork) m="4b: read() in a forked child" ;;
            bset) m="4c: read() after PR_CAPBSET_DROP" ;;
            capperm) m="4d: read() after capset() changed the permitted set" ;;
            capinh) m="4d: read() after capset() changed the inheritable set" ;;
            groups) m="4e: read() after setgroups() changed the 70th of 100 groups" ;;
            setuid) m="4f: read() after setuid(nobody)" ;;
            fork-write) m="4g: write() in a forked child" ;;
        esac
        verdict "$m" "$expect" "$n" "kernel sg" "$k"
    done
    echo "   kernel log: $(dmesg | grep -m1 'changed security contexts' | sed 's/^\[[^]]*\] //')"
}

# Each case of ctxprobe, run against the kernel's sg and the node:
# "ID|WHO|ARGUMENTS (@DEV@: the device)|kernel sg's answer|what", WHO root,
# nobody (AS_USER) or norand (setarch -R: no address-space randomisation).
# Kernel sg's answer is the one found on Debian 12's kernel: any other
# means the probe is wrong.  The node's must be the same, but for the
# differences listed below.
CTX_CASES=(
    "4h|root|change noop-setuid @DEV@|read errno=EPERM buf=intact|read() after a no-op setuid(getuid())"
    "4i|root|change noop-setgroups @DEV@|read errno=EPERM buf=intact|read() after a no-op setgroups() (the same list)"
    "4j|root|change noop-capset @DEV@|read errno=EPERM buf=intact|read() after a no-op capset() (the same sets)"
    "4k|root|change keyctl-join @DEV@|read errno=EPERM buf=intact|read() after KEYCTL_JOIN_SESSION_KEYRING"
    "4l|root|change securebits @DEV@|read errno=EPERM buf=intact|read() after PR_SET_SECUREBITS"
    "4m|root|change keepcaps @DEV@|read errno=EPERM buf=intact|read() after PR_SET_KEEPCAPS"
    "4n|root|change no-new-privs @DEV@|read ret=88 buf=changed|read() after PR_SET_NO_NEW_PRIVS (not a change of credentials)"
    "4o|nobody|change userns @DEV@|read errno=EPERM buf=intact|read() after unshare(CLONE_NEWUSER), the capability sets put back"
    "4p|norand|reexec first @DEV@|write errno=EPERM|setarch -R: execve() of the same program before the first call (write())"
    "4q|norand|reexec second @DEV@|read errno=EPERM buf=intact|setarch -R: execve() of the same program between write() and read()"
    "4r|root|clonevm-exec @DEV@|read errno=EPERM buf=intact|read() in a clone(CLONE_VM) sibling after its execve()"
    "4s|root|exec-keepvm @DEV@|read errno=EPERM buf=intact|read() after execve() of the same program (randomised addresses), a clone(CLONE_VM) sibling keeping the old memory"
    "4t|norand|exec-keepvm @DEV@|read errno=EPERM buf=intact|setarch -R: read() after execve() of the same program, a clone(CLONE_VM) sibling keeping the old memory"
    "4u|root|thread-setuid @DEV@|thread read errno=EPERM buf=intact, sibling read ret=88 buf=changed|one thread's own setuid(nobody) (raw system call): its read() refused, a sibling thread's taken"
    "4v|root|passfd-same @DEV@|read errno=EPERM buf=intact|read() in a process of the same uid the descriptor was passed to (SCM_RIGHTS)"
    "4w|root|io readv same @DEV@|readv ret=88 buf=changed|readv() by the opener"
    "4w|root|io readv fork @DEV@|readv errno=EPERM buf=intact|readv() in a forked child"
    "4w|root|io preadv same @DEV@|preadv errno=ESPIPE buf=intact|preadv() by the opener"
    "4w|root|io preadv fork @DEV@|preadv errno=ESPIPE buf=intact|preadv() in a forked child"
    "4w|root|io aio same @DEV@|aio errno=EINVAL buf=intact|io_submit() IOCB_CMD_PREAD by the opener"
    "4w|root|io aio fork @DEV@|aio errno=EINVAL buf=intact|io_submit() IOCB_CMD_PREAD in a forked child"
    "4w|root|io uring same @DEV@|uring ret=88 buf=changed|io_uring IORING_OP_READ by the opener"
    "4w|root|io uring fork @DEV@|uring errno=EPERM buf=intact|io_uring IORING_OP_READ in a forked child"
    "4x|root|io splice same @DEV@|splice errno=EINVAL buf=intact|splice() of a header from a pipe by the opener"
    "4x|root|io splice fork @DEV@|splice errno=EINVAL buf=intact|splice() of a header from a pipe in a forked child"
    "4y|root|fork-sgio @DEV@|sgio ok status=0x0|SG_IO in a forked child (SG_IO is judged on its caller's rights alone)"
    "4y|root|io write fork @DEV@|write errno=EPERM buf=intact|write() in a forked child"
)
# the same rule on a file of the control node bound to an sg node (section 12)
CTX_BOUND=(
    "12c|root|io read fork @DEV@|read errno=EPERM buf=intact|a bound file: read() in a forked child"
    "12c|root|io write fork @DEV@|write errno=EPERM buf=intact|a bound file: write() in a forked child"
    "12d|root|change noop-setuid @DEV@|read errno=EPERM buf=intact|a bound file: read() after a no-op setuid(getuid())"
    "12e|root|io read same @DEV@|read ret=88 buf=changed|a bound file: read() by the opener"
)

# The node's answers that differ from kernel sg's, as "ID ARGUMENTS=answer".
# In every mode: the node is a CUSE file, sg a character device of its own
# (docs/INTERFACE.md); where another context calls, the node refuses.
CTX_KNOWN=(
    # sg opens non-seekable: ESPIPE before its check; CUSE takes an offset
    # (and ignores it): the node's preadv() is a readv()
    "4w io preadv same=preadv ret=88 buf=changed"
    "4w io preadv fork=preadv errno=EPERM buf=intact"
    # sg has no read_iter: aio_read() says EINVAL before any check; the
    # node's file has one, so aio reaches the rule
    "4w io aio same=aio ret=88 buf=changed"
    "4w io aio fork=aio errno=EPERM buf=intact"
)
# In kernel mode: the gate refuses in rw_verify_area(), which splice() calls
# before do_splice_from() finds neither sg nor CUSE can take a splice
CTX_KNOWN_KERNEL=(
    "4x io splice fork=splice errno=EPERM buf=intact"
)
# In procfs mode: what the /proc check cannot see.  A change of credentials
# that changes nothing procfs shows passes (the kernel's compare is of the
# credential object, which any commit_creds() replaces); no_new_privs is a
# flag of the task, which procfs shows and the check compares; a re-exec of
# the same program at the same addresses looks like the same program.
CTX_KNOWN_PROCFS=(
    "4h change noop-setuid=read ret=88 buf=changed"
    "4i change noop-setgroups=read ret=88 buf=changed"
    "4j change noop-capset=read ret=88 buf=changed"
    "4k change keyctl-join=read ret=88 buf=changed"
    "4l change securebits=read ret=88 buf=changed"
    "4m change keepcaps=read ret=88 buf=changed"
    "4n change no-new-privs=read errno=EPERM buf=intact"
    "4p reexec first=write ok, read ret=88 buf=changed"
    "4q reexec second=read ret=88 buf=changed"
    "4t exec-keepvm=read ret=88 buf=changed"
    "12d change noop-setuid=read ret=88 buf=changed"
)

# cred_mode: the check node_start's daemon runs (its stats' cred_check=),
# procfs for a daemon that has no other
cred_mode() {
    local m
    m=$(stats_field cred_check "$(node_stats)")
    echo "${m:-procfs}"
}

# ctxprobe_run WHO DEV ARGUMENTS...: the probe's answer, on one line
ctxprobe_run() {
    local who=$1 dev=$2 cmd
    shift 2
    cmd=("$CTXPROBE" "${@//@DEV@/$dev}")
    case $who in
        nobody) cmd=("${AS_USER[@]}" "${cmd[@]}") ;;
        norand) cmd=(setarch "$(uname -m)" -R "${cmd[@]}") ;;
    esac
    bounded 20 "${cmd[@]}" | tr '\n' ' ' | sed 's/ *$//'
}

# in_list ENTRY LIST...: ENTRY is one of LIST
in_list() {
    local e
    for e in "${@:2}"; do [ "$e" = "$1" ] && return 0; done
    return 1
}

# ctx_judge ID WHAT KEY WANT KERNEL NODE MODE: the kernel's answer must be
# WANT (or the probe is wrong); the node's the same, or a listed difference
ctx_judge() {
    local id=$1 what=$2 key=$3 want=$4 k=$5 n=$6 mode=$7
    echo "   kernel sg: $k | node: $n"
    [ "$k" = "$want" ] || fail "$id: $what: kernel sg's answer is not '$want': the probe is wrong"
    if [ "$n" = "$k" ]; then
        pass "$id: $what"
    elif in_list "$key=$n" "${CTX_KNOWN[@]}"; then
        pass "$id: $what: differs, as documented (KNOWN)"
    elif [ "$mode" = kernel ] && in_list "$key=$n" "${CTX_KNOWN_KERNEL[@]}"; then
        pass "$id: $what: differs, as documented (KNOWN)"
    elif [ "$mode" = procfs ] && in_list "$key=$n" "${CTX_KNOWN_PROCFS[@]}"; then
        pass "$id: $what: the /proc check differs, as documented (KNOWN-PROCFS)"
    else
        fail "$id: $what ($mode mode)"
    fi
}

# ctx_cases DEV KERNEL_DEV CASE...: each case on both
ctx_cases() {
    local dev=$1 kdev=$2 mode row id who args want what k n
    shift 2
    mode=$(cred_mode)
    echo "   (the node's credential check: $mode)"
    for row in "$@"; do
        IFS='|' read -r id who args want what <<<"$row"
        read -ra argv <<<"$args"
        k=$(ctxprobe_run "$who" "$kdev" "${argv[@]}")
        n=$(ctxprobe_run "$who" "$dev" "${argv[@]}")
        ctx_judge "$id" "$what" "$id ${args% @DEV@}" "$want" "$k" "$n" "$mode"
    done
}

contexts_exact() {
    local f=/proc/sys/kernel/unprivileged_userns_clone
    if [ -e $f ] && [ "$(cat $f)" = 0 ]; then echo 1 >$f; fi
    ctx_cases "$NODE" "$VM_SG" "${CTX_CASES[@]}"
}

# stopped PID: PID is stopped (by a signal)
stopped() {
    [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = T ]
}

# In kernel mode, a call the rule refuses never reaches the daemon: its
# counters of read(), write() and ioctl() stand still, and the gate's
# count of refusals for the node grows by as many.  In witness mode every
# call reaches the daemon, which refuses each on the kernel's verdict: the
# count of refusals grows by as many, and no call is left to /proc.
refused_unseen() {
    local out=/tmp/refused.out a pid s0 s1 calls refused f mode
    mode=$(cred_mode)
    if [ "$mode" = procfs ]; then
        echo "   (the node checks in /proc: every call reaches the daemon; kernel and witness modes only)"
        return 0
    fi
    rm -f $out
    "$CTXPROBE" refused "$NODE" >$out 2>&1 &
    a=$!
    if ! pid=$(probe_pid $out) || ! vm_wait 10 stopped "$pid"; then
        kill -KILL $a
        fail "4z: the probe never stopped: $(tr '\n' ' ' <$out)"
        return
    fi
    s0=$(node_stats)
    kill -CONT "$pid"
    vm_wait 20 stopped "$pid" || fail "4z: the probe never stopped again"
    s1=$(node_stats)
    kill -CONT "$pid"
    await "$pid" 20 || kill -KILL "$pid"
    calls=$(grep -vc ' go$' $out)
    refused=$(grep -c ' errno=EPERM' $out)
    sed 's/^/   /' $out
    echo "   before: $s0"
    echo "   after:  $s1"
    if [ "$mode" = witness ]; then
        # splice() never reaches CUSE's entry points: EINVAL, as from sg
        check "4z: a forked child's read(), readv(), preadv(), aio, io_uring, write(), sg v4 ioctls and a read() after a no-op setuid(): all EPERM; splice() EINVAL, as sg" \
            test "$calls" -eq 13 -a "$refused" -eq 12 -a "$(grep -c 'splice.*errno=EINVAL' $out)" -eq 1
        check "4z: ... and no call was left to the /proc check: cred_unseen= stands still" \
            test "$(stats_field cred_unseen "$s0")" = "$(stats_field cred_unseen "$s1")"
    else
        check "4z: a forked child's read(), readv(), preadv(), aio, io_uring, splice(), write(), sg v4 ioctls and a read() after a no-op setuid(): $calls calls, all EPERM" \
            test "$calls" -eq 13 -a "$refused" -eq "$calls"
        for f in read write ioctl; do
            check "4z: ... none reached the daemon: $f= stands still" \
                test "$(stats_field $f "$s0")" = "$(stats_field $f "$s1")"
        done
    fi
    check "4z: ... and gate_refused= grew by $refused" \
        test "$(($(stats_field gate_refused "$s1") - $(stats_field gate_refused "$s0")))" = "$refused"
}

# ---- 11. completions handed over by the sg v4 ioctls ----

SDEBUG_DELAY=/sys/bus/pseudo/drivers/scsi_debug/delay

# slow DELAY: scsi_debug's response delay in jiffies (250: a second), once
# no command is in flight (the write fails with EBUSY while one is)
slow() {
    vm_wait 10 bash -c "echo $1 >$SDEBUG_DELAY" 2>/dev/null || vm_fail "cannot set scsi_debug delay"
}

# a copy of secprobe with CAP_SYS_RAWIO permitted (not effective): a program
# a user runs to gain rights, which must get nothing another program left
rawio_copy() {
    cp "$SECPROBE" /tmp/secprobe-rawio && chmod 0755 /tmp/secprobe-rawio
    setcap cap_sys_rawio+p /tmp/secprobe-rawio || vm_fail "setcap on /tmp/secprobe-rawio failed"
}

# handover_exec ID DEV LABEL: nobody leaves a READ whose data-in names a
# fixed address (SG_IOSUBMIT, a v3 write(), a kept SG_IO orphan), execve()s
# the capability program, which maps that address and asks for it with
# SG_IORECEIVE(_V3) or read().  The kernel's own sg has no such ioctls: its
# answer is read()'s, after the same write() or kept orphan.
handover_exec() {
    local id=$1 dev=$2 label=$3 k kw ko n how rcv
    local cap=/tmp/secprobe-rawio expect='errno=EPERM buf=intact'
    kw=$(bounded 20 "${AS_USER[@]}" "$SECPROBE" rcv-exec write read "$VM_SG" $cap)
    for how in iosubmit write; do
        n=$(bounded 20 "${AS_USER[@]}" "$SECPROBE" rcv-exec $how ioctl "$dev" $cap)
        verdict "$id: $label: $how, then SG_IORECEIVE$([ $how = write ] && echo _V3) after execve() of a program with file capabilities" \
            "$expect" "$n" "kernel sg (write(), read())" "$kw"
    done
    [ "$dev" = "$NODE" ] || return 0
    slow 250
    ko=$(bounded 30 "${AS_USER[@]}" "$SECPROBE" rcv-exec orphan read "$VM_SG" $cap)
    for rcv in ioctl read; do
        n=$(bounded 30 "${AS_USER[@]}" "$SECPROBE" rcv-exec orphan $rcv "$dev" $cap)
        k=$([ $rcv = read ] && echo "read()" || echo "SG_IORECEIVE_V3")
        verdict "$id: $label: a kept SG_IO orphan, then $k after execve() of a program with file capabilities" \
            "$expect" "$n" "kernel sg (kept orphan, read())" "$ko"
    done
    slow 0
}

# The forked child that became nobody and the parent's kept SG_IO orphan.
# The kernel's sg has no SG_IORECEIVE_V3 (its answer is printed as it is);
# the child's read() is EPERM there, and the parent reads the completion.
orphan_child() {
    local k n expect
    expect='^child: SG_IORECEIVE_V3 errno=E[A-Z]+ memory=intact; read errno=EPERM memory=intact; parent: read ok pack_id=7 data=changed$'
    slow 250
    k=$(bounded 30 "$SECPROBE" orphan-child "$VM_SG" | tr -s '\n' ' ' | sed 's/ $//')
    n=$(bounded 30 "$SECPROBE" orphan-child "$NODE" | tr -s '\n' ' ' | sed 's/ $//')
    slow 0
    verdict "11d: root's kept SG_IO orphan: a forked child that became nobody takes nothing, the parent's read() gets it" \
        "$expect" "$n" "kernel sg" "$k"
    check "11d: ... and the child's SG_IORECEIVE_V3 is EPERM, as read()" \
        grep -q 'SG_IORECEIVE_V3 errno=EPERM' <<<"$n"
}

# absent CMD...: CMD fails (a grep that must find nothing)
absent() {
    ! "$@"
}

handovers() {
    local mode g0
    mode=$(cred_mode)
    g0=$(stats_field gate_refused "$(node_stats)")
    rawio_copy
    handover_exec 11a "$NODE" "the node"
    orphan_child
    if [ "$mode" != kernel ]; then
        check "11e: the refusal logged once, naming the device and the reason" \
            grep -q "$(basename "$NODE").*SG_IORECEIVE.* refused: not the opener's security context (" "$NODE_LOG"
        [ "$mode" = witness ] || return 0
        check "11e: ... on the witness's verdict" \
            grep -q "$(basename "$NODE").* refused: not the opener's security context (seen by the kernel at the call's entry" "$NODE_LOG"
        check "11e: ... and its gate_refused= counts the 6" \
            test "$(($(stats_field gate_refused "$(node_stats)") - g0))" -eq 6
        return
    fi
    # the gate refused them in the kernel: the daemon never saw them, and
    # logs the gate's record of them, not a refusal of its own
    check "11e: the refusal logged from the gate's record, naming the device and the reason" \
        grep -q "$(basename "$NODE").*SG_IORECEIVE refused in the kernel: not the opener's security context" "$NODE_LOG"
    check "11e: ... and none refused by the daemon's own check" \
        absent grep -q "$(basename "$NODE").*SG_IORECEIVE.* refused: " "$NODE_LOG"
    # four receives after execve() in 11a, the child's two in 11d
    check "11e: ... and its gate_refused= counts the 6" \
        test "$(($(stats_field gate_refused "$(node_stats)") - g0))" -eq 6
}

# ---- 13. the credential gate's own faults, in every mode ----

# A block device with the node's number: device-mapper loaded with the
# node's major makes one (char and block dynamic majors come from the same
# range).  Read from another context than its opener's, it is served, as
# the kernel serves it: no check of the node's applies to it.
gate_block_twin() {
    local maj min before n got
    maj=$((0x$(stat -c %t "$NODE"))) min=$((0x$(stat -c %T "$NODE")))
    modprobe -r dm_zero dm_mod 2>/dev/null
    modprobe dm_mod major="$maj" || vm_fail "cannot load dm_mod with major $maj"
    for n in $(seq 0 "$min"); do
        dmsetup create "sectwin$n" --table "0 8 zero" || vm_fail "dmsetup create sectwin$n failed"
    done
    udevadm settle 2>/dev/null
    [ -b "/dev/dm-$min" ] || mknod "/dev/dm-$min" b "$maj" "$min"
    check "13a: a block device $(stat -c '%t:%T' "/dev/dm-$min") has the node's number ($(stat -c '%t:%T' "$NODE"))" \
        test "$(stat -c '%t:%T' "/dev/dm-$min")" = "$(stat -c '%t:%T' "$NODE")"
    before=$(stats_field gate_refused "$(node_stats)")
    # the shell opens it, dd (a child: other credentials) reads it
    got=$(bash -c "exec 3</dev/dm-$min; dd bs=512 count=1 <&3 2>&1 >/dev/null | tail -n1")
    echo "   dd of the block device from another context: $got"
    check "13a: ... read from another context than its opener's: served, as the kernel serves it" \
        grep -q '512 bytes' <<<"$got"
    check "13a: ... and nothing counted against the node" \
        test "$(stats_field gate_refused "$(node_stats)")" = "$before"
    check "13a: ... nor logged as a refusal on it" \
        absent grep -q "process .*dd.*refused\|(dd, process" "$NODE_LOG"
    for n in $(seq 0 "$min"); do dmsetup remove "sectwin$n"; done
    modprobe -r dm_zero dm_mod 2>/dev/null || true
}

# logged_over N REGEX: more than N lines of the node's log match REGEX
logged_over() {
    [ "$(grep -cE -- "$2" "$NODE_LOG")" -gt "$1" ]
}

# The start-up proof's child pid, given to a client after the proof: that
# client's refusal is logged and counted as any other's.  The shell opens
# the node; dd, which it forks with the proof's pid next, reads from the
# shell's descriptor: another context (its exec made new credentials).
gate_proof_pid_reused() {
    local pid out before i=0 n pat fd
    pid=$(sed -n 's/.*proven live: .*(pid \([0-9]*\)).*/\1/p' "$NODE_LOG" | head -n1)
    if [ -z "$pid" ]; then
        [ "$(cred_mode)" = procfs ] && { echo "   (procfs mode: no proof, no pid to reuse)"; return 0; }
        fail "13b: the daemon names no proof's pid in its log"
        return
    fi
    before=$(stats_field gate_refused "$(node_stats)")
    pat="tid ${pid}[ :].*refused"
    n=$(grep -cE "$pat" "$NODE_LOG")
    exec {fd}<"$NODE"
    while [ $i -lt 10 ] && ! logged_over "$n" "$pat"; do
        echo $((pid - 1)) >/proc/sys/kernel/ns_last_pid
        dd bs=88 count=1 iflag=nonblock <&$fd >/dev/null 2>/tmp/reuse.out
        out=$(head -n1 /tmp/reuse.out)
        i=$((i + 1))
        vm_wait 2 logged_over "$n" "$pat"
    done
    exec {fd}<&-
    grep 'refused' "$NODE_LOG" | tail -n1 | sed 's/^/   last refusal logged: /'
    echo "   the proof's pid $pid, taken by a reader of another context ($i tries): $out"
    check "13b: a client given the proof's pid is refused" grep -q 'Operation not permitted' <<<"$out"
    check "13b: ... its refusal logged, naming it" logged_over "$n" "$pat"
    check "13b: ... and counted: gate_refused= grew" \
        test "$(stats_field gate_refused "$(node_stats)")" -gt "$before"
}

# Four daemons at once, as the opt-in units run them, each with its own
# node: each refuses another context and serves its opener; the programs
# attached for them are counted (bpftool).  The gate, the witness or the
# LSM gate, is one for all: the first daemon's programs, handed to the
# others, kept while any holds them; a daemon killed with its node armed
# has its node disarmed by the next daemon that arms one.  The LSM gate
# tells each daemon of the refusals on its own nodes, for its log.
four_start() {  # four_start N: daemon sec-fourN, its pid in FOUR[N]
    local name=bsg/sec-four$1
    "$CUSE_BSG" -f -v --name "$name" "${NODE_OPTS[@]}" --mode 0660 --group disk "$VM_SG" \
        >>"$VM_OUT/daemon-four$1.log" 2>&1 &
    FOUR[$1]=$!
    vm_wait 40 grep -q serving "$VM_OUT/daemon-four$1.log" || vm_fail "/dev/$name did not come up"
}

# the programs on the read() path of the gate in MODE (witness or kernel)
read_progs() {
    local name=witness_read
    [ "$1" = kernel ] && name=gate_rw
    bpftool prog show 2>/dev/null | grep -cE "name $name "
}

gate_four_daemons() {
    local i name out progs kf ks mode
    FOUR=()
    mode=$(cred_mode)
    for i in 2 3 4; do four_start $i; done
    kf=$(bounded 20 "$CTXPROBE" io read fork "$VM_SG" | tr '\n' ' ')
    ks=$(bounded 20 "$CTXPROBE" io read same "$VM_SG" | tr '\n' ' ')
    for name in "$NODE" /dev/bsg/sec-four2 /dev/bsg/sec-four3 /dev/bsg/sec-four4; do
        out=$(bounded 20 "$CTXPROBE" io read fork "$name" | tr '\n' ' ')
        verdict "13c: four daemons: $name refuses a forked child's read()" \
            '^read errno=EPERM buf=intact $' "$out" "kernel sg" "$kf"
        out=$(bounded 20 "$CTXPROBE" io read same "$name" | tr '\n' ' ')
        verdict "13c: four daemons: $name serves its opener's read()" \
            '^read ret=88 buf=changed $' "$out" "kernel sg" "$ks"
    done
    progs=$(bpftool prog show 2>/dev/null | grep -cE 'name (witness_read|gate_rw) ')
    echo "   programs attached for the read() path: $progs ($mode mode)"
    if [ "$mode" = witness ]; then
        check "13c: four daemons, one witness: one program on cuse_read_iter ($progs)" \
            test "$progs" = 1
    elif [ "$mode" = kernel ]; then
        check "13c: four daemons, one LSM gate: one program on file_permission ($progs)" \
            test "$progs" = 1
        check "13c: ... each daemon logs the refusals on its own node (sec-four3's)" \
            grep -q "bsg/sec-four3.*read() refused in the kernel" "$VM_OUT/daemon-four3.log"
        check "13c: ... and none on another's (sec-four3's, in sec-four4's log)" \
            bash -c "! grep -q 'bsg/sec-four3.*refused' '$VM_OUT/daemon-four4.log'"
    fi
    if [ "$mode" = witness ] || [ "$mode" = kernel ]; then
        check "13c: ... the later daemons say the programs are another daemon's" \
            grep -q "another daemon's, shared" "$VM_OUT/daemon-four3.log"
        gate_handed_on "$mode"
    fi
    for i in "${!FOUR[@]}"; do kill -TERM "${FOUR[$i]}" 2>/dev/null; done
    for i in "${!FOUR[@]}"; do wait "${FOUR[$i]}" 2>/dev/null; done
}

# The gate outlives the daemon that loaded it, and a killed daemon's node
# is disarmed by the next one: the node's daemon stops (the first, whose
# programs these are), another is killed, two more start.
gate_handed_on() {  # gate_handed_on MODE
    local out maj min mode=$1
    maj=$((0x$(stat -c %t /dev/bsg/sec-four2))) min=$((0x$(stat -c %T /dev/bsg/sec-four2)))
    kill -KILL "${FOUR[2]}"
    wait "${FOUR[2]}" 2>/dev/null
    unset 'FOUR[2]'
    node_stop
    out=$(bounded 20 "$CTXPROBE" io read fork /dev/bsg/sec-four3 | tr '\n' ' ')
    check "13d: the daemon that loaded the programs ($mode) stopped: the others still refuse ($out)" \
        grep -q '^read errno=EPERM buf=intact' <<<"$out"
    four_start 5
    check "13d: ... a daemon started then takes the same programs ($(read_progs "$mode"))" \
        test "$(read_progs "$mode")" = 1
    check "13d: ... and disarms the node of the daemon killed with -9 ($maj:$min)" \
        grep -q "node $maj:$min of a daemon that is gone (pid [0-9]*) disarmed" \
        "$VM_OUT/daemon-four5.log"
    out=$(bounded 20 "$CTXPROBE" io read fork /dev/bsg/sec-four5 | tr '\n' ' ')
    check "13d: ... and refuses another context on its own node ($out)" \
        grep -q '^read errno=EPERM buf=intact' <<<"$out"
    node_start bsg/sec-cuse "$VM_SG" --mode 0660 --group disk "${COPY_OPTS[@]}"
}

gate_faults() {
    gate_block_twin
    gate_proof_pid_reused
    gate_four_daemons
}

# ---- 12. the control node's bindings ----

control_bindings() {
    local ctl=/dev/bsg-sec-control n k was mode want
    was=$(stat -c '%a %g' "$VM_SD")
    node_start bsg-sec-control --control --mode 0666
    rawio_copy
    { chgrp disk "$VM_SD" && chmod 0660 "$VM_SD"; } || vm_fail "cannot give $VM_SD to group disk"
    handover_exec 12a "$ctl=$VM_SD" "a binding of $VM_SD"
    ctx_cases "$ctl=$VM_SG" "$VM_SG" "${CTX_BOUND[@]}"
    # a file not bound yet: where the kernel makes sg's test (the LSM gate, the
    # witness), another context's read() is refused as on a bound file; the
    # /proc check has no opener to compare with yet: ENXIO
    mode=$(cred_mode)
    want='Operation not permitted'
    [ "$mode" = procfs ] && want='No such device or address'
    n=$(exec 3<>"$ctl" && timeout 20 dd bs=64 count=1 <&3 2>&1 >/dev/null)
    check "12f: an unbound file: read() by another process (dd) in $mode mode: $want" \
        grep -q "$want" <<<"$n"
    # a disk nobody may open: O_PATH still names it
    chmod 0600 "$VM_SD" && chgrp root "$VM_SD"
    n=$(bounded 20 "${AS_USER[@]}" "$SECPROBE" opath-add "$ctl" "$VM_SD")
    k=$(sed -n 's/^device-ioctl //p' <<<"$n")
    verdict "12b: nobody's BSG_IOC_ADD of an O_PATH descriptor of $VM_SD (0600): EBADF" \
        'errno=EBADF$' "$(sed -n 's/^bind //p' <<<"$n")" "kernel sd (an ioctl on that descriptor)" "$k"
    check "12b: ... logged with the reason" \
        grep -q "BSG_IOC_ADD refused: $VM_SD is an O_PATH descriptor" "$NODE_LOG"
    chmod "${was% *}" "$VM_SD" && chgrp "${was#* }" "$VM_SD"
    node_stop
}

# ---- 5. memory: one write() asking for 16 x 256 MiB ----

all_start() {
    NODE=/dev/bsg/${VM_BSG##*/}-cuse
    NODE_LOG=$VM_OUT/daemon-all.log
    "$CUSE_BSG" -f -v --all "${NODE_OPTS[@]}" --mode 0660 --group disk >>"$NODE_LOG" 2>&1 &
    NODE_PID=$!
    vm_wait 30 test -c "$NODE" || { cat "$NODE_LOG" >&2; vm_fail "$NODE did not appear"; }
    vm_wait 5 grep -q 'serving' "$NODE_LOG" || vm_fail "cuse_bsg --all did not report readiness"
}

memory_bound() {
    local k1 k2 n len=$((256 << 20)) ooms hwm alive
    k1=$(bounded 20 "$SECPROBE" v3-big "$VM_SG" $len)
    k2=$(bounded 20 "$SECPROBE" v3-big "$VM_SG" $((len - 4096)))
    echo "   kernel: n/a (bsg write() removed: $(bounded 20 "$SECPROBE" v4-flood "$VM_BSG" 1 4096 |
        sed 's/ of .*//'); sg, one 256 MiB v3 write(): $k1, 256 MiB - 4 KiB: $k2)"
    all_start
    n=$(bounded 20 "$SECPROBE" v4-flood "$NODE" 1 $len)
    echo "   node: one v4 header of 256 MiB: $n"
    if grep -q 'errno=EINVAL' <<<"$n"; then
        len=$((len - 4096)) # over the node's transfer limit, as over sg's: the largest it takes
        echo "   (over the node's transfer limit, as over sg's: the flood asks 256 MiB - 4 KiB each)"
    fi
    ooms=$(dmesg | grep -c -i -e 'out of memory' -e 'oom-kill')
    n=$(bounded 120 "$SECPROBE" v4-flood "$NODE" 16 $len)
    alive=$(kill -0 "$NODE_PID" 2>/dev/null && echo alive || echo dead)
    hwm=$(awk '/^VmHWM/ {print $2}' /proc/"$NODE_PID"/status 2>/dev/null)
    echo "   node: $n; daemon $alive, peak RSS ${hwm:-?} KiB"
    check "5: one write() of 16 v4 READs of $((len >> 10)) KiB: a short count or ENOMEM" \
        grep -Eq 'errno=ENOMEM|\(([0-9]|1[0-5]) headers\)' <<<"$n"
    check "5: ... the daemon survives" test "$alive" = alive
    check "5: ... no OOM kill" test "$(dmesg | grep -c -i -e 'out of memory' -e 'oom-kill')" -eq "$ooms"
    check "5: ... its peak RSS stays under 1 GiB (16 x 256 MiB = 4 GiB)" \
        test "${hwm:-9999999}" -lt $((1 << 20))
    check "5: ... another opener's TEST UNIT READY works" bounded 20 sg_turs "$NODE"
    node_end
}

# ---- 6. a client whose memory never arrives ----

# in_call PID NR: how many threads of PID sleep in system call NR
in_call() {
    grep -ls "^$2 " /proc/"$1"/task/*/syscall | wc -l
}

all_in_call() {  # all_in_call PID NR N: N threads of PID or more sleep in NR
    [ "$(in_call "$1" "$2")" -ge "$3" ]
}

# uffd_case DEV sgio|write [THREADS]: "B=... A=..." for the suite to judge.
# A, the client whose page never comes, is freed at the end whatever
# happened: killed, or, if it cannot be killed, by its keeper serving the page.
uffd_case() {
    local dev=$1 v=$2 threads=${3:-1} nr=16 a pid keeper b brc=0 state how="" uf=no
    [ "$v" = sgio ] || nr=1
    rm -f /tmp/uffd.out
    if [ "$v" = sgio ]; then
        "$SECPROBE" uffd-sgio "$dev" "$threads" >/tmp/uffd.out 2>&1 &
    else
        "$SECPROBE" uffd-write "$dev" >/tmp/uffd.out 2>&1 &
    fi
    a=$!
    disown $a # killed below: no "Killed" notice; bash still reaps it
    if ! vm_wait 10 grep -q ' go$' /tmp/uffd.out; then
        kill -KILL $a
        echo "B=not-run A=never-started:$(tr '\n' ' ' </tmp/uffd.out)"
        return
    fi
    read -r pid keeper < <(sed -n 's/^pid=\([0-9]*\) keeper=\([0-9]*\) go$/\1 \2/p' /tmp/uffd.out)
    vm_wait 10 all_in_call "$pid" "$nr" "$threads" || how="never-all-blocked,"
    # the daemon's own threads wait on the client's page where it copies
    if [ "$dev" = "$NODE" ] && vm_wait 10 bash -c \
        "grep -qs handle_userfault /proc/$NODE_PID/task/*/wchan"; then
        uf=$(grep -ls handle_userfault /proc/"$NODE_PID"/task/*/wchan | wc -l)
    fi
    b=$(bounded 20 sg_turs -n 50 "$dev") || brc=$?
    state="$(in_call "$pid" $nr)-of-$threads-blocked"
    if [ "$dev" = "$NODE" ] && await "$pid" 20; then
        how+=$(sed -n "s/^$v //p" /tmp/uffd.out)
    else
        [ "$dev" != "$NODE" ] || how+="hung-20s,"
        kill -KILL "$pid"
        if await "$pid" 5; then
            how+="killed"
        else
            kill -USR1 "$keeper"
            await "$pid" 20 && how+="unkillable-until-the-suite-served-its-page" ||
                how+="unkillable-even-then"
        fi
    fi
    kill -KILL "$keeper" 2>/dev/null
    [ $brc = 0 ] && b=ok || b="rc=$brc:$(tail -n1 <<<"$b")"
    echo "B=$b A=$state-when-B-ended,then:$how$([ "$dev" = "$NODE" ] && echo " daemon-threads-in-uffd=$uf")"
}

slow_client() {
    local v k n t what
    # 16: sg's commands per descriptor, and as many as the daemon's libfuse workers
    for v in sgio:1 write:1 sgio:16; do
        t=${v#*:} v=${v%:*}
        k=$(uffd_case "$VM_SG" "$v" "$t")
        n=$(uffd_case "$NODE" "$v" "$t")
        what="$v() with its $([ "$v" = sgio ] && echo CDB || echo data-out) in a page never served"
        [ "$t" = 1 ] || what="$t threads' $what"
        verdict "6: $what: another opener's 50 TURs complete" '^B=ok ' "$n" "kernel sg" "$k"
        check "6: ... and the $v() ends by itself with an error (kernel: blocked in its own fault)" \
            grep -Eq 'then:errno=E' <<<"$n"
        check "6: ... the node serves on" bounded 20 sg_turs "$NODE"
    done
}

# ---- 7. SG_SET_FORCE_PACK_ID with readv() ----

force_pack_id_readv() {
    local k n dev a pid res
    k=$(bounded 20 "$SECPROBE" packid-readv "$VM_SG")
    n=$(bounded 20 "$SECPROBE" packid-readv "$NODE")
    verdict "7: forced pack_id, readv() asks for pack_id 2 of two done" '^readv pack_id=2$' "$n" \
        "kernel sg" "$k"
    for dev in "$VM_SG" "$NODE"; do
        rm -f /tmp/readv.out
        "$SECPROBE" readv-wait "$dev" 99 >/tmp/readv.out 2>&1 &
        a=$!
        disown $a
        res="readv never blocked"
        if pid=$(probe_pid /tmp/readv.out) && wait_blocked "$pid" 19; then
            bounded 20 sg_turs -n 50 "$dev" >/dev/null && res="TURs ok" || res="TURs failed"
            if grep -qs '^19 ' /proc/"$pid"/syscall; then
                res+=", readv still waiting"
            else
                res+=", readv returned: $(tail -n1 /tmp/readv.out)"
            fi
        fi
        kill -KILL $a 2>/dev/null
        await $a 5 || res+=", readv unkillable"
        if [ "$dev" = "$NODE" ]; then n=$res; else k=$res; fi
    done
    verdict "7: while a readv() waits for pack_id 99, another opener's 50 TURs complete" \
        '^TURs ok, readv still waiting$' "$n" "kernel sg" "$k"
}

# ---- 8. a v4 array longer than 32 pages, 100 bytes into a page ----

long_v4_array() {
    local k n
    k=$(bounded 20 "$SECPROBE" v4-many "$VM_BSG" 900 100)
    echo "   kernel: n/a (bsg's write() is gone: $k)"
    n=$(bounded 120 "$SECPROBE" v4-many "$NODE" 900 100)
    echo "   node: $n"
    check "8: 900 v4 TURs (144000 bytes) from 100 bytes into a page: every one taken and completed once" \
        grep -q '^v4 sent=900 completed=900 once=900 ' <<<"$n"
}

# ---- 9. errno parity ----

errno_parity() {
    local k n
    k=$(bounded 60 "$SECPROBE" parity "$VM_SG")
    n=$(bounded 60 "$SECPROBE" parity "$NODE")
    parity "9" "kernel sg" "$k" "$n"
    k=$(bounded 20 "$SECPROBE" parity-v4 "$VM_BSG")
    n=$(bounded 20 "$SECPROBE" parity-v4 "$NODE")
    parity "9c" "kernel bsg" "$k" "$n"
    # what a READ leaves in a 4 MiB data-in buffer: done, past the end,
    # with the unit stopped (NOT READY); and with SG_FLAG_DIRECT_IO
    k=$(bounded 60 "$SECPROBE" keep-buf "$VM_SG")
    n=$(bounded 60 "$SECPROBE" keep-buf "$NODE")
    parity "9d" "kernel sg" "$k" "$n"
    k=$(bounded 60 "$SECPROBE" keep-buf "$VM_SG" 4194304 1 1)
    n=$(bounded 60 "$SECPROBE" keep-buf "$NODE" 4194304 1 1)
    parity "9d (SG_FLAG_DIRECT_IO)" "kernel sg" "$k" "$n"
}

# ---- 10. the mid-layer's ioctls: resets, SCSI_IOCTL_SEND_COMMAND, ... ----

# ioctl_parity LABEL KERNEL_DEV MODES SKIP [USER...]: secprobe ioctls on the
# kernel's node and on ours, for each open mode in MODES (rw, ro), as USER
# (root without); lines matching SKIP are not compared (the node answers
# them as sg does, whatever the target)
ioctl_parity() {
    local label=$1 dev=$2 modes=$3 skip=$4 m k n
    shift 4
    for m in $modes; do
        k=$(bounded 60 "$@" "$SECPROBE" ioctls "$dev" "$m" | grep -Ev "^($skip) ")
        n=$(bounded 60 "$@" "$SECPROBE" ioctls "$NODE" "$m" | grep -Ev "^($skip) ")
        parity "10 ($label, $m)" "$label" "$k" "$n"
    done
}

# sg_reset, as the suite's user and as nobody; a reset through the node
# reaches the device: the kernel's sg then reports its UNIT ATTENTION
sg_resets() {
    local opt out before
    for opt in -N -d -t -b -H; do
        same "10: root: sg_reset $opt" "$VM_SG" sg_reset $opt @DEV@
        sg_turs "$VM_SG" >/dev/null 2>&1
        sg_turs "$VM_SG" >/dev/null 2>&1
        same "10: nobody: sg_reset $opt (EACCES)" "$VM_SG" "${AS_USER[@]}" sg_reset $opt @DEV@
    done
    before=$(grep -c 'SG_SCSI_RESET' "$NODE_LOG")
    sg_reset -d "$NODE" >/dev/null 2>&1
    out=$(sg_turs -v "$VM_SG" 2>&1)
    check "10: the node's device reset reaches the device (kernel sg: $(grep -m1 -io 'unit attention.*' <<<"$out"))" \
        grep -qi 'unit attention' <<<"$out"
    sg_turs "$VM_SG" >/dev/null 2>&1
    check "10: the reset is logged" \
        test "$(grep -c 'SG_SCSI_RESET 1: done' "$NODE_LOG")" -gt 0
    "${AS_USER[@]}" sg_reset -d "$NODE" >/dev/null 2>&1
    check "10: nobody's reset never reaches the daemon's target" \
        test "$(grep -c 'SG_SCSI_RESET' "$NODE_LOG")" -eq $((before + 1))
}

ioctls_sg() {
    ioctl_parity "kernel sg, root" "$VM_SG" "rw ro" "-"
    ioctl_parity "kernel sg, nobody" "$VM_SG" "rw ro" "-" "${AS_USER[@]}"
    sg_resets
}

# the node on the disk's and on the bsg node: what those kernel nodes answer
ioctls_targets() {
    node_start bsg/sec-sd-cuse "$VM_SD" --mode 0660 --group disk
    # sd takes every ioctl on a read-only file too; the node keeps sg's rule
    ioctl_parity "kernel sd, root" "$VM_SD" rw "-"
    same "10b: root: sg_reset -d, sd target" "$VM_SD" sg_reset -d @DEV@
    sg_turs "$VM_SG" >/dev/null 2>&1
    sg_turs "$VM_SG" >/dev/null 2>&1
    node_stop
    node_start bsg/sec-bsg-cuse "$VM_BSG" --mode 0660 --group disk
    # the node answers SG_GET_TRANSFORM as sg, for any target; bsg says ENOTTY
    ioctl_parity "kernel bsg, root" "$VM_BSG" "rw ro" "get-transform"
    same "10c: root: sg_reset -d, bsg target (ENOTTY)" "$VM_BSG" sg_reset -d @DEV@
    node_stop
}

vm_load_scsi_debug dev_size_mb=16
head -c 512 /dev/urandom >/tmp/blk
chmod 0644 /tmp/blk
# the kernel's own nodes, given the same access as ours
for d in "$VM_SG" "$VM_BSG"; do
    { chgrp disk "$d" && chmod 0660 "$d"; } || vm_fail "cannot give $d to group disk"
done
sg_turs "$VM_SG" >/dev/null 2>&1 # the power-on UNIT ATTENTION, out of the way
# the whole text first: grep -q stops reading, and pipefail would see the SIGPIPE
HELP=$("$CUSE_BSG" --help 2>&1)
if grep -q -- --copy-timeout <<<"$HELP"; then
    COPY_OPTS=(--copy-timeout 2)
else
    echo "== $CUSE_BSG has no --copy-timeout: started without it"
fi
if [ -n "$CRED_CHECK" ]; then
    grep -q -- --cred-check <<<"$HELP" ||
        vm_fail "CRED_CHECK=$CRED_CHECK asked: $CUSE_BSG has no --cred-check"
    NODE_OPTS=(--cred-check "$CRED_CHECK")
fi
echo "== daemon: $CUSE_BSG ${NODE_OPTS[*]}"
# sections on one node, then those that need a daemon of their own
node_start bsg/sec-cuse "$VM_SG" --mode 0660 --group disk "${COPY_OPTS[@]}"
CRED_LINE=$(grep 'credential check:' "$NODE_LOG" | tail -n1 | sed 's/.*\(credential check:\)/\1/')
echo "== ${CRED_LINE:-the daemon names no credential check: /proc, its only one}"
if [ "$CRED_CHECK" = kernel ]; then
    check "--cred-check kernel: the daemon says the gate checks" \
        grep -q 'credential check: kernel (BPF LSM' "$NODE_LOG"
    check "--cred-check kernel: ... and the node's stats say so" test "$(cred_mode)" = kernel
fi
if [ "$CRED_CHECK" = witness ] || [ "$CRED_CHECK" = auto ]; then
    check "--cred-check $CRED_CHECK: the daemon says the witness checks" \
        grep -q 'credential check: witness (fentry' "$NODE_LOG"
    check "--cred-check $CRED_CHECK: ... and the node's stats say so" test "$(cred_mode)" = witness
    check "--cred-check $CRED_CHECK: ... and its own proof is no client's refusal: gate_refused=0" \
        test "$(stats_field gate_refused "$(node_stats)")" = 0
fi
if [ "$CRED_CHECK" = kernel ]; then
    check "--cred-check kernel: its own proof is no client's refusal: gate_refused=0" \
        test "$(stats_field gate_refused "$(node_stats)")" = 0
fi
# A kernel booted without bpf in lsm= (as Ubuntu's and WSL2's): auto takes
# the witness (above), and --cred-check=kernel does not start, saying why.
[ -e /sys/kernel/security/lsm ] || mount -t securityfs securityfs /sys/kernel/security ||
    vm_fail "cannot mount securityfs to read the active LSMs"
if ! grep -qw bpf /sys/kernel/security/lsm; then
    echo "== active LSMs: $(cat /sys/kernel/security/lsm) (no bpf)"
    rc=0
    bounded 30 "$CUSE_BSG" -f -v --name bsg/nolsm-cuse --cred-check kernel --mode 0660 \
        "$VM_SG" >"$VM_OUT/nolsm.log" 2>&1 || rc=$?
    sed 's/^/   /' "$VM_OUT/nolsm.log" | grep -i 'credential\|error' | head -n 3
    check "no bpf in lsm=: --cred-check kernel does not start (status $rc)" test "$rc" -ne 0
    check "... and says why" grep -q "is 'bpf' in the kernel's lsm= list" "$VM_OUT/nolsm.log"
    check "... and leaves no node behind" test ! -e /dev/bsg/nolsm-cuse
fi
section 1b "1b. an opener in a child pid namespace" fail_open_pidns
section 1c "1c. 800 supplementary groups" fail_open_groups
section 2 "2. user namespace" user_namespace
section 3 "3. rights travel with the descriptor" pass_fd
section 4 "4. read() and write() from another security context" contexts
section 4 "4. ... the kernel's rule exactly: any change of credentials, every way of reading" \
    contexts_exact
section 4 "4. ... refused calls never reach the daemon" refused_unseen
section 6 "6. a client whose memory never arrives" slow_client
section 7 "7. SG_SET_FORCE_PACK_ID and readv()" force_pack_id_readv
section 8 "8. a long v4 array, not page-aligned" long_v4_array
section 9 "9. errno parity" errno_parity
section 10 "10. the mid-layer's ioctls and sg_reset, sg target" ioctls_sg
section 11 "11. completions handed over by the sg v4 ioctls" handovers
section 13 "13. the credential gate's own faults" gate_faults
node_end
check "no credential check's program is left once every daemon is gone" \
    test "$(bpftool prog show 2>/dev/null | grep -cE 'name (witness_read|gate_rw) ')" = 0
section 1a "1a. the daemon out of file descriptors" fail_open_fds
section 1b "1b. the daemon in a pid namespace of its own" fail_open_daemon_pidns
section 3 "3. rights travel with the descriptor, sg's rule" pass_fd_sg_rule
section 5 "5. memory bound (cuse_bsg --all)" memory_bound
section 10 "10. the mid-layer's ioctls and sg_reset, sd and bsg targets" ioctls_targets
section 12 "12. the control node's bindings" control_bindings
echo "security suite took $((SECONDS - T0)) s in the guest"
summary
