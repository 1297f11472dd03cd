#!/usr/bin/env bash
# Issue 28 in one call: the library's own settings ("auto": --chunk 0 --depth 0) against the
# best fixed setting of a sweep in the same call, for every workload the issue names, and the
# re-pick under a budget. Every run verifies its output (bench: every element; infer: every
# label against a float64 reference; tune_stream_bench: every element of every batch), and a
# run that fails verification is an error row, never a rate.
#   bulk    `streampipe bench`: seed pageable, compute, transfer pinned and pageable, tiny
#           chunks in graph mode; fixed chunks 256K..4M records and depths 3..16
#   mlp     `streampipe infer` (the digits MLP, 10M samples) fp32 and tf32; fixed chunks
#           32K..1M records (the depth the library's)
#   mixed   tune_stream_bench --mode mixed: a stream of 4 KiB..64 MiB batches (seed: sinmix
#           100), auto against fixed chunks and depths
#   shift   tune_stream_bench --mode shift: sinmix 100 then 1000 (10x the stage's cost) under
#           a quarter budget: when the re-pick came after the shift, each phase's rate (its
#           second half) against fixed chunks under the same budget, a steady stream's changes
#           after its first second
#   quarter `streampipe bench` seed pinned at a quarter of what auto held (pinned: the
#           report's pinned_bytes); and the shift's auto pipeline's pinned_bytes and
#           device_bytes (sp_stats: what the pipeline allocated, not the tuner's model)
# The table at the end has a met/missed column per target; the JSON lines are in
# $OUT/tune_auto.jsonl, stderr in $OUT/tune_auto.log.
#
# Usage: OUT=dir bench/tune_auto.sh                (the H200: about 5-6 minutes; builds once)
#        SECTIONS="mlp stream quarter" ...         (a part: any of bulk mlp stream quarter)
#        OUT=dir BACKEND=host bench/tune_auto.sh   (here: small sizes, about a minute; the
#                                                   rates mean nothing, the shape and the
#                                                   verification do)
set -u
: "${OUT:?set OUT}"
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$OUT"
BACKEND=${BACKEND:-cuda}
SECTIONS=" ${SECTIONS:-bulk mlp stream quarter} "
want() { [[ $SECTIONS == *" $1 "* ]]; }
JSON=$OUT/tune_auto.jsonl
: >"$JSON"
: >"$OUT/tune_auto.log"
if [ "$BACKEND" = host ]; then
    BUILD=${BUILD:-build-tune-host}
    CFG=(-DSP_WITH_CUDA=OFF)
    REP=1
    BULK=(--records 262144 --iters 1)   # every workload cut to this
    CHUNKS="4096 8192 16384 32768 65536"
    DEPTHS="3 4 8"
    MLP_DATA=(--replicate 10)           # 3600 samples
    MLP_CHUNKS="512 1024 2048"
    MLP_PRECISIONS="fp32"
    MIXED=(--records 1000000 --max-batch 131072 --iters 1 --repeat 1 --checkers 2)
    SHIFT=(--iters 1 --iters-b 10 --batch-records 1048576 --phase-s 1 --steady-s 1.5 --checkers 2)
    LIMIT=120
    if [ "${SP_TEST_QUICK:-0}" = 1 ]; then # CI's sanitizer runs (5-15x slower): every row
        CHUNKS="8192 65536"                  # and section still, fewer settings swept
        DEPTHS="3"
        MLP_CHUNKS="1024"
        LIMIT=200
    fi
else
    export PATH="/usr/local/cuda/bin:$PATH"
    BUILD=${BUILD:-build-gpu}
    CFG=(-DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90)
    REP=3
    BULK=()
    CHUNKS="262144 524288 1048576 2097152 4194304"
    DEPTHS="3 4 6 8 16"
    MLP_DATA=(--replicate 27778)        # 10,000,080 samples
    MLP_CHUNKS="32768 65536 131072 262144 524288 1048576"
    MLP_PRECISIONS="fp32 tf32"
    MIXED=(--records 268435456 --repeat 3 --checkers 12)
    SHIFT=(--iters 100 --iters-b 1000 --phase-s 2 --steady-s 4 --checkers 12)
    LIMIT=90
fi
# cJSON (infer loads the model with it): installed, given by SP_CJSON_ROOT, or carried as .debs
# (as infer_check.sh and gpu_check.sh take it); without it the MLP rows fail and say so
CJSON=()
if [[ -z ${SP_CJSON_ROOT:-} && ! -f /usr/include/cjson/cJSON.h ]] && ls .debs/libcjson*.deb >/dev/null 2>&1; then
    SP_CJSON_ROOT=$(mktemp -d)/usr
    for deb in .debs/libcjson*.deb; do dpkg -x "$deb" "${SP_CJSON_ROOT%/usr}"; done
fi
if [[ -n ${SP_CJSON_ROOT:-} ]]; then
    CJSON=(-DSP_WITH_CJSON=ON -DSP_CJSON_ROOT="$SP_CJSON_ROOT")
    export LD_LIBRARY_PATH="$SP_CJSON_ROOT/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
# SKIP_BUILD=1: the programs as they are, $CLI and $TSB (the ctest entry, in its own build)
if [ -z "${SKIP_BUILD:-}" ]; then
    NEW=()
    [ -f "$BUILD/CMakeCache.txt" ] || NEW=(-DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo)
    cmake -S . -B "$BUILD" -DSP_WERROR=ON "${CFG[@]}" "${CJSON[@]}" "${NEW[@]}" >"$OUT/cfg.log" 2>&1 &&
        bash bench/cli_build.sh . "$BUILD" tune_stream_bench >"$OUT/build.log" 2>&1 ||
        { tail -20 "$OUT/cfg.log" "$OUT/build.log"; exit 1; }
fi
CLI=${CLI:-$BUILD/streampipe}
TSB=${TSB:-$BUILD/bench/tune_stream_bench}
# tag ROW LABEL: stdin's JSON object with row and label added, onto $JSON; an error row when
# the command failed (verification included: the programs exit non-zero on a wrong element)
tag() {
    python3 -c 'import json,sys; o=json.load(sys.stdin); o["row"]=sys.argv[1]; o["label"]=sys.argv[2]; print(json.dumps(o))' "$1" "$2" >>"$JSON" 2>>"$OUT/tune_auto.log" ||
        echo "{\"row\":\"$1\",\"label\":\"$2\",\"error\":true}" >>"$JSON"
}
# run ROW LABEL COMMAND...: the command's JSON tagged, or an error row when it failed
run() {
    local row=$1 label=$2
    shift 2
    if timeout "$LIMIT" "$@" >"$OUT/one.json" 2>>"$OUT/tune_auto.log"; then
        tag "$row" "$label" <"$OUT/one.json"
    else
        echo "{\"row\":\"$row\",\"label\":\"$label\",\"error\":true}" >>"$JSON"
    fi
}
one() { # ROW LABEL ARGS...
    local row=$1 label=$2
    shift 2
    run "$row" "$label" "$CLI" bench --backend "$BACKEND" --repeat $REP --json "${BULK[@]}" "$@"
}
# auto runs first and again last: the host drifts over a sweep (call 13.2: transfer pinned's
# auto, the first run after the compute rows, ran 13% under the fixed row of its own settings),
# and the table takes the better of the two as it takes the best of the fixed settings
sweep() { # ROW ARGS...
    local row=$1
    shift
    one "$row" auto "$@" --chunk 0 --depth 0
    for c in $CHUNKS; do one "$row" "chunk$c" "$@" --chunk "$c"; done
    for d in $DEPTHS; do one "$row" "depth$d" "$@" --depth "$d"; done
    one "$row" auto "$@" --chunk 0 --depth 0
}
T0=$SECONDS
if want bulk; then
    sweep seed-pageable --workload seed --memory pageable
    sweep compute --workload compute --memory pinned
    sweep transfer-pinned --workload transfer --memory pinned
    sweep transfer-pageable --workload transfer --memory pageable
    sweep tiny-graph --workload tiny --memory pinned --graph on
fi
echo "bulk rows: $((SECONDS - T0)) s" >>"$OUT/tune_auto.log"
# the MLP: infer's own check (every label) fails the run on a wrong one
infer() { # ROW LABEL ARGS...
    local row=$1 label=$2
    shift 2
    run "$row" "$label" "$CLI" infer --backend "$BACKEND" --model models/digits_mlp.safetensors \
        --input models/digits_test_images.u8 --labels models/digits_test_labels.u8 \
        "${MLP_DATA[@]}" --repeat $REP --json "$@"
}
T0=$SECONDS
want mlp && for p in $MLP_PRECISIONS; do
    infer "mlp-$p" auto --precision "$p" --chunk 0
    for c in $MLP_CHUNKS; do infer "mlp-$p" "chunk$c" --precision "$p" --chunk "$c"; done
    infer "mlp-$p" auto --precision "$p" --chunk 0 # first and last, as sweep()
done
echo "mlp rows: $((SECONDS - T0)) s" >>"$OUT/tune_auto.log"
T0=$SECONDS
if want stream; then
    run mixed stream "$TSB" --mode mixed --backend "$BACKEND" "${MIXED[@]}"
    run shift stream "$TSB" --mode shift --backend "$BACKEND" "${SHIFT[@]}"
fi
echo "stream rows: $((SECONDS - T0)) s" >>"$OUT/tune_auto.log"
# the quarter budget: what the default holds, from the auto run of seed pageable (run here
# when the bulk rows were not)
want quarter && ! grep -q '"row": "seed-pageable", "label": "auto"' "$JSON" &&
    one seed-pageable auto --workload seed --memory pageable --chunk 0 --depth 0
want quarter && P=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    o=json.loads(l)
    if o.get("row")=="seed-pageable" and o.get("label")=="auto" and not o.get("error"):
        print(o["report"]["pinned_bytes"]); break' "$JSON")
if [ -n "${P:-}" ]; then
    Q=$((P / 4))
    one quarter "budget$Q" --workload seed --memory pinned --chunk 0 --depth 0 --max-pinned $Q --max-device $Q
fi
python3 bench/tune_table.py "$JSON" "${Q:-0}" "$SECTIONS" >"$OUT/tune_table.txt"
rc=$?
cat "$OUT/tune_table.txt"
exit $rc
