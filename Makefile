# luaunwind: top-level driver.
#
#   make               build the userspace tools (build/bin/) and the module
#   make check         every test: userspace (CTest, sanitizers, fuzzers) and
#                      the kernel tests in QEMU guests (check-kernel)
#   make check-kernels the whole kernel suite on every kernel lane
#   make bench         benchmarks; print figures, assert nothing on time
#   make demo          the main job, end to end, in a QEMU guest
#   make demo LOCAL=1  the same on this machine's kernel (it must load modules)
#
# The module is built the kernel way: KVER defaults to the running kernel
# when /lib/modules/$(uname -r)/build exists, else to Debian's
# linux-headers-amd64 release; KDIR to /lib/modules/$(KVER)/build.  Both
# can be given.  `make` copies it to kmod/luaunwind.ko; each release's
# build is in build/kmod/<release>/.  The host itself never loads it.

BUILD     ?= build
JOBS      ?= $(shell nproc)
CMAKE_TYPE ?= RelWithDebInfo
KVER      ?= $(shell scripts/kver.sh 2>/dev/null)
KDIR      ?= $(shell scripts/kver.sh --kdir $(KVER) 2>/dev/null)

# Kernel lanes (scripts/kver.sh names): the whole suite on KTEST_FULL, the
# representative subset of tests/kernel/run.sh on KTEST_SUBSET, its checked
# subset on KTEST_CHECKED; KTEST_JOBS guests at once, taking the lanes'
# tests longest lane first (userspace/doc/testing.md, Kernel lanes).  6.1
# is Debian 12's kernel and the debug kernel's source; the whole suite on
# the debug kernel takes about 45 minutes of two guests (testing.md, How
# long it takes), which `make check` cannot afford on two CPUs:
# check-kernels runs it.
KTEST_FULL    ?= 6.1
KTEST_SUBSET  ?= 6.12 5.10 sid
KTEST_CHECKED ?= debug
KTEST_JOBS    ?= 2
KTEST_ALL    ?= debug 6.12 6.1 5.10 sid

# make install PREFIX=... DESTDIR=...: the programs and their man pages.
# make deb: build/deb/luaunwind_*.deb (programs) and luaunwind-dkms_*.deb
# (module source + dkms.conf), VERSION from git.
PREFIX    ?= /usr/local
VERSION   ?= 0.1.0+g$(shell git rev-parse --short HEAD 2>/dev/null || echo 0)
PROGRAMS  := luaunwind-ctl luaunwind-report luaunwind-flamegraph
# luaunwind-report hands .luw records to luaunwind-report-luw, which it
# looks for in ../libexec/luaunwind/ from its own directory.
LIBEXEC   := libexec/luaunwind

.PHONY: all deps userspace userspace-san kmod check check-userspace \
	check-kernel check-kernels check-fuzz check-matrix check-pkg bench demo \
	clean install uninstall deb

all: userspace kmod

deps:
	scripts/deps.sh

# The stamp is written only by a configure that succeeded: a failed one
# (missing dependencies) leaves a CMakeCache.txt behind, and the next make
# must configure again rather than build from it.
$(BUILD)/userspace/.configured:
	cmake -S userspace -B $(BUILD)/userspace -DCMAKE_BUILD_TYPE=$(CMAKE_TYPE) \
		-DLUW_BIN_DIR=$(CURDIR)/$(BUILD)/bin
	touch $@

userspace: $(BUILD)/userspace/.configured
	cmake --build $(BUILD)/userspace -j $(JOBS)

# Same sources, same tests, under ASan+UBSan.
$(BUILD)/san/.configured:
	cmake -S userspace -B $(BUILD)/san -DCMAKE_BUILD_TYPE=Debug -DLUW_SANITIZE=ON \
		-DLUW_BIN_DIR=$(CURDIR)/$(BUILD)/san/bin
	touch $@

userspace-san: $(BUILD)/san/.configured
	cmake --build $(BUILD)/san -j $(JOBS)

kmod:
	@if [ -n "$(KVER)" ] && [ -d "$(KDIR)" ]; then \
		$(MAKE) -C kmod KVER=$(KVER) KDIR=$(KDIR) && \
		cp $(BUILD)/kmod/$(KVER)/luaunwind.ko kmod/luaunwind.ko && \
		echo "kmod: kmod/luaunwind.ko built for $(KVER)"; \
	else echo "kmod: no kernel build tree ($(if $(KVER),$(KVER),no KVER): /lib/modules/<release>/build), module not built (KVER=/KDIR= to choose; Debian: scripts/deps.sh kernel)"; fi

install: userspace
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	for p in $(PROGRAMS); do \
		install -m 755 $(BUILD)/bin/$$p $(DESTDIR)$(PREFIX)/bin/$$p && \
		install -m 644 userspace/doc/man/$$p.1 $(DESTDIR)$(PREFIX)/share/man/man1/$$p.1 || exit 1; \
	done
	install -d $(DESTDIR)$(PREFIX)/$(LIBEXEC)
	install -m 755 $(BUILD)/bin/luaunwind-report-luw $(DESTDIR)$(PREFIX)/$(LIBEXEC)/

uninstall:
	for p in $(PROGRAMS); do \
		rm -f $(DESTDIR)$(PREFIX)/bin/$$p $(DESTDIR)$(PREFIX)/share/man/man1/$$p.1; \
	done
	rm -f $(DESTDIR)$(PREFIX)/$(LIBEXEC)/luaunwind-report-luw
	-rmdir $(DESTDIR)$(PREFIX)/$(LIBEXEC)

deb: userspace
	scripts/pkg/mkdeb.sh $(VERSION) $(BUILD)/bin $(BUILD)/deb

# The packages under DKMS (5.10, sid headers) and installed in a 6.1 guest.
check-pkg: deps deb
	tests/pkg/run.sh $(VERSION) $(BUILD)/deb

check-userspace: userspace userspace-san
	cd $(BUILD)/userspace && ctest --output-on-failure -j $(JOBS)
	cd $(BUILD)/san && ctest --output-on-failure -j $(JOBS) -LE nosan

check: deps
	$(MAKE) check-userspace
	$(MAKE) check-fuzz
	$(MAKE) check-kernel

# Every cell of the LuaJIT build matrix (scripts/ljmatrix.sh), probed from
# userspace; `make check` runs a subset (test_ljmatrix).  Builds are cached
# in $${LUW_CACHE:-/var/cache/luaunwind}/ljmatrix; the table of results
# goes to $(BUILD)/ljmatrix.table.
check-matrix: deps userspace
	rm -f $(BUILD)/ljmatrix.table
	LUW_LJMATRIX_ALL=1 LUW_LJMATRIX_TABLE=$(CURDIR)/$(BUILD)/ljmatrix.table \
		bash tests/matrix/test_ljmatrix.sh $(BUILD)/bin tests/fixtures
	LUW_HEAPMATRIX_ALL=1 bash tests/matrix/test_heapmatrix.sh $(BUILD)/bin tests/fixtures

# libFuzzer targets (clang, ASan+UBSan) for FUZZ_SECONDS each, seeded with
# a copy of tests/fuzz/corpus, the fixtures and the kept regressions.
FUZZ_SECONDS ?= 60
check-fuzz: deps
	JOBS=$(JOBS) tests/fuzz/run.sh $(BUILD)/fuzz $(FUZZ_SECONDS)

# Lint the module (a W=1 and sparse build) against every lane's kernel and
# checkpatch it once, then tests/kernel/t_*.sh in QEMU guests
# (tests/kernel/run.sh): all on KTEST_FULL, the subset on KTEST_SUBSET,
# KTEST_JOBS guests at once.  5.10 and sid are fetched and the debug kernel
# built on first use, cached outside the checkout (userspace/doc/testing.md,
# Where the kernels come from).
check-kernel: deps
	@set -e; for k in $(KTEST_FULL) $(KTEST_SUBSET) $(KTEST_CHECKED); do \
		rel=$$(scripts/kver.sh $$k); \
		$(MAKE) -C kmod lint-build KVER=$$rel -j$(JOBS); \
	done
	$(MAKE) -C kmod checkpatch
	tests/kernel/vmrun_hang.sh
	tests/kernel/run.sh -j $(KTEST_JOBS) -k "$(KTEST_FULL)" \
		-s "$(KTEST_SUBSET)" -c "$(KTEST_CHECKED)"

# The whole kernel suite on every kernel, the debug kernel's with kmemleak
# on (run.sh -m).
check-kernels: deps
	@set -e; for k in $(KTEST_ALL); do \
		rel=$$(scripts/kver.sh $$k); \
		$(MAKE) -C kmod lint-build KVER=$$rel -j$(JOBS); \
	done
	$(MAKE) -C kmod checkpatch
	tests/kernel/vmrun_hang.sh
	tests/kernel/run.sh -j $(KTEST_JOBS) -m -k "$(KTEST_ALL)"

# Every tests/bench/*.sh but test_*.sh (the bench tools' own CTest tests).
bench: deps userspace
	@set -e; for b in tests/bench/*.sh; do \
		case $$b in */test_*) continue ;; esac; \
		[ -e "$$b" ] && bash "$$b"; \
	done; true

# scripts/demo.sh builds the module itself: for the guest's kernel, or for
# the running one with LOCAL=1.  The build's own output goes to a log, so
# what the demo prints stays readable.
demo: deps
	@mkdir -p $(BUILD)
	@echo "demo: building the programs into $(BUILD)/bin (log: $(BUILD)/demo-build.log)"
	@$(MAKE) --no-print-directory userspace >$(BUILD)/demo-build.log 2>&1 || \
		{ tail -30 $(BUILD)/demo-build.log; echo "demo: the build failed" >&2; exit 1; }
	@LUW_BIN=$(BUILD)/bin scripts/demo.sh $(if $(LOCAL),--local)

clean:
	rm -rf $(BUILD) out kmod/luaunwind.ko
	$(MAKE) -C kmod clean KVER=$(KVER) 2>/dev/null || true
