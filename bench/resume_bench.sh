#!/usr/bin/env bash
# The journal's cost and a resume's rate (issue 29), file to file on the lent GPU machine:
#   OUT=/some/dir bench/resume_bench.sh [GIB] [ROUNDS]      (default 8 GiB, 3 rounds)
# Over GIB GiB of fresh random float32 records (page cache warm), alternating in each round:
#   - `streampipe run --no-journal` (the output flushed once, at its commit)
#   - `streampipe run` (the journal: the output flushed before each journal record)
# then one run killed with SIGKILL about halfway and its `--resume`: the records it re-did over
# its wall time, against the uninterrupted journaled runs' rate. Every output is compared
# with the first run's (cmp): a resumed output must be byte-identical.
# Wall times of the whole command (open, run, the flushes, the commit), medians of the rounds.
# CLI: the streampipe to time (default build-gpu/streampipe, gpu_check.sh's build); BACKEND
# (default cuda); RESUME_DIR: where the files go (default /tmp/sp-resume).
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
args=(run --backend "${BACKEND:-cuda}" --input "$DIR/in.f32" --stages sinmix:iters=8)

# timed NAME OUTPUT ARGS...: one run's wall seconds on stdout (the run's own output in $LOG)
timed() {
    local name=$1 out=$2; shift 2
    rm -f "$out"
    local t0 t1
    t0=$(date +%s.%N)
    "$CLI" "${args[@]}" --output "$out" "$@" >>"$LOG" 2>&1 || { say "$name failed"; return 1; }
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

plain=() journaled=()
timed reference "$DIR/ref.f32" --no-journal >/dev/null || exit 1
for ((r = 1; r <= ROUNDS; r++)); do
    plain+=("$(timed no-journal "$DIR/a.f32" --no-journal)")
    cmp -s "$DIR/a.f32" "$DIR/ref.f32" || say "round $r: the --no-journal output differs"
    journaled+=("$(timed journal "$DIR/b.f32")")
    cmp -s "$DIR/b.f32" "$DIR/ref.f32" || say "round $r: the journaled output differs"
    say "round $r: no journal ${plain[-1]} s, journal ${journaled[-1]} s"
done
p=$(printf '%s\n' "${plain[@]}" | median)
j=$(printf '%s\n' "${journaled[@]}" | median)
say "medians: no journal $p s, journal $j s: journal/no-journal $(awk -v a="$j" -v b="$p" 'BEGIN { printf "%.4f", a / b }')"

# a run killed about halfway, then its resume
rm -f "$DIR/c.f32"
"$CLI" "${args[@]}" --output "$DIR/c.f32" >>"$LOG" 2>&1 &
pid=$!
sleep "$(awk -v a="$j" 'BEGIN { printf "%.3f", a / 2 }')"
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
t0=$(date +%s.%N)
"$CLI" "${args[@]}" --output "$DIR/c.f32" --resume --json >"$DIR/resume.json" 2>>"$LOG"
rc=$?
t1=$(date +%s.%N)
cat "$DIR/resume.json" >>"$LOG"
cmp -s "$DIR/c.f32" "$DIR/ref.f32" && same=identical || same=DIFFERENT
python3 - "$DIR/resume.json" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" "$j" "$rc" "$same" <<'EOF' | tee -a "$LOG"
import json, sys
path, wall, whole, rc, same = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
try:
    r = json.load(open(path))
except ValueError:
    print(f"resume: exit {rc}, no JSON"); sys.exit(0)
def find(d, key):
    if isinstance(d, dict):
        if key in d: return d[key]
        for v in d.values():
            got = find(v, key)
            if got is not None: return got
    return None
total, resumed = find(r, "records"), find(r, "resumed_records") or 0
redo = (total or 0) - resumed
rate, whole_rate = redo / wall if wall else 0, (total or 0) / whole if whole else 0
print(f"resume: exit {rc}, output {same}; {resumed} of {total} records from the journal, "
      f"{redo} re-done in {wall:.3f} s: {rate / 1e6:.1f} M records/s against "
      f"{whole_rate / 1e6:.1f} uninterrupted: {rate / whole_rate if whole_rate else 0:.3f}")
EOF
rm -f "$DIR"/*.f32 "$DIR"/.*.journal "$DIR"/.*.partial-* 2>/dev/null
