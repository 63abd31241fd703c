# cuse_bsg: plain make with pkg-config.

# The version, written here alone: the daemon's and cuse-bsgctl's --version
# and the installed man pages take it; NEWS heads with it (make doc-check).
VERSION := 0.1.0
PKG_CONFIG ?= pkg-config
CC ?= cc
CFLAGS ?= -O2 -g
# PREFIX or prefix (the GNU name), /usr/local by default
prefix ?= /usr/local
PREFIX ?= $(prefix)
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/cuse-bsg
INCLUDEDIR ?= $(PREFIX)/include
# where udev and systemd look, whatever PREFIX is (udev.pc comes with the udev
# package, systemd.pc with systemd)
UDEVDIR ?= $(or $(shell $(PKG_CONFIG) --variable=udevdir udev 2>/dev/null),/lib/udev)
UDEVRULESDIR ?= $(UDEVDIR)/rules.d
SYSTEMDUNITDIR ?= $(or $(shell $(PKG_CONFIG) --variable=systemdsystemunitdir systemd \
	2>/dev/null),/lib/systemd/system)
# bash-completion loads a command's file from here when first completed
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DESTDIR ?=

# -Werror only where asked (make check asks): a newer compiler's new warning
# must not break a packager's build
WERROR ?=
# 'override' keeps the required flags when CFLAGS is given on the command line
override CFLAGS += -std=gnu11 -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes -MMD -MP $(SAN)
# the policy a daemon without --policy reads, when present
POLICY_FILE := /etc/cuse-bsg/policy
BUILD_DEFS := -DCUSE_BSG_VERSION='"$(VERSION)"' -DCUSE_BSG_POLICY_FILE='"$(POLICY_FILE)"'
override CPPFLAGS += $(BUILD_DEFS)
# the libfuse API every source is written against
override CPPFLAGS += -D_GNU_SOURCE -DFUSE_USE_VERSION=312 -Iinclude $(shell $(PKG_CONFIG) --cflags fuse3 libudev)
override LDFLAGS += $(SAN)
# sources in src/; everything built goes to build/ (the daemon: build/cuse_bsg)
LIBS := $(shell $(PKG_CONFIG) --libs fuse3 libudev libbpf) -lsgutils2 -pthread
CR_LIBS := $(shell $(PKG_CONFIG) --libs criterion)

# the command queue is a wing of its own, src/queue/: its modules are named
# by their path under src/ (queue/cmdq), their objects go to build/obj/queue/
QUEUE := $(addprefix queue/,chans park done cmdq async sgv4)
MODULES := scsi target pool creds ident guard uaccess ioctx cmd sgio copyjob intr $(QUEUE) ioctl midlayer log filter caps \
	notify opener verdict \
	policy options control bsgadd sigwatch share show lat stats
# the daemon's own: CUSE sessions and udev, which the unit tests' fakes do not stand in for
DAEMON_MODULES := node nodegate session files calls fuseio devnode udev fleet gate gateprogs peers live view
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
# the lock preconditions checked (lockcheck.h) in the sanitizers' builds
# below: the unit tests, the TSan run and the VM suites' ASan daemon; never
# in the daemon's own build
LOCK_CHECKS := -DCUSE_BSG_LOCK_CHECKS
UNIT_TESTS := $(addprefix build/unit/test_,scsi pool sgio async sgv4 filter caps gate verdict peers notify \
	udev ident \
	creds log list \
	bsgadd policy options sigwatch share target show intr lat fuseio)
# any TSan report fails the run (the driver sets the same defaults itself)
TSAN_RUN := TSAN_OPTIONS="halt_on_error=1 exitcode=66" build/unit/stress_async
VM_RUN := tests/vm/vm-run

# the test suites' clients and the daemon under AddressSanitizer: built by the
# targets that use them (their packages come with ./setup's test set), not by all
CLIENTS := $(addprefix build/clients/,sgclient sgclient32 sgasync sgv4io secprobe ctxprobe bsgbind nullcuse notifywait \
	preadloop lsmhook robust starve stallfs)
TEST_PROGS := $(CLIENTS) build/cuse_bsg.asan

all: build/cuse_bsg

test-progs: build/cuse_bsg $(TEST_PROGS)

# -Isrc: a header of src/ by its name from any folder (the wing's files
# include "log.h"), a wing's face by its path ("queue/cmdq.h")
build/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Isrc -c $< -o $@

# The credential gate's BPF LSM program (gate.h): compiled for the BPF
# target with clang, its field offsets relocated at load against the running
# kernel's BTF (CO-RE), and embedded in the daemon as a bpftool skeleton.
# Debian installs bpftool in /usr/sbin, which an ordinary user's PATH leaves
# out: looked for there too.  The object's debug information names its
# sources relative to the tree, so that the daemon does not depend on where
# it was built (make repro-check).
BPF_CC ?= clang
BPFTOOL ?= $(firstword $(shell command -v bpftool 2>/dev/null) \
	$(wildcard /usr/sbin/bpftool /sbin/bpftool /usr/local/sbin/bpftool))
BPF_CFLAGS := -g -O2 -target bpf -Wall -Wextra -Wno-unused-parameter $(WERROR) -Isrc \
	-idirafter /usr/include/$(shell $(CC) -dumpmachine) -ffile-prefix-map=$(CURDIR)=.
NEED_BPFTOOL = @[ -n "$(BPFTOOL)" ] || { echo "bpftool not found in PATH, /usr/sbin or /sbin:" \
	"install Debian's package bpftool (apt-get install bpftool), or set BPFTOOL=" >&2; exit 1; }
build/gate.bpf.o: src/gate.bpf.c src/gate_bpf.h
	@mkdir -p $(dir $@)
	$(BPF_CC) $(BPF_CFLAGS) -c $< -o $@

build/gate.skel.h: build/gate.bpf.o
	$(NEED_BPFTOOL)
	$(BPFTOOL) gen skeleton $< name gate_bpf >$@.tmp && mv $@.tmp $@

# The witness (gate.h): fentry and fexit programs on CUSE's entry points.
# Its verdicts are written with the BPF atomics of -mcpu=v3 (Linux 5.12).
build/witness.bpf.o: src/witness.bpf.c src/gate_bpf.h src/verdict_bpf.h
	@mkdir -p $(dir $@)
	$(BPF_CC) $(BPF_CFLAGS) -mcpu=v3 -c $< -o $@

build/witness.skel.h: build/witness.bpf.o
	$(NEED_BPFTOOL)
	$(BPFTOOL) gen skeleton $< name witness_bpf >$@.tmp && mv $@.tmp $@

GATE_SKEL_OBJS := $(foreach d,build/obj build/san/src build/tsan/src build/profile/src,$(d)/gateprogs.o)
$(GATE_SKEL_OBJS): build/gate.skel.h build/witness.skel.h

# make bench-gate's baseline: programs on the same hooks that decide nothing
build/clients/lsmhook.bpf.o: tests/clients/lsmhook.bpf.c
	@mkdir -p $(dir $@)
	$(BPF_CC) $(BPF_CFLAGS) -c $< -o $@

build/clients/lsmhook.skel.h: build/clients/lsmhook.bpf.o
	$(NEED_BPFTOOL)
	$(BPFTOOL) gen skeleton $< name lsmhook_bpf >$@.tmp && mv $@.tmp $@

build/clients/lsmhook.o: build/clients/lsmhook.skel.h
build/clients/lsmhook.o: override CPPFLAGS += -Ibuild/clients

build/clients/lsmhook: build/clients/lsmhook.o
	$(CC) $(LDFLAGS) $^ $(shell $(PKG_CONFIG) --libs libbpf) -o $@
$(GATE_SKEL_OBJS): override CPPFLAGS += -Ibuild

OBJS := $(patsubst %,build/obj/%.o,cuse_bsg $(MODULES) $(DAEMON_MODULES))
build/cuse_bsg: $(OBJS)
	$(CC) $(LDFLAGS) $^ $(LIBS) -o $@

# Unit tests build every module again, with the sanitizers, under build/san.
build/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(LOCK_CHECKS) $(CFLAGS) $(SAN_FLAGS) -Isrc -c $< -o $@

san = $(patsubst %,build/san/src/%.o,$(1))
SAN_MODULES := $(call san,$(MODULES))
UNIT_LINK = mkdir -p $(dir $@) && $(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(CR_LIBS)

build/unit/test_scsi: build/san/tests/unit/test_scsi.o $(call san,scsi)
	$(UNIT_LINK) -lsgutils2 -pthread -o $@

build/unit/test_creds: build/san/tests/unit/test_creds.o $(call san,creds)
	$(UNIT_LINK) -o $@

build/unit/test_caps: build/san/tests/unit/test_caps.o $(call san,caps)
	$(UNIT_LINK) -o $@

# the gate's choice and its fall-back; the skeleton built in
build/unit/test_gate: build/san/tests/unit/test_gate.o $(call san,gate gateprogs log peers verdict)
	$(UNIT_LINK) $(shell $(PKG_CONFIG) --libs libbpf) -pthread -o $@

build/unit/test_verdict: build/san/tests/unit/test_verdict.o $(call san,verdict)
	$(UNIT_LINK) -o $@

build/unit/test_peers: build/san/tests/unit/test_peers.o $(call san,peers log)
	$(UNIT_LINK) -o $@

build/unit/test_fuseio: build/san/tests/unit/test_fuseio.o $(call san,fuseio)
	$(UNIT_LINK) -pthread -o $@

build/unit/test_bsgadd: build/san/tests/unit/test_bsgadd.o $(call san,bsgadd)
	$(UNIT_LINK) -o $@

build/unit/test_pool: build/san/tests/unit/test_pool.o $(call san,pool)
	$(UNIT_LINK) -pthread -o $@

build/unit/test_share: build/san/tests/unit/test_share.o $(call san,share)
	$(UNIT_LINK) -pthread -o $@

build/unit/test_show: build/san/tests/unit/test_show.o $(call san,show)
	$(UNIT_LINK) -o $@

build/unit/test_lat: build/san/tests/unit/test_lat.o $(call san,lat)
	$(UNIT_LINK) -o $@

build/unit/test_filter: build/san/tests/unit/test_filter.o $(call san,filter)
	$(UNIT_LINK) -o $@

build/unit/test_log: build/san/tests/unit/test_log.o $(call san,log)
	$(UNIT_LINK) -o $@

build/unit/test_policy: build/san/tests/unit/test_policy.o $(call san,policy filter)
	$(UNIT_LINK) -pthread -o $@

# the parsers, then the daemon itself on bad command lines
build/unit/test_options: build/san/tests/unit/test_options.o $(call san,options log) | build/cuse_bsg
	$(UNIT_LINK) -o $@

build/unit/test_sigwatch: build/san/tests/unit/test_sigwatch.o $(call san,sigwatch creds)
	$(UNIT_LINK) -pthread -o $@

# target.c itself is built into the test, its read() hooked
build/unit/test_target: build/san/tests/unit/test_target.o $(call san,scsi)
	$(UNIT_LINK) -lsgutils2 -pthread -o $@

build/unit/test_list: build/san/tests/unit/test_list.o
	$(UNIT_LINK) -o $@

build/unit/test_notify: build/san/tests/unit/test_notify.o $(call san,notify)
	$(UNIT_LINK) -o $@

build/unit/test_udev: build/san/tests/unit/test_udev.o $(call san,udev)
	$(UNIT_LINK) $(shell $(PKG_CONFIG) --libs libudev) -pthread -o $@

# the end-to-end tests' doubles, and the rig they share (tests/unit/rig.h)
UNIT_RIG := build/san/tests/unit/fake.o build/san/tests/unit/rig.o

# SG_IO end to end against a fake target and a fake libfuse reply layer
build/unit/test_sgio: build/san/tests/unit/test_sgio.o $(UNIT_RIG) $(SAN_MODULES)
	$(UNIT_LINK) -lsgutils2 -pthread -o $@

# the interrupt protocol against the fake libfuse, the signal watcher real
build/unit/test_intr: build/san/tests/unit/test_intr.o build/san/tests/unit/fake.o $(SAN_MODULES)
	$(UNIT_LINK) -lsgutils2 -pthread -o $@

# the callers' identity read from /proc/TID, against the kernel's own calls
build/unit/test_ident: build/san/tests/unit/test_ident.o $(call san,ident creds)
	$(UNIT_LINK) -pthread -o $@

# write()/read()/poll() end to end, the same way; malloc wrapped, so that a
# test can fail one
build/unit/test_async: build/san/tests/unit/test_async.o $(UNIT_RIG) build/san/tests/unit/malloc_fault.o \
	$(SAN_MODULES)
	$(UNIT_LINK) -lsgutils2 -pthread -Wl,--wrap=malloc -o $@

# the sg v4 ioctls end to end, the same way, malloc wrapped too
build/unit/test_sgv4: build/san/tests/unit/test_sgv4.o $(UNIT_RIG) build/san/tests/unit/malloc_fault.o \
	$(SAN_MODULES)
	$(UNIT_LINK) -lsgutils2 -pthread -Wl,--wrap=malloc -o $@

# ThreadSanitizer: the threaded modules again, under build/tsan, and a plain
# driver (Criterion's runner does not survive TSan)
build/tsan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(LOCK_CHECKS) $(CFLAGS) $(TSAN_FLAGS) -Isrc -c $< -o $@

TSAN_MODULES := $(patsubst %,build/tsan/src/%.o,$(MODULES))

build/unit/stress_async: build/tsan/tests/unit/stress_async.o build/tsan/tests/unit/fake.o $(TSAN_MODULES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(TSAN_FLAGS) $^ -lsgutils2 -pthread -o $@

# the small clients the VM suites drive, each one file
build/clients/%.o: tests/clients/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

build/clients/%: build/clients/%.o
	$(CC) $(LDFLAGS) $^ -o $@

# attack and probe clients for tests/vm/security.sh (sgclient: SG_IO, sgasync:
# write()/read(), sgv4io: the sg v4 ioctls and a load generator that batches
# them, bsgbind: the control node's client, notifywait: a stand-in for the
# service manager's notification socket)
build/clients/secprobe: build/clients/secprobe.o
	$(CC) $(LDFLAGS) $^ -pthread -o $@

# ctxprobe: the security context probes (section 4: one change of context,
# one way of taking a completion, each next to the kernel's sg)
build/clients/ctxprobe: build/clients/ctxprobe.o
	$(CC) $(LDFLAGS) $^ -pthread -o $@

# tests/vm/robust.sh's: signals to waiting calls, parked write()s, churn
build/clients/robust: build/clients/robust.o
	$(CC) $(LDFLAGS) $^ -pthread -o $@

# tests/vm/starve.sh: clients that stall the daemon's threads in a FUSE file
# system that never answers (stallfs), and the other client, which must not wait
build/clients/starve: build/clients/starve.o
	$(CC) $(LDFLAGS) $^ -pthread -o $@

build/clients/stallfs: build/clients/stallfs.o
	$(CC) $(LDFLAGS) $^ $(shell $(PKG_CONFIG) --libs fuse3) -pthread -o $@

# the benchmark's null CUSE responder: the floor under the daemon
# (with --creds, the daemon's own credentials check: ident.o; with --gate,
# the daemon's credential gate: gate.o, its programs' gateprogs.o, which
# logs through log.o and shares them through peers.o)
NULLCUSE_MODULES := ident creds verdict log gate gateprogs peers
build/clients/nullcuse.o: override CPPFLAGS += -Isrc
build/clients/nullcuse: build/clients/nullcuse.o $(patsubst %,build/obj/%.o,$(NULLCUSE_MODULES))
	$(CC) $(LDFLAGS) $^ $(shell $(PKG_CONFIG) --libs fuse3 libbpf) -pthread -o $@

# a 32-bit caller, which the node refuses cleanly
build/clients/sgclient32: tests/clients/sgclient.c
	@mkdir -p $(dir $@)
	$(CC) -m32 $(CPPFLAGS) $(CFLAGS) $< -o $@

# the daemon with ASan+UBSan, for the part of the VM suite that checks for leaks
build/cuse_bsg.asan: $(call san,cuse_bsg $(MODULES) $(DAEMON_MODULES))
	$(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(LIBS) -o $@

# The Criterion tests under ASan+UBSan, then the TSan stress run, each one's
# output in build/unit/NAME.log, shown if it fails; last a total line.  A
# leak fails the run too: LeakSanitizer reports as a test's worker exits,
# after Criterion has counted the test as passed.  The tests that need root
# are skipped as another user (a package's build), with the reason; make
# check sets UNIT_REQUIRE_ROOT, which fails them instead.
unit: $(UNIT_TESTS) build/unit/stress_async
	@tests/unit-run.sh build/unit $(UNIT_TESTS) --tsan build/unit/stress_async

tsan: build/unit/stress_async
	$(TSAN_RUN)

# a kernel that builds the BPF LSM but does not activate it, as Ubuntu's:
# Debian's list without bpf
NO_BPF_LSM := lsm=landlock,lockdown,yama,integrity,apparmor
# (the systemd suite installs, purges and installs again the .deb of make
# deb, then upgrades to it from make deb-prev's: 33 minutes on a 2-core
# host that ran two other guests and two package builds beside it, hence
# 50 for it)
vm-check: test-progs deb deb-prev
	$(VM_RUN) tests/vm/suite.sh
	$(VM_RUN) tests/vm/async.sh
	$(VM_RUN) tests/vm/ioctl.sh
	$(VM_RUN) tests/vm/access.sh
	$(VM_RUN) tests/vm/security.sh CRED_CHECK=witness
	$(VM_RUN) tests/vm/security.sh CRED_CHECK=kernel
	$(VM_RUN) tests/vm/security.sh CRED_CHECK=procfs $(CURDIR)/build/cuse_bsg 4 12 13
	$(VM_RUN) --cmdline "$(NO_BPF_LSM)" tests/vm/security.sh CRED_CHECK=auto \
		$(CURDIR)/build/cuse_bsg 4 11 12 13
	$(VM_RUN) tests/vm/robust.sh
	$(VM_RUN) tests/vm/udev.sh
	$(VM_RUN) tests/vm/hotplug.sh
	$(VM_RUN) tests/vm/iscsi.sh
	$(VM_RUN) tests/vm/control.sh
	$(VM_RUN) tests/vm/starve.sh
	$(VM_RUN) --systemd --timeout 3000 tests/vm/systemd.sh

# Debian 13 (trixie): a root directory of it, from Debian's archive with
# mmdebstrap and ./setup run in it (tests/mkroot), kept in vm-run's cache
# beside the kernels; then this tree copied into it at the same path and built
# there as a user without root: make, make test, make deb (lintian included)
# and the VM suites' programs (tests/root-make).
VM_CACHE ?= $(or $(CUSE_BSG_VM_CACHE),/var/cache/cuse-bsg)
TRIXIE_ROOT ?= $(VM_CACHE)/root-trixie
trixie-root:
	tests/mkroot trixie $(TRIXIE_ROOT)

trixie-build: trixie-root
	tests/root-make $(TRIXIE_ROOT) WERROR=-Werror all
	tests/root-make $(TRIXIE_ROOT) WERROR=-Werror test
	tests/root-make $(TRIXIE_ROOT) deb
	tests/root-make $(TRIXIE_ROOT) deb-prev
	tests/root-make $(TRIXIE_ROOT) WERROR=-Werror test-progs

# Debian 13 in the VM: trixie's kernel (VM_KERNEL) on that root (VM_ROOT),
# with the tree built there: the daemon suite, the security suite's
# credential cases (section 4) in witness, kernel and procfs mode (auto is
# witness there), and the systemd suite, whose last steps install, upgrade
# (from make deb-prev's) and purge trixie's .deb.
TRIXIE_VM := VM_KERNEL=trixie VM_ROOT=$(TRIXIE_ROOT) $(VM_RUN)
check-trixie: trixie-build
	$(TRIXIE_VM) tests/vm/suite.sh
	$(TRIXIE_VM) tests/vm/security.sh CRED_CHECK=witness $(CURDIR)/build/cuse_bsg 4
	$(TRIXIE_VM) tests/vm/security.sh CRED_CHECK=kernel $(CURDIR)/build/cuse_bsg 4
	$(TRIXIE_VM) tests/vm/security.sh CRED_CHECK=procfs $(CURDIR)/build/cuse_bsg 4
	$(TRIXIE_VM) --systemd --timeout 3000 tests/vm/systemd.sh

# Everything: the sources' format and the shell scripts' lint, unit tests
# (ASan+UBSan, then TSan), a short run of each fuzzer, then the integration
# suite in the VM.
check: format-check shellcheck doc-check arch-check unit install-check fuzz-check deb repro-check user-check \
	vm-check
check: WERROR := -Werror
check: export UNIT_REQUIRE_ROOT = 1

# What runs offline (no VM, no download), as any user: for a packager's
# build.  FUZZ_S=0 leaves the fuzzers out; the unit tests' total line last.
test: build/cuse_bsg
	@$(MAKE) --no-print-directory doc-check arch-check install-check $(if $(filter 0,$(FUZZ_S)),,fuzz-check)
	@$(MAKE) --no-print-directory unit

# docs/ARCHITECTURE.md's module drawing against the includes of src/ and
# the calls between the daemon's objects (nm): the same arrows, each
# running down a layer.  The objects only: no link.
arch-check: $(OBJS)
	tests/arch-check.sh docs/ARCHITECTURE.md src build/obj

demo: test-progs
	$(VM_RUN) tests/vm/demo.sh

# Not a test: a side-by-side comparison, printed.  Some 15 minutes on an idle
# 2-core machine, much more when another VM shares it: vm-run's 20 are too few.
# The guest runs with idle=poll: under TCG a halted vCPU wakes only once the
# host reschedules its thread, which costs far more than on hardware and hits
# CUSE's hand-offs between threads hardest (the null responder alone loses
# 3x).  A second, short boot with the default idle shows the difference.
BENCH_CMDLINE ?= idle=poll
# the host's load average before and after each boot: another guest on the
# same cores moves every figure
HOST_LOAD = @echo "host load average: $$(cut -d' ' -f1-3 /proc/loadavg)"
bench: test-progs
	@mkdir -p build/bench build/bench-halt build/bench-load
	$(HOST_LOAD)
	$(VM_RUN) --timeout 3600 --out build/bench --cmdline "$(BENCH_CMDLINE)" tests/vm/bench.sh
	$(HOST_LOAD)
	$(VM_RUN) --timeout 1200 --out build/bench-halt tests/vm/bench.sh qd16
	$(HOST_LOAD)
	$(VM_RUN) --timeout 1200 --out build/bench-load --cmdline "$(BENCH_CMDLINE)" tests/vm/bench.sh load
	$(HOST_LOAD)
	tests/bench-plot build/bench/fio.csv build/bench/ioctl.csv >build/bench/iops-vs-qd.svg
	tests/cost-plot build/bench/cost-qd.csv >build/bench/cost-vs-qd.svg
	@echo "plots: build/bench/iops-vs-qd.svg build/bench/cost-vs-qd.svg"

# The sg v4 ioctls' rows of make bench alone (some 10 minutes), in one boot
# with the same idle=poll.
bench-ioctl: test-progs
	@mkdir -p build/bench-ioctl
	$(HOST_LOAD)
	$(VM_RUN) --timeout 3600 --out build/bench-ioctl --cmdline "$(BENCH_CMDLINE)" \
		tests/vm/bench.sh ioctl
	$(HOST_LOAD)
	tests/bench-plot /dev/null build/bench-ioctl/ioctl.csv >build/bench-ioctl/ioctl-vs-qd.svg
	@echo "plot: build/bench-ioctl/ioctl-vs-qd.svg"

# The application rows of make bench alone: tgt exporting kernel sg, then
# the node, to iscsi-perf over iSCSI on 127.0.0.1 (some 5 minutes)
bench-iscsi: test-progs
	@mkdir -p build/bench-iscsi
	$(HOST_LOAD)
	$(VM_RUN) --timeout 1800 --out build/bench-iscsi --cmdline "$(BENCH_CMDLINE)" tests/vm/bench.sh iscsi
	$(HOST_LOAD)

# A loaded guest: fio at QD 16 on kernel sg, the node and the null responder,
# idle and then beside one busy loop per vCPU (some 3 minutes)
bench-load: test-progs
	@mkdir -p build/bench-load
	$(HOST_LOAD)
	$(VM_RUN) --timeout 1200 --out build/bench-load --cmdline "$(BENCH_CMDLINE)" tests/vm/bench.sh load
	$(HOST_LOAD)

# An earlier commit's daemon (BASE, a commit of this repository), built
# from its own tree under build/base, for bench-ab and bench-curve
BASE ?= 0bba1df
base-build:
	rm -rf build/base && mkdir -p build/base/src
	git archive "$(BASE)" | tar -x -C build/base/src
	$(MAKE) -C build/base/src build/cuse_bsg
	cp build/base/src/build/cuse_bsg build/base/cuse_bsg
	git log -1 --format='%h %s' "$(BASE)" >build/base/commit

# This build against BASE's daemon, the same options, in one boot: SG_IO
# and fio at QD 1 and 16; the build also with --cred-check=AB_CHECK
# (procfs unless given).  Some 5 minutes.
bench-ab: test-progs base-build
	@mkdir -p build/bench-ab
	$(HOST_LOAD)
	$(VM_RUN) --timeout 1800 --out build/bench-ab --cmdline "$(BENCH_CMDLINE)" tests/vm/bench.sh ab \
		$(if $(AB_CHECK),AB_CHECK=$(AB_CHECK))
	$(HOST_LOAD)

# The node / kernel sg at fio QD 1 and QD 16 against the device's latency
# (scsi_debug ndelay 0 to 20 ms), this build beside BASE's, in one boot,
# each one's crossover (0.9 of kernel sg), and the curve plotted (gnuplot).
# Some 12 minutes.
bench-curve: test-progs base-build
	@mkdir -p build/bench-curve
	rm -f build/bench-curve/curve.csv
	$(HOST_LOAD)
	$(VM_RUN) --timeout 1800 --out build/bench-curve --cmdline "$(BENCH_CMDLINE)" tests/vm/bench.sh curve
	$(HOST_LOAD)
	tests/curve-plot build/bench-curve/curve.csv >build/bench-curve/crossover.svg
	@echo "plot: build/bench-curve/crossover.svg"

# Each credential check's cost to every other read() on the machine (a
# pread() loop) and to a call on a CUSE node (fio), the witness beside the
# LSM gate, for one daemon and four (some 13 minutes)
bench-gate: test-progs
	@mkdir -p build/bench-gate
	$(HOST_LOAD)
	$(VM_RUN) --timeout 1200 --out build/bench-gate --cmdline "$(BENCH_CMDLINE)" tests/vm/bench.sh gate
	$(HOST_LOAD)

# Where the time goes: CPU time and context switches per command, kernel sg,
# the node and the null responder (a minute; also the end of bench-ioctl)
bench-cost: test-progs
	@mkdir -p build/bench-cost
	$(HOST_LOAD)
	$(VM_RUN) --timeout 1200 --out build/bench-cost --cmdline "$(BENCH_CMDLINE)" tests/vm/bench.sh cost
	$(HOST_LOAD)
	tests/cost-plot build/bench-cost/cost-qd.csv >build/bench-cost/cost-vs-qd.svg

# Where the time of one command goes: perf (Debian's linux-perf, run in the
# guest from the shared root) samples the whole guest with call graphs, and
# counts its switches, wake-ups and system calls, while an SG_IO TEST UNIT
# READY loop and fio QD 1 and 16 run on the node and on the null responder,
# in one boot; a flame graph of each (tests/flame-svg) and a table per
# command (build/bench-profile/profile.txt).  PROF_TIME: the seconds of each
# window, three a case (some 5 minutes)
PROF_TIME ?= 5
bench-profile: test-progs build/profile/cuse_bsg build/profile/nullcuse
	@mkdir -p build/bench-profile
	$(HOST_LOAD)
	$(VM_RUN) --timeout 1800 --out build/bench-profile --cmdline "$(BENCH_CMDLINE)" \
		tests/vm/bench.sh profile PROF_TIME=$(PROF_TIME)
	$(HOST_LOAD)
	@for f in build/bench-profile/prof-*.folded; do \
		{ read -r t; read -r n; } <$${f%.folded}.title && \
		tests/flame-svg --title "$$t" --note "$$n" $$f >$${f%.folded}.svg || exit 1; \
	done
	@echo "flame graphs: build/bench-profile/prof-*.svg; the tables: build/bench-profile/profile.txt"

# The daemon and the null responder that make bench-profile runs: the same
# code with frame pointers, which perf's call graphs follow (-O2 leaves them
# out; perf's other way, a copy of each sample's user stack unwound after,
# took half the node's rate under TCG)
PROF_FLAGS := -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
build/profile/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(PROF_FLAGS) -Isrc -c $< -o $@


build/profile/cuse_bsg: $(patsubst %,build/profile/src/%.o,cuse_bsg $(MODULES) $(DAEMON_MODULES))
	$(CC) $(LDFLAGS) $^ $(LIBS) -o $@

build/profile/nullcuse: build/profile/tests/clients/nullcuse.o \
		$(patsubst %,build/profile/src/%.o,$(NULLCUSE_MODULES))
	$(CC) $(LDFLAGS) $^ $(shell $(PKG_CONFIG) --libs fuse3 libbpf) -pthread -o $@

# One libFuzzer harness per decoder, in tests/fuzz, each linked with only the
# module it tests.  Not part of all: libFuzzer comes with clang (and its
# runtime: Debian 12 libclang-rt-14-dev, 13 libclang-rt-19-dev).
FUZZ_CC ?= clang
FUZZ_TIME ?= 60
# seconds each fuzzer runs in make check and make test; 0: none in make test
FUZZ_S ?= 20
FUZZ_FLAGS = -std=gnu11 -D_GNU_SOURCE $(BUILD_DEFS) -g -O1 -Wall -Wextra $(WERROR) -Isrc \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZERS := filter scsi creds mrq bsgadd options
FUZZ_BINS := $(addprefix build/fuzz_,$(FUZZERS))
FUZZ_RUNS := $(addprefix fuzz-,$(FUZZERS))

$(FUZZ_BINS): tests/fuzz/fuzz.h
build/fuzz_filter: src/filter.c src/filter.h
build/fuzz_scsi: src/scsi.c src/scsi.h
build/fuzz_creds: src/creds.c src/creds.h
build/fuzz_mrq: src/scsi.c src/scsi.h
build/fuzz_bsgadd: src/bsgadd.c src/bsgadd.h
build/fuzz_options: src/options.c src/options.h src/log.c
FUZZ_LIBS_scsi := -lsgutils2
FUZZ_LIBS_mrq := -lsgutils2
FUZZ_OPTS_filter := -max_len=8192 -dict=tests/fuzz/fuzz_filter.dict
FUZZ_OPTS_scsi := -max_len=4096
FUZZ_OPTS_creds := -max_len=8192 -dict=tests/fuzz/fuzz_creds.dict
FUZZ_OPTS_mrq := -max_len=8192
FUZZ_OPTS_bsgadd := -max_len=16
FUZZ_OPTS_options := -max_len=256

build/fuzz_%: tests/fuzz/fuzz_%.c
	@mkdir -p build
	$(FUZZ_CC) $(FUZZ_FLAGS) $(filter %.c,$^) $(FUZZ_LIBS_$*) -o $@

# $(call fuzz_run,NAME,SECONDS): the corpus grows in build/fuzz/NAME, seeded
# from tests/fuzz/seeds/NAME; a crash leaves its input in build/fuzz/NAME-crash-*
fuzz_run = build/fuzz_$(1) -max_total_time=$(2) $(FUZZ_OPTS_$(1)) \
	-artifact_prefix=build/fuzz/$(1)- build/fuzz/$(1) tests/fuzz/seeds/$(1)

# each for FUZZ_TIME seconds (make fuzz-scsi FUZZ_TIME=3600: one of them)
fuzz: $(FUZZ_RUNS)

$(FUZZ_RUNS): fuzz-%: build/fuzz_%
	@mkdir -p build/fuzz/$*
	$(call fuzz_run,$*,$(FUZZ_TIME))

# make check's share: each for FUZZ_S seconds, output in
# build/fuzz/NAME.log, then one line each with libFuzzer's count of runs
fuzz-check: $(FUZZ_BINS)
	@mkdir -p $(addprefix build/fuzz/,$(FUZZERS)); rc=0; \
	$(foreach f,$(FUZZERS),echo "fuzz_$(f): running for $(FUZZ_S) seconds"; \
		$(call fuzz_run,$(f),$(FUZZ_S)) >build/fuzz/$(f).log 2>&1 || rc=1;) \
	for f in $(FUZZERS); do log=build/fuzz/$$f.log; \
		if ok=$$(grep -o 'Done [0-9]* runs in [0-9]* second(s)' $$log); then \
			echo "fuzz_$$f: $$ok"; continue; fi; \
		grep -v -e '^"' -e '^######' $$log | tail -n 40; \
		echo "fuzz_$$f: FAILED after $$(grep -o '^#[0-9][0-9]*' $$log | tail -n 1 | tr -d '#') runs;" \
			"$$(grep -o 'Test unit written to .*' $$log || echo "see $$log")"; \
	done; exit $$rc

format-check:
	clang-format --dry-run -Werror src/*.c src/*.h src/*/*.c src/*/*.h include/*/*.h tests/*/*.c tests/*/*.h

# every shell script: the VM suites, their harness and libraries, setup, CI,
# the deployment helper, the install check and the plot (.shellcheckrc lets
# it follow the suites' libraries)
SHELL_SCRIPTS := setup .ci/run dist/cuse-bsgctl dist/completion/cuse_bsg dist/completion/cuse-bsgctl \
	debian/cuse-bsg.postinst debian/cuse-bsg.prerm debian/cuse-bsg.postrm tests/repro-check.sh tests/user-check.sh tests/mkroot tests/root-make \
	tests/check-lib.sh tests/install-check.sh tests/unit-run.sh tests/arch-check.sh tests/bench-plot tests/cost-plot tests/curve-plot tests/flame-svg tests/vm/vm-run \
	tests/vm/guest-init tests/vm/systemd-init tests/vm/systemd-runner $(wildcard tests/vm/*.sh)
shellcheck:
	shellcheck $(SHELL_SCRIPTS)

INSTALLED := $(SBINDIR)/cuse_bsg $(SBINDIR)/cuse-bsgctl $(MANDIR)/man8/cuse_bsg.8 \
	$(MANDIR)/man8/cuse-bsgctl.8 $(UDEVRULESDIR)/60-cuse-bsg.rules \
	$(SYSTEMDUNITDIR)/cuse-bsg@.service $(DOCDIR)/policy.example

# every file with its mode, and the directories made 0755, whatever the
# caller's umask; the unit names the daemon where it goes, the udev rule
# the helper, the man pages the version and the paths of this install
INSTALL := umask 022 && install
SUBST := sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@SBINDIR@|$(SBINDIR)|g' \
	-e 's|@DOCDIR@|$(DOCDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g'
install: build/cuse_bsg
	@mkdir -p build/install
	$(INSTALL) -D -m 0755 build/cuse_bsg $(DESTDIR)$(SBINDIR)/cuse_bsg
	$(SUBST) dist/cuse-bsgctl >build/install/cuse-bsgctl
	$(INSTALL) -D -m 0755 build/install/cuse-bsgctl $(DESTDIR)$(SBINDIR)/cuse-bsgctl
	$(SUBST) man/cuse_bsg.8 >build/install/cuse_bsg.8
	$(INSTALL) -D -m 0644 build/install/cuse_bsg.8 $(DESTDIR)$(MANDIR)/man8/cuse_bsg.8
	$(SUBST) man/cuse-bsgctl.8 >build/install/cuse-bsgctl.8
	$(INSTALL) -D -m 0644 build/install/cuse-bsgctl.8 $(DESTDIR)$(MANDIR)/man8/cuse-bsgctl.8
	$(SUBST) dist/bsg.rules >build/install/60-cuse-bsg.rules
	$(INSTALL) -D -m 0644 build/install/60-cuse-bsg.rules $(DESTDIR)$(UDEVRULESDIR)/60-cuse-bsg.rules
	$(SUBST) dist/cuse-bsg@.service.in >build/install/cuse-bsg@.service
	$(INSTALL) -D -m 0644 build/install/cuse-bsg@.service $(DESTDIR)$(SYSTEMDUNITDIR)/cuse-bsg@.service
	$(INSTALL) -D -m 0644 dist/policy.example $(DESTDIR)$(DOCDIR)/policy.example
	$(INSTALL) -D -m 0644 -t $(DESTDIR)$(BASHCOMPDIR) dist/completion/cuse_bsg dist/completion/cuse-bsgctl

# the policy file's man page, the documents the man pages name, and the
# control node's header for clients
INSTALLED += $(MANDIR)/man5/cuse_bsg.policy.5 \
	$(addprefix $(DOCDIR)/,POLICY.md INTERFACE.md SECURITY.md DEPLOYMENT.md) $(INCLUDEDIR)/cuse_bsg/control.h
# bash completion for both commands; what changed in each version; examples
# of a drop-in for the instances' options and of a service using a node
INSTALLED += $(BASHCOMPDIR)/cuse_bsg $(BASHCOMPDIR)/cuse-bsgctl $(DOCDIR)/NEWS \
	$(DOCDIR)/examples/options.conf $(DOCDIR)/examples/consumer.service
install: install-docs
install-docs:
	@mkdir -p build/install
	$(SUBST) man/cuse_bsg.policy.5 >build/install/cuse_bsg.policy.5
	$(INSTALL) -D -m 0644 build/install/cuse_bsg.policy.5 $(DESTDIR)$(MANDIR)/man5/cuse_bsg.policy.5
	$(INSTALL) -D -m 0644 -t $(DESTDIR)$(DOCDIR) docs/POLICY.md docs/INTERFACE.md docs/SECURITY.md \
		docs/DEPLOYMENT.md
	$(INSTALL) -D -m 0644 include/cuse_bsg/control.h $(DESTDIR)$(INCLUDEDIR)/cuse_bsg/control.h
	$(INSTALL) -D -m 0644 NEWS $(DESTDIR)$(DOCDIR)/NEWS
	$(INSTALL) -D -m 0644 -t $(DESTDIR)$(DOCDIR)/examples dist/examples/options.conf \
		dist/examples/consumer.service

uninstall:
	$(RM) $(addprefix $(DESTDIR),$(INSTALLED))

# install into a scratch DESTDIR, check what landed (the unit with
# systemd-analyze verify, the man page with groff), uninstall, expect no file
install-check: build/cuse_bsg
	@$(MAKE) --no-print-directory install-check-prefix
	@$(MAKE) --no-print-directory install-check-prefix prefix=/usr

# the one prefix of this make's variables
install-check-prefix:
	tests/install-check.sh $(INSTALLED)

# every option of --help in the man page and in README's usage table, with
# the same default; the version the same in --help, the man page and NEWS
SHELL_SCRIPTS += tests/doc-check.sh
doc-check: build/cuse_bsg
	tests/doc-check.sh build/cuse_bsg README.md man/cuse_bsg.8 NEWS dist/completion/cuse_bsg dist/cuse-bsgctl \
		dist/completion/cuse-bsgctl

# The Debian package (debian/), built with its tests from a copy of the
# tree in build/deb (dpkg-buildpackage writes beside the tree it builds),
# then lintian on the .changes and the .deb: an error fails; each warning
# left is overridden in debian/ with its reason.
DEB_DIR := build/deb
# $(call deb_copy,DIR): the tree, without build/ and .git, in DIR/cuse-bsg-VERSION
deb_copy = rm -rf $(1) && mkdir -p $(1)/cuse-bsg-$(VERSION) && \
	tar -c --exclude=./build --exclude=./.git . | tar -x -C $(1)/cuse-bsg-$(VERSION)
deb:
	$(call deb_copy,$(DEB_DIR))
	cd $(DEB_DIR)/cuse-bsg-$(VERSION) && dpkg-buildpackage -us -uc -b
	lintian --fail-on error --info $(DEB_DIR)/cuse-bsg_$(VERSION)_*.changes

# The package of this tree as an earlier version, VERSION~prev (its daemon
# says so too), built without its tests: the systemd suite installs it, then
# upgrades to make deb's.
DEB_PREV_DIR := build/deb-prev
deb-prev:
	$(call deb_copy,$(DEB_PREV_DIR))
	cd $(DEB_PREV_DIR)/cuse-bsg-$(VERSION) && \
		sed -i '1s/^cuse-bsg (\([^)]*\))/cuse-bsg (\1~prev)/' debian/changelog && \
		sed -i 's/^VERSION := .*/VERSION := $(VERSION)~prev/' Makefile && \
		DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b

# Reproducible: the package built twice, in directories of other names and
# depths (without its tests, which make deb runs), every .deb the same to
# the byte
REPRO_DIRS := build/repro/a build/repro/other/place
repro-check:
	$(foreach d,$(REPRO_DIRS),$(call deb_copy,$(d)) && \
		(cd $(d)/cuse-bsg-$(VERSION) && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b) \
		>$(d).log 2>&1 || { tail -n 30 $(d).log; exit 1; };)
	tests/repro-check.sh $(REPRO_DIRS)

# make, make test and make deb as an ordinary user whose PATH has no sbin
# directory, in a copy of the tree (as root: it creates the user)
user-check:
	tests/user-check.sh

clean:
	$(RM) -r build

.SECONDARY:

.PHONY: all test-progs unit tsan vm-check check test trixie-root trixie-build check-trixie install-check doc-check arch-check demo bench bench-ioctl bench-iscsi bench-cost bench-load bench-gate bench-ab bench-curve base-build bench-profile fuzz fuzz-check install-check-prefix deb deb-prev repro-check user-check \
	$(FUZZ_RUNS) format-check shellcheck install install-docs uninstall clean
-include $(wildcard build/*/*.d build/*/*/*.d build/*/*/*/*.d)
