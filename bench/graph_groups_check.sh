#!/usr/bin/env bash
# Graph groups with parallel branches (third session) on the H200 in one call: a -Werror
# sm_90 build, the graph-mode CUDA tests, memcheck over graph mode, the tiny workload in graph
# mode against stream mode by depth (depth 8/16/32/64: groups of 4/8/16/16 chunks), and the
# headline runs for the timeline's cost. Every benchmark verifies every element. Logs go to
# $OUT (at most 8 files come back).
# Usage: OUT=dir bench/graph_groups_check.sh [tests|bench|timeline]   (default: tests and bench;
# timeline: only the timeline's cost on the headline workloads and tiny at the default depth)
set -u
: "${OUT:?set OUT}"
cd "$(dirname "$0")/.." || exit 2
export PATH="/usr/local/cuda/bin:$PATH"
what=${1:-all}
t0=$SECONDS
phase() { echo "== [$((SECONDS - t0))s] $*"; }
sp=build-gpu/streampipe
phase build
cmake -S . -B build-gpu -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$OUT/build.log" 2>&1 &&
    timeout 150 cmake --build build-gpu -j16 >>"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
if [[ $what != bench ]]; then
    phase ctest-graph
    (cd build-gpu && timeout 240 ctest -R "graph" -j3 --timeout 230 --output-on-failure >"$OUT/ctest.log" 2>&1)
    grep -E "tests passed|Failed|\(Skipped\)|Passed" "$OUT/ctest.log"
    phase memcheck-graph
    for t in "test_graph cuda" "test_conformance cuda sizes"; do
        SP_TEST_QUICK=1 SP_TEST_GRAPH=1 timeout 120 compute-sanitizer --tool memcheck \
            --report-api-errors no --error-exitcode=1 build-gpu/tests/$t >>"$OUT/sanitizer.log" 2>&1
        echo "memcheck graph $t: rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer.log" | tail -1)"
    done
fi
[[ $what == tests ]] && exit 0
json() { python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); r=o["report"]; p=o["pipelined"]; s=o.get("stream"); print(sys.argv[2], "depth %d pipelined %.4f s %.1f GB/s submit %.2f us/chunk (waiting %.2f)%s timeline %+.2f%% (read after %.3f ms) notes: %s" % (r["depth"], p["median_s"], p["gbps"], p["submit_us_per_chunk"], p.get("wait_us_per_chunk", 0.0), (" | stream %.4f s %.1f GB/s submit %.2f us/chunk graph_speedup %.2fx" % (s["median_s"], s["gbps"], s["submit_us_per_chunk"], o["graph_speedup"])) if s else "", 100*o["timeline_cost"], 1e3*o.get("timeline_read_s", 0.0), r["notes"]))' "$1" "$2" || echo "$2 FAILED"; }
if [[ $what == timeline ]]; then
    phase timeline
    for wm in "seed pinned" "transfer pinned" "compute pinned" "seed pinned" "transfer pinned" "compute pinned"; do
        set -- $wm
        timeout 60 $sp bench --backend cuda --workload "$1" --memory "$2" --repeat 15 --json \
            >/tmp/b.json 2>>"$OUT/bench.log"; json /tmp/b.json "$1/$2"
    done
    timeout 60 $sp bench --backend cuda --workload tiny --memory pinned --graph auto --repeat 9 \
        --json >/tmp/tiny.json 2>>"$OUT/bench.log"; json /tmp/tiny.json "tiny pinned graph=auto (default depth)"
    phase done
    exit 0
fi
phase tiny
for d in 8 16 32 64 16 32; do
    timeout 60 $sp bench --backend cuda --workload tiny --memory pinned --graph on --depth $d \
        --repeat 9 --json >/tmp/tiny.json 2>>"$OUT/bench.log"; json /tmp/tiny.json "tiny pinned graph=on"
done
# 16383 records: a chunk no longer fills its 256-byte-aligned slot, so each chunk has its own copies
timeout 60 $sp bench --backend cuda --workload tiny --memory pinned --graph on --chunk 16383 \
    --repeat 9 --json >/tmp/tiny.json 2>>"$OUT/bench.log"; json /tmp/tiny.json "tiny pinned graph=on chunk 16383"
timeout 60 $sp bench --backend cuda --workload tiny --memory pinned --graph auto --repeat 9 --json \
    >/tmp/tiny.json 2>>"$OUT/bench.log"; json /tmp/tiny.json "tiny pinned graph=auto (default depth)"
timeout 60 $sp bench --backend cuda --workload tiny --memory pageable --graph on --repeat 5 --json \
    >/tmp/tiny.json 2>>"$OUT/bench.log"; json /tmp/tiny.json "tiny pageable graph=on"
phase trace
timeout 60 $sp bench --backend cuda --workload seed --memory pinned --repeat 3 --trace "$OUT/seed-trace.json" \
    --svg "$OUT/seed.svg" >"$OUT/seed-trace.txt" 2>>"$OUT/bench.log"; echo "seed trace rc=$?"
phase headline
for wm in "seed pinned" "transfer pinned" "seed pinned" "transfer pinned"; do
    set -- $wm
    timeout 40 $sp bench --backend cuda --workload "$1" --memory "$2" --repeat 9 --json \
        >/tmp/b.json 2>>"$OUT/bench.log"; json /tmp/b.json "$1/$2"
done
phase done
