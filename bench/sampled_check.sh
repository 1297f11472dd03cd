#!/usr/bin/env bash
# Issue 27 on the H200: what the default (sampled) timeline costs against no timing at all,
# and how far its figures are from the full timeline's. For seed and transfer, pinned and
# pageable: `streampipe bench --timeline-full` times, in one process and alternating within
# every repeat, the pipelined run without a report (no timing at all: OFF), with a report
# (the default, SAMPLED) and with a report on the full timeline (EVENTS), then prints the
# median makespan of each, the cost of SAMPLED and EVENTS against OFF (target: SAMPLED
# <= 1%) and the sampled hidden transfer and efficiency against the full ones (target:
# within 2 points). Every output element of every run is checked, as in any bench.
# Usage: OUT=dir bench/sampled_check.sh [REPEATS]   (default 9; writes sampled.log and
# sampled.jsonl; exits 1 when a target is missed or a run failed)
# Also run by bench/gpu_check.sh (GPU_CHECK_SAMPLED=0 leaves it out). BUILD=dir picks the
# build (default build-gpu, built here when absent); BACKEND=host tries it without a GPU.
set -u
: "${OUT:?set OUT}"
mkdir -p "$OUT"
cd "$(dirname "$0")/.." || exit 2
export PATH="/usr/local/cuda/bin:$PATH"
REPEATS=${1:-9}
BUILD=${BUILD:-build-gpu}
BACKEND=${BACKEND:-cuda}
WORKLOADS=${SAMPLED_WORKLOADS:-seed transfer}
LOG=$OUT/sampled.log
JSONL=$OUT/sampled.jsonl
: >"$LOG"
: >"$JSONL"
say() { echo "$*" | tee -a "$LOG"; }

if [[ ! -x $BUILD/streampipe ]]; then
    cmake -S . -B "$BUILD" -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >>"$LOG" 2>&1 &&
        cmake --build "$BUILD" -j16 --target streampipe_cli >>"$LOG" 2>&1 ||
        { say "build failed"; tail -20 "$LOG"; exit 1; }
fi
CLI=$BUILD/streampipe
status=0
for w in $WORKLOADS; do
    for m in pinned pageable; do
        raw=$OUT/sampled-$w-$m.json
        if ! "$CLI" bench --backend "$BACKEND" --workload "$w" --memory "$m" \
            --repeat "$REPEATS" --timeline-full --json >"$raw" 2>>"$LOG"; then
            say "$w $m: bench failed (see $LOG)"
            status=1
            continue
        fi
        python3 - "$raw" "$w" "$m" >>"$JSONL" 2>>"$LOG" <<'PY' || status=1
import json, statistics, sys
raw, w, m = sys.argv[1:4]
d = json.load(open(raw))
def median_makespan(name):
    return statistics.median(d[name]["makespans"])
off, sampled, full = (median_makespan(n) for n in ("pipelined", "traced", "full"))
row = {"workload": w, "memory": m, "off_s": off, "sampled_s": sampled, "full_s": full,
       "sampled_cost": sampled / off - 1, "full_cost": full / off - 1,
       "timed_chunks": d["timed_chunks"], "chunks": d["chunks"],
       "hidden_points": d["hidden_transfer_vs_full"], "efficiency_points": d["efficiency_vs_full"],
       "efficiency_points_same_makespan": d["efficiency_vs_full_same_makespan"],
       "full_hidden_transfer": d["full_hidden_transfer"], "full_efficiency": d["full_efficiency"]}
# the estimator's agreement: efficiency over the same (untimed) makespan, since the full
# timeline's own cost lowers its efficiency by as much as it costs; efficiency_points, each
# run's own, is printed beside it
row["met"] = (row["sampled_cost"] <= 0.01 and abs(row["hidden_points"]) <= 2
              and abs(row["efficiency_points_same_makespan"]) <= 2)
print(json.dumps(row))
sys.stderr.write(
    f"{w:8s} {m:8s} OFF {1e3*off:8.3f} ms  SAMPLED {1e3*sampled:8.3f} ms ({100*row['sampled_cost']:+.2f}%)"
    f"  EVENTS {1e3*full:8.3f} ms ({100*row['full_cost']:+.2f}%)  timed {row['timed_chunks']}/{row['chunks']}"
    f"  hidden {row['hidden_points']:+.2f} pt  efficiency {row['efficiency_points']:+.2f} pt"
    f" ({row['efficiency_points_same_makespan']:+.2f} pt at the same makespan)"
    f"  {'met' if row['met'] else 'NOT MET'}\n")
sys.exit(0 if row["met"] else 1)
PY
        tail -1 "$LOG"
    done
done
say "targets: SAMPLED cost <= +1.00% of OFF, hidden transfer and efficiency (over the same makespan) within 2 points of EVENTS"
exit $status
