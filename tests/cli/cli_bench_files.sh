#!/bin/sh
# cli_bench_files.sh CLI: `streampipe bench --trace F --svg G` writes both files from the report
# of the run they show (its own timeline, sp_pipeline_config.keep_timeline), beside
# --timeline-full (whose reports' timelines give the sampled figures) and with lists of
# --chunk and --depth (the fastest row's report, its pipeline long gone, the slower rows'
# timelines freed as they went). The JSON must parse with one complete event per chunk per
# engine, the SVG as XML, both naming the run's chunk count.
cli=$1
fail() { echo "FAIL: $*"; exit 1; }
dir=$(mktemp -d) || fail "no temporary folder"
trap 'rm -rf "$dir"' EXIT
check_files() { # CHUNKS-LABEL
    command -v python3 >/dev/null 2>&1 || return 0
    python3 - "$dir/t.json" "$dir/t.svg" "$1" <<'PY' || fail "$1: the files do not read back"
import json, sys
import xml.etree.ElementTree as ET
trace, svg, label = sys.argv[1:]
d = json.load(open(trace))
chunks = d["otherData"]["chunks"]
events = [e for e in d["traceEvents"] if e["ph"] == "X"]
tracks = {e["tid"] for e in events}
assert chunks > 1 and len(events) == chunks * len(tracks), (label, chunks, len(events))
root = ET.parse(svg).getroot()
assert root.tag.endswith("svg"), root.tag
assert "%d chunks" % chunks in ET.tostring(root, encoding="unicode"), label
PY
}
"$cli" bench --backend host --records 200000 --chunk 10000 --repeat 2 --timeline-full \
    --trace "$dir/t.json" --svg "$dir/t.svg" >"$dir/out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { cat "$dir/out"; fail "bench exited $rc"; }
check_files comparison
grep -q "same run" "$dir/out" || fail "no sampled figures of the full runs"
rm -f "$dir/t.json" "$dir/t.svg"
"$cli" bench --backend host --records 200000 --chunk 10000,20000 --repeat 1 --depth 2,4 \
    --trace "$dir/t.json" --svg "$dir/t.svg" >"$dir/out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { cat "$dir/out"; fail "bench with lists exited $rc"; }
check_files rows
echo "ok: bench --trace/--svg from the report, comparison and rows of lists"
