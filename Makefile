# cuse_bsg: plain make with pkg-config.
PKG_CONFIG ?= pkg-config
CC ?= cc
CFLAGS ?= -O2 -g
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/cuse-bsg
# where udev and systemd look, whatever PREFIX is (udev.pc comes with the udev
# package, systemd.pc with systemd)
UDEVDIR ?= $(or $(shell $(PKG_CONFIG) --variable=udevdir udev 2>/dev/null),/lib/udev)
UDEVRULESDIR ?= $(UDEVDIR)/rules.d
SYSTEMDUNITDIR ?= $(or $(shell $(PKG_CONFIG) --variable=systemdsystemunitdir systemd \
	2>/dev/null),/lib/systemd/system)
DESTDIR ?=

# 'override' keeps the required flags when CFLAGS is given on the command line
override CFLAGS += -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -MMD -MP $(SAN)
# the libfuse API every source is written against
override CPPFLAGS += -D_GNU_SOURCE -DFUSE_USE_VERSION=312 $(shell $(PKG_CONFIG) --cflags fuse3 libudev)
override LDFLAGS += $(SAN)
LIBS := $(shell $(PKG_CONFIG) --libs fuse3 libudev) -lsgutils2 -pthread
CR_LIBS := $(shell $(PKG_CONFIG) --libs criterion)

MODULES := scsi.o target.o pool.o creds.o guard.o uaccess.o ioctx.o cmd.o sgio.o async.o ioctl.o midlayer.o log.o filter.o \
	caps.o notify.o opener.o control.o
# the daemon's own: CUSE sessions and udev, which the unit tests' fakes do not stand in for
DAEMON_MODULES := node.o udev.o fleet.o
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
UNIT_TESTS := tests/test_scsi tests/test_pool tests/test_sgio tests/test_async tests/test_filter \
	tests/test_caps tests/test_notify tests/test_udev tests/test_uaccess tests/test_creds tests/test_log \
	tests/test_list
# any TSan report fails the run (the driver sets the same defaults itself)
TSAN_RUN := TSAN_OPTIONS="halt_on_error=1 exitcode=66" ./tests/stress_async
VM_RUN := tests/vm/vm-run

# the test suites' clients and the daemon under AddressSanitizer: built by the
# targets that use them (their packages come with ./setup's test set), not by all
TEST_PROGS := tests/sgclient tests/sgclient32 tests/sgasync tests/sgv4io tests/secprobe tests/bsgbind \
	tests/nullcuse tests/notifywait build/cuse_bsg.asan

all: cuse_bsg

test-progs: cuse_bsg $(TEST_PROGS)

cuse_bsg: cuse_bsg.o $(MODULES) $(DAEMON_MODULES)
	$(CC) $(LDFLAGS) $^ $(LIBS) -o $@

# Unit tests build every module again, with the sanitizers, under build/san.
build/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS) -I. -c $< -o $@

SAN_MODULES := $(addprefix build/san/,$(MODULES))

tests/test_scsi: build/san/tests/test_scsi.o build/san/scsi.o
	$(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(CR_LIBS) -lsgutils2 -pthread -o $@

tests/test_creds: build/san/tests/test_creds.o build/san/creds.o
	$(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(CR_LIBS) -o $@

tests/test_caps: build/san/tests/test_caps.o build/san/caps.o
	$(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(CR_LIBS) -o $@

tests/test_pool: build/san/tests/test_pool.o build/san/pool.o
	$(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(CR_LIBS) -pthread -o $@

tests/test_filter: build/san/tests/test_filter.o build/san/filter.o
	$(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(CR_LIBS) -o $@

tests/test_log: build/san/tests/test_log.o build/san/log.o
	$(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(CR_LIBS) -o $@

tests/test_list: build/san/tests/test_list.o
	$(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(CR_LIBS) -o $@

tests/test_notify: build/san/tests/test_notify.o build/san/notify.o
	$(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(CR_LIBS) -o $@

tests/test_udev: build/san/tests/test_udev.o build/san/udev.o
	$(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(CR_LIBS) $(shell $(PKG_CONFIG) --libs libudev) -pthread -o $@

# SG_IO end to end against a fake target and a fake libfuse reply layer
tests/test_sgio: build/san/tests/test_sgio.o build/san/tests/fake.o $(SAN_MODULES)
	$(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(CR_LIBS) -lsgutils2 -pthread -o $@

# the credentials read from /proc/TID/status, against the kernel's own calls
tests/test_uaccess: build/san/tests/test_uaccess.o build/san/tests/fake.o $(SAN_MODULES)
	$(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(CR_LIBS) -lsgutils2 -pthread -o $@

# write()/read()/poll() end to end, the same way
tests/test_async: build/san/tests/test_async.o build/san/tests/fake.o $(SAN_MODULES)
	$(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(CR_LIBS) -lsgutils2 -pthread -o $@

# ThreadSanitizer: the threaded modules again, under build/tsan, and a plain
# driver (Criterion's runner does not survive TSan)
build/tsan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(TSAN_FLAGS) -I. -c $< -o $@

TSAN_MODULES := $(addprefix build/tsan/,$(MODULES))

tests/stress_async: build/tsan/tests/stress_async.o build/tsan/tests/fake.o $(TSAN_MODULES)
	$(CC) $(LDFLAGS) $(TSAN_FLAGS) $^ -lsgutils2 -pthread -o $@

tests/sgclient: tests/sgclient.o
	$(CC) $(LDFLAGS) $^ -o $@

tests/sgasync: tests/sgasync.o
	$(CC) $(LDFLAGS) $^ -o $@

# the sg v4 driver's ioctls, and a load generator that batches them
tests/sgv4io: tests/sgv4io.o
	$(CC) $(LDFLAGS) $^ -o $@

# attack and probe clients for tests/vm/security.sh
tests/secprobe: tests/secprobe.o
	$(CC) $(LDFLAGS) $^ -pthread -o $@

# the control node's client for tests/vm/control.sh
tests/bsgbind: tests/bsgbind.o
	$(CC) $(LDFLAGS) $^ -o $@

# the benchmark's null CUSE responder: the floor under the daemon
# (with --creds, the daemon's own credentials check: uaccess.o)
tests/nullcuse.o: override CPPFLAGS += -I.
tests/nullcuse: tests/nullcuse.o uaccess.o creds.o
	$(CC) $(LDFLAGS) $^ $(shell $(PKG_CONFIG) --libs fuse3) -pthread -o $@

# a stand-in for the service manager's notification socket, for tests/vm/udev.sh
tests/notifywait: tests/notifywait.o
	$(CC) $(LDFLAGS) $^ -o $@

# a 32-bit caller, which the node refuses cleanly
tests/sgclient32: tests/sgclient.c
	$(CC) -m32 $(CPPFLAGS) $(CFLAGS) $< -o $@

# the daemon with ASan+UBSan, for the part of the VM suite that checks for leaks
build/cuse_bsg.asan: build/san/cuse_bsg.o $(SAN_MODULES) $(addprefix build/san/,$(DAEMON_MODULES))
	$(CC) $(LDFLAGS) $(SAN_FLAGS) $^ $(LIBS) -o $@

# The Criterion tests under ASan+UBSan, then the TSan stress run.  A leak
# fails the run too: LeakSanitizer reports as a test's worker exits, after
# Criterion has counted the test as passed.
unit: $(UNIT_TESTS) tests/stress_async
	@mkdir -p build; rc=0; for t in $(UNIT_TESTS); do \
		./$$t --jobs 2 >build/unit.log 2>&1 || rc=1; cat build/unit.log; \
		if grep -q 'ERROR: LeakSanitizer' build/unit.log; then \
			echo "$$t: memory leaked (above)" >&2; rc=1; fi; \
	done; $(TSAN_RUN) || rc=1; exit $$rc

tsan: tests/stress_async
	$(TSAN_RUN)

vm-check: test-progs
	$(VM_RUN) tests/vm/suite.sh
	$(VM_RUN) tests/vm/async.sh
	$(VM_RUN) tests/vm/ioctl.sh
	$(VM_RUN) tests/vm/access.sh
	$(VM_RUN) tests/vm/security.sh
	$(VM_RUN) tests/vm/udev.sh
	$(VM_RUN) tests/vm/hotplug.sh
	$(VM_RUN) tests/vm/iscsi.sh
	$(VM_RUN) tests/vm/control.sh
	$(VM_RUN) --systemd tests/vm/systemd.sh

# Everything: the sources' format and the shell scripts' lint, unit tests
# (ASan+UBSan, then TSan), a short run of each fuzzer, then the integration
# suite in the VM.
check: format-check shellcheck unit install-check fuzz-check vm-check

demo: test-progs
	$(VM_RUN) tests/vm/demo.sh

# Not a test: a side-by-side comparison, printed.  Some 15 minutes on an idle
# 2-core machine, much more when another VM shares it: vm-run's 20 are too few.
# The guest runs with idle=poll: under TCG a halted vCPU wakes only once the
# host reschedules its thread, which costs far more than on hardware and hits
# CUSE's hand-offs between threads hardest (the null responder alone loses
# 3x).  A second, short boot with the default idle shows the difference.
BENCH_CMDLINE ?= idle=poll
bench: test-progs
	@mkdir -p build/bench build/bench-halt
	$(VM_RUN) --timeout 3600 --out build/bench --cmdline "$(BENCH_CMDLINE)" tests/vm/bench.sh
	$(VM_RUN) --timeout 1200 --out build/bench-halt tests/vm/bench.sh qd16
	tests/bench-plot build/bench/fio.csv build/bench/ioctl.csv >build/bench/iops-vs-qd.svg
	@echo "plot: build/bench/iops-vs-qd.svg"

# The sg v4 ioctls' rows of make bench alone (some 10 minutes), in one boot
# with the same idle=poll.
bench-ioctl: test-progs
	@mkdir -p build/bench-ioctl
	$(VM_RUN) --timeout 3600 --out build/bench-ioctl --cmdline "$(BENCH_CMDLINE)" \
		tests/vm/bench.sh ioctl
	tests/bench-plot /dev/null build/bench-ioctl/ioctl.csv >build/bench-ioctl/ioctl-vs-qd.svg
	@echo "plot: build/bench-ioctl/ioctl-vs-qd.svg"

# One libFuzzer harness per decoder, in tests/fuzz, each linked with only the
# module it tests.  Not part of all: libFuzzer comes with clang (Debian 12:
# clang, and libclang-rt-14-dev for the runtime).
FUZZ_CC ?= clang
FUZZ_TIME ?= 60
FUZZ_CHECK_TIME ?= 20
FUZZ_FLAGS := -std=gnu11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror -I. \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZERS := filter scsi creds
FUZZ_BINS := $(addprefix build/fuzz_,$(FUZZERS))
FUZZ_RUNS := $(addprefix fuzz-,$(FUZZERS))

build/fuzz_filter: filter.c filter.h
build/fuzz_scsi: scsi.c scsi.h
build/fuzz_creds: creds.c creds.h
FUZZ_LIBS_scsi := -lsgutils2
FUZZ_OPTS_filter := -max_len=8192 -dict=tests/fuzz/fuzz_filter.dict
FUZZ_OPTS_scsi := -max_len=4096
FUZZ_OPTS_creds := -max_len=8192 -dict=tests/fuzz/fuzz_creds.dict

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

# make check's share: each for FUZZ_CHECK_TIME seconds, output in
# build/fuzz/NAME.log, then one line each with libFuzzer's count of runs
fuzz-check: $(FUZZ_BINS)
	@mkdir -p $(addprefix build/fuzz/,$(FUZZERS)); rc=0; \
	$(foreach f,$(FUZZERS),echo "fuzz_$(f): running for $(FUZZ_CHECK_TIME) seconds"; \
		$(call fuzz_run,$(f),$(FUZZ_CHECK_TIME)) >build/fuzz/$(f).log 2>&1 || rc=1;) \
	for f in $(FUZZERS); do log=build/fuzz/$$f.log; \
		if ok=$$(grep -o 'Done [0-9]* runs in [0-9]* second(s)' $$log); then \
			echo "fuzz_$$f: $$ok"; continue; fi; \
		grep -v -e '^"' -e '^######' $$log | tail -n 40; \
		echo "fuzz_$$f: FAILED after $$(grep -o '^#[0-9][0-9]*' $$log | tail -n 1 | tr -d '#') runs;" \
			"$$(grep -o 'Test unit written to .*' $$log || echo "see $$log")"; \
	done; exit $$rc

format-check:
	clang-format --dry-run -Werror *.c *.h tests/*.c tests/*.h tests/fuzz/*.c

# every shell script: the VM suites, their harness and libraries, setup, CI,
# the install check and the plot (.shellcheckrc lets it follow the suites'
# libraries)
SHELL_SCRIPTS := setup .ci/run tests/install-check.sh tests/bench-plot tests/vm/vm-run \
	tests/vm/guest-init tests/vm/systemd-init tests/vm/systemd-runner $(wildcard tests/vm/*.sh)
shellcheck:
	shellcheck $(SHELL_SCRIPTS)

INSTALLED := $(SBINDIR)/cuse_bsg $(MANDIR)/man8/cuse_bsg.8 $(UDEVRULESDIR)/60-cuse-bsg.rules \
	$(SYSTEMDUNITDIR)/cuse-bsg@.service $(DOCDIR)/policy.example

# every file with its mode, and the directories made 0755, whatever the
# caller's umask; the unit names the daemon where it goes
INSTALL := umask 022 && install
install: cuse_bsg
	@mkdir -p build
	$(INSTALL) -D -m 0755 cuse_bsg $(DESTDIR)$(SBINDIR)/cuse_bsg
	$(INSTALL) -D -m 0644 cuse_bsg.8 $(DESTDIR)$(MANDIR)/man8/cuse_bsg.8
	$(INSTALL) -D -m 0644 bsg.rules $(DESTDIR)$(UDEVRULESDIR)/60-cuse-bsg.rules
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' cuse-bsg@.service.in >build/cuse-bsg@.service
	$(INSTALL) -D -m 0644 build/cuse-bsg@.service $(DESTDIR)$(SYSTEMDUNITDIR)/cuse-bsg@.service
	$(INSTALL) -D -m 0644 policy.example $(DESTDIR)$(DOCDIR)/policy.example

uninstall:
	$(RM) $(addprefix $(DESTDIR),$(INSTALLED))

# install into a scratch DESTDIR, check what landed (the unit with
# systemd-analyze verify, the man page with groff), uninstall, expect no file
install-check: cuse_bsg
	tests/install-check.sh $(INSTALLED)

clean:
	$(RM) -r build cuse_bsg *.o *.d tests/*.o tests/*.d $(UNIT_TESTS) tests/stress_async \
		tests/sgclient tests/sgclient32 tests/sgasync tests/sgv4io tests/secprobe tests/bsgbind \
		tests/nullcuse tests/notifywait

.PHONY: all test-progs unit tsan vm-check check install-check demo bench bench-ioctl fuzz fuzz-check \
	$(FUZZ_RUNS) format-check shellcheck install uninstall clean
-include *.d tests/*.d build/san/*.d build/san/tests/*.d build/tsan/*.d build/tsan/tests/*.d
