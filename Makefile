# Convenience front end to CMake. `make bench` builds and runs the main benchmark on the best
# backend present (CUDA with a GPU, host otherwise); `make test` builds and runs the tests.
#
# Overridable: BUILD_DIR (default build), JOBS (default: all cores), CMAKE_ARGS (extra
# configure options, e.g. CMAKE_ARGS=-DSP_WITH_CUDA=OFF), BENCH_ARGS (e.g.
# BENCH_ARGS='--workload transfer --json'). Configure options apply when BUILD_DIR has no
# CMake cache yet; `make clean` starts over.

BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
BENCH_ARGS ?=

.PHONY: bench test compile clean

# The benchmark needs only the CLI, so a test that does not compile cannot stop it.
bench: $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) --parallel $(JOBS) --target streampipe_cli
	$(BUILD_DIR)/streampipe bench $(BENCH_ARGS)

test: compile
	cd $(BUILD_DIR) && ctest --output-on-failure

compile: $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) --parallel $(JOBS)

# Configure only once: a later `make` reuses the cache (and whatever options it holds).
# SP_PYTHON=AUTO: the Python package and its tests are built when nanobind is found; without
# it `make test` fails naming the pip command to run (CMAKE_ARGS=-DSP_PYTHON=OFF leaves it out).
$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DSP_WERROR=ON -DSP_PYTHON=AUTO $(CMAKE_ARGS)

clean:
	rm -rf $(BUILD_DIR)
