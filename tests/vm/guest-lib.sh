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
