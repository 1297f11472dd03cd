#!/usr/bin/env bash
# Device-resident ends on the GPU (issue 25), in one call of at most ~6 minutes: a CUDA build,
# the C device-end tests on CUDA (and under memcheck), the Python device-end and Loader tests
# with torch and CuPy (SP_REQUIRE_CUDA=1: a skip is a failure), the bench rows with device
# ends (host->device, device->host, device->device, every element verified, pcie_bytes
# checked) and the training-loop benchmark against a DataLoader and a hand-written prefetcher.
#
# Usage: OUT=/some/dir bench/devends_check.sh     (gpu_check.sh runs the last two phases too)
# Files in $OUT: devends.log (everything), bench_ends.jsonl (one bench object per row),
# torch_loader.jsonl (the training loop's rows and ratios), summary.txt (PASS/FAIL table).
# Reads only; never changes clocks or modes.
set -u
: "${OUT:?set OUT to the folder whose files come back}"
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
BUILD=${DEVENDS_BUILD:-build-gpu}
LOG=$OUT/devends.log
: >"$LOG"
ROWS=()
phase() { # NAME LIMIT_S COMMAND...
    local name=$1 limit=$2 t0=$SECONDS rc
    shift 2
    echo "===== $name $(date -u +%H:%M:%S): $*" >>"$LOG"
    timeout --kill-after=10 "$limit" "$@" >>"$LOG" 2>&1
    rc=$?
    ROWS+=("$(printf '%-22s %-5s %4ss' "$name" "$([[ $rc == 0 ]] && echo PASS || echo FAIL)" \
        $((SECONDS - t0)))")
    echo "===== $name: exit $rc" >>"$LOG"
    [[ $rc == 0 ]] || tail -n 25 "$LOG"
    return $rc
}
phase configure 120 cmake -S . -B "$BUILD" -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON
phase build 300 cmake --build "$BUILD" -j16 --target test_device_ends test_stream_cancel \
    test_run_io streampipe_cli
phase c-tests 60 bash -c "'$BUILD/tests/test_device_ends' cuda && '$BUILD/tests/test_stream_cancel' cuda"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/compute-sanitizer/compute-sanitizer)
phase memcheck 90 env SP_TEST_QUICK=1 "$SAN" --tool memcheck --error-exitcode=1 \
    "$BUILD/tests/test_device_ends" cuda
phase python 150 bash -c "python3 -m pip install -q --no-build-isolation --no-deps . &&
    cd /tmp && SP_REQUIRE_CUDA=1 python3 '$PWD/python/tests/run.py' \
    '$PWD/python/tests/test_device_ends_cuda.py' '$PWD/python/tests/test_device_ends.py' \
    '$PWD/python/tests/test_torch_loader.py'"
phase bench-ends 90 env SP_BENCH_ENDS_JSONL="$OUT/bench_ends.jsonl" \
    sh tests/cli/cli_bench_ends.sh "$BUILD/streampipe" cuda
phase torch-loader 150 bash -c "python3 bench/torch_loader_bench.py --repeat 5 |
    tee -a '$OUT/torch_loader.jsonl.txt'; exit \${PIPESTATUS[0]}"
grep '^{' "$OUT/torch_loader.jsonl.txt" >"$OUT/torch_loader.jsonl" 2>/dev/null
rm -f "$OUT/torch_loader.jsonl.txt"
{
    echo "devends_check: $SECONDS s"
    printf '%s\n' "${ROWS[@]}"
    grep -E '^--in |streampipe / |^(streampipe|dataloader|prefetcher) ' "$LOG"
} | tee "$OUT/summary.txt"
