# The two commands the README starts with: `make run` and `make test`.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
GROVE := $(BUILD_DIR)/tools/grove
RUN_RANKS ?= 4

.PHONY: all deps configure build run test test-cluster test-asan test-tsan fuzz format docs clean

all: build

deps:
	@bash scripts/deps.sh

# Line tables only (-g1): backtraces and perf keep file:line, and the tree
# builds in about two thirds of the time full debug information takes.
DEBUG_FLAGS ?= -g1
# UNITY=ON (what CI passes) compiles each target's sources in batches of
# UNITY_BATCH (a CMake unity build, CMakeLists.txt): about half the CPU of a
# build from scratch, but a one-file edit then recompiles its batch. It takes
# effect when a build directory is configured (a new one).
UNITY ?= OFF
UNITY_BATCH ?= 8
UNITY_FLAGS = -DCMAKE_UNITY_BUILD=$(UNITY) -DCMAKE_UNITY_BUILD_BATCH_SIZE=$(UNITY_BATCH)
CONFIGURE_FLAGS = -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 $(DEBUG_FLAGS) -DNDEBUG" $(UNITY_FLAGS)

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CONFIGURE_FLAGS)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# grove's main job on this machine: the benchmark table over every collective
# that exists, on RUN_RANKS ranks started by grove's own launcher.
run: build
	$(GROVE) run -n $(RUN_RANKS) $(GROVE) bench

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600

# Only the tests on the emulated cluster (network namespaces; needs root).
test-cluster: build
	cd $(BUILD_DIR) && ctest -L cluster --output-on-failure --timeout 600

# Regenerates the README's algorithm table from the registry.
docs: build
	scripts/readme-algorithms.sh $(GROVE) --write

# Sanitizer builds, each in its own directory (docs/reliability.md).
# CTEST_ARGS narrows the run, e.g. CTEST_ARGS='-LE large' (the unit tests
# and the multi-process tests at N <= 4).
ASAN_DIR ?= build-asan
TSAN_DIR ?= build-tsan
CTEST_ARGS ?=
# ThreadSanitizer cannot follow UCX's memory hooks: they are switched off.
TSAN_ENV := UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_MALLOC_HOOKS=no UCX_MEM_EVENTS=no

$(ASAN_DIR)/build.ninja:
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DGROVE_SANITIZE=address,undefined $(UNITY_FLAGS)

$(TSAN_DIR)/build.ninja:
	cmake -S . -B $(TSAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DGROVE_SANITIZE=thread \
	  $(UNITY_FLAGS)

# ASAN_TARGETS narrows the build (default: everything), e.g.
# ASAN_TARGETS=grove_unit_tests with CTEST_ARGS='-L unit' (what CI runs).
ASAN_TARGETS ?=
test-asan: deps $(ASAN_DIR)/build.ninja
	cmake --build $(ASAN_DIR) -j $(JOBS) $(if $(ASAN_TARGETS),--target $(ASAN_TARGETS))
	cd $(ASAN_DIR) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# libFuzzer targets (tests/fuzz/), built with clang in their own directory;
# each runs for FUZZ_SECONDS.
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60

$(FUZZ_DIR)/build.ninja:
	cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=clang++ -DGROVE_FUZZ=ON

fuzz: deps $(FUZZ_DIR)/build.ninja
	cmake --build $(FUZZ_DIR) -j $(JOBS)
	bash scripts/fuzz.sh $(FUZZ_DIR) $(FUZZ_SECONDS)

test-tsan: deps $(TSAN_DIR)/build.ninja
	cmake --build $(TSAN_DIR) -j $(JOBS)
	cd $(TSAN_DIR) && $(TSAN_ENV) ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

format:
	find src include tools tests bench examples -name '*.cpp' -o -name '*.hpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR) $(FUZZ_DIR)
