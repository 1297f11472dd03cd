#!/usr/bin/env bash
# The whole GPU check in one call, for the lent H200: machine facts, a -Werror CUDA build, the
# test suite (CUDA tests must run here, not skip), compute-sanitizer over the CUDA conformance
# test, and the benchmarks. Every phase is time-bounded; a failure is recorded and the next
# phase still runs. A PASS/FAIL table comes last, because only the tail of the output is seen.
#
# Usage (from anywhere): OUT=/some/dir bench/gpu_check.sh
# Files written to $OUT (at most 8 come back): gpu_check.log (machine facts, phase headers,
# bench summary, the table), build.log, ctest.log, sanitizers.log, bench.log (stderr of the
# benchmarks), bench.jsonl (one JSON object per benchmark run, and one per peer run beside it:
# the hand-written rings of bench/peers/, issue 17), summary.txt (the table).
#
# Reads only; never changes clocks, power limits or modes, and never resets the GPU.
set -u

: "${OUT:?set OUT to the folder whose files come back}"
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"

BUILD=build-gpu
BUDGET_S=${GPU_CHECK_BUDGET_S:-540}   # the call has 10 minutes; stay under 9
BENCH_RESERVE_S=230                   # sanitizers may not eat the benchmarks' (and peers') time
[[ ${GPU_CHECK_BENCH:-1} == 0 ]] && BENCH_RESERVE_S=0 # no benchmarks: nothing to keep time for
SANITIZER_CAP_S=${GPU_CHECK_SANITIZER_CAP_S:-60}
MAIN_LOG=$OUT/gpu_check.log
BUILD_LOG=$OUT/build.log
CTEST_LOG=$OUT/ctest.log
SAN_LOG=$OUT/sanitizers.log
BENCH_LOG=$OUT/bench.log
BENCH_JSON=$OUT/bench.jsonl
SUMMARY=$OUT/summary.txt
SCRATCH=$(mktemp -d)                  # per-phase output, outside $OUT
trap 'rm -rf "$SCRATCH"' EXIT
: >"$MAIN_LOG"; : >"$BUILD_LOG"; : >"$CTEST_LOG"; : >"$SAN_LOG"; : >"$BENCH_LOG"
: >"$BENCH_JSON"

START=$SECONDS
ROWS=()

say() { echo "$*" | tee -a "$MAIN_LOG"; }

# record NAME STATUS SECONDS NOTE
record() {
    ROWS+=("$(printf '%-24s %-5s %5ss  %s' "$1" "$2" "$3" "$4")")
    say "[$(printf '%4d' $((SECONDS - START)))s] $1: $2 ($3s) $4"
}

# run_phase NAME CAP_S RESERVE_S LOG COMMAND...: runs COMMAND under `timeout`, limited to
# CAP_S and to what is left of the budget after RESERVE_S; appends its output to LOG and
# shows the tail on stdout when it fails. Returns COMMAND's exit status (124 = timed out).
run_phase() {
    local name=$1 cap=$2 reserve=$3 log=$4
    shift 4
    local left=$((BUDGET_S - (SECONDS - START) - 15 - reserve))
    if ((left < 10)); then
        record "$name" SKIP 0 "no time left in the ${BUDGET_S}s budget"
        return 125
    fi
    local limit=$((cap < left ? cap : left))
    local part=$SCRATCH/phase.out t0=$SECONDS rc
    {
        echo "===== $name (limit ${limit}s) $(date -u +%H:%M:%S)"
        echo "\$ $*"
    } >>"$log"
    # Through bash so that COMMAND may be one of the exported functions below.
    timeout --kill-after=10 "$limit" bash -c '"$@"' run_phase "$@" >"$part" 2>&1
    rc=$?
    cat "$part" >>"$log"
    echo "===== $name: exit $rc" >>"$log"
    local dt=$((SECONDS - t0))
    case $rc in
    0) record "$name" PASS "$dt" "" ;;
    124 | 137) record "$name" FAIL "$dt" "timed out after ${limit}s (see $(basename "$log"))" ;;
    *) record "$name" FAIL "$dt" "exit $rc (see $(basename "$log"))" ;;
    esac
    if ((rc != 0)); then
        echo "----- last lines of $name -----"
        tail -n 12 "$part"
        echo "-----"
    fi
    return $rc
}

# ---- 1. the machine ----------------------------------------------------------------------
machine_facts() {
    nvidia-smi -L || return 1
    nvidia-smi | grep -m1 'Driver Version'
    nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.max.sm,power.draw,temperature.gpu,persistence_mode \
        --format=csv
    nvcc --version | tail -n 2
    command -v compute-sanitizer && compute-sanitizer --version | tail -n 1
    echo "host: $(nproc) CPUs, $(free -g | awk '/^Mem:/ {print $2}') GiB; $(uname -sr)"
    cmake --version | head -n 1
}
export -f machine_facts
run_phase machine 20 0 "$MAIN_LOG" machine_facts
grep -m1 'Driver Version' "$MAIN_LOG" || true

# ---- 2. build ----------------------------------------------------------------------------
# cJSON (model loading, the inference tests) from .debs carried with the call when the machine
# lacks it: `apt-get download libcjson1 libcjson-dev` into .debs/ and name it in `carry`.
CJSON_ARGS=()
if [[ ! -f /usr/include/cjson/cJSON.h ]] && ls .debs/libcjson*.deb >/dev/null 2>&1; then
    # one fixed place, the one bench/reach_check.sh uses too: the build's CMake cache keeps
    # the path, and a later configure of the same build must find it again
    for deb in .debs/libcjson*.deb; do dpkg -x "$deb" /tmp/sp-cjson; done
    CJSON_ARGS=(-DSP_WITH_CJSON=ON -DSP_CJSON_ROOT=/tmp/sp-cjson/usr)
    export SP_CJSON_ROOT=/tmp/sp-cjson/usr # the Python package's build finds it there too
    export LD_LIBRARY_PATH="$SP_CJSON_ROOT/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
# The trace tests parse the exports with cJSON and libxml2, found by pkg-config. Where the
# machine has pkg-config and libxml2.so.2 but no headers, a carried libxml2-dev .deb gives them:
# a .pc file of our own points at its headers and the machine's library (a Debian 12 build of
# the library itself would want Debian's libicu), and another at the carried cJSON.
carried_pkg_config() {
    command -v pkg-config >/dev/null && ! pkg-config --exists libxml-2.0 || return 0
    local lib deb dir=/tmp/sp-pc
    lib=$(ldconfig -p | awk '/libxml2\.so\.2 / {print $NF; exit}')
    deb=$(ls .debs/libxml2-dev*.deb 2>/dev/null | head -1)
    [[ -n $lib && -n $deb ]] || return 0
    mkdir -p "$dir/lib" "$dir/usr/include/unicode" && dpkg -x "$deb" "$dir" &&
        ln -sf "$lib" "$dir/lib/libxml2.so" || return 0
    # Debian's headers were made with ICU: encoding.h includes <unicode/ucnv.h> for a struct
    # of UConverter pointers and UChar (16-bit) buffers the tests never touch; declarations
    # of the two stand in for it
    printf 'typedef struct UConverter UConverter;\ntypedef unsigned short UChar;\n' >"$dir/usr/include/unicode/ucnv.h"
    printf 'Name: libXML\nDescription: carried headers, the machine'"'"'s library\nVersion: 2.9.14\nLibs: -L%s/lib -lxml2\nCflags: -I%s/usr/include/libxml2 -I%s/usr/include\n' \
        "$dir" "$dir" "$dir" >"$dir/libxml-2.0.pc"
    if [[ -n ${SP_CJSON_ROOT:-} ]] && ! pkg-config --exists libcjson; then
        printf 'Name: cJSON\nDescription: carried\nVersion: 1.7.15\nLibs: -L%s/lib/x86_64-linux-gnu -lcjson\nCflags: -I%s/include\n' \
            "$SP_CJSON_ROOT" "$SP_CJSON_ROOT" >"$dir/libcjson.pc"
    fi
    export PKG_CONFIG_PATH="$dir:${PKG_CONFIG_PATH:-}"
}
carried_pkg_config
# liblz4/libzstd (the file source's compressed inputs), libmicrohttpd (the CLI's --metrics)
# and the lz4, zstd and pzstd commands their tests use, from .debs where the machine lacks
# them: `apt-get download liblz4-dev liblz4-1 libzstd-dev libzstd1 lz4 zstd libmicrohttpd-dev
# libmicrohttpd12` into .debs/. Extracted to one place; the libraries and commands are found
# there through LD_LIBRARY_PATH and PATH for the whole call.
CODEC_ARGS=()
carried_codecs() {
    local dir=/tmp/sp-codecs deb
    local lib=$dir/usr/lib/x86_64-linux-gnu inc=$dir/usr/include
    if [[ ! -f /usr/include/lz4.h || ! -f /usr/include/zstd.h ]] &&
        ls .debs/liblz4-dev*.deb .debs/libzstd-dev*.deb >/dev/null 2>&1; then
        for deb in .debs/liblz4* .debs/libzstd*; do dpkg -x "$deb" "$dir"; done
        CODEC_ARGS+=(-DSP_LZ4_INCLUDE_DIR="$inc" -DSP_ZSTD_INCLUDE_DIR="$inc"
                     -DSP_LZ4_LIBRARY="$lib/liblz4.so" -DSP_ZSTD_LIBRARY="$lib/libzstd.so")
    fi
    # the commands, on their own: a machine may have the libraries and not the commands
    if ! command -v lz4 >/dev/null || ! command -v zstd >/dev/null; then
        for deb in .debs/lz4_* .debs/zstd_* .debs/liblz4-1* .debs/libzstd1*; do
            [[ -f $deb ]] && dpkg -x "$deb" "$dir"
        done
    fi
    if [[ ! -f /usr/include/microhttpd.h ]] && ls .debs/libmicrohttpd*.deb >/dev/null 2>&1; then
        for deb in .debs/libmicrohttpd*.deb; do dpkg -x "$deb" "$dir"; done
        CODEC_ARGS+=(-DSP_MHD_INCLUDE_DIR="$inc" -DSP_MHD_LIBRARY="$lib/libmicrohttpd.so")
    fi
    [[ -d $dir ]] && export LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}" PATH="$dir/usr/bin:$PATH"
    return 0
}
carried_codecs
# nvCOMP from .wheels/ (bench/nvcomp_env.sh): SP_NVCOMP_LIBRARY and SP_REQUIRE_NVCOMP=1 for
# the whole call, so that ring_decompress_cuda runs the nvCOMP path or fails
source bench/nvcomp_env.sh
say "nvCOMP: ${SP_NVCOMP_LIBRARY:-none (no .wheels/nvidia_libnvcomp_cu13-*.whl): CUDA runs decompress on the staging threads}"
run_phase configure 90 0 "$BUILD_LOG" cmake -S . -B "$BUILD" -DSP_WERROR=ON -DSP_WITH_CUDA=ON \
    -DSP_CUDA_ARCH=90 -DCMAKE_BUILD_TYPE=RelWithDebInfo "${CJSON_ARGS[@]}" "${CODEC_ARGS[@]}"
run_phase build 240 0 "$BUILD_LOG" cmake --build "$BUILD" -j16
# The peers (bench/peers/): a C ring with OpenMP staging, built here beside the library.
PEERS=build-peers
build_peers() {
    mkdir -p "$PEERS" &&
        gcc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -fopenmp -I/usr/local/cuda/include \
            -c bench/peers/c_ring.c -o "$PEERS/c_ring.o" &&
        nvcc -O3 -arch=sm_90 -c bench/peers/plain_sinmix.cu -o "$PEERS/plain_sinmix.o" &&
        nvcc -arch=sm_90 "$PEERS/c_ring.o" "$PEERS/plain_sinmix.o" -lgomp -o "$PEERS/c_ring"
}
export -f build_peers
export PEERS
run_phase build-peers 60 0 "$BUILD_LOG" build_peers

# ---- 3. the test suite -------------------------------------------------------------------
if [[ -f $BUILD/CTestTestfile.cmake ]]; then
    # GPU_CHECK_CTEST_REGEX: only the tests it matches (both phases), for a call that
    # re-checks a few after one that ran them all
    only=(); [[ -n ${GPU_CHECK_CTEST_REGEX:-} ]] && only=(-R "$GPU_CHECK_CTEST_REGEX")
    # The crash test of --resume (cli_run_resume_host) and tune_auto_host are left out: HOST
    # tests that CI runs whole, and each took the phase past its 150 s here (2026-12-04).
    # 95 entries took the phase past 150 s again on 2026-12-05 (the MPI pair alone is 55 s).
    run_phase ctest 210 "$BENCH_RESERVE_S" "$CTEST_LOG" \
        ctest --test-dir "$BUILD" --output-on-failure --timeout 120 -j4 \
        -E '^(cli_run_resume_host|tune_auto_host)$' "${only[@]}"
    # The tests that read timelines again with CUPTI's activity records as their source
    # (GPU_CHECK_CUPTI=0 leaves them out: a call after one that ran them on the same timing).
    if [[ ${GPU_CHECK_CUPTI:-1} == 0 ]]; then
        record ctest-cupti SKIP 0 "GPU_CHECK_CUPTI=0"
    else
        run_phase ctest-cupti 90 "$BENCH_RESERVE_S" "$CTEST_LOG" env SP_TEST_TIMELINE=cupti \
            ctest --test-dir "$BUILD" --output-on-failure --timeout 60 \
            -R "${GPU_CHECK_CTEST_REGEX:-conformance_cuda$|trace_cuda|infer_cuda|stream_cuda}"
    fi
    # On this machine the CUDA tests must run; a skip means the GPU was not seen.
    skipped=$(grep -cE '\*\*\*Skipped|Not Run' "$CTEST_LOG" || true)
    if ((skipped == 0)); then
        record ctest-no-skips PASS 0 ""
    else
        record ctest-no-skips FAIL 0 "$skipped test(s) skipped: $(grep -E '\*\*\*Skipped' "$CTEST_LOG" | awk '{print $4}' | tr '\n' ' ')"
    fi
else
    record ctest FAIL 0 "no $BUILD/CTestTestfile.cmake (build failed?)"
fi

# ---- 3b. the Python package on CUDA, with torch and CuPy stages ---------------------------------
# SP_REQUIRE_CUDA=1: a CUDA test that would skip here (no GPU seen, torch without CUDA, no
# CuPy) fails instead (python/tests/helpers.py).
# Offline: nanobind and scikit-build-core are on the machine, so no build isolation.
python_suite() {
    local root=$PWD
    local cjson=()
    [[ -n ${SP_CJSON_ROOT:-} ]] && cjson=(-C cmake.define.SP_WITH_CJSON=ON
        -C "cmake.define.SP_CJSON_ROOT=$SP_CJSON_ROOT")
    python3 -m pip install -q --no-build-isolation --no-deps "${cjson[@]}" . &&
        (cd /tmp && SP_REQUIRE_CUDA=1 SP_TEST_MODELS="$root/models" \
            python3 "$root/python/tests/run.py" "$root/python/tests")
}
export -f python_suite
run_phase python 150 "$BENCH_RESERVE_S" "$CTEST_LOG" python_suite

# ---- 4. compute-sanitizer over the CUDA conformance test ---------------------------------
CONFORMANCE=$BUILD/tests/test_conformance
SANITIZER=$(command -v compute-sanitizer)
for candidate in /usr/local/cuda/compute-sanitizer/compute-sanitizer \
    /usr/local/cuda-*/bin/compute-sanitizer; do
    [[ -z $SANITIZER && -x $candidate ]] && SANITIZER=$candidate
done
sanitize() { # TOOL [extra options]: exit 77 (the test skipped) counts as a failure here
    local tool=$1
    shift
    SP_TEST_QUICK=1 "$SANITIZER" --tool "$tool" --error-exitcode=1 --print-limit 50 "$@" \
        "$CONFORMANCE" cuda &&
        SP_TEST_QUICK=1 "$SANITIZER" --tool "$tool" --error-exitcode=1 --print-limit 50 "$@" \
            "$(dirname "$CONFORMANCE")/test_device_ends" cuda # device-resident ends (issue 25)
}
export -f sanitize
export SANITIZER CONFORMANCE
# GPU_CHECK_SANITIZERS=0 leaves them out (a call that only re-measures, after a call that ran them
# on the same engine code); the table says so. GPU_CHECK_SANITIZER_TOOLS picks some ("graph" is
# memcheck in graph mode). racecheck is not among the default ones: it checks shared memory
# only, which no kernel of ours uses (no .cu file declares __shared__ or calls
# __syncthreads), and over the conformance test it never ended within 150 s, so it took a
# minute of every call to report a timeout. GPU_CHECK_SANITIZER_TOOLS=racecheck still runs it.
SANITIZER_TOOLS=${GPU_CHECK_SANITIZER_TOOLS:-memcheck initcheck synccheck graph}
if [[ ${GPU_CHECK_SANITIZERS:-1} == 0 ]]; then
    record sanitizers SKIP 0 "GPU_CHECK_SANITIZERS=0"
    SANITIZER_TOOLS=""
fi
# Graph mode under memcheck (issue 5): the conformance suite in graph mode, then the graph
# tests. One of those makes CUDA refuse a capture on purpose, so API errors are not reported
# for that binary; memory errors are.
sanitize_graph() {
    SP_TEST_QUICK=1 SP_TEST_GRAPH=1 "$SANITIZER" --tool memcheck --error-exitcode=1 \
        --print-limit 50 "$CONFORMANCE" cuda &&
        SP_TEST_QUICK=1 "$SANITIZER" --tool memcheck --error-exitcode=1 \
            --report-api-errors no --print-limit 50 "$(dirname "$CONFORMANCE")/test_graph" cuda
}
export -f sanitize_graph
for tool in $SANITIZER_TOOLS; do
    name=sanitizer-$tool
    [[ $tool == graph ]] && name=sanitizer-memcheck-graph
    if [[ ! -x $CONFORMANCE ]]; then
        record "$name" FAIL 0 "$CONFORMANCE was not built"
        continue
    fi
    if [[ -z $SANITIZER ]]; then
        record "$name" FAIL 0 "compute-sanitizer not found"
        continue
    fi
    if [[ $tool == graph ]]; then
        run_phase "$name" "$SANITIZER_CAP_S" "$BENCH_RESERVE_S" "$SAN_LOG" sanitize_graph
        continue
    fi
    extra=()
    [[ $tool == memcheck ]] && extra=(--leak-check full)
    run_phase "$name" "$SANITIZER_CAP_S" "$BENCH_RESERVE_S" "$SAN_LOG" sanitize "$tool" "${extra[@]}"
done

# ---- 5. benchmarks -----------------------------------------------------------------------
# GPU_CHECK_BENCH=0 leaves them out (a call for the tests alone, after one that measured):
# the whole section is the function benchmarks, called below.
benchmarks() {
CLI=$BUILD/streampipe
# bench_one W M [OPTIONS]: the JSON object goes to bench.jsonl as one line, stderr to
# bench.log.
bench_one() {
    local raw=$SCRATCH/bench.json
    "$CLI" bench --backend cuda --workload "$1" --memory "$2" --repeat 5 --json "${@:3}" >"$raw"
    local rc=$?
    if command -v python3 >/dev/null &&
        python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(",", ":")))' \
            "$raw" >>"$BENCH_JSON" 2>/dev/null; then
        :
    elif [[ -s $raw ]]; then
        tr -d '\n' <"$raw" >>"$BENCH_JSON" && echo >>"$BENCH_JSON"
    else
        echo "{\"workload\":\"$1\",\"memory\":\"$2\",\"exit\":$rc,\"error\":\"no JSON output\"}" >>"$BENCH_JSON"
    fi
    return $rc
}
export -f bench_one
export CLI SCRATCH BENCH_JSON
# peer_one LABEL COMMAND...: a peer's one JSON line goes to bench.jsonl with "label" added.
peer_one() {
    local label=$1 raw=$SCRATCH/peer.json
    shift
    "$@" >"$raw"
    local rc=$?
    python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); o["label"]=sys.argv[2]; o["exit"]=int(sys.argv[3]); print(json.dumps(o))' \
        "$raw" "$label" "$rc" >>"$BENCH_JSON" 2>/dev/null || echo "{\"label\":\"$label\",\"exit\":$rc,\"error\":\"no JSON output\"}" >>"$BENCH_JSON"
    return $rc
}
export -f peer_one
# The peers of each headline row, run right after it (issue 17): with pageable memory the C
# ring as described in the issue (16 MiB chunks, K = 3, all OpenMP threads), with pinned
# memory the PyTorch ring at K = 4 and 8 (the best counts) and the C ring at 8 MiB, K = 4.
run_peers() {
    local workload=$1 memory=$2
    [[ -x $PEERS/c_ring ]] || { record "peer-$workload-$memory" FAIL 0 "c_ring was not built"; return; }
    if [[ $memory == pageable ]]; then
        run_phase "peer-c-$workload-$memory" 45 0 "$BENCH_LOG" peer_one c_ring \
            "$PEERS/c_ring" "$workload" pageable 5
        return
    fi
    run_phase "peer-c-$workload-$memory" 45 0 "$BENCH_LOG" peer_one c_ring \
        "$PEERS/c_ring" "$workload" pinned 5 8 4
    local k
    for k in 4 8; do
        run_phase "peer-torch$k-$workload" 60 0 "$BENCH_LOG" peer_one "torch_ring K$k" \
            python3 bench/peers/torch_ring.py "$workload" --depth "$k"
    done
}
for workload in seed transfer compute tiny; do
    for memory in pageable pinned; do
        if [[ ! -x $CLI ]]; then
            record "bench-$workload-$memory" FAIL 0 "$CLI was not built"
            continue
        fi
        run_phase "bench-$workload-$memory" 45 0 "$BENCH_LOG" bench_one "$workload" "$memory"
        [[ $workload == tiny ]] || run_peers "$workload" "$memory"
    done
done
# Graph mode against stream mode on the per-operation-bound workload (issue 5).
[[ -x $CLI ]] && run_phase bench-tiny-pinned-graph 45 0 "$BENCH_LOG" bench_one tiny pinned --graph on
# The timeline from CUPTI's activity records against timing events (issue 15): each row's
# timeline cost (JSON timeline_cost: traced makespan over pipelined, less 1) is against its own
# in-run baseline; the cupti rows' notes say the records were used.
bench_timeline() { bench_one "$2" pinned --timeline "$1"; }
export -f bench_timeline
for workload in seed transfer; do
    for source in events cupti; do
        [[ -x $CLI ]] && run_phase "bench-$workload-pinned-timeline-$source" 45 0 "$BENCH_LOG" \
            bench_timeline "$source" "$workload"
    done
done
# The default (sampled) timeline against none and against the full one (issue 27): seed and
# transfer, pinned and pageable, its own log and JSON lines (sampled.log, sampled.jsonl).
# GPU_CHECK_SAMPLED=0 leaves it out.
if [[ ${GPU_CHECK_SAMPLED:-1} != 0 && -x $CLI ]]; then
    run_phase sampled-timeline 240 0 "$BENCH_LOG" env OUT="$OUT" BUILD="$BUILD" \
        bench/sampled_check.sh 9
fi
# A group of one device, and two pipelines on one device, against the plain pipeline (issue 13):
# bench rows of the seed and transfer workloads over 2^27 records, one JSON object.
[[ -x $CLI ]] && run_phase group-bench 60 0 "$BENCH_LOG" bench_one seed,transfer pinned \
    --records 2^27 --group-size 0,1,2

# A few numbers from each run, whatever the exact JSON layout: flattened keys that look like
# results (medians, rates, ratios, checks).
bench_digest() {
    python3 - "$BENCH_JSON" <<'PY'
import json, re, sys
want = re.compile(r"(median|speedup|ratio|gbps|efficiency|hidden|mismatch|error|bottleneck|workload|memory)", re.I)
def flat(prefix, v, out):
    if isinstance(v, dict):
        for k, x in v.items():
            flat(f"{prefix}.{k}" if prefix else k, x, out)
    elif not isinstance(v, list):
        out.append((prefix, v))
for line in open(sys.argv[1]):
    try:
        obj = json.loads(line)
    except ValueError:
        print("  (unparsable line)")
        continue
    pairs = []
    flat("", obj, pairs)
    shown = [(k, v) for k, v in pairs if want.search(k)][:14]
    print("  " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in shown))
PY
}
if [[ -s $BENCH_JSON ]] && command -v python3 >/dev/null; then
    say "bench digest (full objects in bench.jsonl):"
    bench_digest 2>&1 | tee -a "$MAIN_LOG" | cut -c1-400
fi

# Streams and a generator source (issue 11), one JSON object each: 1000 batches of 1 MiB
# (one chunk each) through one stream against one run and 1000 runs (transfer, pinned); then
# the seed workload from a generator source against pageable and pinned arrays, twice, in a
# second process: pageable runs spread between processes on this host, more than within one.
stream_bench_one() {
    local rc=0
    bench_one transfer pinned --records 250M --chunk 256k --batches 1000 || rc=$?
    bench_one seed pageable --source generator || rc=$?
    bench_one seed pageable --source generator --repeat 7 || rc=$?
    return $rc
}
export -f stream_bench_one
export BUILD MAIN_LOG
[[ -x $CLI ]] && run_phase stream-bench 90 0 "$BENCH_LOG" stream_bench_one

# Device-resident ends (issue 25): bench rows host->device, device->host, device->device (every
# element verified, every report's pcie_bytes checked), then the training loop fed by the
# torch Loader against a DataLoader and a hand-written prefetcher (bench/devends_check.sh
# runs the same two with the device-end tests).
[[ -x $CLI ]] && run_phase bench-device-ends 60 0 "$BENCH_LOG" env \
    SP_BENCH_ENDS_JSONL="$BENCH_JSON" sh tests/cli/cli_bench_ends.sh "$CLI" cuda
torch_loader_one() {
    python3 bench/torch_loader_bench.py --repeat 5 | tee -a "$MAIN_LOG" | grep '^{' >>"$BENCH_JSON"
    return "${PIPESTATUS[0]}"
}
export -f torch_loader_one
run_phase torch-loader-bench 120 0 "$BENCH_LOG" torch_loader_one

# streampipe's pipelined median against the best peer of the same row (issue 17)
peer_ratios() {
    python3 - "$BENCH_JSON" <<'PY'
import json, sys
best, ours = {}, {}
for line in open(sys.argv[1]):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if "workload" not in o or o.get("exit", 0) != 0:
        continue
    key = (o["workload"], o["memory"])
    if "peer" in o:
        if o.get("verified") and (key not in best or o["median_s"] < best[key][0]):
            best[key] = (o["median_s"], o["label"])
    elif "pipelined" in o and o.get("graph") != "on":
        ours.setdefault(key, o["pipelined"]["median_s"])
print(f"  {'row':20s} {'streampipe ms':>13s} {'best peer ms':>12s}  {'peer':14s} ratio")
for key in sorted(ours):
    if key in best:
        t, label = best[key]
        print(f"  {key[0] + ' ' + key[1]:20s} {1e3 * ours[key]:13.2f} {1e3 * t:12.2f}  {label:14s} {t / ours[key]:.3f}x")
PY
}
if [[ -s $BENCH_JSON ]] && command -v python3 >/dev/null; then
    say "streampipe against the hand-written rings (ratio = peer time / streampipe time):"
    peer_ratios 2>&1 | tee -a "$MAIN_LOG"
fi
}
if [[ ${GPU_CHECK_BENCH:-1} == 0 ]]; then
    record benchmarks SKIP 0 "GPU_CHECK_BENCH=0"
else
    benchmarks
fi
# Compressed inputs through the ring (issue 26): on request, since the budget is the other
# phases' (about 2 minutes of GPU for 2 GiB); bench/compress_check.sh alone does the same.
if [[ ${GPU_CHECK_COMPRESS:-0} == 1 && -x $BUILD/streampipe ]]; then
    run_phase compress-check 200 0 "$BENCH_LOG" env CLI="$BUILD/streampipe" OUT="$OUT" \
        bench/compress_check.sh "${GPU_CHECK_COMPRESS_GIB:-2}"
    [[ -f $OUT/compress_check.log ]] && grep -E "PASS|FAIL|ratio|ceiling|ring |cpu path" \
        "$OUT/compress_check.log" | tee -a "$MAIN_LOG"
fi

# ---- the table ---------------------------------------------------------------------------
{
    echo
    echo "gpu_check: $((SECONDS - START))s of a ${BUDGET_S}s budget; logs in $OUT"
    printf '%-24s %-5s %6s  %s\n' phase status time note
    printf '%s\n' "${ROWS[@]}"
    failed=$(printf '%s\n' "${ROWS[@]}" | awk '$2 != "PASS"' | wc -l)
    echo "not passed: $failed of ${#ROWS[@]}"
} | tee "$SUMMARY" | tee -a "$MAIN_LOG"
