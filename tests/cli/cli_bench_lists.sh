#!/bin/sh
# cli_bench_lists.sh CLI: `streampipe bench` with lists of --workload, --iters, --chunk and
# --depth (llama-bench style, issue 22) on the host backend: a 2x2 product runs a row per
# combination in order (iters outermost); a --workload list gives each row its workload's
# records, iters and chunk where no option sets them, labelled with it; --group-size 0,1,2
# times the plain pipeline against groups of 1 and 2 on the one device; each saying what was asked ("auto" or the number) beside what
# was in effect, best_row the lowest median; "sweep" is the option's own list; one value
# each is the comparison, as before lists; too many items or rows, a bad item and an empty
# item exit 64 naming the option. Exit 77 (skipped) without python3, which reads the JSON.
cli=$1
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3 to read the JSON"; exit 77; }
failures=0
fail() { echo "FAIL: $*" | head -c 600; echo; failures=$((failures + 1)); }
bench() { "$cli" bench --backend host --records 64k --repeat 1 --json "$@" 2>/dev/null; }

json=$(bench --iters 0,1 --chunk 4k,auto) || fail "the 2x2 product exited $?"
printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["sweep"]
assert sorted(s) == ["best_row", "rows"], sorted(s)
rows = s["rows"]
asked = [(r["iters"], r["set_chunk_records"], r["set_depth"]) for r in rows]
assert asked == [(0, 4096, "auto"), (0, "auto", "auto"), (1, 4096, "auto"),
                 (1, "auto", "auto")], asked
medians = [r["median_s"] for r in rows]
best = s["best_row"]
assert best == medians.index(min(medians)), (best, medians)
assert [r["best"] for r in rows] == [i == best for i in range(4)], rows
assert rows[best]["vs_best"] == 1.0 and all(0 < r["vs_best"] <= 1 for r in rows), rows
assert all(r["chunk_records"] == 4096 for r in rows if r["set_chunk_records"] == 4096), rows
assert all(len(r["seconds"]) == 1 and r["median_s"] > 0 for r in rows), rows
# every row: one run without a report, one with, every element checked
assert d["verification"]["elements_checked"] >= 4 * 2 * d["records"], d["verification"]
assert "serial" not in d and "iters" not in d, sorted(d)
' || fail "2x2 product: $json"

# workloads outermost; each row labelled; an option's list replaces the workload's value
json=$("$cli" bench --backend host --repeat 1 --json --workload small,tiny --depth 2,3 \
    2>/dev/null) || fail "--workload small,tiny exited $?"
printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["workload"] == "small,tiny" and d["records"] == 2**24, (d["workload"], d["records"])
rows = d["sweep"]["rows"]
got = [(r["workload"], r["records"], r["iters"], r["set_chunk_records"], r["set_depth"])
       for r in rows]
assert got == [("small", 2**22, 10, "auto", 2), ("small", 2**22, 10, "auto", 3),
               ("tiny", 2**24, 0, 16384, 2), ("tiny", 2**24, 0, 16384, 3)], got
assert all(r["chunk_records"] == 16384 for r in rows[2:]), rows
assert d["verification"]["elements_checked"] == 2 * 2 * (2**22 + 2**24), d["verification"]
' || fail "--workload small,tiny: $json"
json=$(bench --workload tiny,small --iters 1 --chunk 8k) || fail "--workload with --iters exited $?"
printf '%s' "$json" | python3 -c '
import json, sys
rows = json.load(sys.stdin)["sweep"]["rows"]
got = [(r["workload"], r["records"], r["iters"], r["chunk_records"]) for r in rows]
assert got == [("tiny", 65536, 1, 8192), ("small", 65536, 1, 8192)], got
' || fail "--workload tiny,small --iters 1: $json"

# --group-size: the plain pipeline against groups on the one device (what bench/group_bench.c timed)
json=$(bench --group-size 0,1,2 --workload tiny,small) || fail "--group-size 0,1,2 exited $?"
printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = d["sweep"]["rows"]
got = [(r["workload"], r["group_size"], r["pipelines"], r["iters"]) for r in rows]
assert got == [("tiny", 0, 1, 0), ("tiny", 1, 1, 0), ("tiny", 2, 2, 0), ("small", 0, 1, 10),
               ("small", 1, 1, 10), ("small", 2, 2, 10)], got
assert all(r["median_s"] > 0 and r["report_makespan_s"] > 0 for r in rows), rows
assert d["verification"]["elements_checked"] == 6 * 2 * 65536, d["verification"]
' || fail "--group-size 0,1,2: $json"
# one size above 0 is the group job on --device, as --devices 0,0 is
json=$(bench --group-size 2) || fail "--group-size 2 exited $?"
printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["group"]["devices"] == 2 and [p["device"] for p in d["group"]["per_device"]] == [0, 0], d
' || fail "--group-size 2: $json"

json=$(bench --depth sweep --iters 0) || fail "--depth sweep exited $?"
printf '%s' "$json" | python3 -c '
import json, sys
rows = json.load(sys.stdin)["sweep"]["rows"]
assert [r["set_depth"] for r in rows] == [2, 3, 4, 5, 6, 8], rows
assert all(r["depth"] == r["set_depth"] and r["iters"] == 0 for r in rows), rows
' || fail "--depth sweep: $json"

# one value each: the comparison, as it was before lists
json=$(bench --iters 1 --chunk 4k --depth 3) || fail "one value each exited $?"
printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert "sweep" not in d and d["iters"] == 1, sorted(d)
assert all(k in d for k in ("serial", "pipelined", "ceiling", "speedup")), sorted(d)
assert d["pipelined"]["chunk_records"] == 4096 and d["pipelined"]["depth"] == 3, d["pipelined"]
' || fail "one value each: $json"

. "$(dirname "$0")/cli_expect.sh" # expect64
items33=$(seq -s, 1 33)
items17=$(seq -s, 1 17)
expect64 "--chunk: '$items33' has more than 32 items" --chunk "$items33"
expect64 "--chunk: 'x' is not a count in \[0, " --chunk 1k,x
expect64 "--depth: '2,,3' has an empty item" --depth 2,,3
expect64 "--iters: '1,' has an empty item" --iters 1,
expect64 "--iters: 'auto' is not a count in \[0, 1000000\]" --iters 0,auto
expect64 "--group-size, --iters, --chunk and --depth make 1 x 1 x 17 x 17 x 1 = 289 rows, more" \
    --iters "$items17" --chunk "$items17"
expect64 "--group-size, --iters, --chunk and --depth make 2 x 2 x 17 x 4 x 1 = 272 rows" \
    --workload tiny,small --group-size 0,1 --iters "$items17" --chunk 1,2,3,4
expect64 "--group-size: '65' is not a count in \[0, 64\]" --group-size 0,65
expect64 "--group-size: 'sweep' is not a list of group sizes" --group-size sweep
expect64 "--group-size and --devices both say which devices run" --group-size 2 --devices 0
expect64 "--trace and --svg show a pipeline's run, which a list of --group-size" \
    --group-size 0,1 --trace /nonexistent/t.json
expect64 "--workload: unknown workload 'x'" --workload tiny,x
expect64 "--workload: 'tiny,,small' is not a list of at most 8 workloads" --workload tiny,,small
expect64 "--workload: '$(seq -s, 1 9 | sed 's/[0-9]/tiny/g')' is not a list of at most 8" \
    --workload "$(seq -s, 1 9 | sed 's/[0-9]/tiny/g')"
expect64 "runs a group, which takes one value of --workload" --devices 0,1 --depth 2,3
expect64 "runs a group, which takes one value of --workload" --devices 0 --workload tiny,small
expect64 "--devices (or one --group-size above 0) runs a group" --group-size 2 --iters 1,2
[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "ok: bench lists on host"
