#!/bin/sh
# cli_bench_source.sh CLI: `streampipe bench --source generator` on the host backend (issue 22:
# what bench/stream_bench.c's source rows timed, as a bench job): a positional generator source
# through sp_pipeline_run_io (memcpy, then non-temporal copies) against the same values as the
# job's array and, for pageable memory, a pinned one; every element of every output checked
# against the generator's values; with other jobs, or a value other than array|generator,
# exit 64 naming the option. Exit 77 (skipped) without python3, which reads the JSON.
cli=$1
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3 to read the JSON"; exit 77; }
failures=0
fail() { echo "FAIL: $*" | head -c 600; echo; failures=$((failures + 1)); }
bench() { "$cli" bench --backend host --records 300000 --repeat 2 --json "$@" 2>/dev/null; }

check() { # KINDS: the rows' names, separated by |
    python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = d["source"]["rows"]
names = [r["name"] for r in rows]
assert names == sys.argv[1].split("|"), names
assert all(len(r["seconds"]) == 2 and r["median_s"] > 0 and r["pinned_mib"] > 0 for r in rows)
array = rows[1]["median_s"]
assert all(abs(r["vs_array"] - array / r["median_s"]) <= 1e-6 * r["vs_array"] for r in rows)
# every kind: 2 runs + 1 with a report, every element
assert d["verification"]["elements_checked"] == len(rows) * 3 * 300000, d["verification"]
assert "generator" in d["notes"] and "serial" not in d, d["notes"]
' "$1"
}
json=$(bench --source generator) || fail "--source generator exited $?"
printf '%s' "$json" | check "source, memcpy|pageable array|pinned array|source, nontemporal" ||
    fail "--source generator: $json"
json=$(bench --source generator --memory pinned --iters 3 --chunk 64k) ||
    fail "--source generator --memory pinned exited $?"
printf '%s' "$json" | check "source, memcpy|pinned array|source, nontemporal" ||
    fail "--source generator --memory pinned: $json"

. "$(dirname "$0")/cli_expect.sh" # expect64
expect64 "--source: 'file' is not array or generator" --source file
expect64 "--source generator times one setting, not --batches" --source generator --batches 2
expect64 "--source generator times one setting" --source generator --depth 2,3
expect64 "not --batches, --source, --devices" --source generator --out device
[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "ok: bench --source generator on host"
