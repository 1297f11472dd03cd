#!/usr/bin/env bash
# A short H200 check for the end of a session with little device time left: the CUDA tests,
# racecheck on a subset, and the headline benchmarks, each phase under its own timeout.
# Usage: OUT=dir bench/final_check.sh
set -u
: "${OUT:?set OUT}"
cd "$(dirname "$0")/.." || exit 2
export PATH="/usr/local/cuda/bin:$PATH"
t0=$SECONDS
phase() { echo "== [$((SECONDS - t0))s] $*"; }
phase build
cmake -S . -B build-gpu -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$OUT/build.log" 2>&1 &&
    timeout 90 cmake --build build-gpu -j16 >>"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
phase ctest-cuda
(cd build-gpu && timeout 60 ctest -L cuda -j4 --timeout 55 --output-on-failure >"$OUT/ctest.log" 2>&1)
grep -E "tests passed|Failed|\(Skipped\)" "$OUT/ctest.log"
phase racecheck
SP_TEST_QUICK=1 timeout 40 compute-sanitizer --tool racecheck --error-exitcode=1 \
    build-gpu/tests/test_conformance cuda sizes >"$OUT/racecheck.log" 2>&1
echo "racecheck rc=$? $(tail -1 "$OUT/racecheck.log")"
phase bench
for wm in "seed pageable" "seed pinned" "transfer pinned" "transfer pageable"; do
    set -- $wm
    extra=()
    [[ $1/$2 == seed/pinned ]] && extra=(--trace "$OUT/seed-trace.json" --svg "$OUT/seed.svg")
    timeout 25 build-gpu/streampipe bench --backend cuda --workload "$1" --memory "$2" \
        --repeat 5 --json "${extra[@]}" >"$OUT/bench-$1-$2.json" 2>>"$OUT/bench.log"
    python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); r=o["report"]; print(sys.argv[2], "serial %.4f pipelined %.4f traced %.4f speedup %.2f GB/s %.1f ceiling %.1f eff %.3f %s" % (o["serial"]["median_s"], o["pipelined"]["median_s"], o["traced"]["median_s"], o["speedup"], o["pipelined"]["gbps"], o["ceiling"]["gbps"], r["efficiency"], r["bottleneck"]))' "$OUT/bench-$1-$2.json" "$1/$2" || echo "$1/$2 FAILED"
done
phase done
