#!/usr/bin/env bash
# Tuning runs for the H200 in one call: staging copy A/B (non-temporal stores vs plain
# memcpy, two builds), timeline cost, and depth/chunk sweeps around the defaults. Every run is
# a full `streampipe bench` (every element verified); one JSON line per run in $OUT/tune.jsonl
# and a table at the end. Usage: OUT=dir bench/tune.sh
set -u
: "${OUT:?set OUT}"
cd "$(dirname "$0")/.." || exit 2
export PATH="/usr/local/cuda/bin:$PATH"
JSON=$OUT/tune.jsonl
: >"$JSON"
build() { # DIR EXTRA_C_FLAGS
    cmake -S . -B "$1" -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 -DBUILD_TESTING=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$2" >"$OUT/cfg-$(basename "$1").log" 2>&1 &&
        cmake --build "$1" -j16 --target streampipe_cli >"$OUT/build-$(basename "$1").log" 2>&1
}
build build-gpu "" || { tail -20 "$OUT/build-build-gpu.log"; exit 1; }
build build-plain "-DSP_STAGING_PLAIN_MEMCPY" || { tail -20 "$OUT/build-build-plain.log"; exit 1; }
one() { # LABEL BUILD ARGS...
    local label=$1 dir=$2
    shift 2
    timeout 60 "$dir/streampipe" bench --backend cuda --repeat 3 --json "$@" 2>>"$OUT/tune.log" |
        python3 -c 'import json,sys; o=json.load(sys.stdin); o["label"]=sys.argv[1]; print(json.dumps(o))' "$label" >>"$JSON" ||
        echo "{\"label\":\"$label\",\"error\":true}" >>"$JSON"
}
for w in seed transfer; do
    one "$w-pageable-nt" build-gpu --workload $w --memory pageable
    one "$w-pageable-plain" build-plain --workload $w --memory pageable
done
for d in 3 4 6 8; do
    one "seed-pageable-depth$d" build-gpu --workload seed --memory pageable --depth $d
    one "transfer-pinned-depth$d" build-gpu --workload transfer --memory pinned --depth $d
done
for c in 524288 1048576 4194304 8388608; do
    one "seed-pageable-chunk$c" build-gpu --workload seed --memory pageable --chunk $c
    one "transfer-pinned-chunk$c" build-gpu --workload transfer --memory pinned --chunk $c
done
one "transfer-pinned-default" build-gpu --workload transfer --memory pinned
one "seed-pinned-default" build-gpu --workload seed --memory pinned
python3 - "$JSON" <<'PY'
import json, sys
print(f"{'label':32} {'serial s':>9} {'pipe s':>9} {'traced s':>9} {'speedup':>8} {'GB/s':>7} {'eff':>6} {'chunk':>9} {'depth':>5} bottleneck")
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("error"):
        print(f"{o['label']:32} FAILED"); continue
    r = o.get("report", {})
    print(f"{o['label']:32} {o['serial']['median_s']:9.4f} {o['pipelined']['median_s']:9.4f} {o['traced']['median_s']:9.4f} "
          f"{o['speedup']:8.2f} {o['pipelined']['gbps']:7.2f} {r.get('efficiency',0):6.3f} {o['pipelined']['chunk_records']:9d} "
          f"{o['pipelined']['depth']:5d} {r.get('bottleneck','')}")
PY
