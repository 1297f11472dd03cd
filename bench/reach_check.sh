#!/usr/bin/env bash
# The "reach" benchmarks in one call on the H200 (issues 11, 12, 13), beside bench/gpu_check.sh
# (which is the build, tests, sanitizers and headline benchmarks):
#   group    `streampipe bench --group-size 0,1,2`: a group of one device and of two pipelines
#            on one device against the plain pipeline (pinned and pageable), a row each for
#            the seed and transfer workloads; the group tests on CUDA
#   streams  bench/streams_check.sh: streams and the generator source (streampipe bench), then
#            `streampipe run` file to file (REACH_FILE_GIB, default 16) against cat and dd
#            (REACH_STREAMS_SECTIONS picks among bench, file, infer; default bench file)
#   python   the Python package built by pip (with the carried cJSON), then
#            bench/python_bench.py's sections REACH_PY_SECTIONS (default torch,mlp)
# Usage: OUT=dir bench/reach_check.sh    REACH_SECTIONS picks (default: group streams python).
# Writes reach.log (everything), and streams.log/streams.jsonl, python.jsonl beside it.
set -u
: "${OUT:?set OUT}"
cd "$(dirname "$0")/.." || exit 2
export PATH="/usr/local/cuda/bin:$PATH"
SECTIONS=" ${REACH_SECTIONS:-group streams python} "
want() { [[ $SECTIONS == *" $1 "* ]]; }
LOG=$OUT/reach.log
BUILD=build-gpu
: >"$LOG"
say() { echo "== $* ($(date -u +%H:%M:%S))" | tee -a "$LOG"; }

# cJSON from carried .debs, as in gpu_check.sh
CJSON_ARGS=()
if [[ ! -f /usr/include/cjson/cJSON.h ]] && ls .debs/libcjson*.deb >/dev/null 2>&1; then
    for deb in .debs/libcjson*.deb; do dpkg -x "$deb" /tmp/sp-cjson; done
    export SP_CJSON_ROOT=/tmp/sp-cjson/usr
    CJSON_ARGS=(-DSP_WITH_CJSON=ON -DSP_CJSON_ROOT="$SP_CJSON_ROOT")
    export LD_LIBRARY_PATH="$SP_CJSON_ROOT/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
say build
cmake -S . -B "$BUILD" -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "${CJSON_ARGS[@]}" >>"$LOG" 2>&1 &&
    bash bench/cli_build.sh . "$BUILD" test_group >>"$LOG" 2>&1 ||
    { say "build FAILED"; tail -30 "$LOG"; exit 1; }

if want group; then
    say "group tests on CUDA"
    timeout 120 "$BUILD/tests/test_group" cuda 2>&1 | tail -15 | tee -a "$LOG"
    for memory in pinned pageable; do
        say "bench --group-size 0,1,2, $memory"
        timeout 120 "$BUILD/streampipe" bench --backend cuda --workload seed,transfer \
            --records 2^27 --group-size 0,1,2 --memory "$memory" --repeat 7 2>&1 | tee -a "$LOG"
    done
fi
if want streams; then
    say "streams_check bench file"
    STREAMS_SECTIONS="${REACH_STREAMS_SECTIONS:-bench file}" timeout 360 \
        bench/streams_check.sh "${REACH_FILE_GIB:-16}" \
        2>&1 | tee -a "$LOG"
fi
if want python; then
    say "python package"
    cjson=()
    [[ -n ${SP_CJSON_ROOT:-} ]] && cjson=(-C cmake.define.SP_WITH_CJSON=ON
        -C "cmake.define.SP_CJSON_ROOT=$SP_CJSON_ROOT")
    # REACH_SKIP_PIP=1: the package bench/gpu_check.sh just installed in the same call
    [[ ${REACH_SKIP_PIP:-0} == 1 ]] ||
        python3 -m pip install -q --no-build-isolation --no-deps "${cjson[@]}" . >>"$LOG" 2>&1 ||
        say "pip install FAILED"
    PY_SECTIONS=${REACH_PY_SECTIONS:-torch,mlp}
    cli_rows=()
    if [[ $PY_SECTIONS == *frontend* ]]; then # the CLI's rows, just before, for the comparison
        : >/tmp/reach-cli.jsonl
        for w in seed transfer; do
            for m in pinned pageable; do
                "$BUILD/streampipe" bench --backend cuda --workload $w --memory $m --repeat 5 \
                    --json 2>>"$LOG" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)))' \
                    >>/tmp/reach-cli.jsonl || say "CLI bench $w $m FAILED"
            done
        done
        cli_rows=(--cli /tmp/reach-cli.jsonl)
    fi
    say "python_bench $PY_SECTIONS"
    (cd /tmp && timeout 300 python3 "$OLDPWD/bench/python_bench.py" --repeat 5 \
        --sections "$PY_SECTIONS" "${cli_rows[@]}") 2>&1 | tee -a "$LOG" |
        grep '^{' >"$OUT/python.jsonl"
fi
say done
