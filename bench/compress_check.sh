#!/usr/bin/env bash
# Compressed inputs decompressed inside the ring (issue 26), one call, a PASS/FAIL table at the end:
#   OUT=/some/dir bench/compress_check.sh [GIB]           the lent GPU, after bench/gpu_check.sh
#                                                         (build-gpu, the Python package); 8 GiB
#   OUT=/some/dir BACKEND=host CLI=build/streampipe bench/compress_check.sh
#                                                         anywhere, 32 MiB: the logic (ctest
#                                                         compress_check_host; PYTHON: the
#                                                         interpreter, PYTHONPATH its package)
# nvCOMP: bench/nvcomp_env.sh (the wheel in .wheels/, or SP_NVCOMP_LIBRARY).
#
# 1. The ring's rate with the output kept on the device (bench/compress_rate.py, which also
#    makes the data in $COMPRESS_DIR: GIB GiB of a float32 random walk quantized to 1/8,
#    `lz4 -B4` and zstd -1 frames of $ZSTD_FRAME bytes): the effective input rate (uncompressed
#    bytes into stage 1 over the library's makespan) of the best chunk size and stage-1 stream
#    count, against the pinned H2D ceiling measured in the same process; target >= 1.5x.
#    Every output compared with the raw file's run element by element.
# 2. End to end, file to file, page cache warm, the median of $E2E_REPEAT runs of each:
#    `streampipe run --decompress ring` on the compressed file against the CPU paths:
#    `lz4 -d` / `zstd -d -T16` to a file then `streampipe run` on it, and the pipe
#    `lz4 -dc | streampipe run --input -` (`zstd -dc` likewise); target >= 5x each. Every
#    output cmp'd with the raw run's. The outputs (and the CPU path's decompressed file) go
#    to $E2E_DIR: /dev/shm when it has room (tmpfs: the commit's fsync costs nothing there),
#    else $COMPRESS_DIR, where the output's fsync to the disk bounds every run alike (the
#    log says which). The staging-thread decode once per format, for reference.
# E2E_CHAIN=mlp runs part 2 over the digits MLP instead of sinmix (see below). Knobs:
# CHUNK_MIB, STREAMS, DEPTH and REPEAT (part 1's chunk sizes, stage-1 queues, ring depth (0:
# the library's) and timed runs), ZSTD_FRAME, LZ4_LEVEL (lz4's level: 1 by default, the
# `lz4` command's; higher levels pack tighter and decode no slower), E2E_CHUNK_MIB (0: the
# library's pick), E2E_REPEAT, E2E_DIR, COMPRESS_DIR.
# PARTS (default "rate e2e") picks the parts: one part a call where a call has a time limit
# (the data is kept in $COMPRESS_DIR between calls). The raw file's run is the end-to-end
# floor: what streaming and writing the output cost with nothing to decompress. (Discarding
# the output with --output /dev/null is no variant: a device is written in record order, and
# the ring needs a positional output.)
# Writes $OUT/compress_check.log, compress_check.jsonl (each CLI run's --json) and
# compress_rate.jsonl. Exit 1 when a check failed (on HOST only wrong outputs and failed runs
# fail: the rates mean nothing there); 2 when it could not run. Reads only; changes no clocks.
set -u
: "${OUT:?set OUT to the folder whose files come back}"
cd "$(dirname "$0")/.." || exit 2
BACKEND=${BACKEND:-cuda}
if [[ $BACKEND == host ]]; then
    GIB=${1:-0.03125}
    CLI=${CLI:-build/streampipe}
    RATE_ARGS=(--chunk-mib "${CHUNK_MIB:-1,4}" --repeat "${REPEAT:-2}")
    E2E_CHUNK_MIB=${E2E_CHUNK_MIB:-1}
else
    GIB=${1:-8}
    CLI=${CLI:-build-gpu/streampipe}
    RATE_ARGS=(--chunk-mib "${CHUNK_MIB:-64,256,512}" --repeat "${REPEAT:-5}")
    E2E_CHUNK_MIB=${E2E_CHUNK_MIB:-64}
fi
RATE_ARGS+=(--streams "${STREAMS:-1,2}" --depth "${DEPTH:-0}")
DIR=${COMPRESS_DIR:-/tmp/sp-compress}
ZSTD_FRAME=${ZSTD_FRAME:-65536}
LZ4_LEVEL=${LZ4_LEVEL:-1}
E2E_REPEAT=${E2E_REPEAT:-3}
# The end-to-end chain: E2E_CHAIN=sinmix (the rate part's: compress_rate.py's ITERS, records of
# 4 bytes, an output as large as the input) or mlp (the digits MLP, MLP_PRECISION tf32 or fp32,
# over 64-byte images that compress about 2.3:1 with lz4, an int32 label out per image: an
# output a 16th of the input, so that writing it does not bound both sides alike)
E2E_CHAIN=${E2E_CHAIN:-sinmix}
case $E2E_CHAIN in
sinmix) STAGES=sinmix:iters=1 E2E_DATA=walk E2E_RECORD=4 ;;
mlp) STAGES=mlp:models/digits_mlp.safetensors:${MLP_PRECISION:-tf32} E2E_DATA=digits E2E_RECORD=64 ;;
*) echo "E2E_CHAIN must be sinmix or mlp" >&2; exit 2 ;;
esac
E2E_CHUNK=$((E2E_CHUNK_MIB * 1048576 / E2E_RECORD)) # records; 0: the library's pick
((E2E_CHUNK == 0)) && E2E_CHUNK=auto
PY=${PYTHON:-python3}  # one with numpy and this tree's streampipe package
LOG=$OUT/compress_check.log
JSON=$OUT/compress_check.jsonl
mkdir -p "$OUT" "$DIR"
: >"$LOG"; : >"$JSON"
say() { echo "$*" | tee -a "$LOG"; }
VERDICTS=()
# verdict NAME VALUE TARGET PASS|FAIL|n/a: a row of the final table
verdict() { VERDICTS+=("$(printf '%-44s %-16s %-10s %s' "$1" "$2" "$3" "$4")"); }
FAILED=0
[[ -x $CLI ]] || { say "no $CLI (run bench/gpu_check.sh first, or set CLI)"; exit 2; }
# the lz4/zstd commands and libraries gpu_check.sh extracted from .debs, when it did
[[ -d /tmp/sp-codecs/usr/bin ]] && export PATH="/tmp/sp-codecs/usr/bin:$PATH" \
    LD_LIBRARY_PATH="/tmp/sp-codecs/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
if [[ $BACKEND == cuda ]]; then
    # shellcheck source=bench/nvcomp_env.sh
    source bench/nvcomp_env.sh # the wheel in .wheels/, when SP_NVCOMP_LIBRARY is not set
    [[ -n ${SP_NVCOMP_LIBRARY:-} ]] || say "note: SP_NVCOMP_LIBRARY is not set: the library path must find libnvcomp.so.6"
    # this tree's Python package, as gpu_check.sh installs it, when the one there is older
    "$PY" -c 'import streampipe as s, sys; sys.exit(not hasattr(s.Compression, "ring_busy_s"))' \
        2>/dev/null || "$PY" -m pip install -q --no-build-isolation --no-deps . >>"$LOG" 2>&1 ||
        { say "installing the Python package failed (see $LOG)"; exit 2; }
fi

# ---- 1. the ring's rate, output on the device ---------------------------------------------------
PARTS=${PARTS:-rate e2e}
wants() { [[ " $PARTS " == *" $1 "* ]]; }
# make_data DATA JSONL [ARGS...]: compress_rate.py making DATA's files (and with ARGS, measuring)
make_data() {
    local data=$1 jsonl=$2 rc
    shift 2
    "$PY" bench/compress_rate.py --data "$data" --backend "$BACKEND" --gib "$GIB" --dir "$DIR" \
        --zstd-frame "$ZSTD_FRAME" --lz4-level "$LZ4_LEVEL" --json "$jsonl" "$@" 2>&1 |
        tee -a "$LOG"
    rc=${PIPESTATUS[0]}
    ((rc == 2)) && { say "compress_rate.py could not run"; exit 2; }
    return 0
}
# rate_field ROW KEY: a field of compress_rate.jsonl's row named ROW
rate_field() { json_field "$OUT/compress_rate.jsonl" "$@"; }
# json_field FILE ROW KEY
json_field() {
    "$PY" -c 'import json,sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("row") == sys.argv[2]: print(r.get(sys.argv[3], ""))' "$@"
}
# data JSONL: RAW, LZ4, ZST and BYTES from the data row of a compress_rate.py run, the ratios
data() {
    local what
    RAW=$(json_field "$1" data raw); LZ4=$(json_field "$1" data lz4); ZST=$(json_field "$1" data zstd)
    [[ -f $RAW && -f $LZ4 && -f $ZST ]] || { say "compress_rate.py made no data"; exit 2; }
    BYTES=$(stat -c %s "$RAW")
    local lz4_ratio v
    what=$(json_field "$1" data what)
    lz4_ratio=$(ratio "$LZ4")
    if awk -v r="$lz4_ratio" 'BEGIN { exit !(r >= 2.0) }'; then v=PASS; else v=FAIL; FAILED=1; fi
    verdict "LZ4 ratio (lz4 -$LZ4_LEVEL -B4), $(json_field "$1" data data)" "$lz4_ratio" ">= 2" "$v"
    verdict "Zstandard ratio ($ZSTD_FRAME-byte frames)" "$(ratio "$ZST")" "" info
    say "data: $what, $BYTES bytes; $(basename "$LZ4") $(stat -c %s "$LZ4"), $(basename "$ZST") $(stat -c %s "$ZST")"
}
ratio() { awk -v a="$BYTES" -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.2f", a / b }'; }
if wants rate; then
    make_data walk "$OUT/compress_rate.jsonl" "${RATE_ARGS[@]}"
    data "$OUT/compress_rate.jsonl"
fi

# The rate part's rows of the table.
rate_verdicts() {
    local fmt times v probe
    for fmt in lz4 zstd; do
        times=$(rate_field "$fmt-target" times); v=$(rate_field "$fmt-target" verdict)
        verdict "$fmt in the ring: effective / H2D ceiling" "${times}x" ">= 1.5x" "${v:-FAIL}"
        [[ $v == FAIL || -z $v ]] && FAILED=1
    done
    # the CLI's probe of the same copy, a second opinion on the ceiling (its best chunk size)
    probe=$("$CLI" probe --backend "$BACKEND" --quick --json 2>>"$LOG" | "$PY" -c '
import json, sys
print("%.2f" % max(r["gbps"] for r in json.load(sys.stdin)["chunk_h2d_gbps"]))' 2>>"$LOG")
    verdict "H2D ceiling: in-process / streampipe probe" \
        "$(rate_field h2d-ceiling gbps) / ${probe:-?}" "GB/s" info
    if grep -q '"bad_outputs": [1-9]\|"error": ' "$OUT/compress_rate.jsonl"; then v=FAIL; else v=PASS; fi
    verdict "rate runs: each ran, every output element" "" "all equal" "$v"
    [[ $v == FAIL ]] && FAILED=1
}
wants rate && rate_verdicts

# ---- 2. end to end, file to file ----------------------------------------------------------------
# one NAME INPUT OUTPUT [ARGS...]: a `streampipe run`, its --json kept; prints its wall s
one() {
    local name=$1 in=$2 out=$3 t0 t1
    shift 3
    t0=$(date +%s.%N)
    "$CLI" run --backend "$BACKEND" --input "$in" --output "$out" --stages "$STAGES" \
        --chunk "$E2E_CHUNK" --no-live --json "$@" >"$E2E_DIR/run.json" 2>>"$LOG" ||
        { echo "FAIL: $name: streampipe run failed" >>"$LOG"; echo FAILED >"$E2E_DIR/failed"; }
    t1=$(date +%s.%N)
    "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["check"]=sys.argv[2]; print(json.dumps(d))' \
        "$E2E_DIR/run.json" "$name" >>"$JSON" 2>/dev/null
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
# cpu FMT OUTPUT: the CPU path, decompressed to a file, then run; prints its wall s
cpu() {
    local t0 t1 run_s
    t0=$(date +%s.%N)
    if [[ $1 == lz4 ]]; then lz4 -q -d -f "$LZ4" "$E2E_DIR/cpu.f32"
    else zstd -q -d -f -T16 "$ZST" -o "$E2E_DIR/cpu.f32"; fi
    t1=$(date +%s.%N)
    run_s=$(one "cpu-$1" "$E2E_DIR/cpu.f32" "$2")
    rm -f "$E2E_DIR/cpu.f32"
    awk -v a="$t0" -v b="$t1" -v r="$run_s" 'BEGIN { printf "%.3f", b - a + r }'
}
# pipe FMT OUTPUT: `lz4 -dc | streampipe run --input -`; prints its wall s
pipe() {
    local t0 t1
    t0=$(date +%s.%N)
    if [[ $1 == lz4 ]]; then lz4 -q -d -c "$LZ4"; else zstd -q -d -c -T16 "$ZST"; fi |
        "$CLI" run --backend "$BACKEND" --input - --output "$2" --stages "$STAGES" \
            --chunk "$E2E_CHUNK" --no-live >/dev/null 2>>"$LOG" ||
        { echo "FAIL: pipe-$1: streampipe run failed" >>"$LOG"; echo FAILED >"$E2E_DIR/failed"; }
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# same NAME OUTPUT: the output equals the raw run's (then removed)
same() {
    cmp -s "$E2E_DIR/ref.f32" "$2" || { say "FAIL: $1's output differs from the raw run's"; CMP_FAILED=1; }
    rm -f "$2"
}
# paths FMT OUTPUT: E2E_REPEAT runs of the ring and both CPU paths into OUTPUT, their medians
# and ratios
paths() {
    local fmt=$1 dst=$2 in=$LZ4 k R C P x v path ring=() cpus=() pipes=()
    [[ $fmt == zstd ]] && in=$ZST
    for ((k = 0; k < E2E_REPEAT; k++)); do
        ring+=("$(one "ring-$fmt" "$in" "$dst" --decompress ring)"); same "ring-$fmt" "$dst"
        cpus+=("$(cpu "$fmt" "$dst")"); same "cpu-$fmt" "$dst"
        pipes+=("$(pipe "$fmt" "$dst")"); same "pipe-$fmt" "$dst"
    done
    R=$(median "${ring[@]}"); C=$(median "${cpus[@]}"); P=$(median "${pipes[@]}")
    say "$fmt: ring ${R}s (${ring[*]}); CPU path ${C}s (${cpus[*]}); pipe ${P}s (${pipes[*]})"
    for path in "CPU path:$C" "pipe:$P"; do
        x=$(awk -v c="${path#*:}" -v r="$R" 'BEGIN { printf "%.2f", (r > 0 ? c / r : 0) }')
        if [[ $BACKEND != cuda ]]; then v=n/a
        elif awk -v x="$x" 'BEGIN { exit !(x >= 5) }'; then v=PASS
        else v=FAIL; FAILED=1; fi
        verdict "$fmt end to end ($E2E_CHAIN) vs the ${path%%:*}" "${x}x" ">= 5x" "$v"
    done
}
e2e() {
    local need free_shm fmt in v raw_s
    if [[ $E2E_DATA != walk ]] || ! wants rate; then # the chain's data, when not made above
        make_data "$E2E_DATA" "$OUT/compress_$E2E_DATA.jsonl" --make-only
        data "$OUT/compress_$E2E_DATA.jsonl"
    fi
    need=$((BYTES * 3 + (1 << 30)))
    free_shm=$(df -B1 --output=avail /dev/shm 2>/dev/null | tail -1 || echo 0)
    if [[ -z ${E2E_DIR:-} ]]; then
        if ((${free_shm:-0} > need)); then E2E_DIR=/dev/shm/sp-compress-$$; else E2E_DIR=$DIR/e2e; fi
    fi
    mkdir -p "$E2E_DIR"
    rm -f "$E2E_DIR/failed"
    say "end to end: $STAGES, outputs in $E2E_DIR ($(df -T "$E2E_DIR" | awk 'NR == 2 { print $2 }')), $E2E_REPEAT runs each, chunks of $E2E_CHUNK records"
    CMP_FAILED=0
    raw_s=$(one raw "$RAW" "$E2E_DIR/ref.f32")
    say "raw run: ${raw_s}s"
    verdict "raw file's run (the end-to-end floor)" "${raw_s}s" "" info
    for fmt in lz4 zstd; do
        paths "$fmt" "$E2E_DIR/out.f32"
        in=$LZ4; [[ $fmt == zstd ]] && in=$ZST
        say "$fmt: staging threads $(one "staging-$fmt" "$in" "$E2E_DIR/out.f32" --decompress staging)s"
        same "staging-$fmt" "$E2E_DIR/out.f32"
    done
    [[ -f $E2E_DIR/failed ]] && CMP_FAILED=1
    if ((CMP_FAILED)); then v=FAIL; FAILED=1; else v=PASS; fi
    verdict "end-to-end runs ran, outputs cmp'd to the raw run's" "" "all equal" "$v"
    rm -rf "$E2E_DIR/ref.f32" "$E2E_DIR/run.json"
    [[ $E2E_DIR == /dev/shm/sp-compress-* ]] && rm -rf "$E2E_DIR"
}
wants e2e && e2e

say ""
say "$(printf '%-44s %-16s %-10s %s' check value target verdict)"
for row in "${VERDICTS[@]}"; do say "$row"; done
say "compress_check ($BACKEND, $GIB GiB): $([[ $FAILED == 0 ]] && echo PASS || echo FAIL)"
exit $FAILED
