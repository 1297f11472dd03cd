#!/bin/sh
# run.sh [SECONDS] [BUILD_DIR]: builds the fuzz targets with clang (libFuzzer, ASan, UBSan) in
# BUILD_DIR (default build-fuzz) and fuzzes each for SECONDS (default 60): the model loader
# from the committed model and the dictionary of safetensors keys, then the compressed-input
# frame parsers from the seeds in tests/fuzz/frames/ (LZ4 and Zstandard files). Exits non-zero on
# a crash, a leak, a hang or a broken invariant; the input that caused it is left in
# BUILD_DIR as crash-*, leak-* or timeout-* (replay it with fuzz_safetensors_replay).
# FUZZ_CC names the compiler (default clang).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
build=${2:-$root/build-fuzz}
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER="${FUZZ_CC:-clang}" -DSP_FUZZ=ON \
    -DSP_WITH_CUDA=OFF -DSP_WERROR=ON
cmake --build "$build" --target fuzz_safetensors fuzz_frames
# libFuzzer writes the inputs it finds into the first folder: a scratch one, not models/.
corpus="$build/fuzz-corpus"
mkdir -p "$corpus"
cp "$root/models/digits_mlp.safetensors" "$corpus/"
# max_len: the model file (340 KB) and some room to grow; one input may take 10 s at most.
"$build/tests/fuzz/fuzz_safetensors" -dict="$root/tests/fuzz/safetensors.dict" \
    -max_total_time="$seconds" -max_len=400000 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/" "$corpus"
# The frame parsers: small inputs reach every header field; the seeds are lz4/zstd/pzstd files.
frames="$build/fuzz-frames-corpus"
mkdir -p "$frames"
cp "$root"/tests/fuzz/frames/* "$frames/"
"$build/tests/fuzz/fuzz_frames" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/frames-" "$frames"
