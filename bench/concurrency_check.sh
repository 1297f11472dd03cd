#!/usr/bin/env bash
# For issue 5 (not yet run on a GPU): concurrent kernels and copy pieces.
# - A sinmix stage whose chunks are 2048 records, so each kernel has 8 blocks of 256 threads
#   and fills a small part of the H200, at 1, 2, 4 and 8 streams (target: >= 1.8x at 4 over 1).
# - The transfer workload with copies whole and in 1, 4 and 16 MiB pieces (what splitting
#   costs the bulk pipeline).
# Every run is a full `streampipe bench` (every element verified). Usage: OUT=dir $0
set -u
: "${OUT:?set OUT}"
cd "$(dirname "$0")/.." || exit 2
export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B build-gpu -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 -DBUILD_TESTING=OFF \
    >"$OUT/build.log" 2>&1 && cmake --build build-gpu -j16 --target streampipe_cli >>"$OUT/build.log" 2>&1 ||
    { tail -20 "$OUT/build.log"; exit 1; }
run() { # LABEL ARGS...
    local label=$1
    shift
    timeout 60 build-gpu/streampipe bench --backend cuda --repeat 5 --json "$@" 2>>"$OUT/bench.log" |
        python3 -c 'import json,sys; o=json.load(sys.stdin); r=o["report"]; print("%-28s pipelined %.4f s  %.1f GB/s  eff %.3f  %s" % (sys.argv[1], o["pipelined"]["median_s"], o["pipelined"]["gbps"], r["efficiency"], r["bottleneck"]))' "$label" ||
        echo "$label FAILED"
}
for s in 1 2 4 8; do
    run "small kernels, streams $s" --records 2^22 --iters 2000 --chunk 2048 --memory pinned --streams "$s"
done
run "transfer, whole copies" --workload transfer --memory pinned
for p in 1048576 4194304 16777216; do
    run "transfer, pieces of $p" --workload transfer --memory pinned --piece "$p"
done
