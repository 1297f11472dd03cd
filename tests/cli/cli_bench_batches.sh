#!/bin/sh
# cli_bench_batches.sh CLI: `streampipe bench --batches B` on the host backend (issue 22: what
# bench/stream_bench.c's batches rows timed, as a bench job): one sp_pipeline_run, B runs of
# B slices, and the same slices as B batches through one stream, each --repeat times and once with a report, every
# element of every output checked; B above the records, 0, and with lists or --devices exit 64
# naming the option. Exit 77 (skipped) without python3, which reads the JSON.
cli=$1
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3 to read the JSON"; exit 77; }
failures=0
fail() { echo "FAIL: $*" | head -c 600; echo; failures=$((failures + 1)); }

# 7 batches of 64k records: 9363 or 9362 each, so the last records are a short batch's
json=$("$cli" bench --backend host --records 64k --repeat 2 --batches 7 --json 2>/dev/null) ||
    fail "--batches 7 exited $?"
printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
b = d["batches"]
rows = b["rows"]
got = [(r["name"], r["batches"]) for r in rows]
assert got == [("one run", 1), ("runs", 7), ("stream", 7)], rows
assert all(len(r["seconds"]) == 2 and r["median_s"] > 0 and r["gbps"] > 0 for r in rows), rows
assert rows[1]["chunks"] >= 7 and rows[2]["chunks"] >= 7, rows
for key, r in (("runs_vs_run", rows[1]), ("stream_vs_run", rows[2])):
    want = rows[0]["median_s"] / r["median_s"]
    assert abs(b[key] - want) <= 1e-6 * want, (key, b[key], want)
# 3 kinds x (2 runs + 1 with a report), every element
assert d["verification"]["elements_checked"] == 3 * 3 * 65536, d["verification"]
assert "serial" not in d and "sweep" not in d, sorted(d)
' || fail "--batches 7: $json"

. "$(dirname "$0")/cli_expect.sh" # expect64
expect64 "--batches: '0' is not a count in \[1, " --batches 0
expect64 "--batches: 65537 batches is more than the 65536 records" --batches 65537
expect64 "--batches times one setting, not --devices" --batches 2 --depth 2,3
expect64 "--batches times one setting, not --devices" --batches 2 --devices 0
expect64 "--in device and --out device are for the comparison, not --batches" --batches 2 \
    --in device
[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "ok: bench --batches on host"
