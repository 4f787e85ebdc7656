# The two commands the README starts with: `make run` and `make test`.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
GROVE := $(BUILD_DIR)/tools/grove
RUN_RANKS ?= 4

.PHONY: all deps configure build run test test-cluster format docs clean

all: build

deps:
	@bash scripts/deps.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

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

format:
	find src include tools tests bench examples -name '*.cpp' -o -name '*.hpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
