#!/usr/bin/env bash
# Issue 5 (and the timeline-cost change of issue 4) on the H200 in one call: the CUDA tests
# (the graph-mode suites included), memcheck over graph mode, the tiny workload in graph and
# stream mode, latency under load, and the headline benchmarks again. Every benchmark verifies
# every element. Logs go to $OUT (at most 8 files come back).
# Usage: OUT=dir bench/issue5_check.sh [quick]
set -u
: "${OUT:?set OUT}"
cd "$(dirname "$0")/.." || exit 2
export PATH="/usr/local/cuda/bin:$PATH"
t0=$SECONDS
phase() { echo "== [$((SECONDS - t0))s] $*"; }
sp=build-gpu/streampipe
phase build
cmake -S . -B build-gpu -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$OUT/build.log" 2>&1 &&
    timeout 120 cmake --build build-gpu -j16 >>"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
phase ctest-cuda
(cd build-gpu && timeout 200 ctest -L cuda -j3 --timeout 190 --output-on-failure >"$OUT/ctest.log" 2>&1)
grep -E "tests passed|Failed|\(Skipped\)|Passed" "$OUT/ctest.log"
phase memcheck-graph
for t in "test_graph cuda" "test_conformance cuda sizes" "test_conformance cuda memory"; do
    SP_TEST_QUICK=1 SP_TEST_GRAPH=1 timeout 90 compute-sanitizer --tool memcheck --error-exitcode=1 \
        build-gpu/tests/$t >>"$OUT/sanitizer.log" 2>&1
    echo "memcheck graph $t: rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer.log" | tail -1)"
done
json() { python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); r=o["report"]; p=o["pipelined"]; s=o.get("stream"); print(sys.argv[2], "serial %.4f pipelined %.4f traced %.4f GB/s %.1f eff %.3f submit %.2f us/chunk%s timeline %+.2f%% notes: %s" % (o["serial"]["median_s"], p["median_s"], o["traced"]["median_s"], p["gbps"], r["efficiency"], p["submit_us_per_chunk"], (" | stream %.4f s %.1f GB/s submit %.2f us/chunk graph_speedup %.2fx" % (s["median_s"], s["gbps"], s["submit_us_per_chunk"], o["graph_speedup"])) if s else "", 100*o["timeline_cost"], r["notes"]))' "$1" "$2" || echo "$2 FAILED"; }
phase tiny
for g in on auto; do
    timeout 60 $sp bench --backend cuda --workload tiny --memory pinned --graph $g --repeat 7 --json \
        >"$OUT/tiny-$g.json" 2>>"$OUT/bench.log"; json "$OUT/tiny-$g.json" "tiny pinned graph=$g"
done
timeout 60 $sp bench --backend cuda --workload tiny --memory pageable --graph on --repeat 5 --json \
    >"$OUT/tiny-pageable.json" 2>>"$OUT/bench.log"; json "$OUT/tiny-pageable.json" "tiny pageable graph=on"
phase headline
for wm in "seed pinned" "transfer pinned" "seed pageable" "transfer pageable"; do
    set -- $wm
    timeout 40 $sp bench --backend cuda --workload "$1" --memory "$2" --repeat 5 --json \
        >"$OUT/b.json" 2>>"$OUT/bench.log"; json "$OUT/b.json" "$1/$2"
done
[[ ${1:-} == quick ]] && exit 0
phase latency
lat() { # LABEL ARGS...
    local label=$1; shift
    timeout 150 "$@" --backend cuda --requests 500 --json >"$OUT/lat.json" 2>>"$OUT/bench.log"
    python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); print(sys.argv[2]); [print("   %-9s p50 %9.1f us  p99 %9.1f us  max %9.1f us  bulk %6.1f GB/s (%.3f of alone)" % (p["phase"], p["p50_us"], p["p99_us"], p["max_us"], p["bulk_gbps"], p["bulk_fraction"])) for p in o["phases"]]; print("   verified mismatches", o["verified"]["mismatches"])' "$OUT/lat.json" "$label" || echo "$label FAILED"
}
lat "default (piece 4M)" $sp latency
lat "piece 1M, bulk chunk 2M, depth 3" $sp latency --piece 1M --bulk-chunk 2M --bulk-depth 3
lat "piece 1M, bulk chunk 1M, depth 2" $sp latency --piece 1M --bulk-chunk 1M --bulk-depth 2
CUDA_DEVICE_MAX_CONNECTIONS=32 lat "default, 32 connections" $sp latency
phase done
