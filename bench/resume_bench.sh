#!/usr/bin/env bash
# The journal's cost and a resume's rate (issue 29), file to file on the lent GPU machine:
#   OUT=/some/dir bench/resume_bench.sh [GIB] [ROUNDS]      (default 8 GiB, 3 rounds)
# Over GIB GiB of fresh random float32 records (page cache warm), in each round:
#   - `streampipe run --no-journal` (the output flushed once, at its commit)
#   - `streampipe run` (the journal: the output flushed before each journal record)
#   - a journaled run killed with SIGKILL at a random 30-70% of that run's time, then its
#     `--resume` (before the uninterrupted journaled run in even rounds, after it in odd).
# The resume's rate is that of the part it re-does: the records it ran over the pipeline's
# time for them (its --json gbps_in: the gaps' makespans summed), against the same round's
# uninterrupted journaled run's gbps_in (over its makespan). The wall ratio beside it takes
# the whole commands, so it charges the resume once for what any command pays whatever it
# runs (process and context start, pipeline creation, the journal's read, the final flush
# and rename): the per-round lines show that part, "around it", for both. A single resume
# against a median of other runs is no measure on a machine whose runs spread by 1.7x: the
# ratios are per round, then their median. `sync` before every timed run, so that no run
# pays for the writeback of the one before. Every output is compared with the first run's
# (cmp): a resumed output must be byte-identical. The last lines say RESUME RATE RATIO.
# CLI: the streampipe to time (default build-gpu/streampipe, gpu_check.sh's build); BACKEND
# (default cuda); RESUME_DIR: where the files go (default /tmp/sp-resume); STAGES (default
# sinmix:iters=8).
# Writes $OUT/resume_bench.log. Reads only; never changes clocks or modes.
set -u
: "${OUT:?set OUT to the folder whose files come back}"
cd "$(dirname "$0")/.." || exit 2
GIB=${1:-8}
ROUNDS=${2:-3}
CLI=${CLI:-build-gpu/streampipe}
DIR=${RESUME_DIR:-/tmp/sp-resume}
LOG=$OUT/resume_bench.log
mkdir -p "$OUT" "$DIR"
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
[[ -x $CLI ]] || { say "no $CLI (run bench/gpu_check.sh first, or set CLI)"; exit 2; }
df -h "$DIR" >>"$LOG" 2>&1

python3 - "$DIR/in.f32" "$GIB" <<'EOF' 2>/dev/null ||
import sys, numpy as np
path, gib = sys.argv[1], float(sys.argv[2])
rng = np.random.default_rng()
n = int(gib * (1 << 30)) // 4
step = 1 << 26
with open(path, "wb") as f:
    for at in range(0, n, step):
        rng.uniform(-4, 4, min(step, n - at)).astype(np.float32).tofile(f)
EOF
    head -c "$(awk -v g="$GIB" 'BEGIN { printf "%d", int(g * 1073741824 / 4) * 4 }')" /dev/urandom \
        >"$DIR/in.f32" || { say "making the input failed"; exit 2; }
cat "$DIR/in.f32" >/dev/null
args=(run --backend "${BACKEND:-cuda}" --input "$DIR/in.f32" --stages "${STAGES:-sinmix:iters=8}")

# timed NAME ARGS...: one run with --json (its report in $DIR/NAME.json, also in $LOG);
# prints its wall seconds. The writeback of earlier runs is flushed first.
timed() {
    local name=$1; shift
    sync
    local t0 t1
    t0=$(date +%s.%N)
    "$CLI" "${args[@]}" --json "$@" >"$DIR/$name.json" 2>>"$LOG" || { say "$name failed"; return 1; }
    t1=$(date +%s.%N)
    cat "$DIR/$name.json" >>"$LOG"
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# compare RESUME.json WHOLE.json RESUME_WALL WHOLE_WALL: "rate-ratio wall-ratio kept-fraction
# resume-run-s resume-around-s whole-run-s whole-around-s"
compare() {
    python3 - "$@" <<'PYEOF'
import json, sys
res, whole = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
wall, whole_wall = float(sys.argv[3]), float(sys.argv[4])
n, kept = res["records"], res["resumed_records"]
redo, rec = n - kept, res["bytes_in"] / n
run_s = redo * rec / (res["gbps_in"] * 1e9) if res["gbps_in"] else float("nan")
whole_s = n * rec / (whole["gbps_in"] * 1e9)
print(f"{res['gbps_in'] / whole['gbps_in']:.4f} {(redo / wall) / (n / whole_wall):.4f} "
      f"{kept / n:.3f} {run_s:.3f} {wall - run_s:.3f} {whole_s:.3f} {whole_wall - whole_s:.3f}")
PYEOF
}

# journal_run: the uninterrupted journaled run; prints its wall seconds.
journal_run() {
    local wall
    wall=$(timed journal --output "$DIR/b.f32") || return 1
    cmp -s "$DIR/b.f32" "$DIR/ref.f32" || say "round $r: the journaled output DIFFERS" >&2
    echo "$wall"
}

# kill_and_resume SECONDS: a journaled run killed with SIGKILL at a random 30-70% of SECONDS
# (an earlier run's wall time), then its --resume; prints the resume's wall seconds.
kill_and_resume() {
    sync
    "$CLI" "${args[@]}" --output "$DIR/c.f32" >>"$LOG" 2>&1 &
    local pid=$!
    sleep "$(awk -v a="$1" -v s="$RANDOM" 'BEGIN { printf "%.3f", a * (0.3 + 0.4 * s / 32767) }')"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    timed resume --output "$DIR/c.f32" --resume
}

plain=() journaled=() rows=()
rm -f "$DIR/ref.f32"
timed reference --output "$DIR/ref.f32" --no-journal >/dev/null || exit 1
for ((r = 1; r <= ROUNDS; r++)); do
    rm -f "$DIR/a.f32" "$DIR/b.f32" "$DIR/c.f32"
    plain+=("$(timed plain --output "$DIR/a.f32" --no-journal)") || exit 1
    cmp -s "$DIR/a.f32" "$DIR/ref.f32" || say "round $r: the --no-journal output DIFFERS"
    # odd rounds: the uninterrupted journaled run, then the killed run and its resume; even
    # rounds the other way round, so that a drift of the disk within a round (its writeback
    # of the earlier runs' outputs) falls on both sides alike
    ((r % 2)) && { journaled+=("$(journal_run)") || exit 1; }
    wall=$(kill_and_resume "${journaled[-1]:-${plain[-1]}}") || exit 1
    ((r % 2)) || { journaled+=("$(journal_run)") || exit 1; }
    cmp -s "$DIR/c.f32" "$DIR/ref.f32" && same=identical || same=DIFFERS
    row=$(compare "$DIR/resume.json" "$DIR/journal.json" "$wall" "${journaled[-1]}")
    rows+=("$row")
    read -r ratio wall_ratio kept run_s around whole_s whole_around <<<"$row"
    say "round $r: no journal ${plain[-1]} s; journal ${journaled[-1]} s (run $whole_s s, $whole_around s around it);" \
        "killed with $kept of the records kept, resume $wall s (run $run_s s, $around s around it):" \
        "rate ratio $ratio, wall ratio $wall_ratio; resumed output $same"
done
p=$(printf '%s\n' "${plain[@]}" | median)
j=$(printf '%s\n' "${journaled[@]}" | median)
say "medians: no journal $p s, journal $j s: journal/no-journal $(awk -v a="$j" -v b="$p" 'BEGIN { printf "%.4f", a / b }')"
say "resume wall ratio (median of $ROUNDS; over the whole commands): $(printf '%s\n' "${rows[@]}" | awk '{print $2}' | median)"
say "RESUME RATE RATIO (median of $ROUNDS; the re-done part's rate against the same round's uninterrupted run's, over the pipelines' time): $(printf '%s\n' "${rows[@]}" | awk '{print $1}' | median) (issue 29: >= 0.95)"
rm -f "$DIR"/*.f32 "$DIR"/.*.journal "$DIR"/.*.partial-* "$DIR"/*.json 2>/dev/null
