# Convenience front end to CMake. `make bench` builds and runs the main benchmark on the best
# backend present (CUDA with a GPU, host otherwise); `make test` builds and runs the tests.
#
# Overridable: BUILD_DIR (default build), JOBS (default: all cores), PYTHON (the interpreter
# for the Python package's tests, default python3), CMAKE_ARGS (extra
# configure options, e.g. CMAKE_ARGS=-DSP_WITH_CUDA=OFF), BENCH_ARGS (e.g.
# BENCH_ARGS='--workload transfer --json'). Configure options apply when BUILD_DIR has no
# CMake cache yet; `make clean` starts over.

BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
BENCH_ARGS ?=
PYTHON ?= python3

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
# tools/setup.sh first installs what is missing (or stops with the line to run) and names a
# Python with nanobind, numpy and pytest (PYTHON if given and fit, else python3, else a venv it
# makes in $(BUILD_DIR)/venv) for the Python package and its tests; without one the C build
# goes on and the python_tests entry fails saying what to install.
$(BUILD_DIR)/CMakeCache.txt:
	mkdir -p $(BUILD_DIR)
	PYTHON=$(PYTHON) tools/setup.sh $(abspath $(BUILD_DIR))/venv > $(BUILD_DIR)/python-for-tests
	py=$$(cat $(BUILD_DIR)/python-for-tests); \
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DSP_WERROR=ON -DSP_PYTHON=AUTO \
	  $${py:+-DPython_EXECUTABLE=$$py} $(CMAKE_ARGS)

clean:
	rm -rf $(BUILD_DIR)
