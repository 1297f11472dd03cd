#!/usr/bin/env bash
# Issue 28 on the H200 in one call: for each workload, a sweep of fixed chunk sizes and depths
# beside the library's own choice (--chunk 0 --depth 0, "auto"), printing auto / best fixed
# (throughput, higher is better: the issue asks >= 0.95); then the quarter budget: a run with
# --max-pinned and --max-device at a quarter of what the default holds, which must verify
# and hold at most the budget (the report's pinned_bytes; tune_changes says the library cut
# its settings). Every run is a full `streampipe bench` (every element verified).
# Usage: OUT=dir bench/tune_auto.sh   (about 4 minutes of GPU time; builds once)
# Not here yet (step 3 of issue 28, the re-pick while running, is not wired into the
# scheduler): the MLP rows, the mixed-batch stream and the 10x mid-stream change.
set -u
: "${OUT:?set OUT}"
cd "$(dirname "$0")/.." || exit 2
export PATH="/usr/local/cuda/bin:$PATH"
JSON=$OUT/tune_auto.jsonl
: >"$JSON"
cmake -S . -B build-gpu -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 -DBUILD_TESTING=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$OUT/cfg.log" 2>&1 &&
    cmake --build build-gpu -j16 --target streampipe_cli >"$OUT/build.log" 2>&1 ||
    { tail -20 "$OUT/build.log"; exit 1; }
one() { # ROW LABEL ARGS...
    local row=$1 label=$2
    shift 2
    timeout 90 build-gpu/streampipe bench --backend cuda --repeat 3 --json "$@" 2>>"$OUT/tune_auto.log" |
        python3 -c 'import json,sys; o=json.load(sys.stdin); o["row"]=sys.argv[1]; o["label"]=sys.argv[2]; print(json.dumps(o))' "$row" "$label" >>"$JSON" ||
        echo "{\"row\":\"$row\",\"label\":\"$label\",\"error\":true}" >>"$JSON"
}
sweep() { # ROW ARGS...
    local row=$1
    shift
    one "$row" auto "$@" --chunk 0 --depth 0
    for c in 262144 524288 1048576 2097152 4194304; do one "$row" "chunk$c" "$@" --chunk $c; done
    for d in 3 4 6 8 16; do one "$row" "depth$d" "$@" --depth $d; done
}
sweep seed-pageable --workload seed --memory pageable
sweep compute --workload compute --memory pinned
sweep transfer-pinned --workload transfer --memory pinned
sweep transfer-pageable --workload transfer --memory pageable
sweep tiny-graph --workload tiny --memory pinned --graph on
# the quarter budget: what the default holds, from the auto run of seed (pinned); sinmix's
# device slots hold the same bytes per record as its staging (4 in, 4 out)
P=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    o=json.loads(l)
    if o.get("row")=="seed-pageable" and o.get("label")=="auto" and not o.get("error"): print(o["report"]["pinned_bytes"])' "$JSON")
if [ -n "$P" ]; then
    Q=$((P / 4))
    one quarter "budget$Q" --workload seed --memory pinned --chunk 0 --depth 0 --max-pinned $Q --max-device $Q
fi
python3 - "$JSON" "${Q:-0}" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    rows.setdefault(o["row"], []).append(o)
def rate(o): return 0 if o.get("error") else o["pipelined"]["gbps"]
print(f"{'row':20} {'auto GB/s':>10} {'best fixed':>11} {'best label':>14} {'auto/best':>10}")
for row, runs in rows.items():
    if row == "quarter": continue
    auto = [o for o in runs if o["label"] == "auto"]
    fixed = [o for o in runs if o["label"] != "auto" and not o.get("error")]
    if not auto or not fixed: print(f"{row:20} FAILED"); continue
    best = max(fixed, key=rate)
    print(f"{row:20} {rate(auto[0]):10.2f} {rate(best):11.2f} {best['label']:>14} {rate(auto[0]) / rate(best):10.3f}")
for o in rows.get("quarter", []):
    if o.get("error"): print("quarter budget: FAILED"); continue
    r = o["report"]
    ok = r["pinned_bytes"] <= int(sys.argv[2])
    print(f"quarter budget {sys.argv[2]} B: pinned held {r['pinned_bytes']} B ({'within' if ok else 'OVER'}), "
          f"chunk {o['pipelined']['chunk_records']} depth {o['pipelined']['depth']}, tune_changes {r.get('tune_changes')}, "
          f"{rate(o):.2f} GB/s, verified")
PY
