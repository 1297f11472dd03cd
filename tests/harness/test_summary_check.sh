#!/bin/sh
# tools/test_summary.py against a tiny fake ctest project, so that the summary `make test`
# prints cannot quietly print nothing: every kind of skip it reads must come out with its
# reason, and the counts must be right.
#
#   tests/harness/test_summary_check.sh SUMMARY_SCRIPT WORK_DIR [CMAKE CTEST]
set -eu
summary="$1"
work="$2"
cmake="${3:-cmake}"
ctest="${4:-ctest}"
rm -rf "$work"
mkdir -p "$work/src"

# The pytest JUnit file the fake python_tests entry "writes" (pytest's own format: a skipped
# test has <skipped message="reason">).
cat >"$work/src/pytest-sample.xml" <<'XML'
<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="0" skipped="2" tests="3">
<testcase classname="python.tests.test_cuda_stages" name="test_torch_stage[float32]" time="0.001">
<skipped type="pytest.skip" message="needs a GPU">test_cuda_stages.py:20: needs a GPU</skipped>
</testcase>
<testcase classname="python.tests.test_runs" name="test_plain" time="0.002"/>
<testcase classname="python.tests.test_mlp.TestCupy" name="test_cupy" time="0.001">
<skipped type="pytest.skip" message="cupy is not installed">test_mlp.py:9: cupy</skipped>
</testcase>
</testsuite></testsuites>
XML

cat >"$work/src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.24)
project(summary_fake NONE)
enable_testing()
# a passing binary that skipped one of its tests (the harness's line)
add_test(NAME binary_ok COMMAND sh -c "echo '[ SKIP ] two_devices: needs 2 GPUs'; echo '1 passed, 0 failed, 1 skipped'")
# sp_test_unavailable's form
add_test(NAME unavailable COMMAND sh -c "echo 'skipped: built without MPI'; exit 77")
# a harness binary whose every test skipped
add_test(NAME binary_cuda COMMAND sh -c "echo '[ SKIP ] a: no CUDA device'; echo '[ SKIP ] b: no CUDA device'; exit 77")
# an example saying so on stderr
add_test(NAME example_torch COMMAND sh -c "echo 'torch_stage: skipped, torch is not installed' >&2; exit 77")
set_tests_properties(unavailable binary_cuda example_torch PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME broken COMMAND sh -c "echo broken; exit 1")
add_test(NAME python_tests COMMAND sh -c "cp '${CMAKE_SOURCE_DIR}/pytest-sample.xml' '${CMAKE_BINARY_DIR}/pytest.xml'")
CMAKE

"$cmake" -S "$work/src" -B "$work/build" >"$work/configure.log"
rc=0
(cd "$work/build" && "$ctest" --output-junit "$work/build/ctest.xml" >"$work/ctest.log" 2>&1) || rc=$?
[ "$rc" -ne 0 ] || { echo "FAIL: the fake run's failing entry did not fail ctest"; exit 1; }
python3 "$summary" "$work/build/ctest.xml" "$work/build/pytest.xml" >"$work/summary.txt"
cat "$work/summary.txt"

failed=0
expect() {
    if ! grep -qF -- "$1" "$work/summary.txt"; then
        echo "FAIL: the summary lacks: $1"
        failed=1
    fi
}
expect "ctest: 6 entries: 2 passed, 3 skipped, 1 failed"
expect "1 skipped: built without MPI"
expect "    unavailable"
expect "1 skipped: no CUDA device"
expect "    binary_cuda (2 tests)"
expect "1 skipped: torch_stage: skipped, torch is not installed"
expect "    example_torch"
expect "ctest: tests skipped inside 1 passing entry (by entry):"
expect "1 skipped: needs 2 GPUs"
expect "    binary_ok: two_devices"
expect "pytest (python_tests): 3 tests, 2 skipped"
expect "1 skipped: needs a GPU"
expect "    test_cuda_stages: test_torch_stage[float32]"
expect "1 skipped: cupy is not installed"
expect "    test_mlp.TestCupy: test_cupy"

# a file it cannot read is an error, not an empty summary
rc=0
python3 "$summary" "$work/build/no-such.xml" >/dev/null 2>&1 || rc=$?
if [ "$rc" -ne 2 ]; then
    echo "FAIL: a missing ctest JUnit file gave exit $rc, not 2"
    failed=1
fi
[ "$failed" -eq 0 ] && echo "test_summary.py: every skip of the fake run reported with its reason"
exit "$failed"
