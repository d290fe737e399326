# luaunwind: top-level driver.
#
#   make               build the userspace tools (build/bin/) and the module
#   make check         every test: userspace (CTest, sanitizers, fuzzers) and
#                      the kernel tests in a QEMU guest (check-kernel)
#   make bench         benchmarks; print figures, assert nothing on time
#   make demo          the main job, end to end, in a QEMU guest
#   make demo LOCAL=1  the same on this machine's kernel (it must load modules)
#
# The module is built against the newest installed linux-headers-*-amd64
# (KVER=... to choose); the host itself never loads it.

BUILD     ?= build
JOBS      ?= $(shell nproc)
CMAKE_TYPE ?= RelWithDebInfo
KVER      ?= $(shell scripts/kver.sh 2>/dev/null)

.PHONY: all deps userspace userspace-san kmod check check-userspace \
	check-kernel check-fuzz check-matrix bench demo clean

all: userspace kmod

deps:
	scripts/deps.sh

$(BUILD)/userspace/CMakeCache.txt:
	cmake -S userspace -B $(BUILD)/userspace -DCMAKE_BUILD_TYPE=$(CMAKE_TYPE) \
		-DLUW_BIN_DIR=$(CURDIR)/$(BUILD)/bin

userspace: $(BUILD)/userspace/CMakeCache.txt
	cmake --build $(BUILD)/userspace -j $(JOBS)

# Same sources, same tests, under ASan+UBSan.
$(BUILD)/san/CMakeCache.txt:
	cmake -S userspace -B $(BUILD)/san -DCMAKE_BUILD_TYPE=Debug -DLUW_SANITIZE=ON \
		-DLUW_BIN_DIR=$(CURDIR)/$(BUILD)/san/bin

userspace-san: $(BUILD)/san/CMakeCache.txt
	cmake --build $(BUILD)/san -j $(JOBS)

kmod:
	@if [ -n "$(KVER)" ]; then $(MAKE) -C kmod KVER=$(KVER); \
	else echo "kmod: no linux-headers installed, module not built (scripts/deps.sh kernel)"; fi

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
		bash tests/unit/test_ljmatrix.sh $(BUILD)/bin tests/fixtures

# libFuzzer targets (clang, ASan+UBSan) for FUZZ_SECONDS each, seeded with
# a copy of tests/fuzz/corpus, the fixtures and the kept regressions.
FUZZ_SECONDS ?= 60
check-fuzz: deps
	JOBS=$(JOBS) tests/fuzz/run.sh $(BUILD)/fuzz $(FUZZ_SECONDS)

# Lint the module (W=1, sparse, checkpatch), then every tests/kernel/t_*.sh
# in a QEMU guest on Debian's 6.1 and 6.12 kernels (tests/kernel/run.sh).
check-kernel: deps
	$(MAKE) -C kmod lint
	tests/kernel/run.sh

bench: deps userspace
	@set -e; for b in tests/bench/*.sh; do [ -e "$$b" ] && bash "$$b"; done; true

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
	rm -rf $(BUILD) out
	$(MAKE) -C kmod clean KVER=$(KVER) 2>/dev/null || true
