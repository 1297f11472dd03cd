#!/usr/bin/env bash
# Issue 11's benchmarks on the H200, in one call (after bench/gpu_check.sh has built
# build-gpu, or building it here): streams and a generator source (`streampipe bench
# --batches` and `--source generator`),
# `streampipe run` file to file against `cat` and a plain write of the same size, and
# `streampipe infer` with graph mode and several queues against its default.
# Usage: OUT=dir bench/streams_check.sh [FILE_GIB]   (writes streams.log and streams.jsonl)
# STREAMS_SECTIONS picks what runs (default all): bench, file, infer.
set -u
: "${OUT:?set OUT}"
cd "$(dirname "$0")/.." || exit 2
export PATH="/usr/local/cuda/bin:$PATH"
GIB=${1:-16}
SECTIONS=" ${STREAMS_SECTIONS:-bench file infer} "
want() { [[ $SECTIONS == *" $1 "* ]]; }
LOG=$OUT/streams.log
JSONL=$OUT/streams.jsonl
BUILD=build-gpu
: >"$LOG"
: >"$JSONL"
say() { echo "$*" | tee -a "$LOG"; }

if [[ ! -x $BUILD/streampipe ]]; then
    cmake -S . -B "$BUILD" -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >>"$LOG" 2>&1 &&
        bash bench/cli_build.sh . "$BUILD" >>"$LOG" 2>&1 ||
        { say "build failed"; tail -20 "$LOG"; exit 1; }
fi
CLI=$BUILD/streampipe

if want bench; then
    # 1000 batches of 1 MiB (one chunk each) through one stream against one run and 1000
    # runs; the seed workload from a generator source against pageable and pinned arrays
    say "== streams and sources (streampipe bench --batches, --source generator)"
    for args in "--workload transfer --memory pinned --records 250M --chunk 256k --batches 1000" \
        "--workload seed --source generator"; do
        # shellcheck disable=SC2086 # the options, word by word
        raw=$(timeout 240 "$CLI" bench --backend cuda --repeat 5 --json $args 2>>"$LOG") ||
            say "bench $args FAILED"
        echo "$raw" | tee -a "$LOG" >>"$JSONL"
    done
fi
# streampipe run on a file of GIB GiB, beside cat and a plain copy of it (page cache warm)
file_section() {
say "== streampipe run, file to file (${GIB} GiB, page cache warm)"
DIR=/tmp/sp-files
mkdir -p "$DIR"
records=$((GIB * (1 << 28)))
now() { date +%s.%N; }
elapsed() { python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.3f}")' "$1" "$2"; }
rate() { python3 -c 'import sys; print(f"{float(sys.argv[1]) * 1.073741824 / float(sys.argv[2]):.2f}")' "$GIB" "$1"; }
t0=$(now)
python3 - "$DIR/in.f32" "$records" <<'PY'
import sys, numpy as np
path, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng()
with open(path, "wb") as f:
    step = 1 << 26
    for lo in range(0, n, step):
        rng.uniform(-4, 4, min(step, n - lo)).astype(np.float32).tofile(f)
PY
say "input written in $(elapsed "$t0" "$(now)") s"
time_of() { local t0; t0=$(now); "$@" >/dev/null 2>>"$LOG"; elapsed "$t0" "$(now)"; }
# drop_cache FILE: evicts FILE's clean pages from the page cache (posix_fadvise DONTNEED needs
# no root, unlike /proc/sys/vm/drop_caches), so that the next read comes from the disk
drop_cache() { python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"; }
# Every time is the wall time of the whole command: the run's includes starting, pinning its
# staging memory and the fsync before the rename, as dd's includes its conv=fsync.
for round in warm cold; do
    if [[ $round == warm ]]; then cat "$DIR/in.f32" >/dev/null; else drop_cache "$DIR/in.f32"; fi
    t_cat=$(time_of cat "$DIR/in.f32")
    [[ $round == cold ]] && drop_cache "$DIR/in.f32"
    t_write=$(time_of dd if="$DIR/in.f32" of="$DIR/plain.f32" bs=16M conv=fsync status=none)
    rm -f "$DIR/plain.f32"
    [[ $round == cold ]] && drop_cache "$DIR/in.f32"
    t0=$(now)
    raw=$(timeout 300 "$CLI" run --backend cuda --input "$DIR/in.f32" --output "$DIR/out.f32" \
        --stages sinmix:iters=100 --json 2>>"$LOG")
    rc=$?
    t_run=$(elapsed "$t0" "$(now)")
    makespan=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["report"]["makespan_s"])' "$raw" 2>/dev/null || echo 0)
    echo "$raw" >>"$JSONL"
    slowest=$(python3 -c 'import sys; print(max(float(a) for a in sys.argv[1:]))' "$t_cat" "$t_write")
    say "$round: cat $t_cat s ($(rate "$t_cat") GB/s), copy+fsync $t_write s ($(rate "$t_write") GB/s), run (exit $rc) $t_run s wall ($(rate "$t_run") GB/s; makespan $makespan s): $(python3 -c 'import sys; print(f"{float(sys.argv[1]) / float(sys.argv[2]):.3f}")' "$slowest" "$t_run") of the slower of cat and copy"
done
# the output against the reference on sampled records (every element: the run's own check
# is the library's; this is the file's)
python3 - "$DIR/in.f32" "$DIR/out.f32" <<'PY' | tee -a "$LOG"
import sys, numpy as np
x = np.memmap(sys.argv[1], dtype=np.float32, mode="r")
y = np.memmap(sys.argv[2], dtype=np.float32, mode="r")
assert x.shape == y.shape, (x.shape, y.shape)
idx = np.random.default_rng().integers(0, x.shape[0], 1 << 20)
v = x[idx] * np.float32(0.5) + x[idx] * x[idx] * np.float32(0.1)
for _ in range(100):
    v = v + np.sin(v * np.float32(0.01), dtype=np.float32)
err = np.abs(y[idx].astype(np.float64) - v) / np.maximum(1.0, np.abs(v))
print(f"run output: {x.shape[0]} records, 2^20 sampled: max rel error {err.max():.2e} "
      f"(tolerance {1e-5 * 101:.2e}), {(err > 1e-5 * 101).sum()} outside; NaN {np.isnan(y[idx]).sum()}")
PY
rm -f "$DIR"/*.f32
}
want file && file_section

want infer && say "== streampipe infer: default against graph mode and 2 queues per stage (scratch)"
want infer && for args in "" "--graph on" "--streams 2" "--graph on --precision tf32" "--precision tf32"; do
    raw=$(timeout 120 "$CLI" infer --backend cuda --model models/digits_mlp.safetensors \
        --input models/digits_test_images.u8 --labels models/digits_test_labels.u8 \
        --replicate 27778 --chunk 262144 --depth 8 --json $args 2>>"$LOG")
    echo "$raw" >>"$JSONL"
    python3 -c 'import json,sys; o=json.loads(sys.argv[1]); print(sys.argv[2] or "default", {k: o[k] for k in o if "per_s" in k or k in ("wrong", "accuracy", "errors")})' "$raw" "$args" 2>&1 | tee -a "$LOG"
done
