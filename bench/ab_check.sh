#!/usr/bin/env bash
# Before and after in one call on the lent GPU machine: the CLI of an older commit against this
# tree's, alternating, so that the host's drift between processes falls on both alike. The
# older source travels as a tarball (`git archive -o .old/old.tar COMMIT`, .old/ ignored in
# .git/info/exclude, named in the call's `carry`); both CLIs are built here with CUDA.
#
# Usage (from anywhere): OUT=/some/dir bench/ab_check.sh [ROUNDS]   (default 2 rounds)
#   AB_ROWS  which rows (default all): seed-pinned seed-pageable transfer-pinned tiny-graph
#            infer-tf32 (the MLP at its best chunk, graph mode, as bench/PERF.md quotes it)
# Writes $OUT/ab.log (everything) and $OUT/ab.jsonl (one object per run: row, side, the
# run's JSON). Every run verifies every output element (bench) or label (infer) itself.
# Reads only; never changes clocks or modes, never resets the GPU.
set -u

: "${OUT:?set OUT to the folder whose files come back}"
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
ROUNDS=${1:-2}
ROWS=${AB_ROWS:-seed-pinned seed-pageable transfer-pinned tiny-graph infer-tf32}
LOG=$OUT/ab.log
JSONL=$OUT/ab.jsonl
: >"$LOG"
: >"$JSONL"
say() { echo "$*" | tee -a "$LOG"; }

# build SRC DIR: the CLI of the source tree SRC into DIR (cJSON from .debs/ when it is missing).
build() {
    local cjson=()
    if [[ ! -f /usr/include/cjson/cJSON.h ]] && ls .debs/libcjson*.deb >/dev/null 2>&1; then
        mkdir -p /tmp/ab-cjson
        for deb in .debs/libcjson*.deb; do dpkg -x "$deb" /tmp/ab-cjson; done
        cjson=(-DSP_WITH_CJSON=ON -DSP_CJSON_ROOT=/tmp/ab-cjson/usr)
    fi
    cmake -S "$1" -B "$2" -DSP_WERROR=ON -DSP_WITH_CUDA=ON -DSP_CUDA_ARCH=90 -DSP_PYTHON=OFF \
        -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cjson[@]}" >>"$LOG" 2>&1 &&
        bash bench/cli_build.sh "$1" "$2" >>"$LOG" 2>&1
}

[[ -f .old/old.tar ]] || { say "no .old/old.tar (git archive -o .old/old.tar COMMIT)"; exit 2; }
rm -rf /tmp/ab-old && mkdir -p /tmp/ab-old && tar -xf .old/old.tar -C /tmp/ab-old
t0=$SECONDS
build /tmp/ab-old build-ab-old || { say "the old build failed"; tail -20 "$LOG"; exit 1; }
build . build-ab-new || { say "the new build failed"; tail -20 "$LOG"; exit 1; }
export LD_LIBRARY_PATH=/tmp/ab-cjson/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
say "built both in $((SECONDS - t0)) s"

# run_row ROW CLI: one run of the row, its JSON on stdout.
run_row() {
    local models=models
    case $1 in
    seed-pinned) "$2" bench --backend cuda --workload seed --memory pinned --repeat 5 --json ;;
    seed-pageable) "$2" bench --backend cuda --workload seed --memory pageable --repeat 5 --json ;;
    transfer-pinned) "$2" bench --backend cuda --workload transfer --memory pinned --repeat 5 --json ;;
    tiny-graph) "$2" bench --backend cuda --workload tiny --memory pinned --graph on --repeat 5 --json ;;
    infer-tf32) "$2" infer --backend cuda --model $models/digits_mlp.safetensors \
        --input $models/digits_test_images.u8 --labels $models/digits_test_labels.u8 \
        --replicate 27778 --precision tf32 --chunk 256k --depth 8 --graph on --repeat 5 --json ;;
    *) echo "{\"error\":\"no row $1\"}"; return 2 ;;
    esac
}

for ((round = 1; round <= ROUNDS; round++)); do
    for row in $ROWS; do
        # old first in odd rounds, new first in even ones
        sides="old new"; ((round % 2 == 0)) && sides="new old"
        for side in $sides; do
            out=$(run_row "$row" "build-ab-$side/streampipe" 2>>"$LOG"); rc=$?
            line=$(echo "$out" | tail -1)
            [[ $line == \{* ]] || line='{}'
            echo "{\"row\":\"$row\",\"side\":\"$side\",\"round\":$round,\"exit\":$rc,\"run\":$line}" >>"$JSONL"
        done
    done
done

# The headline figure of each run: bench's pipelined median time, infer's samples per second.
python3 - "$JSONL" <<'EOF' | tee -a "$LOG"
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
rows = {}
for r in runs:
    run = r["run"]
    if r["exit"] != 0 or not run:
        print(f"{r['row']} {r['side']} round {r['round']}: exit {r['exit']}")
        continue
    if "pipelined" in run:
        value, unit, better = run["pipelined"]["median_s"] * 1e3, "ms", "lower"
    else:
        value = run.get("samples_per_s", run.get("median_samples_per_s", 0)) / 1e6
        unit, better = "M samples/s", "higher"
    rows.setdefault(r["row"], {"unit": unit, "better": better, "old": [], "new": []})
    rows[r["row"]][r["side"]].append(value)
print(f"{'row':16} {'old':>22} {'new':>22}  new/old")
for row, d in rows.items():
    if not d["old"] or not d["new"]:
        continue
    old, new = statistics.median(d["old"]), statistics.median(d["new"])
    fmt = lambda v: ", ".join(f"{x:.3f}" for x in v)
    print(f"{row:16} {fmt(d['old']):>22} {fmt(d['new']):>22}  {new / old:.3f} ({d['unit']}, "
          f"{d['better']} is better; medians of the runs)")
EOF
