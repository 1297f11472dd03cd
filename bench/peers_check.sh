#!/usr/bin/env bash
# Issue 17 on the H200, in one call: the sinmix kernel's shapes (bench/sinmix_variants.cu),
# then streampipe's defaults against the hand-written rings (bench/peers/) in the same call,
# alternating, every output verified. A second CLI built with SP_STAGING_SPIN_US=0 (workers
# that sleep between copies, as before) gives the pageable A/B.
# Usage: OUT=dir bench/peers_check.sh [ROUNDS]   (writes peers.jsonl, variants.txt, log.txt)
# PEERS_SECTIONS picks what runs (default all): variants, pageable, settings, pinned,
# transfer-sweep (transfer pageable at a few chunk/depth/thread settings beside the C ring).
set -u
: "${OUT:?set OUT}"
cd "$(dirname "$0")/.." || exit 2
export PATH="/usr/local/cuda/bin:$PATH"
ROUNDS=${1:-3}
SECTIONS=" ${PEERS_SECTIONS:-variants pageable settings pinned} "
want() { [[ $SECTIONS == *" $1 "* ]]; }
LOG=$OUT/log.txt
JSONL=$OUT/peers.jsonl
: >"$LOG"
: >"$JSONL"
say() { echo "$*" | tee -a "$LOG"; }

build() { # DIR EXTRA_C_FLAGS TARGET
    cmake -S . -B "$1" -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="$2" >>"$LOG" 2>&1 &&
        cmake --build "$1" -j16 --target "$3" >>"$LOG" 2>&1
}
build build-gpu "" streampipe_cli || { say "build failed"; tail -30 "$LOG"; exit 1; }
want pageable && { build build-base "-DSP_STAGING_SPIN_US=0" streampipe_cli || say "base build failed"; }
mkdir -p build-peers
nvcc -O3 -arch=sm_90 bench/sinmix_variants.cu -o build-peers/sinmix_variants >>"$LOG" 2>&1 &&
    gcc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -fopenmp -I/usr/local/cuda/include \
        -c bench/peers/c_ring.c -o build-peers/c_ring.o >>"$LOG" 2>&1 &&
    nvcc -O3 -arch=sm_90 -c bench/peers/plain_sinmix.cu -o build-peers/plain_sinmix.o >>"$LOG" 2>&1 &&
    nvcc -arch=sm_90 build-peers/c_ring.o build-peers/plain_sinmix.o -lgomp \
        -o build-peers/c_ring >>"$LOG" 2>&1 || say "peer build failed"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$LOG"
echo "host: $(nproc) CPUs" | tee -a "$LOG"

if want variants; then
    say "== kernel variants"
    timeout 120 build-peers/sinmix_variants 7 2>&1 | tee "$OUT/variants.txt"
fi

# tagged LABEL COMMAND...: runs COMMAND (which prints one JSON object) and appends that object
# to peers.jsonl with "label" and "exit" added; a failed or unverified run says so.
tagged() {
    local label=$1 raw
    shift
    raw=$(timeout 90 "$@" 2>>"$LOG")
    local rc=$?
    python3 -c 'import json,sys; o=json.loads(sys.argv[3] or "{}"); o["label"]=sys.argv[1]; o["exit"]=int(sys.argv[2]); print(json.dumps(o))' \
        "$label" "$rc" "$raw" >>"$JSONL" || echo "{\"label\":\"$label\",\"exit\":$rc}" >>"$JSONL"
    ((rc == 0)) || say "FAILED (exit $rc): $label $*"
}
sp() { # LABEL BUILD_DIR WORKLOAD MEMORY [OPTIONS]
    local label=$1 dir=$2 w=$3 m=$4
    shift 4
    tagged "$label" "$dir/streampipe" bench --backend cuda --workload "$w" --memory "$m" \
        --repeat 5 --json "$@"
}
ring() { local label=$1; shift; tagged "$label" build-peers/c_ring "$@"; }
torch_ring() { local label=$1; shift; tagged "$label" python3 bench/peers/torch_ring.py "$@"; }

want pageable && say "== pageable, alternating ($ROUNDS rounds)"
want pageable && for r in $(seq "$ROUNDS"); do
    for w in seed transfer; do
        sp "spin" build-gpu $w pageable
        [[ -x build-base/streampipe ]] && sp "sleep" build-base $w pageable
        ring "c_ring" $w pageable
    done
done
if want settings; then
    say "== pageable settings (spin build, seed)"
    sp "spin depth3" build-gpu seed pageable --depth 3
    sp "spin chunk16M" build-gpu seed pageable --chunk 4194304
    sp "spin chunk16M depth3" build-gpu seed pageable --chunk 4194304 --depth 3
    ring "c_ring 8M K5" seed pageable 5 8 5
fi
if want transfer-sweep; then
    say "== transfer pageable: settings beside the C ring, alternating ($ROUNDS rounds)"
    for r in $(seq "$ROUNDS"); do
        sp "default" build-gpu transfer pageable
        ring "c_ring" transfer pageable
        sp "chunk16M" build-gpu transfer pageable --chunk 4194304
        sp "chunk16M depth3" build-gpu transfer pageable --chunk 4194304 --depth 3
        sp "threads12" build-gpu transfer pageable --threads 12
    done
fi

want pinned && say "== pinned"
want pinned && for r in $(seq 2); do
    for w in seed compute transfer; do
        sp "spin" build-gpu $w pinned
        torch_ring "torch_ring K4" $w --depth 4
        torch_ring "torch_ring K8" $w --depth 8
        ring "c_ring" $w pinned 5 8 4
    done
done

say "== summary (median seconds; streampipe: pipelined.median_s)"
python3 - "$JSONL" <<'PY' | tee -a "$LOG"
import json, sys, statistics
from collections import defaultdict
rows = defaultdict(list)
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "workload" not in o:
        print("no result:", o)
        continue
    t = o["median_s"] if "peer" in o else o["pipelined"]["median_s"]
    rows[(o["workload"], o["memory"], o["label"])].append((t, o["exit"] == 0))
for key in sorted(rows):
    ts = [t for t, _ in rows[key]]
    print(f"{key[0]:9s} {key[1]:9s} {key[2]:22s} median {1e3*statistics.median(ts):8.2f} ms  "
          f"runs {' '.join(f'{1e3*t:.2f}' for t in ts)}  verified {all(ok for _, ok in rows[key])}")
PY
