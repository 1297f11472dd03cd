# Convenience front end to CMake. `make bench` builds and runs the main benchmark on the best
# backend present (CUDA with a GPU, host otherwise); `make test` builds and runs the tests, then
# lists what they skipped and why.
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

# The benchmark needs only the CLI, so a test that does not compile cannot stop it. The build's
# output goes to stderr (as the configure step's does, below) and make does not echo these
# commands, so that stdout is the program's alone: `make bench BENCH_ARGS=--json > out.json`
# writes one JSON object (make -C DIR also needs --no-print-directory).
bench: $(BUILD_DIR)/CMakeCache.txt
	@cmake --build $(BUILD_DIR) --parallel $(JOBS) --target streampipe_cli 1>&2
	@$(BUILD_DIR)/streampipe bench $(BENCH_ARGS)

# ctest, then what it skipped and why (ctest's own "100% tests passed" does not say): each
# skipped entry and Python test with its reason, read by tools/test_summary.py from ctest's
# JUnit file and from pytest's, which the python_tests entry writes (python/CMakeLists.txt
# names the same file). Passed tests keep up to 1 MiB of output in ctest's file (1 KiB by
# default), so that the skips inside a passing test binary are seen too. The exit status is
# ctest's.
CTEST_JUNIT = $(abspath $(BUILD_DIR))/Testing/ctest-junit.xml
PYTEST_JUNIT = $(abspath $(BUILD_DIR))/Testing/pytest-junit.xml
test: compile
	@rm -f $(CTEST_JUNIT) $(PYTEST_JUNIT)
	@rc=0; (cd $(BUILD_DIR) && ctest --output-on-failure --output-junit $(CTEST_JUNIT) \
	  --test-output-size-passed 1048576) || rc=$$?; \
	python3 tools/test_summary.py $(CTEST_JUNIT) $(PYTEST_JUNIT) || true; \
	exit $$rc

compile: $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) --parallel $(JOBS)

# Configure only once: a later `make` reuses the cache (and whatever options it holds).
# tools/setup.sh first installs what is missing (or stops with the line to run) and names a
# Python with nanobind, numpy, pytest and prometheus-client (PYTHON if given and fit, else
# python3, else a venv it makes in $(BUILD_DIR)/venv) for the Python package and its tests;
# without one the C build goes on and the python_tests entry fails saying what to install.
# Its output goes to stderr and its commands are not echoed, as for bench (above).
$(BUILD_DIR)/CMakeCache.txt:
	@mkdir -p $(BUILD_DIR)
	@PYTHON=$(PYTHON) tools/setup.sh $(abspath $(BUILD_DIR))/venv > $(BUILD_DIR)/python-for-tests
	@py=$$(cat $(BUILD_DIR)/python-for-tests); \
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DSP_WERROR=ON -DSP_PYTHON=AUTO \
	  $${py:+-DPython_EXECUTABLE=$$py} $(CMAKE_ARGS) 1>&2

clean:
	rm -rf $(BUILD_DIR)
