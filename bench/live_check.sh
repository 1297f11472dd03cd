#!/usr/bin/env bash
# Issue 27 on the H200: the live counters' GPU figures while a CUDA run goes. `streampipe run`
# (a report, so the default sampled timeline times its chunks) is scraped at --metrics every
# 0.1 s; the scrapes must show the GPU engines' busy seconds (h2d, the stage, d2h) and the
# hidden-transfer gauge during the run, counters that never go down, and near the end figures
# close to the run's report: the last scrape's hidden ratio within 3 points of the report's
# hidden transfer, and each GPU engine's busy seconds per record within 10% of the report's
# (the last scrape misses the last chunks and extrapolates by records; the C test
# test_live_stats checks exact agreement once a run has ended). The cost of the reads is
# bench/sampled_check.sh's: SAMPLED against no timing, as before.
# Usage: OUT=dir bench/live_check.sh     (SIZE_MIB, default 4096 on CUDA, 64 with BACKEND=host;
# CHUNK records, default 8 MiB / 256 KiB of them; ITERS sinmix iterations, default 40; writes live.log; exits 1 when a check fails)
# BUILD=dir picks the build (default build-gpu, built here when absent); BACKEND=host tries it
# without a GPU (needs a build with libmicrohttpd, and curl and python3).
set -u
: "${OUT:?set OUT}"
mkdir -p "$OUT"
cd "$(dirname "$0")/.." || exit 2
export PATH="/usr/local/cuda/bin:$PATH"
BUILD=${BUILD:-build-gpu}
BACKEND=${BACKEND:-cuda}
# chunks of 8 MiB on CUDA (512 of them: sampled windows every 64), 256 KiB on HOST
if [[ $BACKEND == host ]]; then SIZE_MIB=${SIZE_MIB:-64}; CHUNK=${CHUNK:-65536}
else SIZE_MIB=${SIZE_MIB:-4096}; CHUNK=${CHUNK:-2097152}; fi
ITERS=${ITERS:-40}
LOG=$OUT/live.log
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }

# shellcheck source=bench/cli_build.sh
source bench/cli_build.sh
sp_cli_build_if_absent "$BUILD" "$LOG" || { say "build failed"; tail -20 "$LOG"; exit 1; }
CLI=$BUILD/streampipe
work=$(mktemp -d "${TMPDIR:-/tmp}/live_check.XXXXXX")
trap 'rm -rf "$work"' EXIT
# random bytes, as cli_metrics.sh uses: the figures, not the output, are checked here
head -c $((SIZE_MIB << 20)) /dev/urandom >"$work/in.f32" || { say "no input made"; exit 1; }

"$CLI" run --backend "$BACKEND" --input "$work/in.f32" --output "$work/out.f32" \
    --stages "sinmix:iters=$ITERS" --chunk "$CHUNK" --metrics 127.0.0.1:0 --json >"$work/report.json" \
    2>"$work/run.err" &
pid=$!
url=
for _ in $(seq 200); do
    url=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' "$work/run.err" | head -n 1)
    [[ -n $url ]] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.05
done
[[ -n $url ]] || { tee -a "$LOG" <"$work/run.err"; say "no metrics address"; exit 1; }
n=0
while kill -0 $pid 2>/dev/null; do
    curl -sf "$url" >"$work/scrape.$n" 2>/dev/null && n=$((n + 1))
    sleep 0.1
done
wait $pid || { tee -a "$LOG" <"$work/run.err"; say "the run failed"; exit 1; }
cp "$work/report.json" "$OUT/live-report.json"
python3 - "$work" "$n" <<'PY' 2>&1 | tee -a "$LOG"
import json, re, sys
d, n = sys.argv[1], int(sys.argv[2])
rep = json.load(open(f"{d}/report.json"))
r, records = rep["report"], rep["records"]
line = re.compile(r'^(streampipe_[a-z_]+)(\{engine="([^"]*)"\})? (\S+)$')
scrapes = []
for k in range(n):
    s = {}
    for text in open(f"{d}/scrape.{k}"):
        m = line.match(text.strip())
        if m:
            s[(m.group(1), m.group(3))] = float(m.group(4))
    scrapes.append(s)
bad = []
for k in range(1, n):
    for key, v in scrapes[k].items():
        if key[0].endswith("_total") and key in scrapes[k - 1] and v < scrapes[k - 1][key]:
            bad.append(f"scrape {k}: {key} went down")
gpu = [e["name"] for e in r["engines"] if e["name"] not in ("stage-in", "stage-out")]
hidden = [s[("streampipe_hidden_transfer_ratio", None)] for s in scrapes
          if ("streampipe_hidden_transfer_ratio", None) in s]
print(f"{n} scrapes; hidden ratio seen in {len(hidden)}; report: hidden "
      f"{100 * r['hidden_transfer']:.2f}%, timed chunks {r['timed_chunks']} of {r['chunks']}")
if n < 5 or not hidden:
    bad.append("too few scrapes, or no hidden-transfer gauge during the run")
# the last scrape that has the gauge: near the end of the run
last = next((s for s in reversed(scrapes) if ("streampipe_hidden_transfer_ratio", None) in s),
            scrapes[-1] if scrapes else {})
if hidden:
    gap = 100 * abs(hidden[-1] - r["hidden_transfer"])
    print(f"hidden: last scrape {100 * hidden[-1]:.2f}%, report {100 * r['hidden_transfer']:.2f}%"
          f" ({gap:.2f} points; target <= 3)")
    if gap > 3:
        bad.append(f"hidden transfer {gap:.2f} points from the report's")
done = last.get(("streampipe_records_total", None), 0)
for name in gpu:
    key = ("streampipe_busy_seconds_total", name)
    rep_busy = next(e["busy_s"] for e in r["engines"] if e["name"] == name)
    if key not in last or done == 0:
        bad.append(f"{name}: no busy seconds served")
        continue
    live, final = last[key] / done, rep_busy / records
    off = 100 * abs(live / final - 1) if final > 0 else 0.0
    print(f"{name}: live {1e9 * live:.3f} ns/record at {done:.0f} records, report "
          f"{1e9 * final:.3f} ns/record ({off:.1f}%; target <= 10)")
    if off > 10:
        bad.append(f"{name}: busy per record {off:.1f}% from the report's")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
status=${PIPESTATUS[0]}
say "live_check: $([[ $status -eq 0 ]] && echo ok || echo FAILED)"
exit "$status"
