#!/usr/bin/env bash
# Compressed inputs decompressed inside the ring on the lent GPU (issue 26), one call:
#   OUT=/some/dir SP_NVCOMP_LIBRARY=/path/libnvcomp.so.6 bench/compress_check.sh [GIB]
# (gpu_check.sh sets SP_NVCOMP_LIBRARY from the wheel it installs; default 2 GiB.)
# Data: GIB GiB of float32 "sensor" records, a random walk quantized to 1/8 whose steps are
# mostly 0 (numpy, else pure Python over 16 MiB repeated): structured floats that LZ4
# compresses about 2-3:1 (the ratio is measured and printed; below 2:1 the check FAILs).
# Files: in.lz4 (lz4 -B4: blocks of 64 KiB, many per chunk, as nvCOMP wants), in.zst (frames
# of 1 MiB, each compressed by zstd -1 on its own and concatenated, as the seekable format
# lays them out; pzstd's 2 MiB frames work too but give nvCOMP fewer units per chunk).
# For each format, the same stage chain (sinmix:iters=1, 64 MiB chunks):
#   1. effective input rate (uncompressed bytes into stage 1 over the makespan) of the ring
#      run against the pinned H2D ceiling measured now (streampipe probe: its best chunk
#      size); target >= 1.5x;
#   2. end to end, file to file, page cache warm: `streampipe run` on the compressed file
#      (wall time of the command) against the CPU path: `lz4 -d` / `zstd -d -T16` to a file,
#      then `streampipe run` on it; target >= 5x. (`--input -` is not supported: the file
#      source reads regular files positionally, so there is no pipe variant.)
#   plus the staging-thread path (--decompress staging) for reference; every output cmp'd
#   with the raw run's.
# Writes $OUT/compress_check.log and $OUT/compress_check.jsonl (each run's --json). Exit 1
# when a check failed. Reads only; never changes clocks or modes.
set -u
: "${OUT:?set OUT to the folder whose files come back}"
cd "$(dirname "$0")/.." || exit 2
GIB=${1:-2}
CLI=${CLI:-build-gpu/streampipe}
DIR=${COMPRESS_DIR:-/tmp/sp-compress}
LOG=$OUT/compress_check.log
JSON=$OUT/compress_check.jsonl
mkdir -p "$OUT" "$DIR"
: >"$LOG"; : >"$JSON"; rm -f "$DIR/failed"
say() { echo "$*" | tee -a "$LOG"; }
FAILED=0
[[ -x $CLI ]] || { say "no $CLI (run bench/gpu_check.sh first, or set CLI)"; exit 2; }
source bench/nvcomp_env.sh # the wheel in .wheels/, when SP_NVCOMP_LIBRARY is not set
[[ -n ${SP_NVCOMP_LIBRARY:-} ]] || say "note: SP_NVCOMP_LIBRARY is not set: the library path must find libnvcomp.so.6"

python3 - "$DIR/in.f32" "$GIB" <<'EOF' || { say "making the input failed"; exit 2; }
import sys
path, gib = sys.argv[1], float(sys.argv[2])
n = int(gib * (1 << 30)) // 4
try:
    import numpy as np
    rng = np.random.default_rng()
    step = 1 << 24
    with open(path, "wb") as f:
        x = 0.0
        for at in range(0, n, step):
            k = min(step, n - at)
            moves = rng.choice([-1, 0, 0, 0, 0, 0, 0, 1], size=k).astype(np.float32) / 8
            walk = x + np.cumsum(moves, dtype=np.float32)
            x = float(walk[-1])
            walk.astype(np.float32).tofile(f)
except ImportError:
    import array, random
    piece = array.array("f")
    x = 0.0
    for _ in range(1 << 22):
        x += random.choice((-1, 0, 0, 0, 0, 0, 0, 1)) / 8
        piece.append(x)
    data = piece.tobytes()
    with open(path, "wb") as f:
        left = n * 4
        while left > 0:
            f.write(data[: min(left, len(data))])
            left -= len(data)
EOF
cat "$DIR/in.f32" >/dev/null
lz4 -q -f -B4 "$DIR/in.f32" "$DIR/in.lz4" || { say "lz4 failed"; exit 2; }
rm -rf "$DIR/parts" && mkdir -p "$DIR/parts" &&
    split -b 1M -d -a 6 "$DIR/in.f32" "$DIR/parts/p" &&
    ls "$DIR/parts" | xargs -P 16 -I{} zstd -q -1 --rm "$DIR/parts/{}" &&
    ls "$DIR/parts" | sort | sed "s|^|$DIR/parts/|" | xargs cat >"$DIR/in.zst" &&
    rm -rf "$DIR/parts" || { say "zstd failed"; exit 2; }
BYTES=$(stat -c %s "$DIR/in.f32")
for f in in.lz4 in.zst; do
    cat "$DIR/$f" >/dev/null
    say "$f: $(stat -c %s "$DIR/$f") bytes, ratio $(awk -v a="$BYTES" -v b="$(stat -c %s "$DIR/$f")" 'BEGIN { printf "%.2f", a / b }') (uncompressed / compressed), data: quantized float32 random walk, $GIB GiB"
done
LZ4_RATIO=$(awk -v a="$BYTES" -v b="$(stat -c %s "$DIR/in.lz4")" 'BEGIN { printf "%.2f", a / b }')
awk -v r="$LZ4_RATIO" 'BEGIN { exit !(r >= 2.0) }' || { say "FAIL: LZ4 ratio $LZ4_RATIO < 2"; FAILED=1; }

CEIL=$("$CLI" probe --quick --json 2>>"$LOG" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(max(r["gbps"] for r in d["chunk_h2d_gbps"]))')
say "pinned H2D ceiling (probe, best chunk size): ${CEIL:-?} GB/s"

STAGES=sinmix:iters=1
CHUNK=16777216 # records of 4 bytes: 64 MiB chunks
# run NAME INPUT OUTPUT [ARGS...]: one `streampipe run`, its --json appended; prints its wall s
run() {
    local name=$1 in=$2 out=$3
    shift 3
    local t0 t1
    t0=$(date +%s.%N)
    "$CLI" run --input "$in" --output "$out" --stages "$STAGES" --chunk "$CHUNK" --json "$@" \
        >"$DIR/run.json" 2>>"$LOG" || { say "FAIL: $name: streampipe run failed" >&2; : >"$DIR/failed"; }
    t1=$(date +%s.%N)
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["check"]=sys.argv[2]; print(json.dumps(d))' \
        "$DIR/run.json" "$name" >>"$JSON" 2>/dev/null
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d.get("compression",{}); print(c.get(sys.argv[2], ""))' "$DIR/run.json" "$1"; }

RAW_S=$(run raw "$DIR/in.f32" "$DIR/ref.f32")
say "raw run: ${RAW_S}s"
for fmt in lz4 zst; do
    in=$DIR/in.$fmt
    RING_S=$(run "ring-$fmt" "$in" "$DIR/out.f32" --decompress ring)
    EFF=$(field effective_gbps); HOW=$(field how); OVER=$(field ring_overlap); BUSY=$(field ring_busy_s)
    cmp -s "$DIR/ref.f32" "$DIR/out.f32" || { say "FAIL: ring-$fmt output differs from the raw run's"; FAILED=1; }
    say "ring $fmt: ${RING_S}s wall; effective input ${EFF} GB/s; decompression ${BUSY}s busy, ${OVER}; $HOW"
    awk -v e="$EFF" -v c="$CEIL" 'BEGIN { exit !(c > 0 && e >= 1.5 * c) }' &&
        say "PASS: ring $fmt effective rate >= 1.5x the H2D ceiling ($EFF vs $CEIL GB/s)" ||
        { say "FAIL: ring $fmt effective rate < 1.5x the H2D ceiling ($EFF vs $CEIL GB/s)"; FAILED=1; }
    STAGING_S=$(run "staging-$fmt" "$in" "$DIR/out.f32" --decompress staging)
    cmp -s "$DIR/ref.f32" "$DIR/out.f32" || { say "FAIL: staging-$fmt output differs"; FAILED=1; }
    t0=$(date +%s.%N)
    if [[ $fmt == lz4 ]]; then lz4 -q -d -f "$in" "$DIR/cpu.f32"; else zstd -q -d -f -T16 "$in" -o "$DIR/cpu.f32"; fi
    t1=$(date +%s.%N)
    CPU_RUN_S=$(run "cpu-$fmt" "$DIR/cpu.f32" "$DIR/out.f32")
    CPU_S=$(awk -v a="$t0" -v b="$t1" -v r="$CPU_RUN_S" 'BEGIN { printf "%.3f", b - a + r }')
    cmp -s "$DIR/ref.f32" "$DIR/out.f32" || { say "FAIL: cpu-$fmt output differs"; FAILED=1; }
    rm -f "$DIR/cpu.f32"
    say "cpu path $fmt: ${CPU_S}s (decompress to a file, then run); staging threads: ${STAGING_S}s"
    awk -v g="$RING_S" -v c="$CPU_S" 'BEGIN { exit !(g > 0 && c / g >= 5) }' &&
        say "PASS: ring $fmt end to end >= 5x the CPU path ($CPU_S / $RING_S s)" ||
        { say "FAIL: ring $fmt end to end < 5x the CPU path ($CPU_S / $RING_S s)"; FAILED=1; }
done
rm -f "$DIR/out.f32" "$DIR/ref.f32"
[[ -f $DIR/failed ]] && FAILED=1
say "compress_check: $([[ $FAILED == 0 ]] && echo PASS || echo FAIL)"
exit $FAILED
