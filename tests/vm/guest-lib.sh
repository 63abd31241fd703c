# shellcheck shell=bash
# Helpers for guest scripts run by vm-run: . "$(dirname "$0")/guest-lib.sh"
# vm_load_scsi_debug sets VM_SG, VM_SD and VM_BSG to the first scsi_debug device's nodes.

[ -n "${VM_OUT:-}" ] || { echo "guest-lib: not inside a vm-run guest" >&2; exit 1; }

vm_fail() { echo "FAIL: $*" >&2; exit 1; }
vm_log() { echo "== $*"; }
vm_run() { "$@" || vm_fail "'$*' exited with status $?"; }

vm_wait() {  # vm_wait SECONDS CMD...: poll CMD until it succeeds
    local end=$((SECONDS + $1)); shift
    until "$@"; do
        [ $SECONDS -lt $end ] || return 1
        sleep 0.1
    done
}

# vm_wait's conditions.  Give vm_wait the condition itself, not a `test` of
# a $(...) that the shell expands once, before vm_wait starts.
vm_lines_over() {  # vm_lines_over N FILE TEXT: more than N lines of FILE hold TEXT
    [ "$(grep -cF -- "$3" "$2")" -gt "$1" ]
}
vm_in_syscall() {  # vm_in_syscall PID NR: PID sleeps in system call NR (x86-64's numbers)
    grep -q "^$2 " "/proc/$1/syscall" 2>/dev/null
}

vm_sdebug_devs() {  # sysfs dirs of the scsi_debug devices (H:C:T:L)
    ls -d /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*:*:*:* 2>/dev/null
}

_vm_sdebug_ready() {
    local d n
    d=$(vm_sdebug_devs) || return 1
    for d in $d; do
        n=${d##*/}
        [ -c "/dev/bsg/$n" ] || return 1
        if [ -d /sys/module/sg ]; then
            n=$(ls "$d/scsi_generic" 2>/dev/null) && [ -c "/dev/$n" ] || return 1
        fi
        if [ -d /sys/module/sd_mod ]; then
            n=$(ls "$d/block" 2>/dev/null) && [ -b "/dev/$n" ] || return 1
        fi
    done
}

# vm_load_scsi_debug [PARAM=VALUE...]: load scsi_debug, wait for all its nodes.
# Scanning is made synchronous so that every device exists when modprobe returns.
vm_load_scsi_debug() {
    local d
    echo sync >/sys/module/scsi_mod/parameters/scan
    vm_run modprobe scsi_debug "$@"
    vm_wait 30 _vm_sdebug_ready || vm_fail "scsi_debug nodes did not appear in /dev"
    d=$(vm_sdebug_devs | sort -V | head -n1)
    VM_BSG=/dev/bsg/${d##*/}
    VM_SG='' VM_SD=''
    [ ! -d "$d/scsi_generic" ] || VM_SG=/dev/$(ls "$d/scsi_generic")
    [ ! -d "$d/block" ] || VM_SD=/dev/$(ls "$d/block")
    export VM_SG VM_SD VM_BSG
}

vm_unload_sg() {  # the sg driver owns char major 21; drop it so a CUSE node can take it
    vm_run modprobe -r sg
    [ ! -d /sys/module/sg ] || vm_fail "sg still loaded"
}

# where PID: what it and its children are blocked in, for a report
where() {
    local p
    for p in "$@" $(pgrep -P "$1"); do
        printf '%s %s: syscall %s, in %s; ' "$p" "$(cat /proc/"$p"/comm 2>/dev/null)" \
            "$(cut -d' ' -f1 /proc/"$p"/syscall 2>/dev/null)" "$(cat /proc/"$p"/wchan 2>/dev/null)"
    done
}

# bounded SECONDS CMD...: run CMD, print its output, return its status.  A
# client waiting for a daemon that never answers cannot even be killed (the
# kernel's FUSE layer waits out a request the daemon has taken), so timeout,
# which waits for what it kills, is no bound: after SECONDS, then SIGKILL
# and 5 more, the last line says HUNG and CMD is left behind.
bounded() {
    local secs=$1 pid rc=0 out stuck
    shift
    out=$(mktemp /tmp/bounded.XXXXXX)
    "$@" >"$out" 2>&1 </dev/null &
    pid=$!
    if ! timeout "$secs" tail -s 0.05 --pid="$pid" -f /dev/null; then
        disown "$pid" # no "Killed" notice; bash still reaps it
        stuck=$(where "$pid")
        kill -KILL "$pid" $(pgrep -P "$pid") 2>/dev/null
        if ! timeout 5 tail -s 0.05 --pid="$pid" -f /dev/null; then
            cat "$out"
            echo "HUNG: unkillable after ${secs} s ($stuck)"
            rm -f "$out"
            return 125
        fi
        cat "$out"
        echo "HUNG: killed after ${secs} s ($stuck)"
        rm -f "$out"
        return 124
    fi
    wait "$pid" 2>/dev/null || rc=$?
    cat "$out"
    rm -f "$out"
    return "$rc"
}
