#!/usr/bin/env bash
# The digits-MLP inference check for the lent H200, in one call: a -Werror CUDA build with
# cJSON, the inference tests (CUDA ones must run, not skip), compute-sanitizer memcheck over
# the CUDA inference test, `streampipe infer` on 10M samples at fp32 and tf32, and the PyTorch
# baseline on the same weights and stream. A PASS/FAIL table and the headline numbers come
# last, because only the tail of the output is seen.
#
# Usage (from anywhere): OUT=/some/dir bench/infer_check.sh
#   SP_CJSON_ROOT   where cJSON is when it is not installed, e.g. /tmp/cjson/usr after
#                   `dpkg -x libcjson1_*.deb /tmp/cjson; dpkg -x libcjson-dev_*.deb /tmp/cjson`
#                   (when unset and .debs/ holds the packages, they are unpacked like that)
#   REPLICATE       copies of the 360 held-out images (default 27778: 10,000,080 samples)
#   INFER_ARGS      extra options for `streampipe infer` (e.g. "--chunk 512k --depth 6")
# Files written to $OUT: infer_check.log (everything), infer_fp32.json, infer_tf32.json,
# torch.json, summary.txt. Reads only; never changes clocks or modes, never resets the GPU.
set -u

: "${OUT:?set OUT to the folder whose files come back}"
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"

BUILD=build-infer-gpu
REPLICATE=${REPLICATE:-27778}
INFER_ARGS=${INFER_ARGS:-}
LOG=$OUT/infer_check.log
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
: >"$LOG"
ROWS=()
START=$SECONDS

say() { echo "$*" | tee -a "$LOG"; }
record() { ROWS+=("$(printf '%-22s %-5s %5ss  %s' "$1" "$2" "$3" "$4")"); say "[$1] $2 ($3 s) $4"; }

# phase NAME LIMIT_S COMMAND...: output to the log, the tail shown when it fails.
phase() {
    local name=$1 limit=$2 t0=$SECONDS rc
    shift 2
    echo "===== $name: $*" >>"$LOG"
    timeout --kill-after=10 "$limit" "$@" >"$SCRATCH/phase.out" 2>&1
    rc=$?
    cat "$SCRATCH/phase.out" >>"$LOG"
    if ((rc == 0)); then
        record "$name" PASS $((SECONDS - t0)) ""
    else
        record "$name" FAIL $((SECONDS - t0)) "exit $rc"
        tail -n 15 "$SCRATCH/phase.out"
    fi
    return $rc
}

# ---- cJSON: installed, given, or carried as .debs ------------------------------------------
CJSON_ARGS=(-DSP_WITH_CJSON=ON)
if [[ -z ${SP_CJSON_ROOT:-} && ! -f /usr/include/cjson/cJSON.h ]] &&
    ls .debs/libcjson*.deb >/dev/null 2>&1; then
    for deb in .debs/libcjson*.deb; do dpkg -x "$deb" "$SCRATCH/cjson"; done
    SP_CJSON_ROOT=$SCRATCH/cjson/usr
fi
if [[ -n ${SP_CJSON_ROOT:-} ]]; then
    CJSON_ARGS+=(-DSP_CJSON_ROOT="$SP_CJSON_ROOT")
    export LD_LIBRARY_PATH="$SP_CJSON_ROOT/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi

# ---- build and tests ---------------------------------------------------------------------------
nvidia-smi --format=csv >>"$LOG" 2>&1 \
    --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm
phase configure 120 cmake -S . -B "$BUILD" -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 \
    -DCMAKE_BUILD_TYPE=Release "${CJSON_ARGS[@]}"
phase build 300 bash bench/cli_build.sh . "$BUILD" test_infer test_safetensors
phase ctest-infer 150 ctest --test-dir "$BUILD" -R "safetensors|infer" --output-on-failure
if grep -qE '\*\*\*Skipped|Not Run' "$LOG"; then
    record ctest-no-skips FAIL 0 "an inference test skipped or did not run (GPU not seen?)"
else
    record ctest-no-skips PASS 0 ""
fi
SANITIZER=$(command -v compute-sanitizer ||
    echo /usr/local/cuda/compute-sanitizer/compute-sanitizer)
if [[ -x $SANITIZER ]]; then
    SP_TEST_QUICK=1 phase memcheck-infer 150 "$SANITIZER" --tool memcheck --error-exitcode=1 \
        --print-limit 20 "$BUILD/tests/infer/test_infer" cuda pipelines
else
    record memcheck-infer FAIL 0 "compute-sanitizer not found"
fi

# ---- the benchmarks ---------------------------------------------------------------------------
CLI=$BUILD/streampipe
DATA=(--model models/digits_mlp.safetensors --input models/digits_test_images.u8
      --labels models/digits_test_labels.u8 --replicate "$REPLICATE" --backend cuda)
for precision in fp32 tf32; do
    # shellcheck disable=SC2086 # INFER_ARGS is words
    phase "infer-$precision" 120 "$CLI" infer "${DATA[@]}" --precision "$precision" --repeat 5 \
        --json --save-predictions "$SCRATCH/ours_$precision.u8" $INFER_ARGS
    grep '^{' "$SCRATCH/phase.out" >"$OUT/infer_$precision.json"
done
# one text run too: the engine table reads better than the JSON
"$CLI" infer "${DATA[@]}" --precision tf32 --repeat 3 >>"$LOG" 2>&1
phase torch-baseline 240 python3 bench/torch_mlp_baseline.py --replicate "$REPLICATE" \
    --ours-fp32 "$SCRATCH/ours_fp32.u8" --ours-tf32 "$SCRATCH/ours_tf32.u8"
grep '^{' "$SCRATCH/phase.out" >"$OUT/torch.json"

# ---- the headline numbers against the targets ------------------------------------------------
headline() {
    python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(name):
    try:
        return json.load(open(os.path.join(out, name)))
    except Exception as e:
        return {"error": str(e)}
fp32, tf32, torch = load("infer_fp32.json"), load("infer_tf32.json"), load("torch.json")
def sps(d): return d.get("samples_per_s", 0.0) / 1e6
def eff(d): return d.get("report", {}).get("efficiency", 0.0)
t32 = torch.get("fp32", {}).get("samples_per_s", 0.0) / 1e6
tt = torch.get("tf32", {}).get("samples_per_s", 0.0) / 1e6
rows = [
    ("tf32 >= 650 M samples/s", sps(tf32) >= 650, f"{sps(tf32):.1f} M/s"),
    ("fp32 >= 1.3x torch fp32", t32 > 0 and sps(fp32) >= 1.3 * t32,
     f"{sps(fp32):.1f} vs torch {t32:.1f} M/s ({sps(fp32) / t32 if t32 else 0:.2f}x)"),
    ("tf32 vs torch tf32", True,
     f"{sps(tf32):.1f} vs {tt:.1f} M/s ({sps(tf32) / tt if tt else 0:.2f}x)"),
    ("efficiency tf32 >= 0.9", eff(tf32) >= 0.9,
     f"{eff(tf32):.3f}, bottleneck {tf32.get('report', {}).get('bottleneck')}"),
    ("efficiency fp32 >= 0.9", eff(fp32) >= 0.9,
     f"{eff(fp32):.3f}, bottleneck {fp32.get('report', {}).get('bottleneck')}"),
    ("accuracy >= 0.95", min(fp32.get("accuracy", 0), tf32.get("accuracy", 0)) >= 0.95,
     f"fp32 {fp32.get('accuracy')}, tf32 {tf32.get('accuracy')}"),
    ("agreement with torch", True, f"fp32 {torch.get('fp32', {}).get('agreement_with_streampipe')}, "
     f"tf32 {torch.get('tf32', {}).get('agreement_with_streampipe')}"),
]
for name, ok, text in rows:
    print(f"{name:26s} {'MET ' if ok else 'MISS'}  {text}")
for name, d in (("fp32", fp32), ("tf32", tf32)):
    r = d.get("report", {})
    eng = ", ".join(f"{e['name']} {e['busy_s'] * 1e3:.2f}"
                    for e in r.get("engines", []))
    print(f"{name} busy ms: {eng}; makespan {r.get('makespan_s', 0) * 1e3:.2f} ms, "
          f"hidden transfer {r.get('hidden_transfer', 0):.3f}")
PY
}
{
    echo
    echo "infer_check: $((SECONDS - START)) s; logs in $OUT"
    printf '%s\n' "${ROWS[@]}"
    echo "not passed: $(printf '%s\n' "${ROWS[@]}" | awk '$2 != "PASS"' | wc -l) of ${#ROWS[@]}"
    headline 2>&1
} | tee "$OUT/summary.txt" | tee -a "$LOG"
